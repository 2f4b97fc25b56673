//! The scenarios against rtde-sim: the values it streams and the inputs it takes, seen
//! through each driver, and its faults.

use std::time::{Duration, Instant};

use rtde_core::protocol::ProtocolVersion;
use rtde_core::{
    Client, DigitalBits, DynamicRecipe, Error, ErrorKind, Event, FromPayload, Pose, Recipe,
    RecipeView, RobotMode, RtdeRecipe, State, StaticRecipe, Value,
};
use rtde_sim::{Arm, Fault, Malformation, Motion, Sim, Trigger};

use super::{Driver, Staleness, outputs, started};
use crate::common::{WAIT, due_between, options, reconnecting, timestamp};

// ---- values and inputs ----

#[derive(RtdeRecipe, Debug)]
struct Telemetry {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_tcp_pose: Pose,
    robot_mode: RobotMode,
    actual_digital_output_bits: DigitalBits,
    input_int_register_24: i32,
    input_double_register_25: f64,
}

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    input_int_register_24: i32,
    input_double_register_25: f64,
}

/// Derived output and input recipes over one connection, in deterministic mode, where
/// every value is known in advance.
pub(crate) fn derived_recipes_read_the_motion_law_and_write_inputs_that_take_effect<D: Driver>() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    client.setup_outputs(Telemetry::SPEC, 125.0).unwrap();
    let inputs = client.setup_inputs(Command::SPEC).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);

    // Outputs follow the documented motion law bit for bit: q(t) at t = timestamp.
    let mut previous: Option<f64> = None;
    for _ in 0..50 {
        let s: Telemetry = driver.recv_as().unwrap();
        assert_eq!(
            s.actual_q,
            Motion::DEFAULT.position(s.timestamp),
            "t = {}",
            s.timestamp
        );
        assert_eq!(
            s.actual_tcp_pose.to_array(),
            Arm::UR5E.tcp_pose(&s.actual_q)
        );
        assert_eq!(s.robot_mode, RobotMode::Running);
        if let Some(p) = previous {
            // 125 Hz on a 500 Hz loop: every 4th tick, 8 ms apart.
            assert!(
                (s.timestamp - p - 0.008).abs() < 1e-9,
                "{p} -> {}",
                s.timestamp
            );
        }
        previous = Some(s.timestamp);
    }
    assert_eq!(driver.stats().skipped, 0);

    // Inputs written through the derived input recipe read back through the output recipe.
    let command = Command {
        standard_digital_output_mask: 0b0000_1001,
        standard_digital_output: 0b1111_1111,
        input_int_register_24: -7,
        input_double_register_25: 0.25,
    };
    driver.send(&inputs, &command).unwrap();
    let mut seen = None;
    for _ in 0..500 {
        let payload = driver.recv_payload().unwrap();
        // The zero-copy view agrees with the decoded struct on every package.
        let view = Telemetry::view(&payload).unwrap();
        let decoded = Telemetry::from_payload(&payload).unwrap();
        assert_eq!(view.timestamp(), decoded.timestamp);
        assert_eq!(view.actual_q(), decoded.actual_q);
        if decoded.input_int_register_24 == -7 {
            seen = Some(decoded);
            break;
        }
    }
    let s = seen.expect("the input took effect within 500 packages");
    assert_eq!(s.input_double_register_25, 0.25);
    assert!(s.actual_digital_output_bits.standard(0));
    assert!(s.actual_digital_output_bits.standard(3));
    assert!(
        !s.actual_digital_output_bits.standard(1),
        "outside the mask"
    );
    assert_eq!(s.actual_digital_output_bits.bits() & 0xff, 0b0000_1001);
    driver.close().unwrap();
}

/// As controllers do, an input sent while paused takes effect (a driver without a pause
/// sends it while streaming).
pub(crate) fn inputs_sent_while_paused_take_effect<D: Driver>() {
    let sim = Sim::builder().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    let clock = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(clock.spec(), 10.0).unwrap();
    client.start().unwrap();
    let mut driver = D::take(client);
    if D::PAUSES {
        driver.pause().unwrap();
    }
    inputs
        .set("input_int_register_24", Value::Int32(6))
        .unwrap();
    driver.send(&handle, &inputs).unwrap();
    let applied = || sim.io().input("input_int_register_24") == Some(&Value::Int32(6));
    if D::PAUSES {
        // Any reply comes after the package before it was handled.
        driver.start().unwrap();
        assert!(applied(), "{:?}", sim.io().input("input_int_register_24"));
    } else {
        let deadline = Instant::now() + WAIT;
        while !applied() {
            assert!(Instant::now() < deadline, "the input never took effect");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    driver.close().unwrap();
}

/// A program that closes and at once connects again (a reconnect, the next run of a
/// script) finds its inputs free: `close` returns once the controller has closed its side,
/// which it does after freeing them; here a controller slow to notice the close.
pub(crate) fn the_inputs_of_a_closed_connection_are_free_when_close_returns<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::SlowClose(Duration::from_millis(30)))
        .start()
        .unwrap();
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    for round in 0..3 {
        let mut client = Client::connect(sim.addr(), options()).unwrap();
        if let Err(e) = client.setup_inputs(inputs.spec()) {
            panic!("round {round}: the inputs are still held: {e}");
        }
        client.setup_outputs(outputs().spec(), 125.0).unwrap();
        client.start().unwrap();
        D::take(client).close().unwrap();
        assert_eq!(
            sim.stats().connections_open,
            0,
            "round {round}: close returned before the controller had closed the connection"
        );
    }
}

// ---- faults ----

pub(crate) fn every_package_in_order_until_the_link_closes_with_skips_counted<D: Driver>() {
    // 250 Hz on a 500 Hz loop, every 5th package left out, and the link cut in package 40:
    // what each driver received is then final, whoever waits.
    let sim = Sim::builder()
        .fault(Fault::SkipEvery(5))
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(40)))
        .deterministic()
        .start()
        .unwrap();
    let mut driver: D = started(sim.addr(), options(), 250.0);
    let mut recipe = outputs();
    let mut times = Vec::new();
    let end = loop {
        match driver.recv_into(&mut recipe) {
            Ok(()) => times.push(timestamp(&recipe)),
            Err(e) => break e,
        }
    };
    assert!(matches!(end, Error::Closed { mid_frame: true }), "{end}");
    assert_eq!(times.len(), 40);
    assert!(times.windows(2).all(|w| w[0] < w[1]), "in order");
    let stats = driver.stats();
    assert!(stats.skipped > 0, "{stats:?}");
    assert_eq!(
        stats.received + stats.skipped,
        due_between(times[0], times[39], 500.0, 250.0) + 2,
        "{stats:?}"
    );
    assert_eq!((stats.received, stats.lost, stats.discarded), (40, 0, 0));
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
}

pub(crate) fn closed_mid_frame_reconnects_replays_inputs_and_counts_the_loss_exactly<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(10)))
        .deterministic()
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), reconnecting()).unwrap();
    let mut outputs =
        DynamicRecipe::outputs(["timestamp", "actual_q", "input_int_register_24"]).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    for _ in 0..10 {
        driver.recv_into(&mut outputs).unwrap();
    }
    let before = timestamp(&outputs);
    // Package 10 is cut: the driver reconnects, and the next package is the new link's first.
    driver.recv_into(&mut outputs).unwrap();
    let after = timestamp(&outputs);
    if D::BY_HAND {
        assert_eq!(driver.state(), State::Running);
        assert_eq!(sim.stats().connections_accepted, 2);
    }

    let lost = due_between(before, after, 500.0, 500.0);
    let events = driver.events();
    assert!(
        matches!(
            events[0],
            Event::LinkLost(Error::Closed { mid_frame: true })
        ),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::PackagesLost { count, estimated: false } if *count == lost
        )),
        "{events:?}, {lost} lost"
    );
    let stats = driver.stats();
    if D::BY_HAND {
        assert_eq!((stats.lost, stats.reconnects), (lost, 1));
    } else {
        // Their readers go on meanwhile, and the simulator cuts every connection at its
        // package 10: the next cut (20 ms on) may have come already.
        assert!(stats.lost >= lost && stats.reconnects >= 1, "{stats:?}");
    }
    assert!(stats.received >= 11, "{stats:?}");

    // The input recipe was replayed: the old handle writes, the value reads back.
    inputs
        .set("input_int_register_24", Value::Int32(4242))
        .unwrap();
    driver.send(&handle, &inputs).unwrap();
    // Bounded by packages, not by one tick: on a loaded machine the packages already on
    // their way when the input took effect can be many.
    let mut seen = false;
    for _ in 0..2500 {
        driver.recv_into(&mut outputs).unwrap();
        if outputs.get("input_int_register_24") == Some(&Value::Int32(4242)) {
            seen = true;
            break;
        }
    }
    assert!(seen, "the input sent after reconnecting never took effect");
    driver.finish();
}

pub(crate) fn a_malformed_frame_loses_the_link_and_automatic_reconnection_recovers<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(3),
            kind: Malformation::SizeTooSmall,
        })
        .start()
        .unwrap();
    let mut recipe = outputs();

    // Without reconnection: a typed error, and the connection is closed.
    let mut driver: D = started(sim.addr(), options(), 500.0);
    for _ in 0..3 {
        driver.recv_into(&mut recipe).unwrap();
    }
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
    assert!(matches!(err, Error::Decode(_)), "{err}");
    assert_eq!(driver.state(), State::Closed);
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    driver.finish();

    // With it: the stream goes on.
    let mut driver: D = started(sim.addr(), reconnecting(), 500.0);
    for _ in 0..6 {
        driver.recv_into(&mut recipe).unwrap();
    }
    let events = driver.events();
    assert!(
        matches!(events[0], Event::LinkLost(Error::Decode(_))),
        "{events:?}"
    );
    assert!(driver.stats().reconnects >= 1);
    driver.finish();
}

pub(crate) fn a_package_of_another_recipe_is_reported_and_the_stream_goes_on<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(2),
            kind: Malformation::WrongRecipeId,
        })
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(4)))
        .start()
        .unwrap();
    let mut driver: D = started(sim.addr(), options(), 500.0);
    let mut recipe = outputs();
    for _ in 0..3 {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::Closed { .. })
    ));
    let rejected = driver.rejected();
    assert!(
        matches!(
            rejected.as_slice(),
            [Error::WrongRecipeId {
                expected: Some(1),
                found: Some(2)
            }]
        ),
        "{rejected:?}"
    );
    // The rejected package is a hole in the timestamps.
    let stats = driver.stats();
    assert_eq!((stats.received, stats.skipped), (3, 1));
    driver.finish();
}

/// A controller restarted in place: a new simulator on the address of the old one.
/// (The one kind of test that binds a known port: the port `:0` gave the first simulator.)
fn restart(sim: Sim, version: &str) -> Sim {
    let addr = sim.addr();
    sim.shutdown().unwrap();
    Sim::builder()
        .controller_version(version)
        .bind(addr)
        .start()
        .unwrap()
}

/// The attempts of the reconnection rounds that failed, as (attempt, kind).
fn failed_attempts(events: &[Event]) -> Vec<(u32, ErrorKind)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::AttemptFailed { attempt, error, .. } => Some((*attempt, error.kind())),
            _ => None,
        })
        .collect()
}

pub(crate) fn a_v1_only_controller_is_reconnected_over_v1<D: Driver>() {
    let sim = Sim::builder()
        .v1_only()
        .controller_version("3.15.8")
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(4)))
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), reconnecting()).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V1);
    let mut recipe = outputs();
    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    for _ in 0..4 {
        driver.recv_into(&mut recipe).unwrap();
    }
    let before = timestamp(&recipe);
    // Package 4 is cut: the next is the new link's first.
    driver.recv_into(&mut recipe).unwrap();
    let after = timestamp(&recipe);
    let events = driver.events();
    let Some(Event::Reconnected(reconnection)) =
        events.iter().find(|e| matches!(e, Event::Reconnected(_)))
    else {
        panic!("{events:?}")
    };
    assert_eq!(reconnection.protocol, ProtocolVersion::V1);
    // v1 data packages carry no recipe id.
    assert_eq!(driver.protocol_version(), ProtocolVersion::V1);
    assert_eq!(driver.output_recipe_id(), None);
    assert_eq!(driver.controller_version().to_string(), "3.15.8");
    let lost = events.iter().find_map(|e| match e {
        Event::PackagesLost { count, estimated } => Some((*count, *estimated)),
        _ => None,
    });
    assert_eq!(
        lost,
        Some((due_between(before, after, 125.0, 125.0), false)),
        "{events:?}"
    );
    // The simulator cuts every connection at its package 4 (32 ms on): the drivers that
    // read on may have met the next cut already.
    let reconnects = driver.stats().reconnects;
    assert!(
        reconnects == 1 || (!D::BY_HAND && reconnects > 1),
        "{reconnects}"
    );
    // No pause: the next cut may meet it.
    driver.finish();
}

pub(crate) fn a_restarted_controller_is_reconnected_and_the_loss_estimated<D: Driver>() {
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let mut driver: D = started(sim.addr(), reconnecting(), 500.0);
    let mut recipe = outputs();
    // 0.1 s of streaming: the restarted controller's clock starts behind it, or at least
    // advances less than the restart took.
    for _ in 0..50 {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert_eq!(driver.controller_version().to_string(), "5.21.0");
    let restarted = Instant::now();
    // Updated meanwhile: the link in use reports the new version.
    let _sim = restart(sim, "5.22.1");
    // Packages received before the shutdown come first, then the driver reconnects.
    for _ in 0..1000 {
        driver.recv_into(&mut recipe).unwrap();
        if driver.stats().reconnects == 1 {
            break;
        }
    }
    assert_eq!(driver.stats().reconnects, 1);
    assert_eq!(driver.controller_version().to_string(), "5.22.1");
    // The loss is counted with the first package of the new link, which may still be
    // behind packages of the old one in the background driver's queue.
    let mut events = driver.events();
    for _ in 0..1000 {
        if events
            .iter()
            .any(|e| matches!(e, Event::PackagesLost { .. }))
        {
            break;
        }
        driver.recv_into(&mut recipe).unwrap();
        events.extend(driver.events());
    }
    let gap = restarted.elapsed();
    // The new controller's clock starts again: the loss is estimated from the time.
    let estimate = events.iter().find_map(|e| match e {
        Event::PackagesLost { count, estimated } => Some((*count, *estimated)),
        _ => None,
    });
    let Some((count, true)) = estimate else {
        panic!("{estimate:?} in {events:?}")
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few seconds at most
    let most = (gap.as_secs_f64() * 500.0).ceil() as u64 + 2;
    assert!(count <= most, "{count} lost in {gap:?}");
    assert_eq!(driver.stats().lost, count);
    // Attempts made while no simulator listened failed as link errors, and were retried.
    assert!(
        failed_attempts(&events)
            .iter()
            .all(|(_, kind)| *kind == ErrorKind::Link),
        "{events:?}"
    );
    driver.close().unwrap();
}

pub(crate) fn a_downgraded_controller_is_refused_naming_the_field_it_lost<D: Driver>() {
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let mut client = Client::connect(sim.addr(), reconnecting()).unwrap();
    let mut recipe = DynamicRecipe::outputs(["timestamp", "ft_raw_wrench"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    driver.recv_into(&mut recipe).unwrap();
    let _sim = restart(sim, "5.4.0");
    // Packages received before the shutdown come first.
    let err = (0..1000)
        .find_map(|_| driver.recv_into(&mut recipe).err())
        .expect("the link to the old controller ends");
    let Error::Unavailable(missing) = &err else {
        panic!("{err}")
    };
    assert_eq!(missing.fields()[0].name(), "ft_raw_wrench");
    assert_eq!(missing.controller().to_string(), "5.4.0");
    assert_eq!(driver.state(), State::Closed);
    // Not worth retrying: the attempt that met the 5.4 controller was the last. (The
    // blocking client reconnects at its next call, after the restart: one attempt. The
    // other drivers' readers begin at once, and attempts made before the new simulator
    // listened fail as link errors.)
    let failed = failed_attempts(&driver.events());
    if D::BY_HAND {
        assert!(failed.is_empty(), "{failed:?}");
    } else {
        assert!(
            failed.iter().all(|(_, kind)| *kind == ErrorKind::Link),
            "{failed:?}"
        );
    }
    driver.finish();
}

pub(crate) fn a_paused_stream_goes_stale_and_its_resumption_is_fresh<D: Staleness>() {
    let limit = Duration::from_millis(50);
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take_stale(client, limit, Duration::from_secs(3));
    let mut recipe = outputs();
    driver.recv_in_order(&mut recipe).unwrap();

    sim.pause_stream();
    // What was on its way comes first (2 s of packages at most), then the silence.
    let silence = (0..1000).find_map(|_| driver.recv_in_order(&mut recipe).err());
    assert!(
        matches!(silence, Some(Error::Stale { silent_for }) if silent_for >= limit),
        "{silence:?}"
    );
    assert!(driver.is_stale());
    let before = timestamp(&recipe);
    assert_eq!(sim.stats().connections_open, 1, "the connection stays");

    sim.resume_stream();
    driver.recv_in_order(&mut recipe).unwrap();
    assert!(!driver.is_stale());
    // The clock went on while the stream was held: the ticks of the silence were not sent.
    assert!(
        timestamp(&recipe) >= before + 0.05,
        "{before} then {}",
        timestamp(&recipe)
    );
    driver.recv_in_order(&mut recipe).unwrap();
    let stats = driver.stats();
    assert_eq!((stats.lost, stats.overflowed), (0, 0), "{stats:?}");
    driver.finish();
}

pub(crate) fn a_controller_that_shuts_down_ends_the_stream_and_the_driver_with_one_error<
    D: Driver,
>() {
    let sim = Sim::builder().start().unwrap();
    let mut driver: D = started(sim.addr(), options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    // Between two packages: the controller closes the connection cleanly.
    sim.shutdown().unwrap();
    // What came before the shutdown comes first (5 s of packages at most).
    let end = (0..2500)
        .find_map(|_| driver.recv_into(&mut recipe).err())
        .expect("the stream ends");
    assert!(matches!(end, Error::Closed { mid_frame: false }), "{end}");
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    assert_eq!(driver.state(), State::Closed);
    // The driver's own report of the end names the same event.
    if let Some(ended) = driver.end() {
        let ended = ended.unwrap_err();
        assert!(
            matches!(ended, Error::Closed { mid_frame: false }),
            "{ended}"
        );
    }
}
