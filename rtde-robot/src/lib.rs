//! Run a Universal Robots arm from the host.
//!
//! rtde-core reads the arm and writes its registers; this crate makes it move. It is a
//! crate of its own so that a program that only reads telemetry does not carry the
//! Dashboard client, the script sender or the motion layer.
//!
//! - [`dashboard`]: the Dashboard server (port 29999), blocking and async.
//! - [`script`]: sending programs to the script ports, and their fate.
//! - [`primary`]: the primary interface's messages, as a codec over bytes.
//! - [`motion`]: motion as typed commands (`move_j`, `move_l`, paths with blends, speed
//!   and servo modes, stops, force and teach modes), checked before anything is sent, run by
//!   the command program `urscript/rtde_command.script` over RTDE registers.

#![forbid(unsafe_code)]

pub mod dashboard;
pub mod motion;
pub mod primary;
pub mod script;
