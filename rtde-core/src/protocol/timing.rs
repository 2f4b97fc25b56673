//! The controller's output pacing: which control-loop ticks carry an output package.
//!
//! The controller sends an output package every `floor(loop rate / frequency)` ticks of its
//! control loop, as the RTDE guide states. A frequency that does not divide the loop rate
//! therefore streams faster than asked: 400 Hz on a 500 Hz loop is one package per tick,
//! 500 Hz in effect. This module is the one place that rule is written; the client's period,
//! gap counting and loss estimates, and the simulator's pacing, all ask it.

/// The number of control-loop ticks between two output packages for a recipe asked at
/// `frequency` on a loop of `loop_rate` hertz: `floor(loop_rate / frequency)`, at least 1.
///
/// A frequency that is not a positive number, or a ratio too large to count, gives
/// `u64::MAX` ticks (no package in any bounded time) rather than a panic.
///
/// ```
/// use rtde_core::protocol::timing::ticks_per_package;
///
/// assert_eq!(ticks_per_package(500.0, 500.0), 1);
/// assert_eq!(ticks_per_package(500.0, 400.0), 1); // floor(1.25)
/// assert_eq!(ticks_per_package(125.0, 10.0), 12); // floor(12.5)
/// ```
#[must_use]
pub fn ticks_per_package(loop_rate: f64, frequency: f64) -> u64 {
    let ratio = (loop_rate / frequency).floor();
    if ratio.is_nan() || ratio < 1.0 {
        // Above the loop rate (refused by controllers) the loop still cannot go faster.
        return if frequency > 0.0 { 1 } else { u64::MAX };
    }
    if ratio >= 18_446_744_073_709_551_615.0 {
        return u64::MAX;
    }
    // In 1..2^64 and whole: the cast is exact enough and cannot wrap.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ticks = ratio as u64;
    ticks
}

/// The rate at which output packages actually arrive for a recipe asked at `frequency` on
/// a loop of `loop_rate` hertz: `loop_rate / floor(loop_rate / frequency)`.
///
/// ```
/// use rtde_core::protocol::timing::effective_frequency;
///
/// assert_eq!(effective_frequency(500.0, 400.0), 500.0);
/// assert_eq!(effective_frequency(500.0, 250.0), 250.0);
/// assert!((effective_frequency(125.0, 10.0) - 125.0 / 12.0).abs() < 1e-12);
/// ```
#[must_use]
pub fn effective_frequency(loop_rate: f64, frequency: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // tick counts far below 2^52 in practice
    let ticks = ticks_per_package(loop_rate, frequency) as f64;
    loop_rate / ticks
}

/// The number of output packages the controller skipped between two consecutive ones it
/// sent, at controller times `previous` and `now` (seconds, the `timestamp` field), on a
/// loop of `loop_rate` hertz that sends a package every `ticks_per_package` ticks
/// ([`ticks_per_package`]). The interval is rounded to
/// whole ticks, so jitter below half a tick counts nothing; a time that went backwards or
/// stood still is no gap either.
///
/// The client's skip counter and the recordings' gap records both count with it.
///
/// ```
/// use rtde_core::protocol::timing::skipped_between;
///
/// assert_eq!(skipped_between(1.0, 1.002, 500.0, 1), 0);
/// assert_eq!(skipped_between(1.0, 1.006, 500.0, 1), 2);
/// assert_eq!(skipped_between(1.0, 1.016, 500.0, 4), 1);
/// assert_eq!(skipped_between(1.0, 0.5, 500.0, 1), 0);
/// ```
#[must_use]
pub fn skipped_between(previous: f64, now: f64, loop_rate: f64, ticks_per_package: u64) -> u64 {
    #[allow(clippy::cast_precision_loss)] // tick counts far below 2^52 in practice
    let ticks_per_package = ticks_per_package as f64;
    let ticks = ((now - previous) * loop_rate).round();
    // A NaN interval is no gap either.
    if ticks.is_nan() || ticks <= ticks_per_package {
        return 0;
    }
    let intervals = (ticks / ticks_per_package).round();
    // Clamped to what a counter can hold; a positive, whole number.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let skipped = (intervals - 1.0).clamp(1.0, 4_294_967_296.0) as u64;
    skipped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_that_do_not_divide_the_loop_stream_faster_than_asked() {
        assert_eq!(effective_frequency(500.0, 300.0), 500.0);
        assert_eq!(effective_frequency(500.0, 200.0), 250.0);
        assert_eq!(effective_frequency(125.0, 100.0), 125.0);
        assert_eq!(ticks_per_package(125.0, 60.0), 2);
    }

    #[test]
    fn odd_frequencies_do_not_panic() {
        assert_eq!(ticks_per_package(500.0, 0.0), u64::MAX);
        assert_eq!(ticks_per_package(500.0, -1.0), u64::MAX);
        assert_eq!(ticks_per_package(500.0, f64::NAN), u64::MAX);
        assert_eq!(ticks_per_package(500.0, 1e-300), u64::MAX);
        assert_eq!(ticks_per_package(500.0, 1000.0), 1);
        assert!(effective_frequency(500.0, 1e-300) > 0.0);
    }
}
