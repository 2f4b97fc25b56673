//! What a replayed recording needs from the simulator: a clock per connection, a clock
//! faster or slower than real time, and another output source: one that limits the output
//! frequency and names itself in refusals, serves only what it provides and ends, and sees
//! the robot program each tick has run. (The source's ends and refusals are seen through
//! rtde-core's blocking client, which names them.)

mod common;

use std::time::{Duration, Instant};

use common::{Msg, Raw, double, outputs};
use rtde_core::fields::Field;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_sim::{Error, IoState, OutputSource, Program, Sample, Sim, Tick};

/// Streams `timestamp` as the tick's time and nothing else; has data at 125 Hz at most.
#[derive(Debug)]
struct Recording;

impl OutputSource for Recording {
    fn provides(&self, field: &'static Field) -> bool {
        field.name() == "timestamp"
    }
    fn max_frequency(&self) -> Option<f64> {
        Some(125.0)
    }
    fn name(&self) -> String {
        "the recording `test.rtde`".to_owned()
    }
    fn sample(&self, tick: Tick, _: &[&'static Field], _: &IoState, out: &mut [Value]) -> Sample {
        out[0] = Value::Double(tick.seconds());
        Sample::Send
    }
}

/// The timestamps of the next `n` data packages.
fn timestamps(c: &mut Raw, n: usize) -> Vec<f64> {
    let mut r = outputs(&["timestamp"]);
    (0..n)
        .map(|_| {
            c.recv_data(&mut r);
            double(&r, "timestamp")
        })
        .collect()
}

#[test]
fn a_source_limits_the_frequency_and_names_itself_in_refusals() {
    let sim = Sim::builder().source(Recording).unpaced().start().unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);

    let (texts, id, types) = c.setup_outputs(250.0, "timestamp");
    assert_eq!((id, types.as_str()), (Some(0), ""));
    assert_eq!(
        texts,
        [
            "output setup refused: output frequency 250 Hz is above the 125 Hz the recording `test.rtde` has data for"
        ]
    );

    let (texts, id, types) = c.setup_outputs(125.0, "timestamp,actual_q");
    assert_eq!((id, types.as_str()), (Some(0), "DOUBLE,NOT_FOUND"));
    assert_eq!(
        texts,
        ["output setup refused: `actual_q` is not provided by the recording `test.rtde`"]
    );

    // At or below the source's rate: accepted.
    for f in [125.0, 62.5] {
        let (texts, id, _) = c.setup_outputs(f, "timestamp");
        assert!(texts.is_empty() && id.is_some_and(|id| id > 0), "{f} Hz");
    }

    // Protocol v1 streams at the 500 Hz loop rate, which the source cannot.
    let mut v1 = Raw::connect(sim.addr());
    let (texts, id, types) = v1.setup_outputs(500.0, "timestamp");
    assert_eq!((id, types.as_str()), (None, ""));
    assert!(
        texts[0].contains("protocol v1 streams at the 500 Hz control-loop rate"),
        "{texts:?}"
    );
}

#[test]
fn a_clock_per_connection_starts_every_client_at_tick_zero() {
    let sim = Sim::builder()
        .source(Recording)
        .clock_per_connection()
        .start()
        .unwrap();
    let mut first = Raw::connect_v(sim.addr(), 2);
    first.setup_outputs(125.0, "timestamp");
    first.start();
    let expected: Vec<f64> = (0..10).map(|k| f64::from(k * 4) / 500.0).collect();
    assert_eq!(timestamps(&mut first, 10), expected);

    // A second client, 80 ms of streaming later, starts at the beginning too.
    let mut second = Raw::connect_v(sim.addr(), 2);
    second.setup_outputs(125.0, "timestamp");
    second.start();
    assert_eq!(timestamps(&mut second, 3), [0.0, 0.008, 0.016]);

    // A pause does not stop the clock: resuming continues at the present tick, at least
    // 50 ms after the 16 ms one.
    second.pause();
    std::thread::sleep(Duration::from_millis(50));
    second.start();
    let resumed = timestamps(&mut second, 1)[0];
    assert!(resumed >= 0.066, "resumed at {resumed}");
}

#[test]
fn a_faster_clock_streams_faster_and_a_slower_one_slower() {
    let time_of = |speed: f64, packages: usize| -> (Duration, Vec<f64>) {
        let sim = Sim::builder()
            .source(Recording)
            .clock_per_connection()
            .speed(speed)
            .start()
            .unwrap();
        let mut c = Raw::connect_v(sim.addr(), 2);
        c.setup_outputs(125.0, "timestamp");
        // Before START: the connection's clock starts at tick 0 when the simulator takes
        // the START, so it cannot have run before this instant (the reply's arrival could
        // come late, after packages were already due).
        let started = Instant::now();
        c.send(rtde_core::protocol::ClientMessage::Start);
        assert_eq!(c.recv(), Msg::Start(true));
        let t = timestamps(&mut c, packages);
        (started.elapsed(), t)
    };
    // 100 packages at 125 Hz span 0.792 simulated seconds: ten times faster takes at least
    // 79 ms, and less than the 792 ms real time would.
    let (elapsed, t) = time_of(10.0, 100);
    assert!(
        elapsed >= Duration::from_millis(79) && elapsed < Duration::from_millis(792),
        "{elapsed:?}"
    );
    // Simulated time is unchanged: one package per 8 ms of `timestamp`.
    assert_eq!(t[99], 396.0 / 500.0);
    // Half speed: 10 packages span 72 simulated ms, at least 144 ms of wall-clock time.
    let (elapsed, _) = time_of(0.5, 10);
    assert!(elapsed >= Duration::from_millis(144), "{elapsed:?}");
}

#[test]
fn speeds_out_of_range_are_refused() {
    for speed in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-4, 1001.0] {
        let err = Sim::builder().speed(speed).start().unwrap_err();
        assert!(matches!(err, Error::InvalidSpeed(_)), "{speed}: {err}");
    }
    assert!(Sim::builder().speed(1000.0).start().is_ok());
}

fn connect(sim: &Sim) -> Client {
    Client::connect(
        sim.addr(),
        ConnectOptions::new().read_timeout(Some(Duration::from_secs(5))),
    )
    .unwrap()
}

/// A source that provides only `timestamp`, as a recording of it would.
#[derive(Debug)]
struct TimestampOnly;

impl OutputSource for TimestampOnly {
    fn provides(&self, field: &'static Field) -> bool {
        field.name() == "timestamp"
    }
    fn sample(&self, tick: Tick, _: &[&'static Field], _: &IoState, out: &mut [Value]) -> Sample {
        if tick.index() >= 8 {
            return Sample::End;
        }
        out[0] = Value::Double(tick.seconds() + 1000.0);
        Sample::Send
    }
}

#[test]
fn another_output_source_serves_what_it_provides_and_ends() {
    let sim = Sim::builder()
        .source(TimestampOnly)
        .unpaced()
        .start()
        .unwrap();
    let mut client = connect(&sim);
    let both = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    let Err(rtde_core::Error::SetupRefused(refused)) = client.setup_outputs(both.spec(), 500.0)
    else {
        panic!("actual_q is not in the source")
    };
    assert_eq!(refused.not_found(), ["actual_q"]);
    let mut out = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(out.spec(), 250.0).unwrap();
    client.start().unwrap();
    for k in 0..4u32 {
        client.recv_into(&mut out).unwrap();
        assert_eq!(double(&out, "timestamp"), f64::from(2 * k) / 500.0 + 1000.0);
    }
    // The source ran out: the simulator says so, then closes the connection cleanly.
    let err = client.recv_into(&mut out).unwrap_err();
    assert!(
        matches!(err, rtde_core::Error::Closed { mid_frame: false }),
        "{err}"
    );
    let last = client.text_messages().last().unwrap();
    assert!(last.is_end_of_stream(), "{last}");
}

/// A source that streams, as `timestamp`, how many ticks the robot program has run, and
/// -1 when it runs none.
#[derive(Debug)]
struct ProgramTicks;

impl OutputSource for ProgramTicks {
    fn sample(&self, _: Tick, _: &[&'static Field], _: &IoState, out: &mut [Value]) -> Sample {
        out[0] = Value::Double(-1.0);
        Sample::Send
    }
    fn sample_with_program(
        &self,
        _: Tick,
        _: &[&'static Field],
        _: &IoState,
        program: &Program,
        out: &mut [Value],
    ) -> Sample {
        #[allow(clippy::cast_precision_loss)] // a few ticks
        let ticks = program.ticks() as f64;
        out[0] = Value::Double(ticks);
        Sample::Send
    }
}

#[test]
fn a_source_sees_the_robot_program_once_each_tick_has_run_it() {
    for with_program in [true, false] {
        let mut builder = Sim::builder().source(ProgramTicks);
        if with_program {
            builder = builder.servo_program();
        }
        let sim = builder.start().unwrap();
        let mut client = connect(&sim);
        let mut out = DynamicRecipe::outputs(["timestamp"]).unwrap();
        client.setup_outputs(out.spec(), 500.0).unwrap();
        client.start().unwrap();
        let mut seen = Vec::new();
        for _ in 0..5 {
            client.recv_into(&mut out).unwrap();
            seen.push(double(&out, "timestamp"));
        }
        client.close().unwrap();
        if with_program {
            // The program ran each streamed tick once, before the source sampled it.
            assert!(seen[0] >= 1.0, "{seen:?}");
            let steps: Vec<f64> = seen.windows(2).map(|w| w[1] - w[0]).collect();
            assert_eq!(steps, [1.0; 4], "{seen:?}");
            let program = sim.program().unwrap();
            #[allow(clippy::cast_precision_loss)] // a few ticks
            let ran = program.ticks() as f64;
            assert!(ran >= seen[4], "{ran} < {seen:?}");
        } else {
            assert_eq!(seen, [-1.0; 5]);
            assert!(sim.program().is_none());
        }
        sim.shutdown().unwrap();
    }
}
