//! rtde-core's blocking client against the simulator: the same behaviours as the
//! protocol-level tests, seen through the API users call.
//!
//! What every driver does with the simulator's faults (skips, a link cut mid-frame, a v1
//! controller, texts during the handshake, START without outputs, inputs in use) is the
//! suite over drivers and ways in, `tests/drivers.rs` in the `rtde-tests` package.

mod common;

use std::f64::consts::TAU;
use std::time::Duration;

use rtde_core::fields::{ControllerVersion, Field};
use rtde_core::protocol::ProtocolVersion;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Recipe, Value};
use rtde_sim::{IoState, Motion, OutputSource, Program, Sample, Sim, Tick};

const WAIT: Duration = Duration::from_secs(5);

fn connect(sim: &Sim) -> Client {
    Client::connect(sim.addr(), ConnectOptions::new().read_timeout(Some(WAIT))).unwrap()
}

fn double(recipe: &DynamicRecipe, name: &str) -> f64 {
    match recipe.get(name) {
        Some(Value::Double(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn streams_exact_deterministic_values_over_v2() {
    let sim = Sim::builder().deterministic().unpaced().start().unwrap();
    let mut client = connect(&sim);
    assert_eq!(client.protocol_version(), ProtocolVersion::V2);
    assert_eq!(
        client.controller_version(),
        ControllerVersion::new(5, 21, 0, 0)
    );
    let mut out = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(out.spec(), 125.0).unwrap();
    client.start().unwrap();
    for k in 0..100u32 {
        client.recv_into(&mut out).unwrap();
        let t = double(&out, "timestamp");
        assert_eq!(t, f64::from(4 * k) / 500.0);
        let m = Motion::DEFAULT;
        let q: [f64; 6] =
            std::array::from_fn(|j| m.center[j] + m.amplitude[j] * (TAU / m.period[j] * t).sin());
        assert_eq!(out.get("actual_q"), Some(&Value::Vector6d(q)));
    }
    assert_eq!(client.stats().received, 100);
    assert_eq!(client.stats().skipped, 0);
    client.pause().unwrap();
    client.close().unwrap();
}

#[test]
fn inputs_written_by_one_client_are_read_back_by_another() {
    let sim = Sim::builder().unpaced().start().unwrap();
    let mut writer = connect(&sim);
    let mut inputs = DynamicRecipe::inputs([
        "standard_digital_output_mask",
        "standard_digital_output",
        "speed_slider_mask",
        "speed_slider_fraction",
        "input_double_register_40",
    ])
    .unwrap();
    let handle = writer.setup_inputs(inputs.spec()).unwrap();
    // A controller starts only with an output recipe, and applies inputs once started.
    let clock = DynamicRecipe::outputs(["timestamp"]).unwrap();
    writer.setup_outputs(clock.spec(), 10.0).unwrap();
    writer.start().unwrap();
    inputs
        .set("standard_digital_output_mask", Value::Uint8(0b1000_0001))
        .unwrap();
    inputs
        .set("standard_digital_output", Value::Uint8(0b1111_0001))
        .unwrap();
    inputs.set("speed_slider_mask", Value::Uint32(1)).unwrap();
    inputs
        .set("speed_slider_fraction", Value::Double(0.4))
        .unwrap();
    inputs
        .set("input_double_register_40", Value::Double(-7.5))
        .unwrap();
    writer.send(&handle, &inputs).unwrap();
    // The pause reply comes after the simulator has applied the package before it.
    writer.pause().unwrap();

    let mut reader = connect(&sim);
    let mut out = DynamicRecipe::outputs([
        "actual_digital_output_bits",
        "target_speed_fraction",
        "input_double_register_40",
    ])
    .unwrap();
    reader.setup_outputs(out.spec(), 500.0).unwrap();
    reader.start().unwrap();
    reader.recv_into(&mut out).unwrap();
    assert_eq!(
        out.values(),
        [
            Value::Uint64(0b1000_0001),
            Value::Double(0.4),
            Value::Double(-7.5)
        ]
    );
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
    let Err(Error::SetupRefused(refused)) = client.setup_outputs(both.spec(), 500.0) else {
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
    assert!(matches!(err, Error::Closed { mid_frame: false }), "{err}");
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
