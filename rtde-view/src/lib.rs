//! RTDE telemetry in the tools robotics engineers already use: MCAP recordings that
//! Foxglove, Lichtblick, PlotJuggler, Rerun and the `mcap` Python package open, and a live
//! view over the Foxglove WebSocket protocol, with the arm drawn in 3D.
//!
//! - [`Recorder`] writes an MCAP file from a program's receive loop, as
//!   [`rtde_record::csv::CsvWriter`] writes CSV: one protobuf message per data package on
//!   the recipe's channel, the skipped packages and reconnections on a channel of their own, a
//!   metadata record describing the stream, zstd-compressed chunks cut every second of
//!   controller time; the arm's link frames and TCP pose, and the modes, each on a channel.
//!   [`Recorder::for_client`] starts it from a connected client in one call.
//!   `rtde record --format mcap` uses it.
//! - [`McapRecording`] records the same file on a thread of its own from a background
//!   driver's queue, started and stopped by the program (or by a package count or a
//!   duration, [`RecorderOptions::stop_after`]), as
//!   [`rtde_record::csv::CsvRecording`] does for CSV.
//! - [`convert`] turns a raw capture into MCAP, an MCAP recording back into CSV, an older
//!   MCAP recording into one with the arm's frames, and reads any channel's numbers.
//! - [`ViewServer`] serves the Foxglove WebSocket protocol: the recipe's values, the
//!   arm's link frames (`foxglove.FrameTransforms`), the TCP pose and the robot's modes.
//!   `rtde view` uses it.
//!
//! # The format
//!
//! | topic | encoding | schema | one message per |
//! | --- | --- | --- | --- |
//! | `/rtde/outputs` | protobuf (file), JSON (live) | `rtde.Outputs`: field `i + 1` is the recipe's field `i`, by its RTDE name | data package |
//! | `/rtde/gaps` | protobuf (file), JSON (live) | `rtde.Gap`: `kind` (`skipped` or `reconnection`), `packages`, `after`, `before` | gap |
//! | `/tf` | protobuf (file, unless [`RecorderOptions::frames`] is off), JSON (live) | `foxglove.FrameTransforms`: `base` → `shoulder` → … → `flange` | package with `actual_q` |
//! | `/tcp_pose` | protobuf (file, as `/tf`), JSON (live) | `foxglove.PoseInFrame` in `base` | package with `actual_TCP_pose` |
//! | `/rtde/modes` | protobuf (file), JSON (live) | `rtde.Modes`: `robot_mode`, `safety_mode` as UR names | package with either |
//!
//! Files carry every channel as protobuf, `/tf` and `/tcp_pose` with the descriptors of
//! Foxglove's published `.proto` schemas (same files, names and field numbers), so
//! Foxglove's 3D panel and Rerun draw the arm from a file. In the recipe's messages a
//! double stays its 8 bytes, so they cost no number formatting and read back bit for bit
//! (NaN included); their descriptor is made from the recipe, so no `.proto` file or
//! protobuf compiler is involved. The live view speaks JSON with JSON Schema
//! (`jsonschema`), which Foxglove's WebSocket protocol carries as well and a viewer or a
//! test client decodes without a descriptor; size does not matter on loopback. JSON values
//! are written as [`rtde_json`] writes them: shortest-exact doubles (a non-finite double,
//! which JSON cannot carry, is `null`).
//!
//! Each message's log time is the host time of the package by the robot-to-host mapping
//! ([`rtde_record::host_time`]); its publish time is the controller's `timestamp`.

#![forbid(unsafe_code)]

pub mod convert;
mod encode;
mod error;
mod protobuf;
mod recorder;
mod recording;
pub mod schema;
mod view;

pub use view::{SUBPROTOCOLS, ViewOptions, ViewServer, ViewStats};

pub use error::Error;
pub use recorder::{CHUNK_SECONDS, Recorder, RecorderCounts, RecorderOptions};
pub use recording::{McapRecording, McapSummary};

/// The topic of the recipe's values.
pub const OUTPUTS_TOPIC: &str = "/rtde/outputs";
/// The topic of the gaps: packages the controller skipped, reconnections.
pub const GAPS_TOPIC: &str = "/rtde/gaps";
/// The topic of the arm's link frames.
pub const TF_TOPIC: &str = "/tf";
/// The topic of the TCP pose.
pub const TCP_POSE_TOPIC: &str = "/tcp_pose";
/// The topic of the robot and safety modes as text.
pub const MODES_TOPIC: &str = "/rtde/modes";
/// The name of the MCAP metadata record that describes the stream.
pub const METADATA_NAME: &str = "rtde";
