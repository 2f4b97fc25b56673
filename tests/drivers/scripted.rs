//! The scenarios against the scripted peer: what the network and controllers do to a
//! connection after the handshake, each answered by a typed error or a documented
//! recovery, never a hang (every wait of the driver and of the peer is bounded) and never
//! a panic.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, DecodeErrorKind, MessageLevel, ProtocolVersion, TextMessage,
    package_type,
};
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Event, InputHandle, Recipe,
    ReconnectPolicy, State, Value,
};

use super::{Driver, Staleness, outputs, started};
use crate::common::{WAIT, options, timestamp};
use crate::support::{FakePeer, Script, data_v2, encode, timestamp_and_q};

const V2: ProtocolVersion = ProtocolVersion::V2;

/// Automatic reconnection with short backoffs.
fn reconnecting(attempts: u32) -> ConnectOptions {
    options().reconnect(
        ReconnectPolicy::new()
            .attempts(attempts)
            .initial_backoff(Duration::from_millis(5))
            .max_backoff(Duration::from_millis(20)),
    )
}

/// The options under which `D` comes back after a lost link: none for the blocking
/// client, which is asked to reconnect; a policy for the drivers that reconnect on their
/// own.
fn to_come_back<D: Driver>() -> ConnectOptions {
    if D::BY_HAND {
        options()
    } else {
        reconnecting(3)
    }
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

// ---- the link ----

pub(crate) fn closed_mid_frame_is_a_typed_error_and_the_way_on_is_each_drivers<D: Driver>() {
    let first = streaming("5.21.0")
        .raw(&at(1.0))
        .raw(&at(1.002)[..10])
        .close();
    let peer = if D::BY_HAND {
        FakePeer::start_many(vec![
            first,
            // The controller went on; the client meets it at 2.0: 1.002 to 1.998 are lost.
            // (A second: the client trusts timestamps that advanced at least as far as its
            // own clock did while the link was down, less 0.25 s, so a busy machine cannot
            // tip it.)
            streaming("5.21.0").raw(&at(2.0)).pause().expect_eof(),
        ])
    } else {
        FakePeer::start(first)
    };
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    let mut driver = D::take(client);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.0);
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert_eq!(
        err.to_string(),
        "the controller closed the connection in the middle of a package"
    );
    assert_eq!(driver.state(), State::Closed);
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    if D::PAUSES {
        assert!(matches!(driver.pause(), Err(Error::ConnectionLost)));
    }
    assert_eq!(
        states(&driver.events()),
        [
            State::Negotiating,
            State::Connected,
            State::Running,
            State::Closed
        ]
    );
    if !D::BY_HAND {
        // Without a policy nothing brings these back: they ended for good.
        let err = driver.come_back().unwrap_err();
        assert!(matches!(err, Error::ConnectionLost), "{err}");
        driver.finish();
        peer.finish();
        return;
    }

    // The documented way on.
    driver.come_back().unwrap();
    assert_eq!(driver.state(), State::Running);
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 2.0);
    let stats = driver.stats();
    assert_eq!(
        (stats.received, stats.lost, stats.skipped, stats.reconnects),
        (2, 499, 0, 1)
    );
    let events = driver.events();
    assert_eq!(
        states(&events),
        [State::Reconnecting, State::Negotiating, State::Running]
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Reconnected(r) if r.attempts == 1 && r.protocol == V2
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::PackagesLost {
            count: 499,
            estimated: false
        }
    )));
    driver.close().unwrap();
    peer.finish_all();
}

pub(crate) fn a_peer_that_stops_sending_times_out_within_the_bound_and_the_connection_stays<
    D: Driver,
>() {
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&at(1.0))
            // Far longer than the timeout, so a slow test thread cannot miss the silence.
            .wait(Duration::from_secs(1))
            .raw(&at(1.002))
            .pause()
            .expect_eof(),
    );
    let timeout = Duration::from_millis(200);
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    driver.set_wait(timeout);
    let began = Instant::now();
    let err = driver.recv_into(&mut recipe).unwrap_err();
    let waited = began.elapsed();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(!err.is_mid_frame());
    // Bounded: not early, and nowhere near a hang (loose: the machine is loaded).
    assert!(
        waited >= timeout && waited < timeout * 10,
        "waited {waited:?} for a {timeout:?} timeout"
    );
    assert_eq!(
        err.to_string(),
        "timed out after 200ms waiting for an output DATA_PACKAGE; raise the read timeout in \
         `ConnectOptions` if the controller is slow (below 2 Hz, say)"
    );
    // A timeout is no lost link: still running, the stream goes on, the pause is answered.
    assert_eq!(driver.state(), State::Running);
    driver.set_wait(WAIT);
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.002);
    driver.close().unwrap();
    peer.finish();
}

pub(crate) fn garbage_bytes_lose_the_link_with_a_decode_error<D: Driver>() {
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&at(1.0))
            .raw(b"\xde\xad\xbe\xef not RTDE at all")
            .expect_eof(),
    );
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    let Error::Decode(decode) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        decode.kind(),
        &DecodeErrorKind::UnknownPackageType { byte: 0xbe }
    );
    // Where the next package starts is unknowable: the connection is gone.
    assert_eq!(driver.state(), State::Closed);
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    driver.finish();
    peer.finish();
}

/// A header that announces 1000 bytes, and 20 of them.
fn short_package() -> Vec<u8> {
    let mut short = vec![0x03, 0xe8, package_type::DATA_PACKAGE, 1];
    short.extend_from_slice(&[0; 16]);
    short
}

pub(crate) fn a_size_field_larger_than_what_follows_then_close<D: Driver>() {
    let peer = FakePeer::start(streaming("5.21.0").raw(&short_package()).close());
    let mut driver: D = started(peer.addr, options(), 500.0);
    let err = driver.recv_into(&mut outputs()).unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
    peer.finish();
}

pub(crate) fn a_size_field_larger_than_what_follows_then_silence_times_out_mid_frame<D: Driver>() {
    let peer = FakePeer::start(streaming("5.21.0").raw(&short_package()).expect_eof());
    let mut driver: D = started(peer.addr, options(), 500.0);
    driver.set_wait(Duration::from_millis(300));
    let err = driver.recv_into(&mut outputs()).unwrap_err();
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
    assert_eq!(driver.state(), State::Running);
    driver.finish();
    peer.finish();
}

pub(crate) fn a_peer_that_stops_reading_fails_the_send_within_the_write_timeout<D: Driver>() {
    // 24 doubles: a big package, so the socket buffers fill after fewer sends.
    let names: Vec<String> = (24..48)
        .map(|i| format!("input_double_register_{i}"))
        .collect();
    let joined = names.join(",");
    let types = vec!["DOUBLE"; names.len()].join(",");
    let (release, held) = mpsc::channel();
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_inputs(&joined, 1, &types)
            // Reads nothing from here on, until the test is done.
            .hold(held),
    );
    let write_timeout = Duration::from_millis(200);
    let mut client =
        Client::connect(peer.addr, options().write_timeout(Some(write_timeout))).unwrap();
    let inputs = DynamicRecipe::inputs(names.iter().map(String::as_str)).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    let mut driver = D::take(client);
    // Loopback buffers hold a few megabytes: tens of thousands of packages.
    let mut sent = 0u32;
    let (err, took) = loop {
        let began = Instant::now();
        match driver.send(&handle, &inputs) {
            Ok(()) => sent += 1,
            Err(e) => break (e, began.elapsed()),
        }
        assert!(sent < 1_000_000, "the peer never stopped taking packages");
    };
    assert!(sent > 0);
    assert_eq!(err.kind(), ErrorKind::Link, "{err}");
    let Error::Io { source, mid_frame } = &err else {
        panic!("{err}")
    };
    assert_eq!(source.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert!(!mid_frame);
    let said = rtde_core::Report(&err).to_string();
    assert!(
        said.contains("stopped reading"),
        "says what happened: {said}"
    );
    // Within the bound (loose: the machine is loaded), not a hang.
    assert!(took < write_timeout * 10, "the failing send took {took:?}");
    // Part of a package may have gone out: the link is gone.
    assert_eq!(driver.state(), State::Closed);
    assert!(matches!(
        driver.send(&handle, &inputs),
        Err(Error::ConnectionLost)
    ));
    drop(release);
    driver.finish();
    peer.finish();
}

// ---- packages that make no sense ----

pub(crate) fn wrong_recipe_id_and_wrong_length_are_typed_errors_and_the_stream_goes_on<
    D: Driver,
>() {
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&data_v2(2, &timestamp_and_q(1.0, 0.0)))
            .raw(&data_v2(1, &[0; 8]))
            .text("in between")
            .raw(&data_v2(1, &timestamp_and_q(1.002, 3.0)))
            .pause()
            .expect_eof(),
    );
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.002);
    assert_eq!(recipe.get("actual_q"), Some(&Value::Vector6d([3.0; 6])));
    let rejected = driver.rejected();
    assert!(
        matches!(
            rejected.as_slice(),
            [
                Error::WrongRecipeId {
                    expected: Some(1),
                    found: Some(2)
                },
                Error::WrongLength {
                    expected: 56,
                    found: 8
                }
            ]
        ),
        "{rejected:?}"
    );
    assert!(rejected.iter().all(|e| e.kind() == ErrorKind::Protocol));
    let texts = driver.text_messages();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].message, "in between");
    assert_eq!(driver.state(), State::Running);
    driver.close().unwrap();
    peer.finish();
}

pub(crate) fn a_data_package_before_the_start_reply_is_the_first_package<D: Driver>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect(ClientMessage::Start)
            .raw(&at(1.0))
            .reply(ControllerMessage::StartReply { accepted: true })
            .raw(&at(1.002))
            .close(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    // Started, though the START reply came after a package.
    assert_eq!(client.state(), State::Running);
    let mut driver = D::take(client);
    let mut recipe = outputs();
    for t in [1.0, 1.002] {
        driver.recv_into(&mut recipe).unwrap();
        assert_eq!(timestamp(&recipe), t);
    }
    let stats = driver.stats();
    assert_eq!((stats.received, stats.discarded), (2, 0), "{stats:?}");
    driver.finish();
    peer.finish();
}

pub(crate) fn the_latest_is_the_newest_and_the_packages_before_it_are_accounted_for<D: Driver>() {
    let times = [0.0, 0.002, 0.004, 0.006, 0.008];
    // In one write: the batch arrives whole, before or while the driver waits.
    let batch: Vec<u8> = times.iter().flat_map(|&t| at(t)).collect();
    let peer = FakePeer::start(streaming("5.21.0").raw(&batch).pause().expect_eof());
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut latest = outputs();
    let deadline = Instant::now() + WAIT;
    // Bounded: the newest comes at once for the blocking client, as soon as the reader has
    // taken it for the others.
    while !(driver.latest_into(&mut latest).unwrap() && timestamp(&latest) == 0.008) {
        assert!(Instant::now() < deadline, "the newest never came");
        std::thread::sleep(Duration::from_millis(1));
    }
    let stats = driver.stats();
    if D::LATEST_SUPERSEDES {
        // Passed over, counted: every package is received or superseded, once.
        assert!(stats.superseded > 0, "{stats:?}");
        assert_eq!(stats.received + stats.superseded, 5, "{stats:?}");
    } else {
        // Nothing passed over: the in-order receiver still has every package.
        assert_eq!((stats.received, stats.superseded), (5, 0), "{stats:?}");
        let mut recipe = outputs();
        for t in times {
            driver.recv_into(&mut recipe).unwrap();
            assert_eq!(timestamp(&recipe), t);
        }
    }
    assert_eq!((driver.stats().skipped, driver.stats().discarded), (0, 0));
    driver.close().unwrap();
    peer.finish();
}

pub(crate) fn skipped_packages_are_counted_exactly_from_timestamps<D: Driver>() {
    // 125 Hz on a 500 Hz controller: 8 ms apart. Received k = 0 1 2 5 6 10 11, then (for
    // a driver that pauses) a pause and a restart much later (no gap), then k = 1000 1001
    // 1003.
    let at = |k: u32| data_v2(1, &timestamp_and_q(100.0 + f64::from(k) * 0.008, 0.0));
    let batch = |ks: &[u32]| ks.iter().flat_map(|&k| at(k)).collect::<Vec<u8>>();
    let script = Script::new()
        .handshake_v2("5.21.0")
        .setup_outputs(125.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .start()
        .raw(&batch(&[0, 1, 2, 5, 6, 10, 11]))
        .pause();
    let script = if D::PAUSES {
        script.start().raw(&batch(&[1000, 1001, 1003])).pause()
    } else {
        script
    };
    let peer = FakePeer::start(script.expect_eof());
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 125.0).unwrap();
    assert!(client.counts_gaps());
    assert_eq!(client.period(), Some(Duration::from_millis(8)));
    client.start().unwrap();
    let mut driver = D::take(client);
    let mut recipe = outputs();
    for _ in 0..7 {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert_eq!(driver.stats().skipped, 2 + 3);
    if D::PAUSES {
        driver.pause().unwrap();
        assert_eq!(driver.state(), State::Paused);
        driver.start().unwrap();
        for _ in 0..3 {
            driver.recv_into(&mut recipe).unwrap();
        }
        let stats = driver.stats();
        assert_eq!((stats.received, stats.skipped, stats.discarded), (10, 6, 0));
        assert_eq!((stats.lost, stats.superseded), (0, 0));
    } else {
        let stats = driver.stats();
        assert_eq!((stats.received, stats.skipped, stats.discarded), (7, 5, 0));
    }
    driver.close().unwrap();
    peer.finish();
}

pub(crate) fn a_v1_only_controller_streams_without_recipe_ids<D: Driver>() {
    let v1_data = |t: f64| {
        encode(
            ProtocolVersion::V1,
            &ControllerMessage::DataPackage {
                recipe_id: None,
                payload: &timestamp_and_q(t, 0.5),
            },
        )
    };
    let peer = FakePeer::start(
        Script::new()
            .handshake_v1("3.4.0")
            // v1: names only, no frequency; the reply has no recipe id.
            .setup_outputs_v1("timestamp,actual_q", "DOUBLE,VECTOR6D")
            .start()
            // The control loop's 8 ms period, with package 2 missing.
            .raw(&v1_data(10.0))
            .raw(&v1_data(10.008))
            .raw(&v1_data(10.024))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V1);
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
    let mut driver = D::take(client);
    for _ in 0..3 {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert_eq!(recipe.get("actual_q"), Some(&Value::Vector6d([0.5; 6])));
    let stats = driver.stats();
    assert_eq!((stats.received, stats.skipped), (3, 1));
    driver.close().unwrap();
    peer.finish();
}

/// A package of type `X`, which the RTDE guide does not define.
fn unknown_package() -> Vec<u8> {
    vec![0x00, 0x06, b'X', 1, 2, 3]
}

pub(crate) fn unknown_package_types_are_skipped_and_counted_not_a_lost_link<D: Driver>() {
    let at = |t: f64| data_v2(1, &timestamp_and_q(t, 0.0));
    let mut stream = at(1.000);
    stream.extend(unknown_package());
    stream.extend(at(1.002));
    let peer = FakePeer::start(
        Script::new()
            .version(ProtocolVersion::V1)
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // Before the reply to a request, too.
            .raw(&unknown_package())
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&stream)
            .raw(&unknown_package())
            .raw(&at(1.004))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.stats().unknown_packages, 1);
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    let mut driver = D::take(client);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    driver.recv_into(&mut recipe).unwrap();
    if D::LATEST_SUPERSEDES {
        // Taking the latest passes over one too.
        assert!(driver.latest_into(&mut recipe).unwrap());
    } else {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert_eq!(timestamp(&recipe), 1.004);
    let stats = driver.stats();
    assert_eq!((stats.received, stats.unknown_packages), (3, 3));
    assert_eq!(stats.skipped, 0);
    assert_eq!(driver.state(), State::Running);
    driver.close().unwrap();
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
        .setup_inputs(
            "input_int_register_24,input_int_register_25",
            ints_id,
            "INT32,INT32",
        )
        .setup_inputs("input_bit_register_64", bits_id, "BOOL")
}

fn data(id: u8, t: f64) -> Vec<u8> {
    data_v2(id, &timestamp_and_q(t, t))
}

pub(crate) fn automatic_reconnect_after_the_peer_drops_replays_everything_byte_exactly<
    D: Driver,
>() {
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
    // (Asked of the client: a driver's reader may have reconnected already.)
    assert_eq!(client.output_recipe_id(), Some(1));
    let mut driver = D::take(client);

    driver.recv_into(&mut r.outputs).unwrap();
    driver.recv_into(&mut r.outputs).unwrap();
    // The peer drops here; the driver reconnects, and the next package is the new
    // connection's first.
    driver.recv_into(&mut r.outputs).unwrap();
    assert_eq!(r.outputs.get("timestamp"), Some(&Value::Double(51.004)));
    driver.recv_into(&mut r.outputs).unwrap();
    assert_eq!(driver.state(), State::Running);
    assert_eq!(
        (driver.input_recipe_id(&ints), driver.input_recipe_id(&bits)),
        (Some(7), Some(5))
    );
    // What a capture header records is the new link's.
    assert_eq!(driver.output_recipe_id(), Some(3));
    assert_eq!(driver.protocol_version(), V2);
    assert_eq!(driver.controller_version().to_string(), "5.21.0");

    let events = driver.events();
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
    let stats = driver.stats();
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
    driver.send(&ints, &r.ints).unwrap();
    driver.send(&bits, &r.bits).unwrap();
    driver.close().unwrap();

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

pub(crate) fn a_paused_client_reconnects_paused<D: Driver>() {
    let peer = FakePeer::start_many(vec![
        // Paused, then the peer drops the link.
        negotiated("5.21.0", 1, 1, 2).start().pause(),
        // No START may come: the peer fails the test if one does.
        negotiated("5.21.0", 1, 3, 4).expect_eof(),
    ]);
    let r = recipes();
    let mut client = Client::connect(peer.addr, to_come_back::<D>()).unwrap();
    client.setup_outputs(r.outputs.spec(), 250.0).unwrap();
    client.setup_inputs(r.ints.spec()).unwrap();
    client.setup_inputs(r.bits.spec()).unwrap();
    client.start().unwrap();
    client.pause().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    driver.come_back().unwrap();
    assert_eq!(driver.state(), State::Paused);
    assert_eq!(
        states(&driver.events()),
        [State::Reconnecting, State::Negotiating, State::Paused]
    );
    driver.finish();
    peer.finish_all();
}

pub(crate) fn a_pause_the_link_broke_is_kept_by_the_reconnection<D: Driver>() {
    let first = Script::new()
        .handshake_v2("5.21.0")
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .start()
        // The link breaks with the PAUSE on its way: no reply.
        .expect(ClientMessage::Pause)
        .close();
    // The user asked to pause: the replay sets the recipe up and does not START.
    let second = Script::new()
        .handshake_v2("5.21.0")
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .expect_eof();
    let peer = if D::PAUSES {
        FakePeer::start_many(vec![first, second])
    } else {
        FakePeer::start(first)
    };
    let mut driver: D = started(peer.addr, to_come_back::<D>(), 500.0);
    if !D::PAUSES {
        // The background driver pauses only as it closes: that pause's error is close's.
        let err = driver.close().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Link, "{err}");
        peer.finish();
        return;
    }
    let err = driver.pause().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Link, "{err}");
    driver.come_back().unwrap();
    assert_eq!(driver.state(), State::Paused);
    driver.finish();
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

pub(crate) fn failed_attempts_are_retried_with_backoff_and_reported<D: Driver>() {
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
    let _ = client.events().count();
    let mut driver = D::take(client);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 7.0);
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 8.0);
    assert_eq!(driver.input_recipe_id(&handle), Some(2));
    let events = driver.events();
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
    assert_eq!(driver.stats().lost, 499);
    driver.close().unwrap();
    peer.finish_all();
}

pub(crate) fn a_round_of_attempts_is_bounded_and_ends_closed<D: Driver>() {
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0").raw(&at(1.0)).close(),
        drops_during_handshake(),
        drops_during_handshake(),
    ]);
    let mut driver: D = started(peer.addr, reconnecting(2), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    let began = Instant::now();
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert!(began.elapsed() < WAIT);
    assert!(matches!(err, Error::Closed { .. }), "{err}");
    assert_eq!(driver.state(), State::Closed);
    let events = driver.events();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::AttemptFailed { .. }))
            .count(),
        1
    );
    assert_eq!(states(&events).last(), Some(&State::Closed));
    assert_eq!(driver.stats().reconnects, 0);
    peer.finish_all();
    // The peer is gone. The blocking client's next call tries a new round, which fails to
    // connect; the other drivers ended with the round. A link error either way.
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Link, "{err}");
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
}

pub(crate) fn a_downgrade_that_loses_a_field_is_named_on_reconnect_before_anything_is_sent<
    D: Driver,
>() {
    // `ft_raw_wrench` needs 5.9; the controller comes back as 5.4.
    let peer = FakePeer::start_many(vec![
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,ft_raw_wrench", 1, "DOUBLE,VECTOR6D")
            .close(),
        // No SETUP may arrive: the peer fails the test if one does.
        Script::new().handshake_v2("5.4.0").expect_eof(),
    ]);
    let mut client = Client::connect(peer.addr, to_come_back::<D>()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "ft_raw_wrench"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    let mut driver = D::take(client);
    // Not worth retrying: the round ends at the first attempt.
    let err = driver.come_back().unwrap_err();
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
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
    peer.finish_all();
}

pub(crate) fn not_found_after_a_downgrade_on_reconnect_is_refused_naming_the_field<D: Driver>() {
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
    let _ = client.events().count();
    let mut driver = D::take(client);
    // NOT_FOUND will not pass: one attempt, not three (the peer refuses a third connection).
    let err = driver.come_back().unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.not_found(), ["actual_q"]);
    assert_eq!(driver.state(), State::Closed);
    let events = driver.events();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::AttemptFailed { .. })),
        "{events:?}"
    );
    driver.finish();
    peer.finish_all();
}

// ---- inputs sent while a reconnection is under way ----

/// `input_int_register_24` set to 42, and the package it makes on a link that gave the
/// recipe `id`.
fn register_24() -> DynamicRecipe {
    let mut input = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    input
        .set("input_int_register_24", Value::Int32(42))
        .unwrap();
    input
}

/// A first link that streams one package and drops, then a second one that tells the test
/// it was accepted and holds the reconnection's handshake until the test lets go: `then`
/// is what it does after that.
fn dropped_then_held(
    reached: mpsc::Sender<()>,
    held: mpsc::Receiver<()>,
    then: impl FnOnce(Script) -> Script,
) -> FakePeer {
    FakePeer::start_many(vec![
        with_input(ControllerMessage::SetupInputsReply {
            recipe_id: 1,
            types: "INT32",
        })
        .start()
        .raw(&at(1.0))
        .close(),
        then(Script::new().reached(reached).hold(held)),
    ])
}

/// Lets the held handshake go on a little after the peer was reached, on a thread of its
/// own: the test's `send` (or, for the blocking client, its `reconnect`) meanwhile begins
/// while the reconnection is under way. (The delay only makes that likely; the outcome the
/// scenario asserts does not depend on it.) Returns when the peer was reached.
fn release_after_reached(
    reached: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
) -> (mpsc::Receiver<()>, std::thread::JoinHandle<()>) {
    let (connected, on_connect) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        if reached.recv_timeout(WAIT).is_ok() {
            let _ = connected.send(());
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(release);
    });
    (on_connect, thread)
}

/// The client of `dropped_then_held`'s first link, started, taken by `D`, its one package
/// received.
fn taken_with_input<D: Driver>(peer: &FakePeer, options: ConnectOptions) -> (D, InputHandle) {
    let mut client = Client::connect(peer.addr, options).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    let handle = client.setup_inputs(register_24().spec()).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.0);
    (driver, handle)
}

pub(crate) fn a_send_during_a_reconnection_waits_for_it_and_goes_out_on_the_new_link<D: Driver>() {
    let (reached, on_reached) = mpsc::channel();
    let (release, held) = mpsc::channel();
    // The new link assigns the input recipe id 7; the package must come after START,
    // with that id, and be the only one.
    let peer = dropped_then_held(reached, held, |script| {
        script
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 7, "INT32")
            .start()
            .expect(ClientMessage::DataPackage {
                recipe_id: 7,
                payload: &[0, 0, 0, 42],
            })
            .pause()
            .expect_eof()
    });
    let (mut driver, handle): (D, _) = taken_with_input(&peer, to_come_back::<D>());
    let (on_connect, releaser) = release_after_reached(on_reached, release);
    if D::BY_HAND {
        // The blocking client has no reconnection under way unless a call makes one.
        let mut recipe = outputs();
        let err = driver.recv_into(&mut recipe).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Link, "{err}");
        driver.come_back().unwrap();
    } else {
        // The reader saw the drop and reconnects: the handshake is held.
        on_connect.recv_timeout(WAIT).unwrap();
    }
    // Every driver: the package waits for the link and goes out on it.
    driver.send(&handle, &register_24()).unwrap();
    assert_eq!(driver.state(), State::Running);
    assert_eq!(driver.input_recipe_id(&handle), Some(7));
    assert_eq!(driver.stats().reconnects, 1);
    driver.close().unwrap();
    releaser.join().unwrap();
    peer.finish_all();
}

pub(crate) fn a_send_during_a_reconnection_that_fails_is_connection_lost<D: Driver>() {
    let (reached, on_reached) = mpsc::channel();
    let (release, held) = mpsc::channel();
    // The reconnection's one attempt fails; nothing listens after it.
    let peer = dropped_then_held(reached, held, Script::close);
    let options = if D::BY_HAND {
        options()
    } else {
        reconnecting(1)
    };
    let (mut driver, handle): (D, _) = taken_with_input(&peer, options);
    let (on_connect, releaser) = release_after_reached(on_reached, release);
    let round = if D::BY_HAND {
        let mut recipe = outputs();
        let err = driver.recv_into(&mut recipe).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Link, "{err}");
        driver.come_back().unwrap_err()
    } else {
        on_connect.recv_timeout(WAIT).unwrap();
        let err = driver.send(&handle, &register_24()).unwrap_err();
        assert!(matches!(err, Error::ConnectionLost), "{err}");
        // The round's own error went to the in-order receiver.
        driver.come_back().unwrap_err()
    };
    assert_eq!(round.kind(), ErrorKind::Link, "{round}");
    assert!(!matches!(round, Error::ConnectionLost), "{round}");
    assert_eq!(driver.state(), State::Closed);
    // Every driver now: the link is gone and nothing was queued for a later one.
    let err = driver.send(&handle, &register_24()).unwrap_err();
    assert!(matches!(err, Error::ConnectionLost), "{err}");
    driver.finish();
    releaser.join().unwrap();
    peer.finish_all();
}

// ---- the handles during a round of attempts ----

/// How long a handle's getter may take while a round backs off: far below the backoff, so
/// a getter that waits for the round (or for a connect or the backoff's sleep) fails.
const PROMPT: Duration = Duration::from_millis(200);

/// Runs `call`, failing the test when it took [`PROMPT`] or longer.
fn promptly<T>(what: &str, call: impl FnOnce() -> T) -> T {
    let began = Instant::now();
    let value = call();
    let took = began.elapsed();
    assert!(took < PROMPT, "`{what}` took {took:?} during the round");
    value
}

/// The drivers that reconnect on their own (the blocking client's round runs inside the
/// caller's own call, so nothing else can ask it anything meanwhile).
pub(crate) fn the_handles_answer_at_once_while_a_round_backs_off_and_close_ends_it<D: Driver>() {
    // One package, then the controller goes away for good: every attempt is refused.
    let peer = FakePeer::start(streaming("5.21.0").raw(&at(1.0)).close());
    let backoff = Duration::from_secs(2);
    let policy = ReconnectPolicy::new()
        .attempts(5)
        .initial_backoff(backoff)
        .max_backoff(backoff);
    let mut driver: D = started(peer.addr, options().reconnect(policy), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    peer.finish_all();
    // Through the first backoff into the second: the attempts count up, and every getter
    // answers at once with the round's truth.
    let deadline = Instant::now() + WAIT;
    let mut failed = Vec::new();
    let mut reconnecting = false;
    while failed.len() < 2 {
        assert!(
            Instant::now() < deadline,
            "two failed attempts within {WAIT:?}: {failed:?}"
        );
        let state = promptly("state", || driver.state());
        reconnecting |= state == State::Reconnecting;
        let stats = promptly("stats", || driver.stats());
        assert_eq!(stats.reconnects, 0);
        for event in promptly("events", || driver.events()) {
            if let Event::AttemptFailed {
                attempt, retry_in, ..
            } = event
            {
                assert_eq!(retry_in, backoff);
                failed.push(attempt);
            }
        }
        promptly("output_recipe_id", || driver.output_recipe_id());
        promptly("text_messages", || driver.text_messages());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(failed, [1, 2], "the attempts count up, one per backoff");
    assert!(reconnecting, "the state showed the reconnection");
    assert_eq!(promptly("state", || driver.state()), State::Reconnecting);
    // In the second backoff: closing does not wait it out.
    let began = Instant::now();
    driver.close().unwrap();
    let took = began.elapsed();
    assert!(
        took < backoff / 4,
        "close took {took:?} during a {backoff:?} backoff"
    );
}

pub(crate) fn the_handles_answer_at_once_while_a_handshake_reply_is_awaited<D: Driver>() {
    let (reached, on_reached) = mpsc::channel();
    let (release, held) = mpsc::channel();
    // The second link is accepted, then its controller sits on the protocol request until
    // the test lets go (each reply may take the 5 s read timeout).
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0").raw(&at(1.0)).close(),
        Script::new()
            .reached(reached)
            .hold(held)
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&at(2.0))
            .pause()
            .expect_eof(),
    ]);
    let mut driver: D = started(peer.addr, reconnecting(3), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    on_reached.recv_timeout(WAIT).unwrap();
    // The driver waits for the reply to its protocol request; the handles say so at once.
    let deadline = Instant::now() + WAIT;
    while promptly("state", || driver.state()) != State::Negotiating {
        assert!(Instant::now() < deadline, "negotiating within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..10 {
        assert_eq!(promptly("state", || driver.state()), State::Negotiating);
        assert_eq!(promptly("stats", || driver.stats()).reconnects, 0);
        promptly("events", || driver.events());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(release);
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 2.0);
    assert_eq!(driver.state(), State::Running);
    assert_eq!(driver.stats().reconnects, 1);
    driver.close().unwrap();
    peer.finish_all();
}

// ---- nothing lost across a reconnection ----

pub(crate) fn text_messages_already_received_survive_a_reconnection<D: Driver>() {
    // The data package and the text arrive in one write, so both sit whole in the blocking
    // client's buffer when `recv` returns the first: the text was received, and must not
    // vanish when the link is dropped. (The other drivers read it at once.)
    let text = encode(
        V2,
        &ControllerMessage::TextMessage(TextMessage {
            level: MessageLevel::Error,
            message: b"why the controller gave up",
            source: b"fake",
        }),
    );
    let peer = FakePeer::start_many(vec![
        streaming("5.21.0").raw(&[at(1.0), text].concat()).close(),
        streaming("5.21.0").pause().expect_eof(),
    ]);
    let mut driver: D = started(peer.addr, to_come_back::<D>(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.0);
    driver.come_back().unwrap();
    let texts: Vec<String> = driver
        .text_messages()
        .into_iter()
        .map(|t| t.message)
        .collect();
    assert_eq!(texts, ["why the controller gave up"]);
    assert_eq!(driver.stats().texts_dropped, 0);
    driver.close().unwrap();
    peer.finish_all();
}

// ---- staleness ----

fn stalling_peer() -> FakePeer {
    FakePeer::start(
        streaming("5.21.0")
            // Nothing for a while after START, then one package, then silence.
            .wait(Duration::from_millis(600))
            .raw(&at(1.0))
            .wait(Duration::from_millis(600)),
    )
}

fn stale_after<D: Staleness>(peer: &FakePeer, limit: Duration, grace: Duration) -> D {
    let mut client = Client::connect(peer.addr, options()).unwrap();
    client.setup_outputs(outputs().spec(), 500.0).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    D::take_stale(client, limit, grace)
}

fn stale_events(events: Vec<Event>) -> Vec<Duration> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Stale { silent_for } => Some(silent_for),
            _ => None,
        })
        .collect()
}

pub(crate) fn staleness_waits_out_the_grace_period_at_start_up<D: Staleness>() {
    let limit = Duration::from_millis(50);
    let stale_for_the_limit =
        |e: &Error| matches!(e, Error::Stale { silent_for } if *silent_for >= limit);

    // With a grace period longer than the silence after START: quiet until the first
    // package, then stale once the stream stops.
    let peer = stalling_peer();
    let mut driver: D = stale_after(&peer, limit, Duration::from_secs(3));
    std::thread::sleep(Duration::from_millis(400));
    assert!(!driver.is_stale(), "stale within the grace period");
    assert!(stale_events(driver.events()).is_empty());
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    match driver.changed() {
        // The async watch: the package, then the silence after it ends the next wait.
        Some(package) => {
            package.unwrap();
            let err = driver.changed().unwrap().unwrap_err();
            assert!(stale_for_the_limit(&err), "{err}");
            assert_eq!(err.kind(), ErrorKind::Link);
        }
        None => std::thread::sleep(Duration::from_millis(300)),
    }
    assert!(driver.is_stale());
    let stale = stale_events(driver.events());
    assert_eq!(stale.len(), 1, "once per silence: {stale:?}");
    assert!(stale[0] >= limit, "{stale:?}");
    // Once per silence: the next wait is for a fresh package. None comes; the peer ends.
    if let Some(next) = driver.changed() {
        assert!(matches!(next, Err(Error::ConnectionLost)), "{next:?}");
    }
    driver.finish();
    peer.finish();

    // Without one, the same silence after START is stale; the next package makes the
    // stream fresh again.
    let peer = stalling_peer();
    let mut driver: D = stale_after(&peer, limit, Duration::ZERO);
    std::thread::sleep(Duration::from_millis(400));
    assert!(driver.is_stale());
    assert_eq!(stale_events(driver.events()).len(), 1);
    // A wait that begins on a stale stream learns it at once: the watch, and the in-order
    // receive (the background driver's with its timeout: Stale comes first).
    if let Some(changed) = driver.changed() {
        let err = changed.unwrap_err();
        assert!(stale_for_the_limit(&err), "{err}");
    }
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert!(stale_for_the_limit(&err), "{err}");
    driver.recv_into(&mut recipe).unwrap();
    assert!(!driver.is_stale());
    if let Some(changed) = driver.changed() {
        changed.unwrap();
    }
    driver.finish();
    peer.finish();
}

/// Waits (within [`WAIT`]) until the driver reports the stream stale.
fn until_stale<D: Staleness>(driver: &D) {
    let deadline = Instant::now() + WAIT;
    while !driver.is_stale() {
        assert!(Instant::now() < deadline, "not stale within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(crate) fn an_in_order_receive_returns_the_queued_packages_then_stale_then_waits_again<
    D: Staleness,
>() {
    let limit = Duration::from_millis(50);
    let (resume, resumed) = mpsc::channel::<()>();
    let (end, ended) = mpsc::channel::<()>();
    // Three packages, silence until the test has seen it, one more (the next in time:
    // nothing is missing), silence again, then the link ends.
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&at(1.0))
            .raw(&at(1.002))
            .raw(&at(1.004))
            .hold(resumed)
            .raw(&at(1.006))
            .hold(ended)
            .close(),
    );
    let mut driver: D = stale_after(&peer, limit, Duration::from_secs(3));
    let mut recipe = outputs();
    // The packages are queued before the stream goes stale, and read only after.
    until_stale(&driver);
    for t in [1.0, 1.002, 1.004] {
        driver.recv_in_order(&mut recipe).unwrap();
        assert_eq!(
            timestamp(&recipe),
            t,
            "queued before the silence, returned first"
        );
    }
    let err = driver.recv_in_order(&mut recipe).unwrap_err();
    assert!(
        matches!(err, Error::Stale { silent_for } if silent_for >= limit),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::Link);
    // Once per silence: the next receive waits for the package that ends it.
    drop(resume);
    driver.recv_in_order(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.006);
    assert!(!driver.is_stale());
    // The next silence is reported too, once; then the link's end.
    until_stale(&driver);
    let err = driver.recv_in_order(&mut recipe).unwrap_err();
    assert!(matches!(err, Error::Stale { .. }), "{err}");
    drop(end);
    let err = driver.recv_in_order(&mut recipe).unwrap_err();
    assert!(
        !matches!(err, Error::Stale { .. }),
        "once per silence: {err}"
    );
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(matches!(
        driver.recv_in_order(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    // A silence is no lost package.
    let stats = driver.stats();
    assert_eq!(
        (stats.skipped, stats.overflowed, stats.lost),
        (0, 0, 0),
        "{stats:?}"
    );
    assert_eq!(stale_events(driver.events()).len(), 2);
    driver.finish();
    peer.finish();
}

pub(crate) fn the_package_that_ends_a_stale_silence_reports_the_stream_fresh_once<D: Staleness>() {
    let limit = Duration::from_millis(50);
    let (resume, resumed) = mpsc::channel::<()>();
    let (end, ended) = mpsc::channel::<()>();
    // Two packages in a row, silence until the test has seen it, two more in a row.
    let peer = FakePeer::start(
        streaming("5.21.0")
            .raw(&at(1.0))
            .raw(&at(1.002))
            .hold(resumed)
            .raw(&at(1.004))
            .raw(&at(1.006))
            .hold(ended)
            .close(),
    );
    let mut driver: D = stale_after(&peer, limit, Duration::from_secs(3));
    let mut recipe = outputs();
    for _ in 0..2 {
        driver.recv_in_order(&mut recipe).unwrap();
    }
    until_stale(&driver);
    let events = driver.events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Fresh { .. })),
        "packages that end no silence report nothing: {events:?}"
    );
    let stale = stale_events(events);
    assert_eq!(stale.len(), 1, "{stale:?}");

    drop(resume);
    // The silence first (this receiver was not told of it, unless the package came first).
    let first = loop {
        match driver.recv_in_order(&mut recipe) {
            Err(Error::Stale { .. }) => {}
            other => break other,
        }
    };
    first.unwrap();
    assert_eq!(timestamp(&recipe), 1.004);
    driver.recv_in_order(&mut recipe).unwrap();
    assert!(!driver.is_stale());
    let fresh: Vec<Duration> = driver
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Fresh { silent_for } => Some(silent_for),
            Event::Stale { .. } => panic!("one silence, reported once"),
            _ => None,
        })
        .collect();
    assert_eq!(fresh.len(), 1, "once per silence: {fresh:?}");
    assert!(
        fresh[0] >= stale[0],
        "the whole silence: {fresh:?} {stale:?}"
    );
    drop(end);
    driver.finish();
    peer.finish();
}
