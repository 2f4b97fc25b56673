//! The blocking client against the faults rtde-sim injects, where the blocking API itself
//! is tested: the latest-only mode, the handshake, a client that stops reading (only the
//! blocking client can: the other drivers' readers drain the socket), and a setup refused.
//! Each ends in a typed error or a documented recovery, never a hang or a panic. Every
//! wait is bounded. The faults every driver must survive after the handshake (a link cut
//! mid-frame, a malformed frame, a package of another recipe, reconnection over v1, a
//! restarted or downgraded controller) are the shared suite in `drivers.rs`.

mod common;

use std::time::{Duration, Instant};

use common::{WAIT, due_between, options, reconnecting, timestamp};
use rtde_core::protocol::{MessageLevel, package_type};
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
