//! The blocking client's own ground, against the scripted fake controller: the receive
//! mode only it has, and a read timeout too long for the clock. Every answer is a typed
//! error or a documented recovery, never a hang (every wait of the client and of the peer
//! is bounded) and never a panic.
//!
//! The latest-only receive mode (`Client::recv_latest`) drains the socket itself and counts
//! what it passes over as superseded; the other drivers' readers take every package.
//!
//! The handshake and the setups, faulted (a silent or slow peer, garbage, a link cut inside
//! a reply, refused versions, texts and stray data out of turn, refusals), run against
//! every way in (`Client::connect`, the async `connect` and `attach`) in
//! `tests/drivers.rs`, as does what happens to a connection after the handshake.

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::protocol::{ClientMessage, ControllerMessage, ProtocolVersion};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Recipe, Value};
use support::{FakePeer, Script, data_v2, encode, timestamp_and_q};

const V2: ProtocolVersion = ProtocolVersion::V2;

/// Generous: a test that times out has failed anyway, and a loaded machine is slow.
fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

/// An output package of `timestamp, actual_q` (recipe id 1) at time `t`.
fn at(t: f64) -> Vec<u8> {
    data_v2(1, &timestamp_and_q(t, t))
}

// ---- the handshake ----

// ---- packages that make no sense ----

// ---- controllers ----

// ---- latest-only receive ----

#[test]
fn recv_latest_returns_the_newest_and_counts_the_rest_as_superseded() {
    // Ticks 0 1 2 4 5 at 500 Hz (tick 3 skipped by the controller) with a text among them,
    // in one write: it arrives whole, before or while the client waits.
    let mut first = Vec::new();
    for t in [0.0, 0.002, 0.004] {
        first.extend(at(t));
    }
    first.extend(encode(
        V2,
        &ControllerMessage::TextMessage(rtde_core::protocol::TextMessage {
            level: rtde_core::protocol::MessageLevel::Info,
            message: b"busy",
            source: b"fake",
        }),
    ));
    first.extend(at(0.008));
    first.extend(at(0.010));
    // Then a package of another recipe between two good ones.
    let mut second = at(0.012);
    second.extend(data_v2(9, &timestamp_and_q(0.014, 0.0)));
    second.extend(at(0.016));
    const ONE: [u8; 4] = [0, 0, 0, 1];
    const TWO: [u8; 4] = [0, 0, 0, 2];
    let marker = |payload: &'static [u8; 4]| ClientMessage::DataPackage {
        recipe_id: 1,
        payload,
    };
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 1, "INT32")
            .start()
            .raw(&first)
            // The client's input package says it has taken the first batch.
            .expect(marker(&ONE))
            .raw(&second)
            .expect(marker(&TWO))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    let mut input = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(input.spec()).unwrap();
    client.start().unwrap();

    let mut latest = outputs();
    client.recv_latest_into(&mut latest).unwrap();
    assert_eq!(latest.get("timestamp"), Some(&Value::Double(0.010)));
    let stats = client.stats();
    assert_eq!((stats.received, stats.superseded), (1, 4));
    // The controller's gap is counted though its neighbours were superseded.
    assert_eq!(stats.skipped, 1);
    assert_eq!(client.text_messages().next().unwrap().message, "busy");
    input.set("input_int_register_24", Value::Int32(1)).unwrap();
    client.send(&handle, &input).unwrap();

    // A package that does not fit stops the draining: the good one before it comes first,
    // then the error, then the stream goes on.
    assert_eq!(client.recv_latest().unwrap(), &at(0.012)[4..]);
    let err = client.recv_latest().unwrap_err();
    assert!(
        matches!(err, Error::WrongRecipeId { found: Some(9), .. }),
        "{err}"
    );
    assert_eq!(client.recv_latest().unwrap(), &at(0.016)[4..]);
    let stats = client.stats();
    // Nothing was superseded this time; the package of recipe 9 left a hole in the
    // timestamps, which counts as a skip.
    assert_eq!((stats.received, stats.superseded, stats.skipped), (3, 4, 2));
    input.set("input_int_register_24", Value::Int32(2)).unwrap();
    client.send(&handle, &input).unwrap();
    client.close().unwrap();
    peer.finish();
}

// ---- user arguments at their limits ----

#[test]
fn a_read_timeout_too_long_for_the_clock_waits_without_a_deadline_instead_of_panicking() {
    // `Instant::now() + Duration::MAX` overflows; "a very long time" must still work.
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&at(1.0))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options().read_timeout(Some(Duration::MAX)))
        .expect("connects with a huge read timeout");
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(u64::MAX)))
        .unwrap();
    client.start().unwrap();
    assert_eq!(client.recv().unwrap(), &at(1.0)[4..]);
    client.close().unwrap();
    peer.finish();
}

// ---- what real controllers send out of turn ----
