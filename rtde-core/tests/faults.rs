//! Fault injection with the scripted fake controller: what the network and controllers do
//! to a client, each answered by a typed error or a documented recovery, never a hang (every
//! wait of the client and of the peer is bounded) and never a panic.
//!
//! Covered: a connection closed mid-frame, a peer that stops sending, garbage bytes, a size
//! field larger than what follows, a data package of another recipe, text and stray data
//! during the handshake, a v1-only controller, `IN_USE` on one of five inputs, a downgrade
//! that loses a field across a reconnection, skipped output packages, the latest-only
//! receive mode, and reconnection (manual and automatic) with the recipes replayed
//! byte-exactly.

mod support;

use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, DecodeErrorKind, ProtocolVersion, package_type,
};
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Event, Recipe, ReconnectPolicy, State,
    Value,
};
use support::{FakePeer, Script, data_v2, encode, timestamp_and_q};

const V1: ProtocolVersion = ProtocolVersion::V1;
const V2: ProtocolVersion = ProtocolVersion::V2;

/// Generous: a test that times out has failed anyway, and a loaded machine is slow.
fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

/// Automatic reconnection with short backoffs.
fn reconnecting(attempts: u32) -> ConnectOptions {
    options().reconnect(
        ReconnectPolicy::new()
            .attempts(attempts)
            .initial_backoff(Duration::from_millis(5))
            .max_backoff(Duration::from_millis(20)),
    )
}

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

/// An output package of `timestamp, actual_q` (recipe id 1) at time `t`.
fn at(t: f64) -> Vec<u8> {
    data_v2(1, &timestamp_and_q(t, t))
}

/// The states in a batch of events, in order.
fn states(events: &[Event]) -> Vec<State> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::State(s) => Some(*s),
            _ => None,
        })
        .collect()
}

/// A 500 Hz `timestamp, actual_q` stream on an e-Series controller, started.
fn streaming(controller: &str) -> Script {
    Script::new()
        .handshake_v2(controller)
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .start()
}

fn connect_streaming(addr: std::net::SocketAddr, options: ConnectOptions) -> Client {
    let mut client = Client::connect(addr, options).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    client
}

// ---- the link ----

#[test]
fn closed_mid_frame_is_a_typed_error_and_reconnect_recovers() {
    let package = at(1.0);
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0")
            .raw(&package)
            .raw(&at(1.002)[..10])
            .close(),
        // The controller went on; the client meets it at 2.0: 1.002 to 1.998 are lost.
        // (A second: the client trusts timestamps that advanced at least as far as its own
        // clock did while the link was down, less 0.25 s, so a busy machine cannot tip it.)
        streaming("5.21.0").raw(&at(2.0)).pause().expect_eof(),
    ]);
    let mut client = connect_streaming(peer.addr, options());
    assert_eq!(client.recv().unwrap(), &package[4..]);
    let err = client.recv().unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert_eq!(
        err.to_string(),
        "the controller closed the connection in the middle of a package"
    );
    assert_eq!(client.state(), State::Closed);
    assert!(matches!(client.recv(), Err(Error::ConnectionLost)));
    assert!(matches!(client.pause(), Err(Error::ConnectionLost)));
    let events: Vec<Event> = client.events().collect();
    assert_eq!(
        states(&events),
        [
            State::Negotiating,
            State::Connected,
            State::Running,
            State::Closed
        ]
    );

    // The documented way on.
    let reconnection = client.reconnect().unwrap();
    assert_eq!(reconnection.attempts, 1);
    assert_eq!(reconnection.protocol, V2);
    assert_eq!(client.state(), State::Running);
    assert_eq!(client.recv().unwrap(), &at(2.0)[4..]);
    let stats = client.stats();
    assert_eq!(
        (stats.received, stats.lost, stats.skipped, stats.reconnects),
        (2, 499, 0, 1)
    );
    let events: Vec<Event> = client.events().collect();
    assert_eq!(
        states(&events),
        [State::Reconnecting, State::Negotiating, State::Running]
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::PackagesLost {
            count: 499,
            estimated: false
        }
    )));
    client.close().unwrap();
    peer.finish_all();
}

#[test]
fn a_peer_that_stops_sending_times_out_within_the_bound_and_the_connection_stays() {
    // Streaming: nothing more until the client pauses.
    let peer = FakePeer::start(streaming("5.21.0").pause().expect_eof());
    let timeout = Duration::from_millis(200);
    let mut client = connect_streaming(peer.addr, options());
    client.set_read_timeout(Some(timeout)).unwrap();
    let started = Instant::now();
    let err = client.recv().unwrap_err();
    let waited = started.elapsed();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(!err.is_mid_frame());
    assert!(
        waited >= timeout && waited < timeout * 5,
        "waited {waited:?} for a {timeout:?} timeout"
    );
    assert_eq!(
        err.to_string(),
        "timed out after 200ms waiting for an output DATA_PACKAGE; raise the read timeout in \
         `ConnectOptions` if the controller is slow (below 2 Hz, say)"
    );
    // A timeout is no lost link: still running, and the pause is answered.
    assert_eq!(client.state(), State::Running);
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    client.close().unwrap();
    peer.finish();
}

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
fn garbage_bytes_lose_the_connection_with_a_decode_error() {
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&at(1.0))
            .raw(b"\xde\xad\xbe\xef not RTDE at all")
            .expect_eof(),
    );
    let mut client = connect_streaming(peer.addr, options());
    client.recv().unwrap();
    let err = client.recv().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    let Error::Decode(decode) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        decode.kind(),
        &DecodeErrorKind::UnknownPackageType { byte: 0xbe }
    );
    // Where the next package starts is unknowable: the connection is gone.
    assert_eq!(client.state(), State::Closed);
    assert!(matches!(client.recv(), Err(Error::ConnectionLost)));
    drop(client);
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

#[test]
fn a_size_field_larger_than_what_follows_then_close() {
    // The header announces 1000 bytes; 20 follow; the peer closes.
    let mut short = vec![0x03, 0xe8, package_type::DATA_PACKAGE, 1];
    short.extend_from_slice(&[0; 16]);
    let peer = FakePeer::start(streaming("5.21.0").raw(&short).close());
    let mut client = connect_streaming(peer.addr, options());
    let err = client.recv().unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    assert_eq!(client.state(), State::Closed);
    peer.finish();
}

#[test]
fn a_size_field_larger_than_what_follows_then_silence_times_out_mid_frame() {
    let mut short = vec![0x03, 0xe8, package_type::DATA_PACKAGE, 1];
    short.extend_from_slice(&[0; 16]);
    let peer = FakePeer::start(streaming("5.21.0").raw(&short).expect_eof());
    let mut client = connect_streaming(peer.addr, options());
    client
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let err = client.recv().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                mid_frame: true,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.is_mid_frame());
    drop(client);
    peer.finish();
}

// ---- packages that make no sense ----

#[test]
fn wrong_recipe_id_and_wrong_length_are_typed_errors_and_the_stream_goes_on() {
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&data_v2(2, &timestamp_and_q(1.0, 0.0)))
            .raw(&data_v2(1, &[0; 8]))
            .text("in between")
            .raw(&data_v2(1, &timestamp_and_q(1.002, 3.0)))
            .pause()
            .expect_eof(),
    );
    let mut client = connect_streaming(peer.addr, options());
    assert_eq!(client.output_recipe_id(), Some(1));
    let err = client.recv().unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongRecipeId {
                expected: Some(1),
                found: Some(2)
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::Protocol);
    let err = client.recv().unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongLength {
                expected: 56,
                found: 8
            }
        ),
        "{err}"
    );
    assert_eq!(client.recv().unwrap(), timestamp_and_q(1.002, 3.0));
    let text = client.text_messages().next().unwrap();
    assert_eq!(text.message, "in between");
    assert_eq!(client.state(), State::Running);
    client.close().unwrap();
    peer.finish();
}

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
fn a_v1_only_controller() {
    let v1_data = |t: f64| {
        encode(
            V1,
            &ControllerMessage::DataPackage {
                recipe_id: None,
                payload: &timestamp_and_q(t, 0.5),
            },
        )
    };
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: false })
            .expect(ClientMessage::RequestProtocolVersion { version: 1 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                "3.4.0".parse().unwrap(),
            ))
            // v1: names only, no frequency; the reply has no recipe id.
            .expect(ClientMessage::SetupOutputs {
                frequency: None,
                names: "timestamp,actual_q",
            })
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: None,
                types: "DOUBLE,VECTOR6D",
            })
            .start()
            // The control loop's 8 ms period, with package 2 missing.
            .raw(&v1_data(10.0))
            .raw(&v1_data(10.008))
            .raw(&v1_data(10.024))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.protocol_version(), V1);
    assert_eq!(client.controller_version().to_string(), "3.4.0");
    assert_eq!(client.max_frequency(), 125.0);

    let mut recipe = outputs();
    // v1 cannot set a frequency: anything but the loop rate is refused before sending.
    let err = client.setup_outputs(recipe.spec(), 10.0).unwrap_err();
    assert!(matches!(err, Error::FrequencyNotInV1 { rate, .. } if rate == 125.0));
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(
        err.to_string()
            .contains("protocol v1 cannot set the output frequency")
    );

    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    assert_eq!(client.output_recipe_id(), None);
    assert_eq!(client.period(), Some(Duration::from_millis(8)));
    client.start().unwrap();
    for _ in 0..3 {
        client.recv_into(&mut recipe).unwrap();
    }
    assert_eq!(recipe.get("actual_q"), Some(&Value::Vector6d([0.5; 6])));
    let stats = client.stats();
    assert_eq!((stats.received, stats.skipped), (3, 1));
    client.close().unwrap();
    peer.finish();
}

#[test]
fn in_use_on_one_of_five_inputs_names_it() {
    let names = "input_int_register_24,input_int_register_25,input_double_register_24,\
                 input_bit_register_64,input_double_register_25";
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .expect(ClientMessage::SetupInputs { names })
            .reply(ControllerMessage::SetupInputsReply {
                recipe_id: 0,
                types: "INT32,INT32,DOUBLE,IN_USE,DOUBLE",
            })
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

#[test]
fn a_downgrade_that_loses_a_field_is_named_on_reconnect_before_anything_is_sent() {
    // `ft_raw_wrench` needs 5.9; the controller comes back as 5.4.
    let peer = FakePeer::start_many(vec![
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,ft_raw_wrench", 1, "DOUBLE,VECTOR6D")
            .close(),
        // No SETUP may arrive: the peer fails the test if one does.
        Script::new().handshake_v2("5.4.0").expect_eof(),
    ]);
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "ft_raw_wrench"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    let err = client.reconnect().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    let Error::Unavailable(missing) = &err else {
        panic!("{err}")
    };
    assert_eq!(missing.fields().len(), 1);
    assert_eq!(missing.fields()[0].name(), "ft_raw_wrench");
    assert_eq!(missing.controller().to_string(), "5.4.0");
    assert!(
        err.to_string()
            .contains("`ft_raw_wrench` requires e-Series 5.9.0 (controller is e-Series 5.4.0)"),
        "{err}"
    );
    assert_eq!(client.state(), State::Closed);
    drop(client);
    peer.finish_all();
}

#[test]
fn a_pause_the_link_broke_is_kept_by_the_reconnection() {
    let peer = FakePeer::start_many(vec![
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            // The link breaks with the PAUSE on its way: no reply.
            .expect(ClientMessage::Pause)
            .close(),
        // The user asked to pause: the replay sets the recipe up and does not START.
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect_eof(),
    ]);
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    let err = client.pause().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Link, "{err}");
    client.reconnect().unwrap();
    assert_eq!(client.state(), State::Paused);
    drop(client);
    peer.finish_all();
}

#[test]
fn not_found_after_a_downgrade_on_reconnect_is_refused_naming_the_field() {
    // A controller of a generation the registry does not know decides for itself.
    let peer = FakePeer::start_many(vec![
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .close(),
        Script::new()
            .handshake_v2("6.0.0")
            .setup_outputs(500.0, "timestamp,actual_q", 0, "DOUBLE,NOT_FOUND")
            .expect_eof(),
    ]);
    let policy = ReconnectPolicy::new()
        .attempts(3)
        .initial_backoff(Duration::from_millis(5));
    let mut client = Client::connect(peer.addr, options().reconnect(policy)).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    // NOT_FOUND will not pass: one attempt, not three (the peer refuses a third connection).
    let err = client.reconnect().unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.not_found(), ["actual_q"]);
    assert_eq!(client.state(), State::Closed);
    assert!(
        !client
            .events()
            .any(|e| matches!(e, Event::AttemptFailed { .. }))
    );
    drop(client);
    peer.finish_all();
}

#[test]
fn skipped_packages_are_counted_exactly_from_timestamps() {
    // 125 Hz on a 500 Hz controller: 8 ms apart. Received k = 0 1 2 5 6 10 11, then a
    // pause and a restart much later (no gap), then k = 1000 1001 1003.
    let at = |k: u32| data_v2(1, &timestamp_and_q(100.0 + f64::from(k) * 0.008, 0.0));
    let mut first = Vec::new();
    for k in [0, 1, 2, 5, 6, 10, 11] {
        first.extend(at(k));
    }
    let mut second = Vec::new();
    for k in [1000, 1001, 1003] {
        second.extend(at(k));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(125.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&first)
            .pause()
            .start()
            .raw(&second)
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 125.0).unwrap();
    assert!(client.counts_gaps());
    assert_eq!(client.period(), Some(Duration::from_millis(8)));
    client.start().unwrap();
    for _ in 0..7 {
        client.recv().unwrap();
    }
    assert_eq!(client.stats().skipped, 2 + 3);
    client.pause().unwrap();
    assert_eq!(client.state(), State::Paused);
    client.start().unwrap();
    for _ in 0..3 {
        client.recv().unwrap();
    }
    let stats = client.stats();
    assert_eq!((stats.received, stats.skipped, stats.discarded), (10, 6, 0));
    assert_eq!((stats.lost, stats.superseded), (0, 0));
    client.close().unwrap();
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
            .expect(ClientMessage::SetupInputs {
                names: "input_int_register_24",
            })
            .reply(ControllerMessage::SetupInputsReply {
                recipe_id: 1,
                types: "INT32",
            })
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

// ---- reconnection ----

/// Two input recipes and the outputs, for the replay tests.
struct Recipes {
    outputs: DynamicRecipe,
    ints: DynamicRecipe,
    bits: DynamicRecipe,
}

fn recipes() -> Recipes {
    Recipes {
        outputs: outputs(),
        ints: DynamicRecipe::inputs(["input_int_register_24", "input_int_register_25"]).unwrap(),
        bits: DynamicRecipe::inputs(["input_bit_register_64"]).unwrap(),
    }
}

/// The handshake and setups of `recipes()` at 250 Hz, with the input ids given.
fn negotiated(controller: &str, output_id: u8, ints_id: u8, bits_id: u8) -> Script {
    Script::new()
        .handshake_v2(controller)
        .setup_outputs(250.0, "timestamp,actual_q", output_id, "DOUBLE,VECTOR6D")
        .expect(ClientMessage::SetupInputs {
            names: "input_int_register_24,input_int_register_25",
        })
        .reply(ControllerMessage::SetupInputsReply {
            recipe_id: ints_id,
            types: "INT32,INT32",
        })
        .expect(ClientMessage::SetupInputs {
            names: "input_bit_register_64",
        })
        .reply(ControllerMessage::SetupInputsReply {
            recipe_id: bits_id,
            types: "BOOL",
        })
}

fn data(id: u8, t: f64) -> Vec<u8> {
    data_v2(id, &timestamp_and_q(t, t))
}

#[test]
fn automatic_reconnect_after_the_peer_drops_replays_everything_byte_exactly() {
    let peer = FakePeer::start_many(vec![
        negotiated("5.21.0", 1, 1, 2)
            .start()
            .raw(&data(1, 50.000))
            .raw(&data(1, 50.004))
            .close(),
        // The controller restarted its RTDE server and numbers recipes differently; 250 Hz
        // is every 2nd tick, so 50.008 to 51.000 (249 packages) went by while the link was
        // down.
        negotiated("5.21.0", 3, 7, 5)
            .start()
            .raw(&data(3, 51.004))
            .raw(&data(3, 51.008))
            .expect(ClientMessage::DataPackage {
                recipe_id: 7,
                payload: &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff],
            })
            .expect(ClientMessage::DataPackage {
                recipe_id: 5,
                payload: &[1],
            })
            .pause()
            .expect_eof(),
    ]);
    let mut r = recipes();
    let mut client = Client::connect(peer.addr, reconnecting(3)).unwrap();
    client.setup_outputs(r.outputs.spec(), 250.0).unwrap();
    let ints = client.setup_inputs(r.ints.spec()).unwrap();
    let bits = client.setup_inputs(r.bits.spec()).unwrap();
    client.start().unwrap();
    let _ = client.events().count();

    client.recv_into(&mut r.outputs).unwrap();
    client.recv_into(&mut r.outputs).unwrap();
    // The peer drops here; the call reconnects and returns the new connection's first.
    client.recv_into(&mut r.outputs).unwrap();
    assert_eq!(r.outputs.get("timestamp"), Some(&Value::Double(51.004)));
    client.recv_into(&mut r.outputs).unwrap();
    assert_eq!(client.state(), State::Running);
    assert_eq!(client.output_recipe_id(), Some(3));
    assert_eq!(
        (client.input_recipe_id(&ints), client.input_recipe_id(&bits)),
        (Some(7), Some(5))
    );

    let events: Vec<Event> = client.events().collect();
    assert!(
        matches!(events[0], Event::LinkLost(Error::Closed { .. })),
        "{events:?}"
    );
    assert_eq!(
        states(&events),
        [State::Reconnecting, State::Negotiating, State::Running]
    );
    let Some(Event::Reconnected(reconnection)) =
        events.iter().find(|e| matches!(e, Event::Reconnected(_)))
    else {
        panic!("{events:?}")
    };
    assert_eq!(reconnection.attempts, 1);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::PackagesLost {
            count: 249,
            estimated: false
        }
    )));
    let stats = client.stats();
    assert_eq!(
        (stats.received, stats.lost, stats.skipped, stats.reconnects),
        (4, 249, 0, 1)
    );

    // The old handles send with the new ids.
    r.ints
        .set("input_int_register_24", Value::Int32(1))
        .unwrap();
    r.ints
        .set("input_int_register_25", Value::Int32(-1))
        .unwrap();
    r.bits
        .set("input_bit_register_64", Value::Bool(true))
        .unwrap();
    client.send(&ints, &r.ints).unwrap();
    client.send(&bits, &r.bits).unwrap();
    client.close().unwrap();

    // Byte for byte, frequency included: what the first connection negotiated is what the
    // second one got.
    let transcripts = peer.finish_all();
    for kind in [package_type::SETUP_OUTPUTS, package_type::SETUP_INPUTS] {
        let (before, after) = (transcripts[0].of_type(kind), transcripts[1].of_type(kind));
        assert!(!before.is_empty());
        assert_eq!(before, after, "{}", package_type::name(kind));
    }
    assert_eq!(
        transcripts[1].of_type(package_type::SETUP_OUTPUTS)[0][3..11],
        250.0f64.to_be_bytes()
    );
}

#[test]
fn a_paused_client_reconnects_paused() {
    let peer = FakePeer::start_many(vec![
        negotiated("5.21.0", 1, 1, 2).start().pause(),
        // No START may come: the peer fails the test if one does.
        negotiated("5.21.0", 1, 3, 4).expect_eof(),
    ]);
    let r = recipes();
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(r.outputs.spec(), 250.0).unwrap();
    client.setup_inputs(r.ints.spec()).unwrap();
    client.setup_inputs(r.bits.spec()).unwrap();
    client.start().unwrap();
    client.pause().unwrap();
    let _ = client.events().count();
    client.reconnect().unwrap();
    assert_eq!(client.state(), State::Paused);
    assert!(!client.is_running());
    assert_eq!(
        states(&client.events().collect::<Vec<_>>()),
        [State::Reconnecting, State::Negotiating, State::Paused]
    );
    drop(client);
    peer.finish_all();
}

/// A peer that accepts, then closes during the handshake.
fn drops_during_handshake() -> Script {
    Script::new()
        .expect(ClientMessage::RequestProtocolVersion { version: 2 })
        .close()
}

/// Outputs and one input recipe, then the input's reply.
fn with_input(reply: ControllerMessage<'static>) -> Script {
    Script::new()
        .handshake_v2("5.21.0")
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .expect(ClientMessage::SetupInputs {
            names: "input_int_register_24",
        })
        .reply(reply)
}

#[test]
fn failed_attempts_are_retried_with_backoff_and_reported() {
    let peer = FakePeer::start_many(vec![
        with_input(ControllerMessage::SetupInputsReply {
            recipe_id: 1,
            types: "INT32",
        })
        .start()
        .raw(&at(7.0))
        .close(),
        drops_during_handshake(),
        // The old connection's input is not released yet.
        with_input(ControllerMessage::SetupInputsReply {
            recipe_id: 0,
            types: "IN_USE",
        })
        .expect_eof(),
        with_input(ControllerMessage::SetupInputsReply {
            recipe_id: 2,
            types: "INT32",
        })
        .start()
        .raw(&at(8.0))
        .pause()
        .expect_eof(),
    ]);
    let mut client = Client::connect(peer.addr, reconnecting(5)).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    let input = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(input.spec()).unwrap();
    client.start().unwrap();
    assert_eq!(client.recv().unwrap(), &at(7.0)[4..]);
    let _ = client.events().count();

    assert_eq!(client.recv().unwrap(), &at(8.0)[4..]);
    assert_eq!(client.input_recipe_id(&handle), Some(2));
    let events: Vec<Event> = client.events().collect();
    let failures: Vec<(u32, ErrorKind, Duration)> = events
        .iter()
        .filter_map(|e| match e {
            Event::AttemptFailed {
                attempt,
                error,
                retry_in,
            } => Some((*attempt, error.kind(), *retry_in)),
            _ => None,
        })
        .collect();
    assert_eq!(
        failures,
        [
            (1, ErrorKind::Link, Duration::from_millis(5)),
            (2, ErrorKind::Refused, Duration::from_millis(10))
        ]
    );
    assert_eq!(
        states(&events),
        [
            State::Reconnecting,
            State::Negotiating,
            State::Reconnecting,
            State::Negotiating,
            State::Reconnecting,
            State::Negotiating,
            State::Running
        ]
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Reconnected(r) if r.attempts == 3))
    );
    // 7.0 to 8.0 at 500 Hz: 499 packages in between.
    assert_eq!(client.stats().lost, 499);
    client.close().unwrap();
    peer.finish_all();
}

#[test]
fn a_round_of_attempts_is_bounded_and_ends_closed() {
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0").raw(&at(1.0)).close(),
        drops_during_handshake(),
        drops_during_handshake(),
    ]);
    let mut client = connect_streaming(peer.addr, reconnecting(2));
    client.recv().unwrap();
    let _ = client.events().count();
    let started = Instant::now();
    let err = client.recv().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, Error::Closed { .. }), "{err}");
    assert_eq!(client.state(), State::Closed);
    let events: Vec<Event> = client.events().collect();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::AttemptFailed { .. }))
            .count(),
        1
    );
    assert_eq!(states(&events).last(), Some(&State::Closed));
    assert_eq!(client.stats().reconnects, 0);
    // The peer is gone: the next call tries a new round and fails as a link error.
    peer.finish_all();
    let err = client.recv().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Link, "{err}");
    assert_eq!(client.state(), State::Closed);
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

// ---- nothing lost across a reconnection ----

#[test]
fn text_messages_already_received_survive_a_reconnection() {
    // The data package and the text arrive in one write, so both sit whole in the client's
    // buffer when `recv` returns the first: the text was received, and must not vanish
    // when the link is dropped.
    let text = encode(
        V2,
        &ControllerMessage::TextMessage(rtde_core::protocol::TextMessage {
            level: rtde_core::protocol::MessageLevel::Error,
            message: b"why the controller gave up",
            source: b"fake",
        }),
    );
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0")
            .raw(&[at(1.0), text].concat())
            .expect_eof(),
        streaming("5.21.0").pause().expect_eof(),
    ]);
    let mut client = connect_streaming(peer.addr, options());
    assert_eq!(client.recv().unwrap(), &at(1.0)[4..]);
    client.reconnect().unwrap();
    let texts: Vec<String> = client.text_messages().map(|t| t.message).collect();
    assert_eq!(texts, ["why the controller gave up"]);
    assert_eq!(client.stats().texts_dropped, 0);
    client.close().unwrap();
    peer.finish_all();
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

#[test]
fn a_data_package_before_the_start_reply_is_the_first_package_received() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect(ClientMessage::Start)
            .raw(&at(1.0))
            .reply(ControllerMessage::StartReply { accepted: true })
            .raw(&at(1.002))
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let mut recipe = outputs();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    assert_eq!(client.state(), State::Running);
    for t in [1.0, 1.002] {
        client.recv_into(&mut recipe).unwrap();
        assert_eq!(recipe.get("timestamp"), Some(&Value::Double(t)));
    }
    let stats = client.stats();
    assert_eq!((stats.received, stats.discarded), (2, 0), "{stats:?}");
    drop(client);
    peer.finish();
}
