//! The blocking client's own ground, against the scripted fake controller: the handshake
//! and the setups, and the receive mode only it has. Every answer is a typed error or a
//! documented recovery, never a hang (every wait of the client and of the peer is bounded)
//! and never a panic.
//!
//! Covered: a peer that stops answering the handshake, garbage during it, text and stray
//! data during the handshake, a v2 text before the protocol reply, `IN_USE` on one of
//! five inputs, a read timeout too long for the clock, and the latest-only receive mode
//! (`Client::recv_latest`, which drains the socket itself and counts what it passes over as
//! superseded; the other drivers' readers take every package).
//!
//! What happens to a connection after the handshake (streaming, timeouts, closes mid-frame,
//! packages that do not fit, skips, reconnection and its replay, ...) is in the fault suite
//! over every driver, `tests/drivers.rs`. The scenarios here stay because every driver is
//! built from a `Client` that connected and set up through this same code: running them
//! three times would test the same calls three times.

use rtde_testkit::scripted as support;

use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, DecodeErrorKind, ProtocolVersion, package_type,
};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Recipe, State, Value};
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

#[test]
fn a_peer_that_stops_answering_the_handshake_times_out() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .expect_eof(),
    );
    let timeout = Duration::from_millis(200);
    let started = Instant::now();
    let err = Client::connect(peer.addr, options().read_timeout(Some(timeout))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                waiting_for: package_type::REQUEST_PROTOCOL_VERSION,
                mid_frame: false,
                ..
            }
        ),
        "{err}"
    );
    assert!(started.elapsed() < timeout * 5);
    peer.finish();
}

#[test]
fn garbage_during_the_handshake_fails_connect() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // A size field of 1, less than the header.
            .raw(&[0x00, 0x01, b'V', 0x01])
            .expect_eof(),
    );
    let err = Client::connect(peer.addr, options()).unwrap_err();
    let Error::Decode(decode) = &err else {
        panic!("{err}")
    };
    assert_eq!(decode.kind(), &DecodeErrorKind::SizeTooSmall { size: 1 });
    peer.finish();
}

// ---- packages that make no sense ----

#[test]
fn text_messages_and_a_stray_data_package_during_the_handshake() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // Sent before the controller switched: v1 layout.
            .text("booting")
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .text("still booting")
            .raw(&data_v2(7, &[1, 2, 3]))
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(250.0),
                names: "timestamp,actual_q",
            })
            .text("setting up")
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(1),
                types: "DOUBLE,VECTOR6D",
            })
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.protocol_version(), V2);
    client.setup_outputs(outputs().spec(), 250.0).unwrap();
    let texts: Vec<String> = client.text_messages().map(|t| t.to_string()).collect();
    assert_eq!(
        texts,
        [
            "warning: booting",
            "warning from fake: still booting",
            "warning from fake: setting up"
        ]
    );
    assert_eq!(client.text_messages().count(), 0);
    assert_eq!(client.stats().discarded, 1);
    drop(client);
    peer.finish();
}

// ---- controllers ----

#[test]
fn in_use_on_one_of_five_inputs_names_it() {
    let names = "input_int_register_24,input_int_register_25,input_double_register_24,\
                 input_bit_register_64,input_double_register_25";
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_inputs(names, 0, "INT32,INT32,DOUBLE,IN_USE,DOUBLE")
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let recipe = DynamicRecipe::inputs(names.split(',')).unwrap();
    let err = client.setup_inputs(recipe.spec()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.in_use(), ["input_bit_register_64"]);
    assert!(refused.not_found().is_empty());
    // Register 64 is meant for external clients: no fieldbus hint.
    assert_eq!(refused.in_use_fieldbus_registers().count(), 0);
    assert_eq!(
        err.to_string(),
        "the controller refused the input recipe: `input_bit_register_64` is IN_USE (another \
         writer holds it); `input_bit_register_64` is probably held by another RTDE client, or \
         an earlier session of this program that has not closed (the controller frees its \
         inputs when that connection closes)"
    );
    // A refusal leaves the connection usable.
    assert_eq!(client.state(), State::Connected);
    drop(client);
    peer.finish();
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

#[test]
fn a_v2_text_before_the_protocol_reply_is_read_with_its_level_and_source() {
    use rtde_core::protocol::{MessageLevel, TextMessage};
    let text = ControllerMessage::TextMessage(TextMessage {
        level: MessageLevel::Warning,
        message: b"SafetySetup has not been confirmed yet",
        source: b"Controller",
    });
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // The controller already speaks v2 before it says so.
            .raw(&encode(V2, &text))
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let texts: Vec<_> = client.text_messages().collect();
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0].level, MessageLevel::Warning);
    assert_eq!(texts[0].source, "Controller");
    assert_eq!(texts[0].message, "SafetySetup has not been confirmed yet");
    drop(client);
    peer.finish();
}
