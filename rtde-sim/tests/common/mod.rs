//! A raw RTDE client for the simulator's tests: packages in and out through
//! `rtde_core::protocol`, nothing hidden, every wait bounded.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, FrameBuffer, MessageLevel, ProtocolVersion,
};
use rtde_core::{DynamicRecipe, InputRecipe, OutputRecipe, Value};

/// How long any read may wait before the test fails.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// A package from the simulator, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Version(bool),
    Urcontrol(ControllerVersion),
    Text {
        level: MessageLevel,
        message: String,
        source: String,
    },
    SetupOutputs {
        id: Option<u8>,
        types: String,
    },
    SetupInputs {
        id: u8,
        types: String,
    },
    Start(bool),
    Pause(bool),
    Data {
        id: Option<u8>,
        payload: Vec<u8>,
    },
}

impl Msg {
    fn from(m: ControllerMessage<'_>) -> Msg {
        match m {
            ControllerMessage::ProtocolVersionReply { accepted } => Msg::Version(accepted),
            ControllerMessage::UrcontrolVersion(v) => Msg::Urcontrol(v),
            ControllerMessage::TextMessage(t) => Msg::Text {
                level: t.level,
                message: t.message_lossy().into_owned(),
                source: t.source_lossy().into_owned(),
            },
            ControllerMessage::SetupOutputsReply { recipe_id, types } => Msg::SetupOutputs {
                id: recipe_id,
                types: types.to_owned(),
            },
            ControllerMessage::SetupInputsReply { recipe_id, types } => Msg::SetupInputs {
                id: recipe_id,
                types: types.to_owned(),
            },
            ControllerMessage::StartReply { accepted } => Msg::Start(accepted),
            ControllerMessage::PauseReply { accepted } => Msg::Pause(accepted),
            ControllerMessage::DataPackage { recipe_id, payload } => Msg::Data {
                id: recipe_id,
                payload: payload.to_vec(),
            },
            other => panic!("unexpected package {other:?}"),
        }
    }

    /// The text of a text message.
    pub fn text(&self) -> &str {
        match self {
            Msg::Text { message, .. } => message,
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// A raw client connection.
pub struct Raw {
    pub stream: TcpStream,
    frames: FrameBuffer,
    pub version: ProtocolVersion,
    buf: Vec<u8>,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).expect("connect to the simulator");
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Raw {
            stream,
            frames: FrameBuffer::new(),
            version: ProtocolVersion::V1,
            buf: vec![0; 70_000],
        }
    }

    /// Connects and negotiates protocol `version` (which must be accepted).
    pub fn connect_v(addr: SocketAddr, version: u16) -> Raw {
        let mut c = Raw::connect(addr);
        assert!(c.negotiate(version), "protocol v{version} refused");
        c
    }

    pub fn send(&mut self, msg: ClientMessage<'_>) {
        let n = msg.encode(self.version, &mut self.buf).unwrap();
        self.stream.write_all(&self.buf[..n]).unwrap();
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// The next package; `None` when the simulator closed the connection.
    pub fn try_recv(&mut self) -> Option<Msg> {
        loop {
            if let Some(frame) = self.frames.next_frame().expect("a valid package stream") {
                let msg = ControllerMessage::decode(frame, self.version)
                    .unwrap_or_else(|e| panic!("undecodable package: {e}"));
                return Some(Msg::from(msg));
            }
            match self.stream.read(self.frames.spare()) {
                Ok(0) => return None,
                Ok(n) => self.frames.commit(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("no package from the simulator within {READ_TIMEOUT:?}: {e}"),
            }
        }
    }

    pub fn recv(&mut self) -> Msg {
        self.try_recv()
            .expect("the simulator closed the connection")
    }

    /// Reads raw bytes until the simulator closes the connection (bounded by the read
    /// timeout); includes whatever was buffered.
    pub fn read_to_close(&mut self) -> Vec<u8> {
        let mut all = self.frames.buffered().to_vec();
        self.frames.clear();
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return all,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return all,
                Err(e) => panic!("the simulator did not close within {READ_TIMEOUT:?}: {e}"),
            }
        }
    }

    /// Reads exactly `n` raw bytes, including whatever was buffered.
    pub fn read_raw(&mut self, n: usize) -> Vec<u8> {
        let mut all = self.frames.buffered().to_vec();
        self.frames.clear();
        while all.len() < n {
            let mut chunk = vec![0u8; n - all.len()];
            let got = self.stream.read(&mut chunk).expect("raw bytes");
            assert!(got > 0, "closed after {} of {n} bytes", all.len());
            all.extend_from_slice(&chunk[..got]);
        }
        let rest = all.split_off(n);
        self.frames.spare()[..rest.len()].copy_from_slice(&rest);
        self.frames.commit(rest.len());
        all
    }

    /// Requests protocol `version`; switches to it when accepted.
    pub fn negotiate(&mut self, version: u16) -> bool {
        self.send(ClientMessage::RequestProtocolVersion { version });
        let Msg::Version(accepted) = self.recv() else {
            panic!("expected a protocol version reply")
        };
        if accepted {
            self.version = ProtocolVersion::from_number(version).unwrap();
        }
        accepted
    }

    /// SETUP_OUTPUTS; returns the texts that came first and the reply's (id, types).
    pub fn setup_outputs(
        &mut self,
        frequency: f64,
        names: &str,
    ) -> (Vec<String>, Option<u8>, String) {
        let frequency = (self.version == ProtocolVersion::V2).then_some(frequency);
        self.send(ClientMessage::SetupOutputs { frequency, names });
        let mut texts = Vec::new();
        loop {
            match self.recv() {
                Msg::Text { message, .. } => texts.push(message),
                Msg::SetupOutputs { id, types } => return (texts, id, types),
                other => panic!("expected a SETUP_OUTPUTS reply, got {other:?}"),
            }
        }
    }

    /// SETUP_INPUTS; returns the texts that came first and the reply's (id, types).
    pub fn setup_inputs(&mut self, names: &str) -> (Vec<String>, u8, String) {
        self.send(ClientMessage::SetupInputs { names });
        let mut texts = Vec::new();
        loop {
            match self.recv() {
                Msg::Text { message, .. } => texts.push(message),
                Msg::SetupInputs { id, types } => return (texts, id, types),
                other => panic!("expected a SETUP_INPUTS reply, got {other:?}"),
            }
        }
    }

    /// START, skipping data packages of an earlier START.
    pub fn start(&mut self) {
        self.send(ClientMessage::Start);
        loop {
            match self.recv() {
                Msg::Data { .. } => {}
                Msg::Start(accepted) => return assert!(accepted),
                other => panic!("expected a START reply, got {other:?}"),
            }
        }
    }

    /// PAUSE, skipping data packages already on their way.
    pub fn pause(&mut self) {
        self.send(ClientMessage::Pause);
        loop {
            match self.recv() {
                Msg::Data { .. } => {}
                Msg::Pause(accepted) => return assert!(accepted),
                other => panic!("expected a PAUSE reply, got {other:?}"),
            }
        }
    }

    /// The next data package's payload, decoded into `recipe`.
    pub fn recv_data(&mut self, recipe: &mut DynamicRecipe) -> Option<u8> {
        match self.recv() {
            Msg::Data { id, payload } => {
                recipe.decode_into(&payload).expect("payload of the recipe");
                id
            }
            other => panic!("expected a data package, got {other:?}"),
        }
    }

    /// Sends `recipe`'s values as input recipe `id`.
    pub fn send_inputs(&mut self, id: u8, recipe: &DynamicRecipe) {
        let mut payload = vec![0; recipe.payload_size()];
        recipe.encode_into(&mut payload).unwrap();
        self.send(ClientMessage::DataPackage {
            recipe_id: id,
            payload: &payload,
        });
    }
}

/// An output recipe of these names, for decoding.
pub fn outputs(names: &[&str]) -> DynamicRecipe {
    DynamicRecipe::outputs(names).unwrap()
}

pub fn double(recipe: &DynamicRecipe, name: &str) -> f64 {
    match recipe.get(name) {
        Some(Value::Double(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

pub fn vector6(recipe: &DynamicRecipe, name: &str) -> [f64; 6] {
    match recipe.get(name) {
        Some(Value::Vector6d(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

/// The tick a timestamp stands for, checking that it is a whole tick.
pub fn tick_of(timestamp: f64, rate: u32) -> u64 {
    let tick = (timestamp * f64::from(rate)).round();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let tick = tick as u64;
    #[allow(clippy::cast_precision_loss)]
    let exact = tick as f64 / f64::from(rate);
    assert_eq!(
        timestamp, exact,
        "timestamp {timestamp} is not tick {tick} / {rate}"
    );
    tick
}
