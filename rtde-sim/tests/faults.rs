//! Every injectable fault, seen from the wire, and the stalled-client disconnect. The
//! faults real controllers show (data before the START and PAUSE replies, a slow boot) are
//! seen through rtde-core's blocking client, which says what arrived when.

mod common;

use std::time::{Duration, Instant};

use common::{Msg, Raw, double, outputs, tick_of};
use rtde_core::protocol::{ClientMessage, MessageLevel, package_type};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use rtde_sim::{Fault, Malformation, Sim, SimBuilder, Trigger};

fn builder() -> SimBuilder {
    Sim::builder()
        .controller_version("5.21.0")
        .deterministic()
        .unpaced()
}

/// The ticks of the first `n` packages of a `timestamp` recipe at `frequency`.
fn ticks(sim: &Sim, frequency: f64, n: usize) -> Vec<u64> {
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.setup_outputs(frequency, "timestamp");
    c.start();
    let mut r = outputs(&["timestamp"]);
    (0..n)
        .map(|_| {
            c.recv_data(&mut r);
            tick_of(double(&r, "timestamp"), 500)
        })
        .collect()
}

#[test]
fn skipping_every_nth_package_leaves_gaps_in_timestamp() {
    let sim = builder().fault(Fault::SkipEvery(5)).start().unwrap();
    // 125 Hz: due every 4 ticks; the 5th, 10th, … due package (ticks 16, 36, …) is left out.
    let got = ticks(&sim, 125.0, 12);
    assert_eq!(got, [0, 4, 8, 12, 20, 24, 28, 32, 40, 44, 48, 52]);
    // Each connection counts for itself: a second client meets the same gaps.
    assert_eq!(ticks(&sim, 125.0, 5), [0, 4, 8, 12, 20]);
}

#[test]
fn skipping_listed_ticks_leaves_exactly_those_gaps() {
    let sim = builder()
        .fault(Fault::SkipTicks(vec![2, 3, 7]))
        .start()
        .unwrap();
    assert_eq!(ticks(&sim, 500.0, 6), [0, 1, 4, 5, 6, 8]);
    // A skipped tick that is not due at this frequency changes nothing.
    assert_eq!(ticks(&sim, 250.0, 4), [0, 4, 6, 8]);
}

#[test]
fn replies_can_be_delayed() {
    let delay = Duration::from_millis(150);
    let sim = builder().fault(Fault::DelayReplies(delay)).start().unwrap();
    let mut c = Raw::connect(sim.addr());
    for request in [
        ClientMessage::RequestProtocolVersion { version: 2 },
        ClientMessage::GetUrcontrolVersion,
    ] {
        let sent = Instant::now();
        c.send(request);
        c.recv();
        assert!(sent.elapsed() >= delay, "{:?}", sent.elapsed());
    }
}

#[test]
fn a_text_message_can_come_during_the_handshake() {
    let safety = "SafetySetup has not been confirmed yet";
    let sim = builder()
        .fault(Fault::TextMessage {
            at: Trigger::Reply(package_type::REQUEST_PROTOCOL_VERSION),
            level: MessageLevel::Warning,
            message: "booting".into(),
            source: "Controller".into(),
        })
        .fault(Fault::TextMessage {
            at: Trigger::Reply(package_type::START),
            level: MessageLevel::Error,
            message: safety.into(),
            source: "Controller".into(),
        })
        .start()
        .unwrap();
    let mut c = Raw::connect(sim.addr());
    c.send(ClientMessage::RequestProtocolVersion { version: 2 });
    // Before the version reply, the message is in v1 format: the client does not know
    // yet that v2 was accepted.
    assert_eq!(
        c.recv(),
        Msg::Text {
            level: MessageLevel::Warning,
            message: "booting".into(),
            source: String::new(),
        }
    );
    assert_eq!(c.recv(), Msg::Version(true));
    c.version = rtde_core::protocol::ProtocolVersion::V2;
    c.setup_outputs(500.0, "timestamp");
    c.send(ClientMessage::Start);
    assert_eq!(
        c.recv(),
        Msg::Text {
            level: MessageLevel::Error,
            message: safety.into(),
            source: "Controller".into(),
        }
    );
    assert_eq!(c.recv(), Msg::Start(true));
    // Once per connection: the next START gets no text.
    c.pause();
    c.start();
}

#[test]
fn the_connection_can_close_in_the_middle_of_a_data_package() {
    let sim = builder()
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(3)))
        .start()
        .unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.setup_outputs(500.0, "timestamp,actual_q");
    c.start();
    for _ in 0..3 {
        assert!(matches!(c.recv(), Msg::Data { .. }));
    }
    // A whole package is 3 + 1 + 56 bytes; half of it arrives, then the close.
    let rest = c.read_to_close();
    assert_eq!(rest.len(), 30, "{rest:?}");
    assert_eq!(rest[..3], [0, 60, b'U']);
    assert!(sim.wait_for_connections(0, common::READ_TIMEOUT));
}

#[test]
fn the_connection_can_close_in_the_middle_of_a_reply() {
    let sim = builder()
        .fault(Fault::CloseMidFrame(Trigger::Reply(
            package_type::SETUP_OUTPUTS,
        )))
        .start()
        .unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.send(ClientMessage::SetupOutputs {
        frequency: Some(500.0),
        names: "timestamp",
    });
    // The reply would be 3 + 1 + "DOUBLE": 10 bytes.
    assert_eq!(c.read_to_close(), [0, 10, b'O', 1, b'D']);
}

#[test]
fn malformed_packages_come_as_configured() {
    let garbage = b"\xde\xad\xbe\xef".to_vec();
    let sim = builder()
        .fault(Fault::Malformed {
            at: Trigger::Reply(package_type::GET_URCONTROL_VERSION),
            kind: Malformation::Bytes(garbage.clone()),
        })
        .fault(Fault::Malformed {
            at: Trigger::Reply(package_type::START),
            kind: Malformation::UnknownPackageType,
        })
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(1),
            kind: Malformation::WrongRecipeId,
        })
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(3),
            kind: Malformation::SizeTooLarge,
        })
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(4),
            kind: Malformation::SizeTooSmall,
        })
        .start()
        .unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.send(ClientMessage::GetUrcontrolVersion);
    assert_eq!(c.read_raw(4), garbage, "bytes instead of the version reply");
    let (_, id, _) = c.setup_outputs(500.0, "timestamp");
    assert_eq!(id, Some(1));
    c.send(ClientMessage::Start);
    assert_eq!(
        c.read_raw(4),
        [0, 4, 0x00, 1],
        "START reply with type byte 0"
    );
    // Data packages: 3 + 1 + 8 bytes each.
    let data: Vec<Vec<u8>> = (0..5).map(|_| c.read_raw(12)).collect();
    assert_eq!(data[0][..4], [0, 12, b'U', 1]);
    assert_eq!(data[1][..4], [0, 12, b'U', 2], "wrong recipe id");
    assert_eq!(data[2][..4], [0, 12, b'U', 1]);
    assert_eq!(
        data[3][..4],
        [0x03, 0xf4, b'U', 1],
        "size 1012 for 12 bytes"
    );
    assert_eq!(data[4][..4], [0, 2, b'U', 1], "size below the header");
    // The connection stays open and streams on.
    assert_eq!(c.read_raw(12)[..4], [0, 12, b'U', 1]);
}

#[test]
fn a_client_that_stops_reading_is_dropped_after_the_stall_timeout() {
    let sim = builder()
        .stall_timeout(Duration::from_millis(200))
        .start()
        .unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    // Large packages fill the socket buffers quickly.
    let names = vec!["actual_q"; 200].join(",");
    c.setup_outputs(500.0, &names);
    c.start();
    // Stop reading; the simulator fills both buffers, waits out the timeout, and drops us.
    assert!(sim.wait_for_connections(0, Duration::from_secs(30)));
    assert_eq!(sim.stats().stalled_clients_dropped, 1);
    assert!(sim.stats().data_packages_sent > 100);
    // A client that reads is not dropped. (Paced here: an unpaced stream could outrun a
    // test thread that a busy machine deschedules for longer than the timeout.)
    let paced = Sim::builder()
        .stall_timeout(Duration::from_millis(200))
        .start()
        .unwrap();
    let mut d = Raw::connect_v(paced.addr(), 2);
    d.setup_outputs(500.0, &names);
    d.start();
    let deadline = Instant::now() + Duration::from_millis(600);
    while Instant::now() < deadline {
        assert!(matches!(d.recv(), Msg::Data { .. }));
    }
    assert_eq!(paced.stats().stalled_clients_dropped, 0);
    assert_eq!(paced.stats().connections_open, 1);
}

/// A source with a bug: it panics on its first sample.
#[derive(Debug)]
struct Panicking;

impl rtde_sim::OutputSource for Panicking {
    fn sample(
        &self,
        _: rtde_sim::Tick,
        _: &[&'static rtde_core::fields::Field],
        _: &rtde_sim::IoState,
        _: &mut [rtde_core::Value],
    ) -> rtde_sim::Sample {
        panic!("a bug in the source")
    }
}

#[test]
fn a_connection_whose_thread_panics_is_closed_and_releases_its_inputs() {
    let sim = Sim::builder().source(Panicking).unpaced().start().unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    assert_eq!(c.setup_inputs("input_int_register_24").1, 1);
    c.setup_outputs(500.0, "timestamp");
    c.send(ClientMessage::Start);
    // The client sees a close, not a connection that never answers again.
    while c.try_recv().is_some() {}
    assert!(sim.wait_for_connections(0, Duration::from_secs(5)));
    let mut other = Raw::connect_v(sim.addr(), 2);
    assert_eq!(other.setup_inputs("input_int_register_24").1, 1, "released");
    sim.shutdown().unwrap();
}

#[test]
fn shutdown_does_not_wait_for_a_delayed_reply() {
    let sim = builder()
        .fault(Fault::DelayReplies(Duration::from_secs(60)))
        .start()
        .unwrap();
    let mut c = Raw::connect(sim.addr());
    c.send(ClientMessage::GetUrcontrolVersion);
    // No reply for a while: the connection is in its delay.
    c.stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut byte = [0u8; 1];
    let waited = std::io::Read::read(&mut c.stream, &mut byte);
    assert!(waited.is_err(), "{waited:?}");
    let started = Instant::now();
    sim.shutdown().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn delays_that_add_up_past_a_duration_do_not_panic() {
    let sim = builder()
        .fault(Fault::DelayReplies(Duration::MAX))
        .fault(Fault::DelayReplies(Duration::MAX))
        .start()
        .unwrap();
    let mut c = Raw::connect(sim.addr());
    c.send(ClientMessage::GetUrcontrolVersion);
    assert!(sim.wait_for_connections(1, Duration::from_secs(5)));
    c.stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut byte = [0u8; 1];
    // A panic would close the connection (a read of 0 bytes); a delay reads nothing.
    let waited = std::io::Read::read(&mut c.stream, &mut byte);
    assert!(waited.is_err(), "{waited:?}");
    sim.shutdown().unwrap();
}

// ---- what real controllers do, through the client ----

fn client_options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

#[test]
fn a_package_before_the_start_reply_is_delivered_and_the_stream_follows() {
    let sim = Sim::builder()
        .fault(Fault::DataBeforeStartReply)
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), client_options()).unwrap();
    let mut recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(recipe.spec(), 50.0).unwrap();
    client.start().unwrap();
    // The early package is the stream's first: delivered, not dropped.
    client.recv_into(&mut recipe).unwrap();
    let first = double(&recipe, "timestamp");
    client.recv_into(&mut recipe).unwrap();
    assert!((double(&recipe, "timestamp") - first - 0.02).abs() < 1e-9);
    let stats = client.stats();
    assert_eq!((stats.received, stats.discarded, stats.skipped), (2, 0, 0));
}

#[test]
fn a_package_between_pause_and_its_reply_is_counted() {
    let sim = Sim::builder()
        .fault(Fault::DataBeforePauseReply)
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), client_options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    // 2 Hz: nothing else is due while the pause is answered.
    client.setup_outputs(recipe.spec(), 2.0).unwrap();
    client.start().unwrap();
    client.recv().unwrap();
    client.pause().unwrap();
    assert_eq!(client.stats().discarded, 1);
}

#[test]
fn a_booting_controller_answers_slowly_then_normally() {
    let sim = Sim::builder()
        .fault(Fault::SlowBoot {
            window: Duration::from_secs(60),
            delay: Duration::from_millis(400),
        })
        .start()
        .unwrap();
    // A read timeout shorter than the boot delay: the handshake times out.
    let impatient = ConnectOptions::new().read_timeout(Some(Duration::from_millis(100)));
    let err = Client::connect(sim.addr(), impatient).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // A patient client gets through.
    Client::connect(sim.addr(), client_options()).unwrap();
}
