//! Streaming against rtde-sim: a source that stamps each package with its send time, and
//! the CPU time of the calling thread.
//!
//! The simulator calls [`OutputSource::sample`] for a package right before it encodes and
//! writes it, so a time taken there is the package's send time, give or take the encoding.
//! The simulator runs in the bench's process; both sides read one [`Instant`] epoch, and
//! the stamp travels as nanoseconds since it in `actual_digital_output_bits` (`UINT64`,
//! exact), a field of the reference recipe. No hook in the simulator was needed: its
//! [`SimBuilder::source`](rtde_sim::SimBuilder::source) is the hook.

use std::time::{Duration, Instant};

use rtde_core::Value;
use rtde_core::fields::Field;
use rtde_sim::{IoState, OutputSource, Sample, Tick};

use crate::{REFERENCE_NAMES, sample};

/// Streams the reference recipe: [`sample`] values at each tick's simulated time, and the
/// send time in `actual_digital_output_bits`.
#[derive(Clone, Copy, Debug)]
pub struct Stamping {
    epoch: Instant,
}

impl Stamping {
    /// Stamps nanoseconds since `epoch`.
    #[must_use]
    pub fn new(epoch: Instant) -> Stamping {
        Stamping { epoch }
    }
}

/// Nanoseconds from `epoch` to `now`, saturating.
#[must_use]
pub fn nanos_since(epoch: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
}

impl OutputSource for Stamping {
    fn provides(&self, field: &'static Field) -> bool {
        REFERENCE_NAMES.contains(&field.name())
    }

    fn sample(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        _: &IoState,
        out: &mut [Value],
    ) -> Sample {
        let r = sample(tick.seconds());
        let mut stamp = None;
        for (i, (field, value)) in fields.iter().zip(out.iter_mut()).enumerate() {
            *value = match field.name() {
                "timestamp" => Value::Double(r.timestamp),
                "actual_q" => Value::Vector6d(r.actual_q),
                "actual_qd" => Value::Vector6d(r.actual_qd),
                "actual_TCP_pose" => Value::Vector6d(r.actual_tcp_pose),
                "actual_TCP_speed" => Value::Vector6d(r.actual_tcp_speed),
                "actual_TCP_force" => Value::Vector6d(r.actual_tcp_force),
                "actual_digital_input_bits" => Value::Uint64(r.actual_digital_input_bits),
                "actual_digital_output_bits" => {
                    stamp = Some(i);
                    continue;
                }
                "robot_mode" => Value::Int32(r.robot_mode),
                "safety_status" => Value::Int32(r.safety_status),
                _ => continue,
            };
        }
        // Last, as close to the write as the source can be.
        if let Some(slot) = stamp.and_then(|i| out.get_mut(i)) {
            *slot = Value::Uint64(nanos_since(self.epoch, Instant::now()));
        }
        Sample::Send
    }
}

/// The CPU time the calling thread has used, from `/proc/thread-self/schedstat`
/// (nanoseconds, no sampling granularity); `None` where the kernel does not provide it.
#[must_use]
pub fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// The simulated tick of a reference package's `timestamp` at a 500 Hz control loop.
#[must_use]
pub fn tick_of(timestamp: f64) -> i64 {
    #[allow(clippy::cast_possible_truncation)] // timestamps of a run are far below 2^53 ticks
    let tick = (timestamp * 500.0).round() as i64;
    tick
}

/// Follows the ticks of consecutive packages; counts the ones missing in between.
#[derive(Debug)]
pub struct Gaps {
    last: Option<i64>,
    /// 500 Hz ticks from one package to the next.
    every: i64,
    /// Packages missing so far.
    pub missing: u64,
}

impl Default for Gaps {
    /// A package every tick: 500 Hz.
    fn default() -> Self {
        Gaps::every(1)
    }
}

impl Gaps {
    /// A package every `ticks` ticks of the 500 Hz loop (4: 125 Hz).
    #[must_use]
    pub fn every(ticks: i64) -> Gaps {
        Gaps {
            last: None,
            every: ticks.max(1),
            missing: 0,
        }
    }

    /// The next package's `timestamp`.
    ///
    /// # Panics
    /// When packages come out of order: a driver bug the bench must not hide.
    pub fn observe(&mut self, timestamp: f64) {
        let tick = tick_of(timestamp);
        if let Some(last) = self.last {
            assert!(tick > last, "package {tick} after {last}");
            self.missing += u64::try_from((tick - last) / self.every - 1).unwrap_or(0);
        }
        self.last = Some(tick);
    }
}
