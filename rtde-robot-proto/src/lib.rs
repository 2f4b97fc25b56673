//! The Universal Robots controller's protocols besides RTDE, as codecs without I/O.
//!
//! One codec that both ends share (postgres-protocol's habit): rtde-robot's drivers speak
//! these messages to a controller, and rtde-sim answers them as a controller, so the two
//! cannot drift apart. Nothing here opens a socket, reads a clock or spawns a thread.
//!
//! - [`dashboard`]: the Dashboard server's (port 29999) commands, replies, modes and line
//!   framing, and the rules a client follows on connect.
//! - [`primary`]: the primary interface's messages (version, text, key, safety mode,
//!   runtime exception) over bytes.
//! - [`script`]: a program for the script ports, with the marker line that names it.
//! - [`ports`]: the controller's port numbers.
//! - [`programs`]: rtde's own robot programs, each with its URScript, its registers and its
//!   status codes in one folder.
//!
//! ```
//! use rtde_robot_proto::dashboard::{Command, Reply, parse_reply};
//!
//! let command: Command = "robotmode".parse()?;
//! let reply = parse_reply(&command, "Robotmode: RUNNING");
//! assert_eq!(reply, Some(Reply::RobotMode(rtde_core::RobotMode::Running)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

pub mod dashboard;
pub mod ports;
pub mod primary;
pub mod programs;
pub mod realtime;
pub mod script;
pub mod wire;
