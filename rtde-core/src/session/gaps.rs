//! Counting the output packages a controller skipped, from the controller's own clock in
//! each package: the `timestamp` field, or `control_step` when the recipe has no
//! `timestamp`.

use rtde_fields::WireType;

use crate::protocol::timing;
use crate::recipe::RecipeSpec;

/// Which field of the recipe tells the controller's time, and where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClockField {
    /// `timestamp`: seconds since the controller started, a `DOUBLE`.
    Timestamp(usize),
    /// `control_step`: control-loop ticks, a `UINT64` (e-Series 5.26, PolyScope X 10.13).
    ControlStep(usize),
}

/// Watches the controller's clock in consecutive output packages.
///
/// The controller runs a control loop of fixed period (its tick: 8 ms on CB3, 2 ms later)
/// and sends an output package every `floor(loop rate / frequency)` ticks
/// ([`timing::ticks_per_package`]; a 400 Hz recipe on a 500 Hz loop therefore arrives every
/// 2 ms). The time between two packages, in ticks, tells exactly how many packages were
/// skipped in between; `timestamp` intervals are rounded to whole ticks, so jitter below
/// half a tick counts nothing, and `control_step` counts ticks outright. Both are kept as
/// seconds here (`control_step / loop rate`), which is exact for any step count a
/// controller reaches.
#[derive(Clone, Debug)]
pub(crate) struct GapCounter {
    /// Where the clock sits in the payload; `None`: no gap detection.
    clock: Option<ClockField>,
    loop_rate: f64,
    ticks_per_package: u64,
    last: Option<f64>,
}

impl GapCounter {
    /// No detection (no recipe yet).
    pub(crate) fn off() -> Self {
        GapCounter {
            clock: None,
            loop_rate: 1.0,
            ticks_per_package: 1,
            last: None,
        }
    }

    /// Detection for a recipe streamed at `frequency` by a controller whose loop runs at
    /// `loop_rate`: from `timestamp` when the recipe has it, else from `control_step`, else
    /// off.
    pub(crate) fn new(spec: &RecipeSpec<'_>, frequency: f64, loop_rate: f64) -> Self {
        let ticks_per_package = timing::ticks_per_package(loop_rate, frequency);
        GapCounter {
            clock: clock_field(spec),
            loop_rate,
            ticks_per_package,
            last: None,
        }
    }

    /// The field the counter reads, if any.
    #[cfg(test)]
    pub(crate) fn clock(&self) -> Option<ClockField> {
        self.clock
    }

    /// Whether the recipe carries a clock (`timestamp` or `control_step`) to count gaps with.
    pub(crate) fn is_active(&self) -> bool {
        self.clock.is_some()
    }

    /// Forgets the last timestamp: streaming restarts, and a pause is no gap.
    pub(crate) fn restart(&mut self) {
        self.last = None;
    }

    /// The clock of the last package observed, in seconds, carried across a reconnection.
    pub(crate) fn last(&self) -> Option<f64> {
        self.last
    }

    /// The controller's clock in `payload`, in seconds.
    fn timestamp(&self, payload: &[u8]) -> Option<f64> {
        let (offset, is_step) = match self.clock? {
            ClockField::Timestamp(o) => (o, false),
            ClockField::ControlStep(o) => (o, true),
        };
        let bytes = *payload.get(offset..)?.first_chunk::<8>()?;
        let seconds = if is_step {
            #[allow(clippy::cast_precision_loss)] // exact below 2^53 ticks (570 000 years)
            let ticks = u64::from_be_bytes(bytes) as f64;
            ticks / self.loop_rate
        } else {
            f64::from_be_bytes(bytes)
        };
        Some(seconds).filter(|t| t.is_finite())
    }

    /// The number of packages the controller sent (or would have) between a package of
    /// timestamp `previous`, the last before a reconnection, and this one, the first after
    /// it; `None` when the timestamps cannot tell: no `timestamp` in the recipe, or a clock
    /// that advanced less than `at_least` seconds (the time the link was down, as the
    /// client's clock saw it; a controller that restarted counts from zero again).
    /// Observes this package.
    pub(crate) fn lost_since(
        &mut self,
        previous: f64,
        payload: &[u8],
        at_least: f64,
    ) -> Option<u64> {
        let now = self.timestamp(payload)?;
        self.last = Some(now);
        if now <= previous || !previous.is_finite() || now - previous < at_least {
            return None;
        }
        let ticks = ((now - previous) * self.loop_rate).round();
        #[allow(clippy::cast_precision_loss)] // tick counts far below 2^52
        let intervals = (ticks / self.ticks_per_package as f64).round();
        Some(whole_packages(intervals - 1.0))
    }

    /// The number of packages skipped between the previous package and this one.
    pub(crate) fn observe(&mut self, payload: &[u8]) -> u64 {
        let Some(now) = self.timestamp(payload) else {
            return 0;
        };
        let Some(previous) = self.last.replace(now) else {
            return 0;
        };
        timing::skipped_between(previous, now, self.loop_rate, self.ticks_per_package)
    }
}

/// The clock field of a recipe: `timestamp` (a `DOUBLE`) first, else `control_step` (a
/// `UINT64`).
fn clock_field(spec: &RecipeSpec<'_>) -> Option<ClockField> {
    let find = |name: &str, ty: WireType| {
        spec.names()
            .iter()
            .zip(spec.types())
            .any(|(n, t)| *n == name && *t == ty)
            .then(|| spec.offset_of(name))
            .flatten()
    };
    find("timestamp", WireType::Double)
        .map(ClockField::Timestamp)
        .or_else(|| find("control_step", WireType::Uint64).map(ClockField::ControlStep))
}

/// A non-negative count from a rounded float, saturating far above any real gap.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped to 0..=2^32 first
pub(super) fn whole_packages(x: f64) -> u64 {
    x.clamp(0.0, 4_294_967_296.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtde_fields::Direction;

    fn payload(t: f64) -> [u8; 56] {
        let mut p = [0u8; 56];
        p[48..].copy_from_slice(&t.to_be_bytes());
        p
    }

    fn counter(frequency: f64, loop_rate: f64) -> GapCounter {
        let spec = RecipeSpec::new(
            Direction::Output,
            &["actual_q", "timestamp"],
            &[WireType::Vector6d, WireType::Double],
        );
        GapCounter::new(&spec, frequency, loop_rate)
    }

    #[test]
    fn counts_exactly_when_the_frequency_divides_the_loop() {
        let mut g = counter(250.0, 500.0);
        let ticks = [0u32, 2, 4, 10, 12, 14, 22];
        let skipped: Vec<u64> = ticks
            .iter()
            .map(|&t| g.observe(&payload(1000.0 + f64::from(t) * 0.002)))
            .collect();
        assert_eq!(skipped, [0, 0, 0, 2, 0, 0, 3]);
    }

    #[test]
    fn a_frequency_that_does_not_divide_the_loop_streams_every_floor_ticks() {
        // 400 Hz on a 500 Hz loop: floor(1.25) = 1, a package every 2 ms tick.
        let mut g = counter(400.0, 500.0);
        let mut t = 0.0;
        let mut skipped = 0;
        for _ in 0..10 {
            t += 0.002;
            skipped += g.observe(&payload(t));
        }
        assert_eq!(skipped, 0);
        // A 10 ms hole is 5 ticks: 4 skipped.
        t += 0.010;
        assert_eq!(g.observe(&payload(t)), 4);
        // 10 Hz on CB3: floor(12.5) = 12 ticks of 8 ms, 96 ms apart.
        let mut g = counter(10.0, 125.0);
        assert_eq!(g.observe(&payload(0.0)), 0);
        assert_eq!(g.observe(&payload(0.096)), 0);
        assert_eq!(g.observe(&payload(0.096 * 3.0)), 1);
    }

    #[test]
    fn restarting_and_odd_timestamps_count_nothing() {
        let mut g = counter(125.0, 125.0);
        assert_eq!(g.observe(&payload(1.0)), 0);
        g.restart();
        assert_eq!(g.observe(&payload(100.0)), 0);
        assert_eq!(g.observe(&payload(99.0)), 0);
        assert_eq!(g.observe(&payload(f64::NAN)), 0);
        assert_eq!(g.observe(&payload(f64::INFINITY)), 0);
        assert_eq!(whole_packages(1e300), 4_294_967_296);
    }

    #[test]
    fn lost_across_a_reconnection_from_the_timestamps() {
        // 250 Hz on a 500 Hz loop: 4 ms apart. Last before: 10.000; first after: 10.100,
        // 25 periods later, so 24 packages lost.
        let mut g = counter(250.0, 500.0);
        assert_eq!(g.lost_since(10.0, &payload(10.1), 0.05), Some(24));
        assert_eq!(g.last(), Some(10.1));
        // The next package follows on regularly.
        assert_eq!(g.observe(&payload(10.104)), 0);
        // Back to back: none lost.
        let mut g = counter(250.0, 500.0);
        assert_eq!(g.lost_since(1.0, &payload(1.004), 0.0), Some(0));
        // A restarted controller's clock tells nothing: behind the last timestamp, or ahead
        // of it by less than the link was down.
        let mut g = counter(250.0, 500.0);
        assert_eq!(g.lost_since(900.0, &payload(0.5), 0.0), None);
        let mut g = counter(250.0, 500.0);
        assert_eq!(g.lost_since(1.0, &payload(1.5), 2.0), None);
        let mut g = counter(250.0, 500.0);
        assert_eq!(g.lost_since(1.0, &payload(f64::NAN), 0.0), None);
    }

    fn step_payload(step: u64) -> [u8; 56] {
        let mut p = [0u8; 56];
        p[..8].copy_from_slice(&step.to_be_bytes());
        p
    }

    fn step_counter(frequency: f64) -> GapCounter {
        let spec = RecipeSpec::new(
            Direction::Output,
            &["control_step", "actual_q"],
            &[WireType::Uint64, WireType::Vector6d],
        );
        GapCounter::new(&spec, frequency, 500.0)
    }

    #[test]
    fn control_step_counts_gaps_when_there_is_no_timestamp() {
        // 250 Hz on 500 Hz: a package every 2 steps.
        let mut g = step_counter(250.0);
        assert_eq!(g.clock(), Some(ClockField::ControlStep(0)));
        let base = 7_000_000_000u64;
        let steps = [0u64, 2, 4, 10, 12, 20];
        let skipped: Vec<u64> = steps
            .iter()
            .map(|&s| g.observe(&step_payload(base + s)))
            .collect();
        assert_eq!(skipped, [0, 0, 0, 2, 0, 3]);
        // Across a reconnection: 100 steps later is 50 intervals, 49 lost.
        let last = g.last().unwrap();
        let mut g = step_counter(250.0);
        assert_eq!(g.lost_since(last, &step_payload(base + 120), 0.0), Some(49));
        // A step counter that went backwards (a restarted controller) tells nothing.
        assert_eq!(g.observe(&step_payload(3)), 0);
    }

    #[test]
    fn timestamp_wins_over_control_step() {
        let spec = RecipeSpec::new(
            Direction::Output,
            &["control_step", "timestamp"],
            &[WireType::Uint64, WireType::Double],
        );
        let g = GapCounter::new(&spec, 500.0, 500.0);
        assert_eq!(g.clock(), Some(ClockField::Timestamp(8)));
        // A `control_step` of another type is no clock.
        let spec = RecipeSpec::new(Direction::Output, &["control_step"], &[WireType::Double]);
        assert_eq!(GapCounter::new(&spec, 500.0, 500.0).clock(), None);
    }

    #[test]
    fn no_timestamp_no_detection() {
        let spec = RecipeSpec::new(Direction::Output, &["actual_q"], &[WireType::Vector6d]);
        let mut g = GapCounter::new(&spec, 500.0, 500.0);
        assert!(!g.is_active());
        assert_eq!(g.observe(&[0; 48]), 0);
        assert_eq!(g.lost_since(1.0, &[0; 48], 0.0), None);
    }
}
