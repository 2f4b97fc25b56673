//! The Dashboard server client (TCP port 29999): every command of Universal Robots' CB3
//! and e-Series Dashboard server manuals, typed.
//!
//! - [`Dashboard`] blocks; `AsyncDashboard` (feature `tokio`) awaits. Both send the
//!   same [`Command`]s and parse the same [`Reply`]s.
//! - Every command carries the controller version that added it ([`COMMANDS`]). The
//!   version comes from `PolyscopeVersion` on connect, or is declared
//!   ([`DashboardOptions::controller_version`]); a command the controller lacks is refused
//!   before anything is sent ([`DashboardError::Unsupported`]).
//! - A reply other than the command's success reply (`Failed to execute: play`,
//!   `File not found: pick.urp`) is [`DashboardError::Refused`], naming the command and
//!   quoting the controller.
//! - PolyScope X has no Dashboard server: connecting to one is
//!   [`DashboardError::PolyScopeX`].
//!
//! See `docs/dashboard.md` for the parity table against ur_rtde's `DashboardClient`.

mod blocking;
mod command;
mod error;
mod line;
mod methods;
mod mode_wait;
mod modes;
#[cfg(feature = "tokio")]
mod nonblocking;
mod options;
mod reply;

pub use blocking::Dashboard;
pub use command::{COMMANDS, Command, CommandSpec, ParseCommandError};
pub use error::DashboardError;
pub use mode_wait::{MODE_POLL, ModeWait};
pub use modes::{OperationalMode, UserRole};
#[cfg(feature = "tokio")]
pub use nonblocking::AsyncDashboard;
pub use options::{DASHBOARD_PORT, DashboardOptions};
pub use reply::{GREETING, ProgramState, Reply, parse as parse_reply};
