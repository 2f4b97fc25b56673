//! The waits between the bridge's reconnection rounds, to a robot or to the broker: a
//! [`ReconnectPolicy`]'s backoff ([`ReconnectPolicy::backoff_before`]), counted over the
//! rounds that failed in a row, so the bridge waits as rtde-core's drivers do.

use std::time::Duration;

use rtde_core::ReconnectPolicy;

/// The broker's: from 50 ms, doubling up to 1 s; the bridge tries again for as long as
/// it runs, so the policy's number of attempts plays no part.
pub(crate) const BROKER: ReconnectPolicy = ReconnectPolicy::new()
    .initial_backoff(Duration::from_millis(50))
    .max_backoff(Duration::from_secs(1));

/// The failures in a row under a policy, and so the wait before the next try.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    policy: ReconnectPolicy,
    failures: u32,
}

impl Backoff {
    pub(crate) const fn new(policy: ReconnectPolicy) -> Self {
        Backoff {
            policy,
            failures: 0,
        }
    }

    /// A try failed: the wait before the next, the policy's wait before the attempt
    /// that follows as many failed ones.
    pub(crate) fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.policy.backoff_before(self.failures.saturating_add(1))
    }

    /// A try succeeded: the next failure waits the initial backoff again.
    pub(crate) fn succeeded(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(backoff: &mut Backoff, n: usize) -> Vec<u128> {
        (0..n).map(|_| backoff.failed().as_millis()).collect()
    }

    #[test]
    fn failures_in_a_row_wait_the_policys_backoff_and_a_success_starts_it_again() {
        let policy = ReconnectPolicy::new()
            .attempts(2)
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_millis(500));
        let mut backoff = Backoff::new(policy);
        // Rounds go on past the policy's attempts, at its maximum.
        assert_eq!(waits(&mut backoff, 6), [100, 200, 400, 500, 500, 500]);
        backoff.succeeded();
        assert_eq!(waits(&mut backoff, 2), [100, 200]);
    }

    #[test]
    fn the_broker_waits_from_50_ms_up_to_a_second() {
        let mut backoff = Backoff::new(BROKER);
        assert_eq!(waits(&mut backoff, 7), [50, 100, 200, 400, 800, 1000, 1000]);
    }
}
