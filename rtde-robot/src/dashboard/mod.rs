//! The Dashboard server client (TCP port 29999): every command of Universal Robots' CB3
//! and e-Series Dashboard server manuals, typed.
//!
//! The drivers are here; the commands, replies and rules they follow are
//! `rtde_robot_proto::dashboard`'s, re-exported, which the simulator's server shares.
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
mod methods;
mod mode_wait;
#[cfg(feature = "tokio")]
mod nonblocking;
mod options;

pub use blocking::Dashboard;
pub use mode_wait::{MODE_POLL, ModeWait};
#[cfg(feature = "tokio")]
pub use nonblocking::AsyncDashboard;
pub use options::DashboardOptions;
pub use rtde_robot_proto::dashboard::{
    COMMANDS, Command, CommandSpec, DashboardError, GREETING, OperationalMode, ParseCommandError,
    ProgramState, Reply, Stranger, UserRole, parse_reply,
};
pub use rtde_robot_proto::ports::DASHBOARD_PORT;
