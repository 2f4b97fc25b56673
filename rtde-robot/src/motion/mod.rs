//! Motion as typed commands, run by the command program `rtde_command.script`
//! (`rtde_robot_proto::programs::command`, where its registers are defined) over RTDE
//! registers.
//!
//! [`Robot::connect`] sends the program through the script port ([`ProgramSource::Send`])
//! or attaches to it (installed on the pendant and playing, or the simulator's
//! `SimBuilder::command_program`), and offers each command blocking and
//! non-blocking: [`Robot::move_j`] returns where the arm got to, [`Robot::start_move_j`] a
//! [`MoveHandle`] whose [`wait`](MoveHandle::wait) does, or says why not in a typed error
//! ([`MotionError::ProtectiveStop`], [`MotionError::Watchdog`],
//! [`MotionError::ProgramStopped`], [`MotionError::TargetUnreachable`]). Every value is
//! checked against its limit ([`limits`]) and every `move_l` target against the arm's
//! reach before anything is sent. While a move runs, [`Robot::state`] gives its progress
//! and whether the arm is steady.
//!
//! The registers are [`CommandLayout`]'s (int 30–39 and double 30–47 by default, or the
//! lower range); a keeper thread changes the watchdog register with every package, so the
//! program stops the robot when the client goes.
//!
//! ```
//! use rtde_robot::motion::{JointMove, LinearMove, MotionOptions, Robot};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sim = rtde_sim::Sim::builder().command_program().deterministic().start()?;
//! let robot = Robot::connect(sim.addr(), MotionOptions::new())?;
//! let home = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
//! let reached = robot.move_j(JointMove::to(home).speed(1.0).accel(2.0))?;
//! let mut below = reached.tcp_pose;
//! below[2] -= 0.05;
//! let handle = robot.start_move_l(LinearMove::to(below))?;
//! let _progress = robot.state().progress; // readable while the move runs
//! let down = handle.wait()?;
//! assert!((down.tcp_pose[2] - below[2]).abs() < 1e-6);
//! robot.close()?;
//! # Ok(()) }
//! ```

mod blocking;
mod command;
pub mod defaults;
mod error;
mod kinematics;
pub mod limits;
#[cfg(feature = "tokio")]
mod nonblocking;
mod options;
mod plan;
mod recipes;
mod session;

pub use blocking::{MoveHandle, Robot};
pub use command::{ForceMode, ForceModeType, JointMove, LinearMove};
pub use error::MotionError;
pub use kinematics::Kinematics;
pub use limits::Refusal;
#[cfg(feature = "tokio")]
pub use nonblocking::{AsyncMoveHandle, AsyncRobot};
pub use options::{MotionOptions, ProgramSource};
pub use rtde_kinematics::Arm;
pub use rtde_robot_proto::programs::command::{
    CommandLayout, ProgramState, SCRIPT as COMMAND_PROGRAM, command_program, layout_of,
};
pub use session::{Reached, RobotState, STEADY_SPEED};
