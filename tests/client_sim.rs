//! The blocking client's own ground against the simulator, where only the blocking API can
//! meet it: an unpaced simulator streams every tick to it, as fast as it reads (the other
//! drivers' readers take what arrives into bounded queues, which pass over the oldest);
//! a client that stops reading (the other drivers' readers drain the socket) is dropped by
//! the controller, and the client ends in a documented recovery, never a hang or a panic;
//! every wait is bounded. (Its API against a scripted controller is
//! `rtde-core/tests/client.rs`, whose tests cannot start the simulator.) The handshake's
//! faults, and what every driver must do with the simulator's values, inputs and faults,
//! are the shared suite in `drivers.rs`.

mod common;

use std::f64::consts::TAU;
use std::time::Duration;

use common::{options, reconnecting, timestamp};
use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::ProtocolVersion;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Event, Recipe, State, Value};
use rtde_sim::{Motion, Sim};

fn started(sim: &Sim, options: ConnectOptions, frequency: f64) -> (Client, DynamicRecipe) {
    let mut client = Client::connect(sim.addr(), options).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), frequency).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    (client, recipe)
}

#[test]
fn streams_exact_deterministic_values_over_v2() {
    let sim = Sim::builder().deterministic().unpaced().start().unwrap();
    let (mut client, mut out) = started(&sim, options(), 125.0);
    assert_eq!(client.protocol_version(), ProtocolVersion::V2);
    assert_eq!(
        client.controller_version(),
        ControllerVersion::new(5, 21, 0, 0)
    );
    for k in 0..100u32 {
        client.recv_into(&mut out).unwrap();
        let t = timestamp(&out);
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
