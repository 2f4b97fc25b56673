//! The blocking client's own API against a scripted fake controller over loopback: a
//! closed port, a refused recipe it will not receive, input recipes and their handles, the
//! latest-only receive mode, its read timeout, and its idea of time. Every answer is a typed error or a documented
//! recovery, never a hang (every wait of the client and of the peer is bounded) and never
//! a panic.
//!
//! The latest-only receive mode (`Client::recv_latest`) drains the socket itself and counts
//! what it passes over as superseded; the other drivers' readers take every package. How
//! gaps are counted from `timestamp` or `control_step` is the session's rule, tested in its
//! gap counter; here, the rate the controller really streams at and whether a recipe has a
//! clock to count gaps from.
//!
//! The handshake and the setups, faulted (a silent or slow peer, garbage, a link cut inside
//! a reply, refused versions, texts and stray data out of turn, refusals, the checks made
//! before a setup is sent, setups that drop what the controller lacks), and what goes
//! wrong on the link and on the controller after it (timeouts, broken links, foreign
//! packages, gaps, reconnection), are the suite over every driver and every way in,
//! `tests/drivers.rs`; how a setup reply is read is the session's (its byte-level tests).

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::protocol::{ClientMessage, ControllerMessage, ProtocolVersion};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Recipe, Value};
use support::{FakePeer, Script, data_v2, encode, timestamp_and_q};

const V2: ProtocolVersion = ProtocolVersion::V2;

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

// ---- connecting, and what a setup leaves ----

#[test]
fn a_refused_output_recipe_is_not_used() {
    // How the reply's NOT_FOUND is read is the session's rule (its byte-level tests).
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(
                500.0,
                "timestamp,actual_q,target_q",
                0,
                "DOUBLE,VECTOR6D,NOT_FOUND",
            )
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "target_q"]).unwrap();
    let err = client.setup_outputs(recipe.spec(), 500.0).unwrap_err();
    assert!(matches!(err, Error::SetupRefused(_)), "{err}");
    // Nothing to receive.
    assert!(matches!(client.recv(), Err(Error::Misuse(_))));
    drop(client);
    peer.finish();
}

#[test]
fn several_input_recipes_each_with_its_id() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_inputs("input_int_register_24", 1, "INT32")
            .setup_inputs(
                "input_double_register_24,input_bit_register_64",
                2,
                "DOUBLE,BOOL",
            )
            .expect(ClientMessage::DataPackage {
                recipe_id: 2,
                payload: &[0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 1],
            })
            .expect(ClientMessage::DataPackage {
                recipe_id: 1,
                payload: &[0xff, 0xff, 0xff, 0xfe],
            })
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let mut a = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let mut b =
        DynamicRecipe::inputs(["input_double_register_24", "input_bit_register_64"]).unwrap();
    let ha = client.setup_inputs(a.spec()).unwrap();
    let hb = client.setup_inputs(b.spec()).unwrap();
    assert_eq!(
        (client.input_recipe_id(&ha), client.input_recipe_id(&hb)),
        (Some(1), Some(2))
    );
    a.set("input_int_register_24", Value::Int32(-2)).unwrap();
    b.set("input_double_register_24", Value::Double(1.5))
        .unwrap();
    b.set("input_bit_register_64", Value::Bool(true)).unwrap();
    // A recipe that is not the handle's is refused before anything is sent.
    assert!(matches!(client.send(&ha, &b), Err(Error::Misuse(_))));
    client.send(&hb, &b).unwrap();
    client.send(&ha, &a).unwrap();
    drop(client);
    peer.finish();
}

#[test]
fn connecting_to_a_closed_port_is_a_link_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::connect(addr, options()).unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(
        err.to_string()
            .starts_with(&format!("could not connect to {addr} ")),
        "{err}"
    );
    // Nothing listens: on a robot that is on, RTDE is probably switched off.
    assert!(
        err.to_string()
            .contains("RTDE may be disabled in the robot's security settings"),
        "{err}"
    );
}

/// An output package of `timestamp, actual_q` (recipe id 1) at time `t`.
fn at(t: f64) -> Vec<u8> {
    data_v2(1, &timestamp_and_q(t, t))
}

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

// ---- the read timeout ----

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

// ---- the rate the controller streams at ----

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
