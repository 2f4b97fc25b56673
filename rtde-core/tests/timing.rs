//! The client's idea of time: the rate the controller really streams at, and gaps counted
//! from the controller's clock in each package (`timestamp`, or `control_step`).

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use support::{FakePeer, Script, data_v2};

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

/// An output package of `control_step, actual_q` at step `step`.
fn step(step: u64) -> Vec<u8> {
    let mut values = step.to_be_bytes().to_vec();
    values.extend_from_slice(&[0; 48]);
    data_v2(1, &values)
}

#[test]
fn gaps_are_counted_from_control_step_when_the_recipe_has_no_timestamp() {
    // 250 Hz on 500 Hz: every second step. Received steps 0 2 4 10 12 20: 2 then 3 skipped.
    let mut stream = Vec::new();
    for s in [0u64, 2, 4, 10, 12, 20] {
        stream.extend(step(1_000_000 + s));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.26.0")
            .setup_outputs(250.0, "control_step,actual_q", 1, "UINT64,VECTOR6D")
            .start()
            .raw(&stream)
            .pause()
            .expect_eof(),
    );
    let recipe = DynamicRecipe::outputs(["control_step", "actual_q"]).unwrap();
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(recipe.spec(), 250.0).unwrap();
    assert!(client.counts_gaps());
    client.start().unwrap();
    for _ in 0..6 {
        client.recv().unwrap();
    }
    let stats = client.stats();
    assert_eq!((stats.received, stats.skipped), (6, 5));
    client.close().unwrap();
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
