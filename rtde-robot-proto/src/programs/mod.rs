//! rtde's own robot programs, one folder each: the URScript a controller runs, the
//! registers it reads and writes, and the codes it reports, so that changing a register
//! is one edit that the script's checks, the client and the simulator all see.
//!
//! - [`command`]: `rtde_command.script`, rtde-robot's motion commands over registers.
//! - [`servo`]: `rtde_servo.script`, waypoints from the control-loop kit.
//!
//! ```
//! use rtde_robot_proto::programs::{command, servo};
//!
//! assert!(command::SCRIPT.contains(command::MARKER));
//! assert!(servo::SCRIPT.contains(servo::MARKER));
//! ```

pub mod command;
pub mod servo;

/// Each program stops the arm when its watchdog register has not changed for this many of
/// its cycles (the controller's loop: 100 ms on e-Series at 500 Hz, 400 ms on CB3).
pub const WATCHDOG_TIMEOUT_CYCLES: u32 = 50;
