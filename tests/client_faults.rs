//! The blocking client against the faults rtde-sim injects, where the blocking API itself
//! is tested (the latest-only mode, the handshake, stalls, reconnection on `recv`): each
//! ends in a typed error or a documented recovery, never a hang or a panic. Every wait is
//! bounded. The streaming faults every driver must survive (a link cut mid-frame, a
//! malformed frame, a package of another recipe) are the shared suite in `drivers.rs`; the
//! scripted-peer versions of these faults are in `rtde-core/tests/faults.rs`.

mod common;

use std::time::{Duration, Instant};

use common::{WAIT, due_between, options, reconnecting, timestamp};
use rtde_core::protocol::{MessageLevel, ProtocolVersion, package_type};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Event, Recipe, State};
use rtde_sim::{Fault, Sim, Trigger};

fn started(sim: &Sim, options: ConnectOptions, frequency: f64) -> (Client, DynamicRecipe) {
    let mut client = Client::connect(sim.addr(), options).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), frequency).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    (client, recipe)
}

#[test]
fn skipped_packages_are_counted_exactly_in_both_receive_modes() {
    // 250 Hz on a 500 Hz loop, every 5th package left out.
    let sim = Sim::builder()
        .fault(Fault::SkipEvery(5))
        .deterministic()
        .start()
        .unwrap();
    let (mut client, mut recipe) = started(&sim, options(), 250.0);
    client.recv_into(&mut recipe).unwrap();
    let first = timestamp(&recipe);
    for _ in 0..20 {
        client.recv_into(&mut recipe).unwrap();
    }
    // A 50 Hz consumer of the latest state: the simulator keeps streaming meanwhile.
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(20));
        client.recv_latest_into(&mut recipe).unwrap();
    }
    let last = timestamp(&recipe);
    let stats = client.stats();
    assert!(stats.superseded > 0, "{stats:?}");
    assert!(stats.skipped > 0, "{stats:?}");
    // Every package due from the first to the last is accounted for, once.
    assert_eq!(
        stats.received + stats.superseded + stats.skipped,
        due_between(first, last, 500.0, 250.0) + 2,
        "{stats:?}"
    );
    assert_eq!((stats.lost, stats.discarded), (0, 0));
    client.close().unwrap();
}

#[test]
fn delayed_replies_and_a_text_during_the_handshake() {
    let delay = Duration::from_millis(150);
    let sim = Sim::builder()
        .fault(Fault::DelayReplies(delay))
        .fault(Fault::TextMessage {
            at: Trigger::Reply(package_type::GET_URCONTROL_VERSION),
            level: MessageLevel::Warning,
            message: "SafetySetup has not been confirmed yet".into(),
            source: "Controller".into(),
        })
        .start()
        .unwrap();
    // A read timeout shorter than the delay: a typed, bounded timeout.
    let timeout = Duration::from_millis(50);
    let begun = Instant::now();
    let err = Client::connect(sim.addr(), options().read_timeout(Some(timeout))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                waiting_for: package_type::REQUEST_PROTOCOL_VERSION,
                ..
            }
        ),
        "{err}"
    );
    assert!(begun.elapsed() < WAIT);

    // A patient client gets through, with the text kept.
    let begun = Instant::now();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    assert!(begun.elapsed() >= delay * 2, "two replies, each delayed");
    let texts: Vec<_> = client.text_messages().collect();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].message, "SafetySetup has not been confirmed yet");
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_reconnects() {
    let sim = Sim::builder()
        .unpaced()
        .stall_timeout(Duration::from_millis(200))
        .start()
        .unwrap();
    let (mut client, _) = started(&sim, reconnecting(), 500.0);
    client.recv().unwrap();
    // Stop reading: the simulator fills the socket buffers, waits out the stall timeout,
    // and drops the connection.
    assert!(sim.wait_for_connections(0, Duration::from_secs(30)));
    assert_eq!(sim.stats().stalled_clients_dropped, 1);
    // What was buffered is still delivered, then the call reconnects. Each call drains up
    // to some megabytes, so a few calls reach the end.
    for _ in 0..1000 {
        client.recv_latest().unwrap();
        if client.stats().reconnects == 1 {
            break;
        }
    }
    assert_eq!(client.stats().reconnects, 1);
    assert_eq!(client.state(), State::Running);
    let events: Vec<Event> = client.events().collect();
    assert!(
        matches!(
            events[0],
            Event::LinkLost(Error::Closed { .. } | Error::Io { .. })
        ),
        "{events:?}"
    );
}

#[test]
fn a_v1_only_controller_is_reconnected_over_v1() {
    let sim = Sim::builder()
        .v1_only()
        .controller_version("3.15.8")
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(4)))
        .start()
        .unwrap();
    let (mut client, mut recipe) = started(&sim, reconnecting(), 125.0);
    assert_eq!(client.protocol_version(), ProtocolVersion::V1);
    for _ in 0..4 {
        client.recv_into(&mut recipe).unwrap();
    }
    let before = timestamp(&recipe);
    client.recv_into(&mut recipe).unwrap();
    let after = timestamp(&recipe);
    assert_eq!(client.protocol_version(), ProtocolVersion::V1);
    let stats = client.stats();
    assert_eq!(stats.reconnects, 1);
    assert_eq!(stats.lost, due_between(before, after, 125.0, 125.0));
    client.close().unwrap();
}

#[test]
fn in_use_on_one_of_five_inputs_names_it() {
    let sim = Sim::builder().fieldbus_adapter().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let recipe = DynamicRecipe::inputs([
        "input_int_register_24",
        "input_int_register_25",
        "input_double_register_3",
        "input_bit_register_64",
        "input_double_register_25",
    ])
    .unwrap();
    let err = client.setup_inputs(recipe.spec()).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.in_use(), ["input_double_register_3"]);
    assert_eq!(
        refused.in_use_fieldbus_registers().collect::<Vec<_>>(),
        ["input_double_register_3"]
    );
    assert_eq!(client.state(), State::Connected);
}

/// A controller restarted in place: a new simulator on the address of the old one.
/// (The one test that binds a known port: the port `:0` gave the first simulator.)
fn restart(sim: Sim, version: &str) -> Sim {
    let addr = sim.addr();
    sim.shutdown().unwrap();
    Sim::builder()
        .controller_version(version)
        .bind(addr)
        .start()
        .unwrap()
}

#[test]
fn a_restarted_controller_is_reconnected_and_the_loss_estimated() {
    let sim = Sim::builder().start().unwrap();
    let (mut client, mut recipe) = started(&sim, reconnecting(), 500.0);
    // 0.1 s of streaming: the restarted controller's clock starts behind it, or at least
    // advances less than the restart took.
    for _ in 0..50 {
        client.recv_into(&mut recipe).unwrap();
    }
    let restarted = Instant::now();
    let _sim = restart(sim, "5.21.0");
    // Packages buffered before the shutdown come first, then the call reconnects.
    for _ in 0..1000 {
        client.recv_into(&mut recipe).unwrap();
        if client.stats().reconnects == 1 {
            break;
        }
    }
    assert_eq!(client.stats().reconnects, 1);
    let gap = restarted.elapsed();
    // The new controller's clock starts again: the loss is estimated from the time.
    let estimate = client.events().find_map(|e| match e {
        Event::PackagesLost { count, estimated } => Some((count, estimated)),
        _ => None,
    });
    let Some((count, true)) = estimate else {
        panic!("{estimate:?}")
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few seconds at most
    let most = (gap.as_secs_f64() * 500.0).ceil() as u64 + 2;
    assert!(count <= most, "{count} lost in {gap:?}");
    assert_eq!(client.stats().lost, count);
}

#[test]
fn a_downgraded_controller_is_refused_naming_the_field_it_lost() {
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let mut client = Client::connect(sim.addr(), reconnecting()).unwrap();
    let mut recipe = DynamicRecipe::outputs(["timestamp", "ft_raw_wrench"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    client.recv_into(&mut recipe).unwrap();
    let _sim = restart(sim, "5.4.0");
    // Packages buffered before the shutdown come first.
    let err = (0..1000)
        .find_map(|_| client.recv_into(&mut recipe).err())
        .expect("the link to the old controller ends");
    let Error::Unavailable(missing) = &err else {
        panic!("{err}")
    };
    assert_eq!(missing.fields()[0].name(), "ft_raw_wrench");
    assert_eq!(missing.controller().to_string(), "5.4.0");
    // Not worth retrying: one attempt.
    assert!(
        !client
            .events()
            .any(|e| matches!(e, Event::AttemptFailed { .. }))
    );
    assert_eq!(client.state(), State::Closed);
}
