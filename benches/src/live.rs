//! Streaming against rtde-sim: a source that stamps each package with its send time, and
//! the CPU time of the calling thread.
//!
//! The simulator calls [`OutputSource::sample`] for a package right before it encodes and
//! writes it, so a time taken there is the package's send time, give or take the encoding.
//! The simulator runs in the bench's process; both sides read one [`Instant`] epoch, and
//! the stamp travels as nanoseconds since it in `actual_digital_output_bits` (`UINT64`,
//! exact), a field of the reference recipe. No hook in the simulator was needed: its
//! [`SimBuilder::source`](rtde_sim::SimBuilder::source) is the hook.
//!
//! A floor reads the same simulator through [`bare_stream`]: a socket set up by hand, so
//! that a driver and the floor it is measured against get their packages from the same
//! sender.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rtde_core::Value;
use rtde_core::fields::Field;
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, Frame, HEADER_LEN, MAX_PACKAGE_LEN, ProtocolVersion,
};
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

/// A data package of the reference recipe on the wire: header, recipe id, payload.
pub const REFERENCE_PACKAGE: usize = HEADER_LEN + 1 + crate::REFERENCE_PAYLOAD;

/// A loopback socket to the simulator at `addr` with the reference recipe set up at
/// `frequency` and started: from here on it carries only data packages of
/// [`REFERENCE_PACKAGE`] bytes. The setup is written with rtde-core's protocol module and
/// read a package at a time, so that no data package is read ahead of the caller.
///
/// # Errors
/// The socket's, or [`io::ErrorKind::InvalidData`] when the simulator refuses a step.
pub fn bare_stream(addr: SocketAddr, frequency: f64) -> io::Result<TcpStream> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    let names = REFERENCE_NAMES.join(",");
    let mut buf = vec![0u8; MAX_PACKAGE_LEN];
    for request in [
        ClientMessage::RequestProtocolVersion {
            version: ProtocolVersion::V2.number(),
        },
        ClientMessage::SetupOutputs {
            frequency: Some(frequency),
            names: &names,
        },
        ClientMessage::Start,
    ] {
        let n = request
            .encode(ProtocolVersion::V2, &mut buf)
            .map_err(|e| invalid(e.to_string()))?;
        stream.write_all(&buf[..n])?;
        // The reply, past any text message the simulator sends first.
        loop {
            stream.read_exact(&mut buf[..HEADER_LEN])?;
            let size = usize::from(u16::from_be_bytes([buf[0], buf[1]])).max(HEADER_LEN);
            stream.read_exact(&mut buf[HEADER_LEN..size])?;
            let frame = match Frame::parse(&buf[..size]) {
                Ok(Some((frame, _))) => frame,
                Ok(None) => return Err(invalid("a short package".into())),
                Err(e) => return Err(invalid(e.to_string())),
            };
            if frame.kind != request.package_type() {
                continue;
            }
            let reply = ControllerMessage::decode(frame, ProtocolVersion::V2)
                .map_err(|e| invalid(e.to_string()))?;
            let refused = match reply {
                ControllerMessage::ProtocolVersionReply { accepted }
                | ControllerMessage::StartReply { accepted } => !accepted,
                ControllerMessage::SetupOutputsReply { types, .. } => types.contains("NOT_FOUND"),
                _ => false,
            };
            if refused {
                return Err(invalid(format!("the simulator refused {request:?}")));
            }
            break;
        }
    }
    Ok(stream)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor;

    /// A floor's socket carries the reference recipe's data packages from the first byte
    /// after the setup, whole and in order, as the simulator's source made them.
    #[test]
    fn a_bare_stream_carries_only_reference_packages() {
        let sim = rtde_sim::Sim::builder()
            .source(Stamping::new(Instant::now()))
            .start()
            .unwrap();
        let mut stream = bare_stream(sim.addr(), 500.0).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut gaps = Gaps::default();
        let mut package = [0u8; REFERENCE_PACKAGE];
        for _ in 0..3 {
            stream.read_exact(&mut package).unwrap();
            let size = usize::from(u16::from_be_bytes([package[0], package[1]]));
            assert_eq!((size, package[2]), (REFERENCE_PACKAGE, b'U'));
            let r = floor::decode(&package[HEADER_LEN + 1..]).unwrap();
            assert_eq!(r.robot_mode, sample(r.timestamp).robot_mode);
            assert_eq!(r.actual_q, sample(r.timestamp).actual_q);
            gaps.observe(r.timestamp);
        }
        assert_eq!(gaps.missing, 0);
        drop(stream);
        let _ = sim.shutdown();
    }
}
