//! The motion commands' defaults, in one table that every API reads: the Rust builders
//! ([`JointMove::to`](super::JointMove::to), [`LinearMove::to`](super::LinearMove::to)),
//! [`Robot::close`](super::Robot::close), the Python API and its ur_rtde layer. They are
//! ur_rtde's, so that code moved from it moves the same way.
//!
//! ```
//! use rtde_robot::motion::{JointMove, defaults};
//!
//! let m = JointMove::to([0.0, -1.57, 1.57, -1.57, -1.57, 0.0]);
//! assert_eq!((m.speed, m.accel), (defaults::JOINT_SPEED, defaults::JOINT_ACCELERATION));
//! ```

/// `move_j`'s speed of the leading joint, rad/s.
pub const JOINT_SPEED: f64 = 1.05;
/// `move_j`'s acceleration of the leading joint, rad/s².
pub const JOINT_ACCELERATION: f64 = 1.4;
/// `move_l`'s tool speed, m/s.
pub const TOOL_SPEED: f64 = 0.25;
/// `move_l`'s tool acceleration, m/s².
pub const TOOL_ACCELERATION: f64 = 1.2;
/// `speed_j`'s acceleration, rad/s².
pub const SPEED_J_ACCELERATION: f64 = 0.5;
/// `speed_l`'s acceleration, m/s².
pub const SPEED_L_ACCELERATION: f64 = 0.25;
/// `stop_j`'s deceleration, rad/s²; also [`Robot::close`](super::Robot::close)'s.
pub const STOP_J_DECELERATION: f64 = 2.0;
/// `stop_l`'s, `speed_stop`'s and `servo_stop`'s deceleration (m/s² for `stop_l`, rad/s²
/// for the others, as ur_rtde gives them).
pub const STOP_DECELERATION: f64 = 10.0;
/// `servo_j`'s time per target, s: one e-Series control cycle.
pub const SERVO_TIME: f64 = 0.008;
/// `servo_j`'s look-ahead time, s.
pub const SERVO_LOOKAHEAD: f64 = 0.1;
/// `servo_j`'s gain.
pub const SERVO_GAIN: f64 = 300.0;
