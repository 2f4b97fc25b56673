//! The motion API's errors: refusals before sending, and the robot's verdicts after.

use crate::motion::limits::Refusal;

/// What went wrong with a motion command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MotionError {
    // The refusals are what went wrong, not a cause of it: the message says them, and
    // `source()` has nothing more to give (each cause is said once).
    /// A value was refused before anything was sent.
    #[error("nothing sent: {0}")]
    Refused(Refusal),
    /// A path's blend radius overlaps a neighbouring waypoint's; nothing was sent.
    #[error("nothing sent: {0}")]
    Blend(crate::motion::limits::BlendRefusal),
    /// A target pose is out of the arm's reach; nothing was sent.
    #[error("nothing sent: {0}")]
    OutOfReach(rtde_kinematics::Unreachable),
    /// Another refusal before sending (a path with no waypoint, a force mode type).
    #[error("nothing sent: {0}")]
    Invalid(String),
    /// The robot went into a protective stop; the program stopped.
    #[error(
        "protective stop: {message}; unlock it (Dashboard::unlock_protective_stop, 5 s after \
         the stop), then Robot::recover"
    )]
    ProtectiveStop {
        /// What the controller said, if it said anything.
        message: String,
    },
    /// The program's watchdog stopped the robot: the client's register did not change in
    /// time.
    #[error("watchdog: {message}; Robot::recover starts a new session")]
    Watchdog {
        /// What the controller said.
        message: String,
    },
    /// A target, or a point on the way, had no joint solution; the program stopped.
    #[error("target unreachable: {message}; Robot::recover, then a target within reach")]
    TargetUnreachable {
        /// What the controller said.
        message: String,
    },
    /// The program is not running (stopped from the pendant, a runtime error, or never
    /// started), or is paused (by a protective stop, the Dashboard or the pendant) and had
    /// not taken the command: the command is withdrawn, so a later `play` does not run it.
    #[error(
        "the command program is not running: {message}; Robot::recover sends it again (with \
         ProgramSource::Send), or start it on the pendant"
    )]
    ProgramStopped {
        /// What the controller said, and the program's own reason when it gave one.
        message: String,
    },
    /// A stop ([`Robot::stop_j`](super::Robot::stop_j), `stop_l`, `servo_stop`) cut the
    /// move short: the arm came to rest `at`, short of the target.
    #[error("the move was interrupted by a stop; the arm rests at {:?}", at.q)]
    Interrupted {
        /// Where the arm came to rest.
        at: super::Reached,
    },
    /// This program closed the [`Robot`](super::Robot) ([`Robot::close`](super::Robot::close),
    /// or dropping it) before the command finished: a move under way was stopped, and a
    /// handle's wait returns this at once. The link was not lost.
    #[error("the robot was closed by this program before the command finished")]
    Closed,
    /// The robot did not finish in the time given.
    #[error("the robot did not finish command {seq} within {waited:?}")]
    Timeout {
        /// The command's sequence number.
        seq: i32,
        /// How long the caller waited.
        waited: std::time::Duration,
    },
    /// The RTDE link or setup failed.
    #[error(transparent)]
    Rtde(#[from] rtde_core::Error),
    /// Sending the command program failed ([`ProgramSource::Send`](super::ProgramSource::Send)).
    #[error("the command program was not started")]
    Script(#[from] crate::script::ScriptError),
}

impl From<Refusal> for MotionError {
    fn from(refusal: Refusal) -> Self {
        MotionError::Refused(refusal)
    }
}

impl From<crate::motion::limits::BlendRefusal> for MotionError {
    fn from(refusal: crate::motion::limits::BlendRefusal) -> Self {
        MotionError::Blend(refusal)
    }
}

impl From<rtde_kinematics::Unreachable> for MotionError {
    fn from(unreachable: rtde_kinematics::Unreachable) -> Self {
        MotionError::OutOfReach(unreachable)
    }
}
