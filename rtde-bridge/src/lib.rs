//! Fleet telemetry into MQTT: reads the RTDE outputs of many Universal Robots controllers
//! and publishes them, batched, to an MQTT broker, losing nothing silently.
//!
//! ```text
//! robot ─RTDE─▶ reader ─▶ bounded queue ─▶ publisher ─┐
//! robot ─RTDE─▶ reader ─▶ bounded queue ─▶ publisher ─┼─▶ one MQTT connection ─▶ broker
//! robot ─RTDE─▶ reader ─▶ bounded queue ─▶ publisher ─┘    (rumqttc, one tokio runtime)
//! ```
//!
//! (or several MQTT sessions, the robots shared out, with `[broker] connections`: a broker
//! that stores each QoS 1 publication before acknowledging it takes more a second on more
//! sessions.)
//!
//! - **Configuration**: a TOML file ([`config`]); every mistake is one line naming the
//!   line and the key.
//! - **Payloads**: JSON or binary batches in the raw-capture frame format, each with the
//!   robot's name, per-robot sequence numbers, drop counts, the controller timestamps and
//!   the robot-time to host-time mapping; retained status messages ([`payload`]). Or
//!   Sparkplug B, with the same in its metrics: the bridge an edge node, each robot a
//!   device, births and deaths instead of statuses ([`sparkplug`]).
//! - **Never silent**: each robot's queue is bounded; while the broker is slow or down
//!   the oldest batches are dropped and counted, and every batch carries the count so a
//!   subscriber can check each gap. The MQTT session is persistent, so the broker keeps
//!   what it owes a subscriber across a bridge reconnection and the client re-sends what
//!   the broker had not acknowledged; if the broker comes back *without* the session, the
//!   unacknowledged publications are lost in flight, and counted as soon as the bridge
//!   is back: per robot ([`RobotCounts::lost_in_flight`]), in the robot's status, and in
//!   the `dropped` count of its next batches, so a subscriber can account for the gap.
//! - **Broker errors in words**: [`Bridge::broker_error`] says what happened to the
//!   connection ("the broker closed the connection (connection reset)"), with the MQTT
//!   client's own account in [`BrokerError::detail`].
//! - **Status**: each robot's online/offline state is a retained message on its status
//!   topic; the bridge's own birth is retained on the bridge topic, and its last will there
//!   says offline if the bridge vanishes (then its robots are offline too). A broker that
//!   comes back without the bridge's session may have lost them: the bridge and every
//!   robot then publish their status again.
//! - **Subscribing**: [`Subscriber`] reads batches and statuses back and checks the
//!   sequence numbers; `rtde subscribe` writes the same CSV and raw captures as
//!   `rtde record`.
//!
//! # Reading the robots
//!
//! Each robot is read by rtde-core's async driver ([`rtde_core::tokio`]) as a task on the
//! bridge's one tokio runtime, next to the publishers: one runtime, not a thread per
//! robot. The reading side only fills the robots' queues; the publishing side sees
//! nothing else.
//!
//! ```no_run
//! use rtde_bridge::{Bridge, Config, StartOptions};
//!
//! let config = Config::read("bridge.toml".as_ref())?;
//! let bridge = Bridge::start(config, StartOptions::default())?;
//! // ... until told to stop:
//! let counts = bridge.shutdown();
//! assert_eq!(counts.queued(), 0, "the broker took everything");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod backoff;
mod bridge;
mod broker;
pub mod config;
mod error;
pub mod payload;
mod queue;
mod robot;
pub mod sparkplug;
pub mod subscriber;
mod tls;

pub use bridge::{Bridge, Counts, StartOptions};
pub use config::{Config, ConfigError, Format, Sparkplug};
pub use error::{BrokerError, Error};
pub use queue::{RobotCounts, packages_per_batch};
pub use subscriber::{Message, SequenceCheck, Subscriber, SubscriberError, Summary, Verdict};
pub use tls::Tls;

/// What the unit tests share.
#[cfg(test)]
mod fixtures {
    use rtde_core::fields::{ControllerVersion, Direction, lookup};
    use rtde_core::protocol::ProtocolVersion;
    use rtde_record::capture::Header;

    /// A protocol v2 stream of `timestamp` alone at 500 Hz, recipe 1.
    pub(crate) fn timestamp_stream() -> Header {
        Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 500.0,
            recipe_id: Some(1),
            started_unix_micros: 0,
            fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
        }
    }
}
