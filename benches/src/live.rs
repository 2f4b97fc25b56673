//! Streaming against rtde-sim: a source that stamps each package with its send time, and
//! the CPU time of the calling thread.
//!
//! The simulator calls [`OutputSource::sample`] for a package right before it encodes and
//! writes it, so a time taken there is the package's send time, give or take the encoding.
//! The simulator runs in the bench's process; both sides read one [`Instant`] epoch, and
//! the stamp travels as nanoseconds since it in `actual_digital_output_bits` (`UINT64`,
//! exact), a field of the reference recipe. No hook in the simulator was needed: its
//! [`SimBuilder::source`](rtde_sim::SimBuilder::source) is the hook.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rtde_core::Value;
use rtde_core::fields::Field;
use rtde_sim::{IoState, OutputSource, Sample, Tick};

use rtde_core::StaticRecipe;

use crate::{REFERENCE_NAMES, Reference, sample};

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

/// Microseconds from a package's send `stamp` (nanoseconds since `epoch`) to now.
#[must_use]
pub fn latency_us(epoch: Instant, stamp: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // nanoseconds of a run, far below 2^53
    let us = nanos_since(epoch, Instant::now()).saturating_sub(stamp) as f64 / 1e3;
    us
}

/// What the reading side measured.
#[derive(Debug)]
pub struct Measured {
    /// Packages read in the measured part.
    pub packages: u64,
    /// The reading thread's CPU time over them.
    pub cpu: Option<Duration>,
    /// Send-to-read latencies, in microseconds.
    pub latencies: Vec<f64>,
}

/// The bare-socket floor at 500 Hz for `seconds`: a thread writes a reference-sized
/// package every 2 ms, stamped like the simulator's, into a loopback `TcpStream`; the
/// calling thread reads each with `read_exact`. No protocol, no decoding: what the kernel
/// and the scheduler cost before any RTDE code runs.
///
/// # Panics
/// When loopback fails (the bench cannot run then).
#[must_use]
pub fn floor_500(epoch: Instant, seconds: u64) -> Measured {
    const LEN: usize = 3 + 1 + Reference::PAYLOAD_SIZE;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("an address");
    let total = seconds * 500 + 250;
    let sender = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let start = Instant::now();
        let mut package = [0u8; LEN];
        for i in 0..total {
            let due = start + Duration::from_micros(2_000 * i);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            package[..8].copy_from_slice(&nanos_since(epoch, Instant::now()).to_ne_bytes());
            if stream.write_all(&package).is_err() {
                return;
            }
        }
    });
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let mut package = [0u8; LEN];
    for _ in 0..250 {
        stream.read_exact(&mut package).expect("a package");
    }
    let mut latencies = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let cpu0 = thread_cpu_time();
    for _ in 250..total {
        stream.read_exact(&mut package).expect("a package");
        let mut stamp = [0u8; 8];
        stamp.copy_from_slice(&package[..8]);
        latencies.push(latency_us(epoch, u64::from_ne_bytes(stamp)));
    }
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let _ = sender.join();
    Measured {
        packages: latencies.len() as u64,
        cpu,
        latencies,
    }
}
