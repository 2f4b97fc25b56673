//! The Dashboard server's protocol (TCP port 29999) without I/O: every command of
//! Universal Robots' CB3 and e-Series Dashboard server manuals, its reply, the line
//! framing, and the rules a client follows around each line.
//!
//! rtde-robot's `Dashboard` and `AsyncDashboard` send these [`Command`]s and parse these
//! [`Reply`]s; rtde-sim's Dashboard server parses the same commands and writes the
//! replies they read. Every command carries the controller version that added it
//! ([`COMMANDS`]); a command the controller lacks is refused before it is sent
//! ([`request`]).

mod command;
mod error;
mod line;
mod modes;
mod reply;
mod rules;
mod stranger;

pub use command::{COMMANDS, Command, CommandSpec, ParseCommandError};
pub use error::DashboardError;
pub use line::{LineBuffer, MAX_LINE};
pub use modes::{OperationalMode, UserRole};
pub use reply::{GREETING, ProgramState, Reply, parse as parse_reply};
pub use rules::{after_greeting, answer, check_greeting, request, version_from_reply, version_of};
pub use stranger::{GREETING_WAIT, PROBE_WAIT, Stranger, rtde_probe};
