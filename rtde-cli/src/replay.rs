//! `rtde replay`: a capture served as a controller, through `rtde-sim`'s server side.
//!
//! The simulator does the protocol (handshake, recipes, decimation, inputs); a [`Replay`]
//! is its [`OutputSource`]. Each client gets the capture from its first package: its
//! connection's clock starts at tick 0 with its first START, and tick `n` is served the
//! recorded package whose `timestamp` lies `n` control-loop periods after the first
//! one's. So a client asking for the recorded frequency gets every recorded package with
//! its recorded values in the recorded order, and sees the controller's recorded gaps as
//! gaps; a lower frequency gets every k-th package, as from a controller. After the last
//! package the simulator sends the end-of-stream text message and closes the connection
//! ([`Sample::End`]).

use crate::said;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use rtde_core::fields::Field;
use rtde_core::{RTDE_PORT, Value};
use rtde_sim::{IoState, OutputSource, Sample, Sim, Tick};

use crate::args::{self, Speed};
use rtde_record::capture::{self, Capture};

/// Serve a raw capture as a controller, so that any RTDE client can be tested against it.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Serve a raw capture (from `rtde record --raw`) as a controller, so that any RTDE \
client, ours or another, can be tested against recorded data.

The replay speaks RTDE as the recorded controller did (its version, both protocol versions). \
Every client gets the capture from its beginning: at the recorded frequency, each recorded \
package with its recorded values, in order, and the recorded gaps as gaps; at a lower \
frequency, every k-th package, as a controller decimates. It refuses what the capture cannot \
give: a field it lacks is NOT_FOUND, a frequency above the recorded one is refused, each \
with a text message that says why. At the end of the capture it sends the end-of-stream \
text message (level info, \"end of stream: the source has no more data\"), then closes \
the connection, so that a recorder can tell the end from a lost link (`rtde record` then \
finishes its files and exits 0); --loop starts again instead, shifting `timestamp` so \
that it keeps increasing.

The length announced is the packages' count and the controller time they stand for, each \
package the period up to the next: 625 packages at 125 Hz are 5 s, and `rtde record \
--duration 5s` records all 625.",
    after_help = "Examples:
  rtde record --robot 192.168.1.10 --fields actual_q --duration 1m -o run.csv --raw run.rtde
  rtde replay run.rtde
      serve it on 127.0.0.1:30004 in real time; point the client under test there
  rtde replay run.rtde --port 0 --speed 10 --loop
      any free port, ten times as fast, over and over
  rtde replay run.rtde --speed max
      as fast as the client reads"
)]
pub(crate) struct ReplayArgs {
    /// The capture to serve.
    #[arg(value_name = "FILE.rtde")]
    capture: PathBuf,
    /// The TCP port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = RTDE_PORT)]
    port: u16,
    /// The address to listen on; the default serves this machine only.
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// Times real time (0.001 to 1000), or `max`: as fast as the client reads.
    #[arg(long, value_name = "FACTOR", default_value = "1", value_parser = args::speed)]
    speed: Speed,
    /// Start again at the end instead of closing the connection.
    #[arg(long = "loop")]
    repeat: bool,
}

/// Runs `rtde replay`: serves until interrupted.
pub(crate) fn run(args: &ReplayArgs) -> Result<(), String> {
    let capture = capture::read_file(&args.capture)?;
    let name = format!("the capture `{}`", args.capture.display());
    let controller = capture.header.controller;
    let unfinished = capture
        .counts
        .is_none()
        .then_some((capture.len(), capture.truncated_tail));
    let replay = Replay::new(capture, name, args.repeat)?;
    let summary = replay.summary();
    let builder = Sim::builder()
        .controller_version(&controller.to_string())
        .bind(SocketAddr::new(args.bind, args.port))
        .source(replay);
    let builder = match args.speed {
        Speed::Max => builder.unpaced(),
        Speed::Factor(x) => builder.clock_per_connection().speed(x),
    };
    crate::interrupt::handle()?;
    let sim = builder.start().map_err(said)?;
    // The address first and alone, for scripts (and tests) that start a replay on port 0.
    println!("rtde replay: listening on {}", sim.addr());
    if let Some((packages, tail)) = unfinished {
        eprintln!(
            "rtde replay: warning: the capture was never finished (its recording was killed); \
             serving its {packages} whole packages{}",
            match tail {
                0 => String::new(),
                n => format!(", without the {n} bytes of an incomplete last one"),
            }
        );
    }
    let speed = match args.speed {
        Speed::Max => "as fast as each client reads".to_owned(),
        Speed::Factor(x) => format!("at {x}x real time"),
    };
    println!(
        "rtde replay: serving `{}` as controller {controller} {speed}{}: {summary}; Ctrl-C stops",
        args.capture.display(),
        if args.repeat { ", looping" } else { "" },
    );
    crate::interrupt::wait();
    sim.shutdown().map_err(said)
}

/// A capture as an [`OutputSource`].
#[derive(Debug)]
pub(crate) struct Replay {
    name: String,
    fields: Vec<&'static Field>,
    offsets: Vec<usize>,
    payload_size: usize,
    payloads: Vec<u8>,
    /// The control-loop tick of each package, counted from the first; increasing.
    ticks: Vec<u64>,
    /// Ticks per pass when looping: the last package's tick plus one recorded period.
    span: u64,
    repeat: bool,
    frequency: f64,
    loop_rate: u32,
    /// Where `timestamp` is among the fields, if recorded.
    timestamp: Option<usize>,
}

impl Replay {
    /// A source that serves `capture`, called `name` in the simulator's messages.
    pub(crate) fn new(capture: Capture, name: String, repeat: bool) -> Result<Self, String> {
        let header = &capture.header;
        let n = capture.len();
        if n == 0 {
            return Err(format!("{name} holds no data package"));
        }
        let generation = header
            .controller
            .generation()
            .ok_or_else(|| format!("{name} is from an unknown controller generation"))?;
        // 125 or 500.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let loop_rate = generation.max_frequency() as u32;
        // The recorded decimation, floor(loop rate / frequency) as the RTDE guide gives it:
        // at least 1 (0 < frequency <= loop rate); below 1 Hz more than the loop rate, and
        // saturated at u64::MAX for a tiny frequency, so tick sums below are checked.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let every = (f64::from(loop_rate) / header.frequency).floor().max(1.0) as u64;
        let mut offsets = Vec::with_capacity(header.fields.len());
        let mut offset = 0;
        for f in &header.fields {
            offsets.push(offset);
            offset += f.wire_type().size();
        }
        let timestamp = header.fields.iter().position(|f| f.name() == "timestamp");
        let too_long = || format!("{name} spans more control-loop ticks than a replay can count");
        let by_index = || {
            (0..n as u64)
                .map(|i| i.checked_mul(every))
                .collect::<Option<Vec<u64>>>()
                .ok_or_else(too_long)
        };
        let ticks = match timestamp {
            Some(at) => {
                let t = |i: usize| {
                    let p = capture.payload(i);
                    let bytes = p[offsets[at]..offsets[at] + 8]
                        .try_into()
                        .expect("a DOUBLE is 8 bytes");
                    f64::from_be_bytes(bytes)
                };
                let t0 = t(0);
                let ticks: Option<Vec<u64>> = (0..n)
                    .map(|i| {
                        let ticks = ((t(i) - t0) * f64::from(loop_rate)).round();
                        // Non-negative and far below 2^53 for any real recording.
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        (ticks.is_finite() && ticks >= 0.0).then_some(ticks as u64)
                    })
                    .collect();
                match ticks.filter(|ticks| ticks.windows(2).all(|w| w[0] < w[1])) {
                    Some(ticks) => ticks,
                    None => {
                        let ticks = by_index()?;
                        eprintln!(
                            "rtde replay: warning: the recorded timestamps do not increase \
                             tick by tick; serving one package per recorded period instead"
                        );
                        ticks
                    }
                }
            }
            None => by_index()?,
        };
        let span = ticks
            .last()
            .copied()
            .unwrap_or(0)
            .checked_add(every)
            .ok_or_else(too_long)?;
        let (frequency, payload_size) = (header.frequency, header.payload_size());
        Ok(Replay {
            name,
            fields: capture.header.fields,
            offsets,
            payload_size,
            payloads: capture.payloads,
            ticks,
            span,
            repeat,
            frequency,
            loop_rate,
            timestamp,
        })
    }

    /// What the replay serves, for people: the length is the span of the timestamps plus
    /// the last package's period, the controller time the packages stand for, as
    /// `rtde record --duration` counts it.
    fn summary(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
        #[allow(clippy::cast_precision_loss)] // seconds for people to read
        let seconds = self.span as f64 / f64::from(self.loop_rate);
        format!(
            "{} packages ({seconds:.3} s) of {} at up to {} Hz",
            self.ticks.len(),
            names.join(","),
            self.frequency
        )
    }
}

impl OutputSource for Replay {
    fn provides(&self, field: &'static Field) -> bool {
        self.fields.iter().any(|f| f.name() == field.name())
    }

    fn max_frequency(&self) -> Option<f64> {
        Some(self.frequency)
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn sample(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        _: &IoState,
        out: &mut [Value],
    ) -> Sample {
        let k = tick.index();
        let (pass, within) = if self.repeat {
            (k / self.span, k % self.span)
        } else {
            (0, k)
        };
        if self.ticks.last().is_some_and(|&last| within > last) {
            return Sample::End;
        }
        let Ok(i) = self.ticks.binary_search(&within) else {
            return Sample::Skip;
        };
        let payload = &self.payloads[i * self.payload_size..(i + 1) * self.payload_size];
        for (field, value) in fields.iter().zip(out.iter_mut()) {
            let Some(c) = self.fields.iter().position(|f| f.name() == field.name()) else {
                continue; // Not reached: the simulator asks only for provided fields.
            };
            value.read_be(field.wire_type(), &payload[self.offsets[c]..]);
            if pass > 0
                && Some(c) == self.timestamp
                && let Value::Double(t) = value
            {
                // Each pass continues the clock: `timestamp` keeps increasing.
                #[allow(clippy::cast_precision_loss)] // exact far beyond any replay's length
                let shift = (pass * self.span) as f64 / f64::from(self.loop_rate);
                *t += shift;
            }
        }
        Sample::Send
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use rtde_core::fields::{ControllerVersion, Direction, lookup};
    use rtde_core::protocol::ProtocolVersion;

    use super::*;
    use rtde_record::capture::{Header, Writer};

    /// A 125 Hz capture on a 500 Hz controller with the packages of these ticks.
    fn capture(ticks: &[u32]) -> Capture {
        let header = Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 125.0,
            recipe_id: Some(1),
            started_unix_micros: 0,
            fields: vec![
                lookup(Direction::Output, "robot_mode").unwrap(),
                lookup(Direction::Output, "timestamp").unwrap(),
            ],
        };
        let mut w = Writer::new(Cursor::new(Vec::new()), &header).unwrap();
        for &tick in ticks {
            let mut p = i32::try_from(tick).unwrap().to_be_bytes().to_vec();
            p.extend_from_slice(&(100.0 + f64::from(tick) / 500.0).to_be_bytes());
            w.package(&p).unwrap();
        }
        capture::parse(&w.finish(0).unwrap().into_inner()).unwrap()
    }

    fn serve(replay: &Replay, tick: u64, fields: &[&'static Field]) -> (Sample, Vec<Value>) {
        let mut out: Vec<Value> = fields.iter().map(|f| Value::zero(f.wire_type())).collect();
        let s = replay.sample(Tick::new(tick, 500), fields, &IoState::default(), &mut out);
        (s, out)
    }

    #[test]
    fn serves_recorded_packages_by_tick_and_recorded_gaps_as_gaps() {
        // Package at tick 8 missing: the controller skipped it.
        let replay = Replay::new(capture(&[0, 4, 12]), "test".into(), false).unwrap();
        let mode = lookup(Direction::Output, "robot_mode").unwrap();
        let ts = lookup(Direction::Output, "timestamp").unwrap();
        assert_eq!(
            serve(&replay, 4, &[ts, mode]),
            (Sample::Send, vec![Value::Double(100.008), Value::Int32(4)])
        );
        assert_eq!(serve(&replay, 8, &[mode]).0, Sample::Skip);
        assert_eq!(serve(&replay, 2, &[mode]).0, Sample::Skip);
        assert_eq!(serve(&replay, 12, &[mode]).1, [Value::Int32(12)]);
        assert_eq!(serve(&replay, 16, &[mode]).0, Sample::End);
        assert!(replay.provides(ts) && replay.provides(mode));
        assert!(!replay.provides(lookup(Direction::Output, "actual_q").unwrap()));
        assert_eq!(replay.max_frequency(), Some(125.0));
    }

    #[test]
    fn loops_with_timestamps_that_keep_increasing() {
        let replay = Replay::new(capture(&[0, 4, 8]), "test".into(), true).unwrap();
        let ts = lookup(Direction::Output, "timestamp").unwrap();
        let mode = lookup(Direction::Output, "robot_mode").unwrap();
        // One pass is 12 ticks: the three packages and the period after the last.
        assert_eq!(
            serve(&replay, 12 + 4, &[mode, ts]),
            (
                Sample::Send,
                vec![Value::Int32(4), Value::Double(100.008 + 0.024)]
            )
        );
        assert_eq!(serve(&replay, 24, &[mode]).1, [Value::Int32(0)]);
    }

    /// A capture of these `timestamp`s at `frequency` on a 500 Hz controller.
    fn timestamps(frequency: f64, ts: &[f64]) -> Capture {
        let header = Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency,
            recipe_id: Some(1),
            started_unix_micros: 0,
            fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
        };
        let mut w = Writer::new(Cursor::new(Vec::new()), &header).unwrap();
        for t in ts {
            w.package(&t.to_be_bytes()).unwrap();
        }
        capture::parse(&w.finish(0).unwrap().into_inner()).unwrap()
    }

    #[test]
    fn ticks_beyond_u64_are_refused_not_overflowed() {
        // The last package's tick is u64::MAX: one period more is no tick.
        let err = Replay::new(timestamps(125.0, &[0.0, 1e300]), "`x`".into(), false).unwrap_err();
        assert!(err.contains("more control-loop ticks"), "{err}");
        // 1e-300 Hz: floor(500 / f) saturates, and the second package's tick overflows.
        let err =
            Replay::new(timestamps(1e-300, &[0.0, 0.0, 0.0]), "`x`".into(), false).unwrap_err();
        assert!(err.contains("more control-loop ticks"), "{err}");
        // One package at 1e-300 Hz is fine.
        assert!(Replay::new(timestamps(1e-300, &[0.0]), "`x`".into(), true).is_ok());
    }

    #[test]
    fn an_empty_capture_is_refused() {
        let err = Replay::new(capture(&[]), "the capture `x`".into(), false).unwrap_err();
        assert_eq!(err, "the capture `x` holds no data package");
    }
}
