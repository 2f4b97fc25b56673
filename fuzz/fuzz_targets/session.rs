//! The sans-IO session driven by arbitrary controller bytes, interleaved with arbitrary
//! application commands, link losses, reconnections and jumps of the clock, as a driver
//! that follows the session's rules would. It must never panic, and after every step:
//!
//! - memory stays bounded: the text and event queues hold at most their capacity, the
//!   bytes to transmit fit one package buffer, and a poll never yields without end;
//! - every byte the session asks to transmit is a valid client package;
//! - the counters only grow, `received` is exactly the data packages handed out, and every
//!   data package framed is counted once: delivered, superseded, discarded or rejected;
//! - every change of state is one the state diagram allows.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use rtde_core::protocol::{
    ClientMessage, ControllerMessage as M, DecodeError, Frame, FrameBuffer, MessageLevel,
    ProtocolVersion, TextMessage, package_type as ty,
};
use rtde_core::session::{Ready, Session};
use rtde_core::{
    ConnectOptions, DynamicRecipe, Error, Event, InputHandle, Recipe, ReconnectPolicy, State,
    Stats, Value,
};

const TEXTS: usize = 4;
const EVENTS: usize = 64;
/// Far above what one step can yield: a poll that goes on longer never ends.
const MAX_EVENTS_PER_STEP: usize = 100_000;

/// A cursor over the fuzzer's bytes; runs dry as zeros.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Which state changes the diagram allows (a repeated state is no change).
fn legal(from: State, to: State) -> bool {
    use State::*;
    matches!(
        (from, to),
        (Negotiating, Connected | Running | Paused | Reconnecting | Closed)
            | (Connected, Running | Reconnecting | Closed)
            | (Running, Paused | Reconnecting | Closed)
            | (Paused, Running | Reconnecting | Closed)
            | (Reconnecting, Negotiating | Closed)
            | (Closed, Reconnecting)
    )
}

fn is_data_rejection(e: &Error) -> bool {
    match e {
        Error::WrongRecipeId { .. } | Error::WrongLength { .. } => true,
        Error::Decode(d) => DecodeError::package_type(d) == ty::DATA_PACKAGE,
        Error::Unexpected { package_type, .. } => *package_type == ty::DATA_PACKAGE,
        _ => false,
    }
}

struct Harness {
    session: Session,
    now: Instant,
    /// The same bytes as the session's receive buffer, framed apart, to count the packages.
    shadow: FrameBuffer,
    shadow_broken: bool,
    data_framed: u64,
    unknown_framed: u64,
    data_rejected: u64,
    data_events: u64,
    state: State,
    stats: Stats,
    outputs: DynamicRecipe,
    inputs: DynamicRecipe,
    handles: Vec<InputHandle>,
    /// The version to encode the controller's packages in.
    version: ProtocolVersion,
}

impl Harness {
    fn new(now: Instant) -> Self {
        let options = ConnectOptions::new()
            .read_timeout(Some(Duration::from_millis(100)))
            .text_message_capacity(TEXTS)
            .event_capacity(EVENTS)
            .reconnect(ReconnectPolicy::new().attempts(3));
        let mut session = Session::new(&options, now);
        // A new session says what it starts in; from there on, events are changes.
        assert!(matches!(
            session.events().collect::<Vec<_>>().as_slice(),
            [Event::State(State::Negotiating)]
        ));
        session.handle_connected(now);
        Harness {
            session,
            now,
            shadow: FrameBuffer::new(),
            shadow_broken: false,
            data_framed: 0,
            unknown_framed: 0,
            data_rejected: 0,
            data_events: 0,
            state: State::Negotiating,
            stats: Stats::default(),
            outputs: DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap(),
            inputs: DynamicRecipe::inputs(["input_int_register_24"]).unwrap(),
            handles: Vec::new(),
            version: ProtocolVersion::V1,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let taken = self.session.handle_bytes(rest, self.now);
            self.shadow_feed(&rest[..taken]);
            rest = &rest[taken..];
            self.poll(false);
            if taken == 0 {
                break;
            }
        }
    }

    fn shadow_feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() && !self.shadow_broken {
            let spare = self.shadow.spare();
            let n = spare.len().min(rest.len());
            spare[..n].copy_from_slice(&rest[..n]);
            self.shadow.commit(n);
            rest = &rest[n..];
            loop {
                match self.shadow.next_frame() {
                    Ok(Some(frame)) => match frame.kind {
                        ty::DATA_PACKAGE => self.data_framed += 1,
                        k if !ty::is_known(k) => self.unknown_framed += 1,
                        _ => {}
                    },
                    Ok(None) => break,
                    Err(_) => {
                        self.shadow_broken = true;
                        break;
                    }
                }
            }
        }
    }

    /// A new receive buffer on both sides (a new link, or a lost one). The data packages
    /// the lost link left unread are the session's to count from the gap in timestamps
    /// (`lost`), not here: the count starts again from what was counted.
    fn reset_shadow(&mut self) {
        self.shadow.clear();
        self.shadow_broken = false;
        let stats = self.session.stats();
        self.data_framed =
            stats.received + stats.superseded + stats.discarded + self.data_rejected;
    }

    fn encode(&mut self, msg: &M<'_>) {
        let mut out = vec![0u8; 70_000];
        if let Ok(n) = msg.encode(self.version, &mut out) {
            self.feed(&out[..n]);
        }
    }

    fn poll(&mut self, latest: bool) {
        for _ in 0..MAX_EVENTS_PER_STEP {
            let ready = if latest {
                self.session.poll_latest()
            } else {
                self.session.poll_event()
            };
            let Some(ready) = ready else {
                // A driver settles every call on a lost link: nothing reconnects now.
                if self.session.is_lost() && self.session.state() != State::Reconnecting {
                    let _ = self.session.settle::<()>(Err(Error::ConnectionLost));
                }
                self.check();
                return;
            };
            match ready {
                Ready::Data => {
                    self.data_events += 1;
                    let values = self.session.data();
                    assert_eq!(Some(values.len()), self.session.payload_size());
                    let _ = rtde_core::OutputRecipe::decode_into(&mut self.outputs, values);
                }
                Ready::Done(Ok(rtde_core::session::Done::InputsSetUp(h))) => self.handles.push(h),
                Ready::Rejected(e) if is_data_rejection(&e) => self.data_rejected += 1,
                _ => {}
            }
            self.transmit();
        }
        panic!("a poll that never ends");
    }

    /// Takes what the session transmits: every package must decode as a client package.
    fn transmit(&mut self) {
        while let Some(out) = self.session.poll_transmit() {
            let out = out.to_vec();
            assert!(out.len() <= 65_535 * 2);
            let mut at = 0;
            while at < out.len() {
                let (frame, used) = Frame::parse(&out[at..])
                    .expect("the session transmits whole packages")
                    .expect("the session transmits whole packages");
                let version = self.session.protocol_version();
                ClientMessage::decode(frame, version)
                    .or_else(|_| ClientMessage::decode(frame, ProtocolVersion::V2))
                    .expect("the session transmits valid client packages");
                at += used;
            }
            self.session.transmitted(out.len());
        }
    }

    fn check(&mut self) {
        let stats = self.session.stats();
        let s = &self.stats;
        let s_events_dropped = s.events_dropped;
        assert!(
            stats.received >= s.received
                && stats.skipped >= s.skipped
                && stats.discarded >= s.discarded
                && stats.superseded >= s.superseded
                && stats.lost >= s.lost
                && stats.reconnects >= s.reconnects
                && stats.texts_dropped >= s.texts_dropped
                && stats.events_dropped >= s.events_dropped
                && stats.unknown_packages >= s.unknown_packages,
            "a counter went down: {s:?} then {stats:?}"
        );
        self.stats = stats;
        assert_eq!(stats.received, self.data_events, "{stats:?}");
        let counted = stats.received + stats.superseded + stats.discarded + self.data_rejected;
        assert!(counted <= self.data_framed, "{stats:?}, {} framed", self.data_framed);
        if !self.session.is_lost() && !self.shadow_broken {
            assert_eq!(counted, self.data_framed, "{stats:?}");
        }
        assert!(stats.unknown_packages <= self.unknown_framed);

        let events: Vec<Event> = self.session.events().collect();
        assert!(events.len() <= EVENTS);
        let complete = stats.events_dropped == s_events_dropped;
        for event in events {
            if let Event::State(next) = event {
                // Past a full queue, the changes in between are gone (and counted).
                assert!(
                    !complete || legal(self.state, next),
                    "{:?} -> {next:?}",
                    self.state
                );
                self.state = next;
            }
        }
        if complete {
            assert_eq!(self.state, self.session.state(), "a state change without its event");
        }
        self.state = self.session.state();
        let texts = self.session.text_messages().count();
        assert!(texts <= TEXTS);
    }

    fn lose_link(&mut self) {
        self.session.handle_link_lost(self.now);
        self.reset_shadow();
        self.check();
    }

    fn reconnect(&mut self, attempts: u8) {
        self.session
            .begin_reconnect(ReconnectPolicy::new().attempts(3), None, self.now);
        self.reset_shadow();
        for _ in 0..attempts.min(3) {
            self.session.reconnect_attempt();
            self.session.handle_connected(self.now);
            self.reset_shadow();
            self.version = ProtocolVersion::V1;
            self.transmit();
            self.check();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let t0 = Instant::now();
    let mut h = Harness::new(t0);
    h.transmit();
    let mut b = Bytes(data);
    let mut steps = 0;
    while !b.is_empty() && steps < 2_000 {
        steps += 1;
        match b.u8() % 12 {
            // Raw controller bytes.
            0 => {
                let n = usize::from(b.u8());
                let bytes = b.take(n).to_vec();
                h.feed(&bytes);
            }
            // Well-formed controller packages, to get past the handshake.
            1 => {
                let accepted = b.u8() % 4 != 0;
                h.encode(&M::ProtocolVersionReply { accepted });
                if accepted {
                    h.version = ProtocolVersion::V2;
                }
            }
            2 => {
                let version = ["3.15.8", "5.21.0", "10.11.0", "4.0.0", "5.3.0"]
                    [usize::from(b.u8()) % 5]
                    .parse()
                    .unwrap();
                h.encode(&M::UrcontrolVersion(version));
            }
            3 => {
                let types = ["DOUBLE,VECTOR6D", "NOT_FOUND,VECTOR6D", "DOUBLE", "", "INT32,INT32"]
                    [usize::from(b.u8()) % 5];
                let recipe_id = (h.version == ProtocolVersion::V2).then(|| b.u8() % 3);
                h.encode(&M::SetupOutputsReply { recipe_id, types });
            }
            4 => {
                let types = ["INT32", "IN_USE", "NOT_FOUND", "DOUBLE"][usize::from(b.u8()) % 4];
                let recipe_id = b.u8() % 3;
                h.encode(&M::SetupInputsReply { recipe_id, types });
            }
            5 => {
                let accepted = b.u8() % 4 != 0;
                if b.u8() % 2 == 0 {
                    h.encode(&M::StartReply { accepted });
                } else {
                    h.encode(&M::PauseReply { accepted });
                }
            }
            6 => {
                // Data packages: the recipe's size or not, a timestamp that moves on or not.
                let count = usize::from(b.u8() % 8) + 1;
                let size = if b.u8() % 5 == 0 { 8 } else { 56 };
                let step = f64::from(b.u8() % 4) * 0.002;
                let recipe_id = (h.version == ProtocolVersion::V2).then(|| b.u8() % 3);
                let mut payload = vec![0u8; size];
                let start = f64::from(b.u8());
                for i in 0..count {
                    #[allow(clippy::cast_precision_loss)]
                    let t = start + step * i as f64;
                    payload[..8].copy_from_slice(&t.to_be_bytes());
                    h.encode(&M::DataPackage {
                        recipe_id,
                        payload: &payload,
                    });
                }
            }
            7 => {
                let level = MessageLevel::from_code(b.u8() % 5);
                let text = TextMessage {
                    level,
                    message: b"SafetySetup has not been confirmed yet",
                    source: b"Controller",
                };
                let saved = h.version;
                if b.u8() % 2 == 0 {
                    h.version = ProtocolVersion::V2;
                }
                h.encode(&M::TextMessage(text));
                h.version = saved;
            }
            // Commands, as an application issues them.
            8 => {
                let now = h.now;
                let spec = h.outputs.spec();
                let _ = match b.u8() % 7 {
                    0 => h
                        .session
                        .setup_outputs(spec, [500.0, 125.0, 250.0, 0.0, 1e9][usize::from(b.u8()) % 5], now),
                    1 => h.session.setup_inputs(h.inputs.spec(), now),
                    2 => h.session.start(now),
                    3 => h.session.pause(now),
                    4 => h.session.close(now).map(|_| ()),
                    5 => {
                        h.session.set_staleness(
                            Some(Duration::from_millis(u64::from(b.u8()) + 1)),
                            Duration::from_millis(u64::from(b.u8()) * 10),
                            now,
                        );
                        Ok(())
                    }
                    _ => match h.handles.last().copied() {
                        Some(handle) => {
                            let _ = h
                                .inputs
                                .set("input_int_register_24", Value::Int32(i32::from(b.u8())));
                            h.session.send(&handle, &h.inputs)
                        }
                        None => Ok(()),
                    },
                };
                h.transmit();
                h.poll(false);
            }
            // Time passes, by up to ~4 minutes in powers of two of a millisecond.
            9 => {
                let jump = Duration::from_millis(1 << (b.u8() % 18));
                h.now += jump;
                h.session.handle_timeout(h.now);
                h.poll(false);
            }
            10 => {
                if b.u8() % 2 == 0 {
                    h.lose_link();
                } else {
                    let attempts = b.u8();
                    h.reconnect(attempts);
                }
            }
            _ => h.poll(true),
        }
    }
    h.poll(false);
});
