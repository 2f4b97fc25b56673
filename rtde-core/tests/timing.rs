//! The client's idea of time: the rate the controller really streams at, and whether a
//! recipe has a clock to count gaps from. How gaps are counted from `timestamp` or
//! `control_step` is the session's rule, tested in its gap counter.

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use support::{FakePeer, Script};

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

#[test]
fn period_and_output_frequency_are_the_rate_the_controller_streams_at() {
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(400.0, "timestamp", 1, "DOUBLE")
            .setup_outputs(200.0, "timestamp", 1, "DOUBLE")
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.output_frequency(), None);
    assert_eq!(client.period(), None);
    // 400 Hz on a 500 Hz loop: floor(1.25) = 1 tick, so 500 Hz in effect.
    client.setup_outputs(recipe.spec(), 400.0).unwrap();
    assert_eq!(client.requested_frequency(), Some(400.0));
    assert_eq!(client.output_frequency(), Some(500.0));
    assert_eq!(client.period(), Some(Duration::from_millis(2)));
    // 200 Hz: floor(2.5) = 2 ticks, 250 Hz.
    client.setup_outputs(recipe.spec(), 200.0).unwrap();
    assert_eq!(client.output_frequency(), Some(250.0));
    assert_eq!(client.period(), Some(Duration::from_millis(4)));
    drop(client);
    peer.finish();
}

#[test]
fn a_cb3_paces_by_its_125_hz_loop() {
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("3.15.8")
            .setup_outputs(10.0, "timestamp", 1, "DOUBLE")
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(recipe.spec(), 10.0).unwrap();
    // floor(12.5) = 12 ticks of 8 ms: 96 ms, not 100 ms.
    assert_eq!(client.period(), Some(Duration::from_millis(96)));
    drop(client);
    peer.finish();
}

#[test]
fn a_recipe_without_a_clock_counts_no_gaps() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.26.0")
            .setup_outputs(500.0, "actual_q", 1, "VECTOR6D")
            .expect_eof(),
    );
    let recipe = DynamicRecipe::outputs(["actual_q"]).unwrap();
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    assert!(!client.counts_gaps());
    drop(client);
    peer.finish();
}
