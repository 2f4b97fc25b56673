//! The blocking client against the faults rtde-sim injects, where the blocking API itself
//! is tested: the latest-only mode, a client that stops reading (only the blocking client
//! can: the other drivers' readers drain the socket), and a setup refused. Each ends in a
//! typed error or a documented recovery, never a hang or a panic. Every wait is bounded.
//! The handshake's faults (a slow controller among them) and the faults every driver must
//! survive after it (a link cut mid-frame, a malformed frame, a package of another recipe,
//! reconnection over v1, a restarted or downgraded controller) are the shared suite in
//! `drivers.rs`.

mod common;

use std::time::Duration;

use common::{due_between, options, reconnecting, timestamp};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Event, Recipe, State};
use rtde_sim::{Fault, Sim};

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
