//! The session driven by byte vectors and a fake clock: no socket, no thread.

use std::time::{Duration, Instant};

use rtde_fields::WireType;

use super::*;
use crate::protocol::{
    ClientMessage, ControllerMessage as M, Frame, MessageLevel, TextMessage, package_type as ty,
};

const V2: ProtocolVersion = ProtocolVersion::V2;
const V1: ProtocolVersion = ProtocolVersion::V1;

const OUTPUTS: RecipeSpec<'static> = RecipeSpec::new(
    Direction::Output,
    &["timestamp", "actual_q"],
    &[WireType::Double, WireType::Vector6d],
);

fn bytes(msg: &M<'_>, version: ProtocolVersion) -> Vec<u8> {
    let mut out = vec![0; 1024];
    let n = msg.encode(version, &mut out).unwrap();
    out.truncate(n);
    out
}

fn data(t: f64) -> Vec<u8> {
    let mut payload = [0u8; 56];
    payload[..8].copy_from_slice(&t.to_be_bytes());
    bytes(
        &M::DataPackage {
            recipe_id: Some(1),
            payload: &payload,
        },
        V2,
    )
}

/// The packages the session wants sent, decoded.
fn sent(session: &mut Session, version: ProtocolVersion) -> Vec<u8> {
    let mut kinds = Vec::new();
    while let Some(out) = session.poll_transmit() {
        let out = out.to_vec();
        session.transmitted(out.len());
        let mut at = 0;
        while let Ok(Some((frame, used))) = Frame::parse(&out[at..]) {
            ClientMessage::decode(frame, version).unwrap();
            kinds.push(frame.kind);
            at += used;
        }
    }
    kinds
}

fn drain(session: &mut Session) -> Vec<Ready> {
    std::iter::from_fn(|| session.poll_event()).collect()
}

fn is_done(ready: &[Ready], done: &Done) -> bool {
    ready
        .iter()
        .any(|r| matches!(r, Ready::Done(Ok(d)) if d == done))
}

/// A session through the v2 handshake with a 5.21 controller.
fn connected(t0: Instant) -> Session {
    let mut s = Session::new(&ConnectOptions::new(), t0);
    s.handle_connected(t0);
    assert_eq!(sent(&mut s, V2), [ty::REQUEST_PROTOCOL_VERSION]);
    s.handle_bytes(&bytes(&M::ProtocolVersionReply { accepted: true }, V2), t0);
    assert!(drain(&mut s).is_empty());
    assert_eq!(sent(&mut s, V2), [ty::GET_URCONTROL_VERSION]);
    s.handle_bytes(
        &bytes(&M::UrcontrolVersion("5.21.0".parse().unwrap()), V2),
        t0,
    );
    assert!(is_done(&drain(&mut s), &Done::Connected));
    s
}

/// Sets `spec` (a double and a 6-vector) up as the outputs, the controller giving it
/// `recipe_id`.
fn set_up_outputs(s: &mut Session, spec: RecipeSpec<'_>, recipe_id: u8, t0: Instant) {
    s.setup_outputs(spec, 500.0, t0).unwrap();
    assert_eq!(sent(s, V2), [ty::SETUP_OUTPUTS]);
    s.handle_bytes(
        &bytes(
            &M::SetupOutputsReply {
                recipe_id: Some(recipe_id),
                types: "DOUBLE,VECTOR6D",
            },
            V2,
        ),
        t0,
    );
    assert!(is_done(&drain(s), &Done::OutputsSetUp));
}

fn streaming(t0: Instant) -> Session {
    let mut s = connected(t0);
    set_up_outputs(&mut s, OUTPUTS, 1, t0);
    s.start(t0).unwrap();
    assert_eq!(sent(&mut s, V2), [ty::START]);
    s.handle_bytes(&bytes(&M::StartReply { accepted: true }, V2), t0);
    assert!(is_done(&drain(&mut s), &Done::Started));
    s
}

#[test]
fn a_v2_text_before_the_protocol_reply_keeps_its_level_and_source() {
    let t0 = Instant::now();
    let mut s = Session::new(&ConnectOptions::new(), t0);
    s.handle_connected(t0);
    sent(&mut s, V2);
    // What the ROS 2 driver's log shows garbled: a v2 message, before the version reply.
    let text = TextMessage {
        level: MessageLevel::Warning,
        message: b"SafetySetup has not been confirmed yet",
        source: b"Controller",
    };
    s.handle_bytes(&bytes(&M::TextMessage(text), V2), t0);
    // And a v1 one, as older controllers send it.
    s.handle_bytes(&bytes(&M::TextMessage(text), V1), t0);
    assert!(drain(&mut s).is_empty());
    let texts: Vec<String> = s.text_messages().map(|t| t.to_string()).collect();
    assert_eq!(
        texts,
        [
            "warning from Controller: SafetySetup has not been confirmed yet",
            "warning: SafetySetup has not been confirmed yet"
        ]
    );
}

#[test]
fn a_data_package_before_the_start_reply_is_delivered_not_discarded() {
    let t0 = Instant::now();
    let mut s = connected(t0);
    s.setup_outputs(OUTPUTS, 500.0, t0).unwrap();
    s.handle_bytes(
        &bytes(
            &M::SetupOutputsReply {
                recipe_id: Some(1),
                types: "DOUBLE,VECTOR6D",
            },
            V2,
        ),
        t0,
    );
    drain(&mut s);
    s.start(t0).unwrap();
    sent(&mut s, V2);
    let mut wire = data(1.0);
    wire.extend(bytes(&M::StartReply { accepted: true }, V2));
    wire.extend(data(1.002));
    s.handle_bytes(&wire, t0);
    assert!(matches!(
        s.poll_event(),
        Some(Ready::Done(Ok(Done::Started)))
    ));
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!(s.data()[..8], 1.0f64.to_be_bytes());
    // The late reply is taken quietly; the next package follows.
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!(s.data()[..8], 1.002f64.to_be_bytes());
    assert!(s.poll_event().is_none());
    let stats = s.stats();
    assert_eq!((stats.received, stats.discarded, stats.skipped), (2, 0, 0));
    assert_eq!(s.state(), State::Running);
}

#[test]
fn data_is_a_borrowed_slice_of_the_receive_buffer_until_the_next_read() {
    let t0 = Instant::now();
    let mut s = streaming(t0);
    let wire = data(2.0);
    let buf = s.receive_buffer();
    buf[..wire.len()].copy_from_slice(&wire);
    s.handle_received(wire.len(), t0);
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!(s.data().len(), 56);
    assert_eq!(s.data()[..8], 2.0f64.to_be_bytes());
    let _ = s.receive_buffer();
    assert!(
        s.data().is_empty(),
        "no stale view after the buffer is handed out"
    );
}

#[test]
fn gaps_superseded_and_a_bad_package_behind_the_latest() {
    let t0 = Instant::now();
    let mut s = streaming(t0);
    let mut wire = Vec::new();
    for t in [0.0, 0.002, 0.010, 0.012] {
        wire.extend(data(t));
    }
    // A package of another recipe behind them.
    wire.extend(bytes(
        &M::DataPackage {
            recipe_id: Some(9),
            payload: &[0; 56],
        },
        V2,
    ));
    s.handle_bytes(&wire, t0);
    assert!(matches!(s.poll_latest(), Some(Ready::Data)));
    assert_eq!(s.data()[..8], 0.012f64.to_be_bytes());
    assert!(matches!(
        s.poll_latest(),
        Some(Ready::Rejected(Error::WrongRecipeId { .. }))
    ));
    let stats = s.stats();
    assert_eq!(
        (stats.received, stats.superseded, stats.skipped),
        (1, 3, 3),
        "{stats:?}"
    );
}

#[test]
fn a_reply_overdue_fails_the_request_and_loses_the_link() {
    let t0 = Instant::now();
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_millis(100)));
    let mut s = Session::new(&options, t0);
    s.handle_connected(t0);
    sent(&mut s, V2);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_millis(100)));
    s.handle_timeout(t0 + Duration::from_millis(99));
    assert!(s.poll_event().is_none());
    s.handle_timeout(t0 + Duration::from_millis(100));
    assert!(matches!(
        s.poll_event(),
        Some(Ready::Done(Err(Error::Timeout {
            waiting_for: ty::REQUEST_PROTOCOL_VERSION,
            ..
        })))
    ));
    assert!(s.is_lost());
    assert!(matches!(
        s.setup_outputs(OUTPUTS, 500.0, t0),
        Err(Error::ConnectionLost)
    ));
}

#[test]
fn staleness_waits_out_the_grace_period_then_reports_once_per_silence() {
    let t0 = Instant::now();
    let mut s = streaming(t0);
    let ms = Duration::from_millis;
    s.set_staleness(Some(ms(10)), ms(500), t0);
    // Within the grace period: quiet.
    assert_eq!(s.poll_timeout(), Some(t0 + ms(500)));
    s.handle_timeout(t0 + ms(100));
    assert!(s.poll_event().is_none());
    // A package: from now on the limit is 10 ms.
    s.handle_bytes(&data(1.0), t0 + ms(200));
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!(s.poll_timeout(), Some(t0 + ms(210)));
    s.handle_timeout(t0 + ms(209));
    assert!(s.poll_event().is_none());
    s.handle_timeout(t0 + ms(215));
    assert!(matches!(
        s.poll_event(),
        Some(Ready::Stale { silent_for }) if silent_for == ms(15)
    ));
    s.handle_timeout(t0 + ms(300));
    assert!(s.poll_event().is_none(), "reported once");
    assert_eq!(s.poll_timeout(), None);
    s.handle_bytes(&data(1.002), t0 + ms(301));
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!(s.poll_timeout(), Some(t0 + ms(311)));
}

#[test]
fn a_reconnection_replays_outputs_inputs_and_start_and_counts_the_loss() {
    let t0 = Instant::now();
    let mut s = streaming(t0);
    s.handle_bytes(&data(1.0), t0);
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    let t1 = t0 + Duration::from_secs(1);
    s.begin_reconnect(ReconnectPolicy::once(), None, t1);
    s.reconnect_attempt();
    assert_eq!(s.state(), State::Reconnecting);
    s.handle_connected(t1);
    let replies = [
        bytes(&M::ProtocolVersionReply { accepted: true }, V2),
        bytes(&M::UrcontrolVersion("5.21.0".parse().unwrap()), V2),
        bytes(
            &M::SetupOutputsReply {
                recipe_id: Some(4),
                types: "DOUBLE,VECTOR6D",
            },
            V2,
        ),
        bytes(&M::StartReply { accepted: true }, V2),
    ];
    let mut kinds = Vec::new();
    let mut done = Vec::new();
    for reply in &replies {
        kinds.extend(sent(&mut s, V2));
        s.handle_bytes(reply, t1);
        done.extend(drain(&mut s));
    }
    assert_eq!(
        kinds,
        [
            ty::REQUEST_PROTOCOL_VERSION,
            ty::GET_URCONTROL_VERSION,
            ty::SETUP_OUTPUTS,
            ty::START
        ]
    );
    assert!(matches!(
        done.as_slice(),
        [Ready::Done(Ok(Done::Reconnected(r)))] if r.attempts == 1
    ));
    assert_eq!(s.output_recipe_id(), Some(4));
    // 1 s at 500 Hz later: 499 packages in between.
    let mut payload = [0u8; 56];
    payload[..8].copy_from_slice(&2.0f64.to_be_bytes());
    s.handle_bytes(
        &bytes(
            &M::DataPackage {
                recipe_id: Some(4),
                payload: &payload,
            },
            V2,
        ),
        t1,
    );
    assert!(matches!(s.poll_event(), Some(Ready::Data)));
    assert_eq!((s.stats().lost, s.stats().reconnects), (499, 1));
}

#[test]
fn commands_while_a_request_is_in_flight_are_misuse() {
    let t0 = Instant::now();
    let mut s = connected(t0);
    s.setup_outputs(OUTPUTS, 500.0, t0).unwrap();
    assert!(matches!(s.start(t0), Err(Error::Misuse(_))));
    assert!(s.is_busy());
}

/// The setup reply's rules, at the byte: `IN_USE` and `NOT_FOUND` name their fields, an
/// input recipe id of 0 is a refusal, a types list of another length or another type is a
/// reply that does not fit; none of them loses the link, and an accepted input recipe
/// keeps the id the controller gave it.
#[test]
fn setup_replies_are_refused_or_mismatched_by_their_own_rules_and_the_link_stays() {
    let t0 = Instant::now();
    let mut s = connected(t0);
    let answer = |s: &mut Session, reply: M<'_>| -> Result<Done, Error> {
        sent(s, V2);
        s.handle_bytes(&bytes(&reply, V2), t0);
        let mut ready = drain(s);
        assert_eq!(ready.len(), 1, "one answer");
        match ready.pop() {
            Some(Ready::Done(done)) => done,
            _ => panic!("not an answer"),
        }
    };
    let five = RecipeSpec::new(
        Direction::Input,
        &[
            "input_int_register_3",
            "input_int_register_30",
            "input_double_register_5",
            "input_bit_register_64",
            "input_double_register_40",
        ],
        &[
            WireType::Int32,
            WireType::Int32,
            WireType::Double,
            WireType::Bool,
            WireType::Double,
        ],
    );
    s.setup_inputs(five, t0).unwrap();
    let reply = M::SetupInputsReply {
        recipe_id: 0,
        types: "IN_USE,INT32,IN_USE,IN_USE,DOUBLE",
    };
    let err = answer(&mut s, reply).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        refused.in_use(),
        [
            "input_int_register_3",
            "input_double_register_5",
            "input_bit_register_64"
        ]
    );
    assert!(refused.not_found().is_empty());
    assert_eq!(
        refused.in_use_fieldbus_registers().collect::<Vec<_>>(),
        ["input_int_register_3", "input_double_register_5"]
    );
    assert_eq!(
        err.to_string(),
        "the controller refused the input recipe: `input_int_register_3`, \
         `input_double_register_5`, `input_bit_register_64` are IN_USE (another writer holds \
         them); `input_int_register_3`, `input_double_register_5` are probably held by an \
         enabled EtherNet/IP, PROFINET or Modbus adapter (these registers are in the range \
         reserved for fieldbus adapters; registers 24..47 (int, double) and 64..127 (bit) are \
         the ranges meant for external clients); `input_bit_register_64` is probably held by \
         another RTDE client, or an earlier session of this program that has not closed (the \
         controller frees its inputs when that connection closes)"
    );
    assert_eq!(s.state(), State::Connected);

    let three = RecipeSpec::new(
        Direction::Output,
        &["timestamp", "actual_q", "target_q"],
        &[WireType::Double, WireType::Vector6d, WireType::Vector6d],
    );
    s.setup_outputs(three, 500.0, t0).unwrap();
    let reply = M::SetupOutputsReply {
        recipe_id: Some(0),
        types: "DOUBLE,VECTOR6D,NOT_FOUND",
    };
    let err = answer(&mut s, reply).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.not_found(), ["target_q"]);
    assert!(refused.in_use().is_empty());
    assert_eq!(
        err.to_string(),
        "the controller refused the output recipe: `target_q` is NOT_FOUND (this controller does \
         not know it; check the spelling and the controller version)"
    );

    // Every type known, but an input recipe id of 0: refused, with no field to blame.
    let one = RecipeSpec::new(
        Direction::Input,
        &["input_int_register_24"],
        &[WireType::Int32],
    );
    s.setup_inputs(one, t0).unwrap();
    let reply = M::SetupInputsReply {
        recipe_id: 0,
        types: "INT32",
    };
    let err = answer(&mut s, reply).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert!(refused.in_use().is_empty() && refused.not_found().is_empty());

    // Another type, then another count: the reply does not fit the recipe.
    s.setup_outputs(OUTPUTS, 500.0, t0).unwrap();
    let reply = M::SetupOutputsReply {
        recipe_id: Some(1),
        types: "DOUBLE,VECTOR3D",
    };
    let err = answer(&mut s, reply).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Protocol);
    let Error::SetupReply(mismatch) = &err else {
        panic!("{err}")
    };
    assert_eq!(mismatch.types()[0].name(), "actual_q");
    assert_eq!(mismatch.types()[0].found(), "VECTOR3D");
    s.setup_outputs(OUTPUTS, 500.0, t0).unwrap();
    let reply = M::SetupOutputsReply {
        recipe_id: Some(1),
        types: "DOUBLE",
    };
    let err = answer(&mut s, reply).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the controller's SETUP_OUTPUTS reply names 1 types for 2 requested fields"
    );
    assert_eq!(s.state(), State::Connected);

    // Accepted: the handle carries the controller's id.
    s.setup_inputs(one, t0).unwrap();
    let reply = M::SetupInputsReply {
        recipe_id: 2,
        types: "INT32",
    };
    let Ok(Done::InputsSetUp(handle)) = answer(&mut s, reply) else {
        panic!("set up")
    };
    assert_eq!(s.input_recipe_id(&handle), Some(2));
}

/// The remembered check of a `'static` spec accepts that spec, and only a spec with the
/// same names and types: another `'static` recipe is refused after the first matched, and
/// a new setup forgets what matched before it.
#[test]
fn a_static_spec_check_is_remembered_for_that_spec_only() {
    const OTHER: RecipeSpec<'static> = RecipeSpec::new(
        Direction::Output,
        &["timestamp", "actual_qd"],
        &[WireType::Double, WireType::Vector6d],
    );
    // The same names and types in lists of their own, at other addresses.
    static COPY_NAMES: [&str; 2] = ["timestamp", "actual_q"];
    static COPY_TYPES: [WireType; 2] = [WireType::Double, WireType::Vector6d];
    let copy = RecipeSpec::new(Direction::Output, &COPY_NAMES, &COPY_TYPES);
    let t0 = Instant::now();
    let mut s = streaming(t0);
    for _ in 0..2 {
        assert!(s.check_output_static(&OUTPUTS).is_ok());
        assert!(s.check_output_static(&copy).is_ok());
        assert!(
            matches!(s.check_output_static(&OTHER), Err(Error::Misuse(m)) if m.contains("not the output recipe"))
        );
    }
    // OTHER set up in OUTPUTS' place: OUTPUTS, which matched a moment ago, is refused.
    s.pause(t0).unwrap();
    assert_eq!(sent(&mut s, V2), [ty::PAUSE]);
    s.handle_bytes(&bytes(&M::PauseReply { accepted: true }, V2), t0);
    assert!(is_done(&drain(&mut s), &Done::Paused));
    set_up_outputs(&mut s, OTHER, 2, t0);
    assert!(s.check_output_static(&OTHER).is_ok());
    assert!(s.check_output_static(&OUTPUTS).is_err());
    assert!(s.check_output_static(&copy).is_err());
}
