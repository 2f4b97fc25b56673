//! The blocking client against the faults rtde-sim injects, where only the blocking API
//! can meet them: a client that stops reading (the other drivers' readers drain the
//! socket). It ends in a documented recovery, never a hang or a panic; every wait is
//! bounded. The handshake's faults (a slow controller among them) and the faults every
//! driver must survive after it (skips, a link cut mid-frame, a malformed frame, a package
//! of another recipe, reconnection over v1, a restarted or downgraded controller) are the
//! shared suite in `drivers.rs`.

mod common;

use std::time::Duration;

use common::reconnecting;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Event, Recipe, State};
use rtde_sim::Sim;

fn started(sim: &Sim, options: ConnectOptions, frequency: f64) -> (Client, DynamicRecipe) {
    let mut client = Client::connect(sim.addr(), options).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), frequency).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    (client, recipe)
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
