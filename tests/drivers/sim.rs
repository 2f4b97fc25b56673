//! The scenarios against rtde-sim's faults.

use rtde_core::{Client, DynamicRecipe, Error, ErrorKind, Event, Recipe, State, Value};
use rtde_sim::{Fault, Malformation, Sim, Trigger};

use super::{Driver, outputs, started};
use crate::common::{due_between, options, reconnecting, timestamp};

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
    assert_eq!(driver.state(), State::Running);
    assert_eq!(sim.stats().connections_accepted, 2);

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
    assert_eq!((stats.lost, stats.reconnects), (lost, 1));
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
