//! Run a Universal Robots arm from the host.
//!
//! rtde-core reads the arm and writes its registers; this crate makes it move. It is a
//! crate of its own so that a program that only reads telemetry does not carry the
//! Dashboard client, the script sender or the motion layer.
//!
//! The drivers are here; the protocols they speak (the Dashboard's lines, the primary
//! interface's messages, the script ports' framing, the robot programs' registers) are
//! [`rtde_robot_proto`]'s, without I/O, shared with the simulator and re-exported where
//! users name them.
//!
//! - [`dashboard`]: the Dashboard server (port 29999), blocking and async.
//! - [`script`]: sending programs to the script ports, and their fate.
//! - [`primary`]: the primary interface (30001, 30002): robot state at 10 Hz, calibrated
//!   kinematics and configuration among it, and robot messages, blocking and async.
//! - [`motion`]: motion as typed commands (`move_j`, `move_l`, paths with blends, speed
//!   and servo modes, stops, force and teach modes), checked before anything is sent, run by
//!   the command program `rtde_command.script` over RTDE registers.
//! - [`control`]: a control loop per package (state in, command out in the same cycle),
//!   with the watchdog, the waypoint handshake and deadline accounting of the servo
//!   program `rtde_servo.script`.

#![forbid(unsafe_code)]

pub mod control;
pub mod dashboard;
pub mod motion;
pub mod primary;
pub mod script;

/// The real-time interface's package (port 30003), as a codec over bytes.
pub use rtde_robot_proto::realtime;
