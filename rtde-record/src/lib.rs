//! Recording RTDE streams: the formats `rtde record`, `rtde subscribe`, the MQTT bridge and
//! the MCAP recorder write, kept out of rtde-core, which holds the protocol alone.
//!
//! - [`capture`]: the raw capture format (`.rtde`), every data package as it arrived.
//! - [`csv`]: one row per package, as a writer and as a recording a program starts and
//!   stops ([`CsvRecording`](csv::CsvRecording)).
//! - [`host_time`]: when a package happened by the host's clock.
//! - [`stop`]: when a recording ends by itself (a package count, a duration).
//!
//! A recorder starts from the stream's [`Header`](capture::Header), read off a connected
//! client or a background driver in one call ([`Header::of_client`](capture::Header::of_client),
//! [`Header::of_background`](capture::Header::of_background)).
//!
//! ```
//! use rtde_record::host_time::HostTime;
//!
//! let mapping = HostTime { t0_unix_us: 0, t0_timestamp: 10.0 };
//! assert_eq!(mapping.host_time_us(10.5), Some(500_000));
//! ```

#![forbid(unsafe_code)]

pub mod capture;
mod connected;
pub mod csv;
pub mod host_time;
pub mod stop;
