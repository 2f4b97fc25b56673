//! When a recording ends by itself: after a number of packages, or a span of controller
//! time. `rtde record --samples` / `--duration` and the recordings a program starts share
//! this rule.

use std::time::Duration;

/// When a recording ends by itself; [`StopAfter::default`] never does.
///
/// A duration `d` takes the packages whose `timestamp`s fall in `[t0, t0 + d)`, `t0` the
/// first's, so `d` at f Hz is `d·f` packages when the controller skips none (the definition
/// `rtde replay` announces its length by). Half a period of slack absorbs the rounding of
/// timestamps, at most half the duration, so the first package is always in it.
///
/// ```
/// use std::time::Duration;
/// use rtde_record::stop::StopAfter;
///
/// let stop = StopAfter::duration(Duration::from_secs(1));
/// let period = 0.002; // 500 Hz
/// assert!(stop.admits(0, 0.998, period)); // the 500th package
/// assert!(!stop.admits(0, 1.0, period)); // the 501st is past the second
/// assert!(StopAfter::packages(3).is_complete(3, 0.004, period));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct StopAfter {
    /// At most this many packages.
    pub packages: Option<u64>,
    /// At most this much controller time from the first package.
    pub duration: Option<Duration>,
}

impl StopAfter {
    /// Ends after `n` packages.
    #[must_use]
    pub fn packages(n: u64) -> Self {
        StopAfter {
            packages: Some(n),
            duration: None,
        }
    }

    /// Ends after `d` of controller time.
    #[must_use]
    pub fn duration(d: Duration) -> Self {
        StopAfter {
            packages: None,
            duration: Some(d),
        }
    }

    /// Whether a package belongs in the recording: `written` packages are in it, and this
    /// one is `offset` seconds of controller time after the first (0 for the first, or
    /// for a recipe without `timestamp`), at `period` seconds between packages.
    #[must_use]
    pub fn admits(&self, written: u64, offset: f64, period: f64) -> bool {
        self.packages.is_none_or(|n| written < n)
            && self.duration.is_none_or(|d| within(d, period, offset))
    }

    /// Whether the recording is complete with `written` packages, the last `offset`
    /// seconds after the first: the next would not be admitted (no need to wait for it:
    /// a replay may have none to send).
    #[must_use]
    pub fn is_complete(&self, written: u64, offset: f64, period: f64) -> bool {
        !self.admits(written, offset + period, period)
    }
}

fn within(d: Duration, period: f64, offset: f64) -> bool {
    let d = d.as_secs_f64();
    offset <= d - (period / 2.0).min(d / 2.0)
}
