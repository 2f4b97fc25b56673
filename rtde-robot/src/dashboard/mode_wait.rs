//! Waiting for a robot mode: the rule both Dashboard clients follow, each with its own
//! sleep, and that a binding with a loop of its own (one that lets Ctrl-C in) follows too.

use std::time::{Duration, Instant};

use rtde_core::RobotMode;

use rtde_robot_proto::dashboard::DashboardError;

/// How often a wait for a robot mode asks `robotmode`.
pub const MODE_POLL: Duration = Duration::from_millis(50);

/// A wait for the robot to be in a mode, given a time from its start: what
/// [`Dashboard::wait_for_robot_mode`](super::Dashboard::wait_for_robot_mode) follows, for a
/// loop of one's own.
///
/// ```
/// use std::time::Duration;
/// use rtde_core::RobotMode;
/// use rtde_robot::dashboard::{Dashboard, DashboardOptions, MODE_POLL, ModeWait};
///
/// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
/// let mut d = Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new())?;
/// d.power_on()?;
/// let wait = ModeWait::new(RobotMode::Idle, Duration::from_secs(10));
/// loop {
///     if let Some(end) = wait.after(d.robot_mode()?) {
///         break end?;
///     }
///     std::thread::sleep(MODE_POLL); // and whatever else the loop must watch
/// }
/// # Ok::<(), rtde_robot::dashboard::DashboardError>(())
/// ```
#[derive(Debug)]
pub struct ModeWait {
    wanted: RobotMode,
    within: Duration,
    deadline: Instant,
}

impl ModeWait {
    /// A wait for `wanted` that gives up `within` from now.
    #[must_use]
    pub fn new(wanted: RobotMode, within: Duration) -> ModeWait {
        ModeWait::starting_at(wanted, within, Instant::now())
    }

    fn starting_at(wanted: RobotMode, within: Duration, start: Instant) -> ModeWait {
        ModeWait {
            wanted,
            within,
            deadline: start + within,
        }
    }

    /// The wait's end once the robot said it is in `last`: reached, or out of time with
    /// where it is ([`DashboardError::ModeNotReached`]); `None` to ask again after
    /// [`MODE_POLL`].
    #[must_use]
    pub fn after(&self, last: RobotMode) -> Option<Result<(), DashboardError>> {
        self.after_at(last, Instant::now())
    }

    fn after_at(&self, last: RobotMode, now: Instant) -> Option<Result<(), DashboardError>> {
        if last == self.wanted {
            return Some(Ok(()));
        }
        (now >= self.deadline).then_some(Err(DashboardError::ModeNotReached {
            wanted: self.wanted,
            last,
            within: self.within,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITHIN: Duration = Duration::from_secs(2);

    #[test]
    fn the_mode_reached_ends_the_wait_even_at_its_deadline() {
        let start = Instant::now();
        let wait = ModeWait::starting_at(RobotMode::Idle, WITHIN, start);
        assert!(matches!(
            wait.after_at(RobotMode::Idle, start),
            Some(Ok(()))
        ));
        assert!(matches!(
            wait.after_at(RobotMode::Idle, start + WITHIN * 2),
            Some(Ok(()))
        ));
    }

    #[test]
    fn another_mode_asks_again_until_the_deadline_then_says_where_the_robot_is() {
        let start = Instant::now();
        let wait = ModeWait::starting_at(RobotMode::Running, WITHIN, start);
        assert!(wait.after_at(RobotMode::Idle, start).is_none());
        assert!(
            wait.after_at(RobotMode::Idle, start + WITHIN - Duration::from_millis(1))
                .is_none()
        );
        let Some(Err(DashboardError::ModeNotReached {
            wanted,
            last,
            within,
        })) = wait.after_at(RobotMode::Idle, start + WITHIN)
        else {
            panic!("the deadline ends the wait");
        };
        assert_eq!(
            (wanted, last, within),
            (RobotMode::Running, RobotMode::Idle, WITHIN)
        );
    }
}
