//! The primary interface (port 30001; the secondary, 30002, sends the same without the
//! robot messages): the controller's robot state about every 100 ms, its calibrated
//! kinematics and configuration among it, and robot messages as things happen.
//!
//! [`PrimaryClient`] blocks; `AsyncPrimaryClient` (feature `tokio`) awaits. Both decode
//! with `rtde_robot_proto::primary`'s [`Decoder`], re-exported here with every type of
//! the robot state, which the simulator's server encodes with: robot state messages are
//! decoded without allocating, unknown packages and sub-packages are skipped and counted
//! ([`DecoderStats`]), never a panic.
//!
//! ```no_run
//! use rtde_robot::primary::{Decoded, PrimaryClient};
//!
//! # fn main() -> Result<(), rtde_robot::primary::PrimaryError> {
//! let mut primary = PrimaryClient::connect("192.168.1.10:30001")?;
//! println!("controller {}", primary.version());
//! loop {
//!     match primary.recv()? {
//!         Decoded::State { state, .. } => {
//!             if let Some(joints) = &state.joints {
//!                 println!("q = {:?}", joints.q_actual());
//!             }
//!         }
//!         Decoded::Message(message) => println!("{message:?}"),
//!         _ => {}
//!     }
//! }
//! # }
//! ```

mod arm;
mod blocking;
mod error;
#[cfg(feature = "tokio")]
mod nonblocking;

pub use arm::{calibrated_arm, model_of};
pub use blocking::PrimaryClient;
pub use error::PrimaryError;
#[cfg(feature = "tokio")]
pub use nonblocking::AsyncPrimaryClient;
pub use rtde_robot_proto::primary::*;

use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::fields::ControllerVersion;

/// The version the first package of a connection carries: every connection starts with
/// the version message.
pub(crate) fn first_version(
    addr: SocketAddr,
    first: Decoded<'_>,
) -> Result<ControllerVersion, PrimaryError> {
    match first {
        Decoded::Message(PrimaryMessage::Version { version, .. }) => Ok(version),
        _ => Err(PrimaryError::NoVersion { addr }),
    }
}

/// How long a client waits for the next package by default: ten times the period a
/// controller sends robot state at.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
