//! Waiting for a robot mode: the rule both Dashboard clients follow, each with its own sleep.

use std::time::{Duration, Instant};

use rtde_core::RobotMode;

use super::error::DashboardError;

/// How often a wait asks `robotmode`.
pub(crate) const MODE_POLL: Duration = Duration::from_millis(50);

/// A wait for `wanted`, given `within` from its start.
pub(crate) struct ModeWait {
    wanted: RobotMode,
    within: Duration,
    deadline: Instant,
}

impl ModeWait {
    pub(crate) fn new(wanted: RobotMode, within: Duration) -> ModeWait {
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
    /// where it is; `None` to ask again after [`MODE_POLL`].
    pub(crate) fn after(&self, last: RobotMode) -> Option<Result<(), DashboardError>> {
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
