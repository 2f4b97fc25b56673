//! The simulated clock: which tick of the controller's loop has happened when, at a rate
//! and a speed. Connections, and a fleet's one clock thread, pace their streams by it.

use std::time::{Duration, Instant};

/// The simulated clock: tick `n` happens `n / (rate × speed)` seconds after `epoch`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    epoch: Instant,
    rate: u32,
    /// Simulated seconds per wall-clock second, in millionths: 1 000 000 is real time.
    speed_ppm: u64,
}

/// Nanoseconds per second times parts per million: the denominator of the clock's rate.
const NANOS_PPM: u128 = 1_000_000_000 * 1_000_000;

impl Clock {
    /// A clock starting now, ticking `rate` times per simulated second, `speed_ppm`
    /// millionths of a simulated second per wall-clock second.
    pub(crate) fn new(rate: u32, speed_ppm: u64) -> Self {
        Clock {
            epoch: Instant::now(),
            rate,
            speed_ppm: speed_ppm.max(1),
        }
    }

    /// The same clock started again: tick 0 is now.
    pub(crate) fn restarted(self) -> Self {
        Clock {
            epoch: Instant::now(),
            ..self
        }
    }

    /// Ticks per wall-clock second, times [`NANOS_PPM`] / 1e9.
    fn scale(&self) -> u128 {
        u128::from(self.rate) * u128::from(self.speed_ppm)
    }

    /// The last tick that has happened at `now`.
    pub(crate) fn tick_at(&self, now: Instant) -> u64 {
        self.ticks_in(now.saturating_duration_since(self.epoch))
    }

    /// The number of ticks in `d` of wall-clock time, rounded down.
    pub(crate) fn ticks_in(&self, d: Duration) -> u64 {
        u64::try_from(d.as_nanos() * self.scale() / NANOS_PPM).unwrap_or(u64::MAX)
    }

    /// When tick `tick` happens: rounded up to the nanosecond, so that `tick_at` of it is
    /// `tick` (exact while a tick lasts longer than a nanosecond).
    pub(crate) fn instant_of(&self, tick: u64) -> Instant {
        let nanos = (u128::from(tick) * NANOS_PPM).div_ceil(self.scale());
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        self.epoch + Duration::from_nanos(nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_ticks_and_instants_agree() {
        let clock = Clock::new(500, 1_000_000);
        for tick in [0, 1, 2, 499, 500, 1_000_003] {
            let at = clock.instant_of(tick);
            assert_eq!(clock.tick_at(at), tick);
            assert_eq!(clock.tick_at(at + Duration::from_micros(1999)), tick);
        }
        let cb3 = Clock::new(125, 1_000_000);
        assert_eq!(cb3.instant_of(125) - cb3.epoch, Duration::from_secs(1));
    }

    #[test]
    fn a_faster_clock_ticks_faster_and_still_agrees() {
        // Ten times real time: 500 Hz ticks every 0.2 ms.
        let fast = Clock::new(500, 10_000_000);
        assert_eq!(fast.instant_of(5000) - fast.epoch, Duration::from_secs(1));
        assert_eq!(fast.ticks_in(Duration::from_millis(100)), 500);
        // A third of real time, where ticks do not fall on whole nanoseconds.
        let slow = Clock::new(125, 333_333);
        for tick in [0, 1, 2, 3, 124, 125, 999_999] {
            let at = slow.instant_of(tick);
            assert_eq!(slow.tick_at(at), tick);
            assert_eq!(
                slow.tick_at(at - Duration::from_nanos(1)),
                tick.saturating_sub(1)
            );
        }
        let restarted = slow.restarted();
        assert!(restarted.epoch >= slow.epoch);
        assert_eq!(restarted.tick_at(restarted.epoch), 0);
    }
}
