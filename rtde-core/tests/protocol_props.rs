//! Property tests of the codec: values and every package of both directions and both
//! versions survive encode then decode bit for bit, `encoded_len` is what `encode` writes,
//! a stream cut into any chunks frames to the same packages, and no input makes the
//! decoders panic.

use proptest::collection::vec;
use proptest::prelude::*;

use rtde_core::fields::{self, ControllerVersion, Direction, WireType};
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, Frame, FrameBuffer, MessageLevel, ProtocolVersion,
    TextMessage, package_type,
};
use rtde_core::{DynamicRecipe, InputRecipe, OutputRecipe, Recipe, Value};

// ---- strategies ----

fn version() -> impl Strategy<Value = ProtocolVersion> {
    prop_oneof![Just(ProtocolVersion::V1), Just(ProtocolVersion::V2)]
}

/// Any bit pattern (every NaN payload included), plus the special values by name.
fn double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        prop::sample::select(vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::MIN,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
        ]),
    ]
}

fn int32() -> impl Strategy<Value = i32> {
    prop_oneof![
        any::<i32>(),
        prop::sample::select(vec![i32::MIN, -1, 0, 1, i32::MAX])
    ]
}

fn uint32() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        prop::sample::select(vec![0, 1, u32::MAX - 1, u32::MAX])
    ]
}

fn value_of(t: WireType) -> BoxedStrategy<Value> {
    match t {
        WireType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        WireType::Uint8 => any::<u8>().prop_map(Value::Uint8).boxed(),
        WireType::Uint32 => uint32().prop_map(Value::Uint32).boxed(),
        WireType::Uint64 => prop_oneof![any::<u64>(), prop::sample::select(vec![0, u64::MAX])]
            .prop_map(Value::Uint64)
            .boxed(),
        WireType::Int32 => int32().prop_map(Value::Int32).boxed(),
        WireType::Double => double().prop_map(Value::Double).boxed(),
        WireType::Vector3d => prop::array::uniform3(double())
            .prop_map(Value::Vector3d)
            .boxed(),
        WireType::Vector6d => prop::array::uniform6(double())
            .prop_map(Value::Vector6d)
            .boxed(),
        WireType::Vector6Int32 => prop::array::uniform6(int32())
            .prop_map(Value::Vector6Int32)
            .boxed(),
        WireType::Vector6Uint32 => prop::array::uniform6(uint32())
            .prop_map(Value::Vector6Uint32)
            .boxed(),
    }
}

fn value() -> impl Strategy<Value = Value> {
    prop::sample::select(WireType::ALL.to_vec()).prop_flat_map(value_of)
}

/// A value's bytes on the wire: equal bytes mean equal bits, NaN payloads included.
fn wire_bytes(v: &Value) -> Vec<u8> {
    let mut buf = [0u8; 48];
    let n = v.write_be(&mut buf).expect("48 bytes hold any value");
    buf[..n].to_vec()
}

fn has_nan(v: &Value) -> bool {
    let mut nan = false;
    v.for_each_f64(|x| nan |= x.is_nan());
    nan
}

/// A text message's owned parts; v1 has no source.
#[derive(Clone, Debug)]
struct Text {
    level: u8,
    message: Vec<u8>,
    source: Vec<u8>,
}

impl Text {
    fn borrow(&self) -> TextMessage<'_> {
        TextMessage {
            level: MessageLevel::from_code(self.level),
            message: &self.message,
            source: &self.source,
        }
    }
}

fn text(version: ProtocolVersion) -> impl Strategy<Value = Text> {
    let (message_max, source_max) = match version {
        ProtocolVersion::V1 => (600, 0),
        ProtocolVersion::V2 => (255, 255),
    };
    (
        any::<u8>(),
        vec(any::<u8>(), 0..=message_max),
        vec(any::<u8>(), 0..=source_max),
    )
        .prop_map(|(level, message, source)| Text {
            level,
            message,
            source,
        })
}

/// Names or types as the setup packages carry them: any UTF-8, mostly name-like.
fn list() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9_,]{0,300}", any::<String>(),]
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..400)
}

/// A client package's owned parts.
#[derive(Clone, Debug)]
enum Client {
    RequestProtocolVersion(u16),
    GetUrcontrolVersion,
    Text(Text),
    SetupOutputs(Option<f64>, String),
    SetupInputs(String),
    Start,
    Pause,
    Data(u8, Vec<u8>),
}

impl Client {
    fn borrow(&self) -> ClientMessage<'_> {
        match self {
            Client::RequestProtocolVersion(version) => {
                ClientMessage::RequestProtocolVersion { version: *version }
            }
            Client::GetUrcontrolVersion => ClientMessage::GetUrcontrolVersion,
            Client::Text(t) => ClientMessage::TextMessage(t.borrow()),
            Client::SetupOutputs(frequency, names) => ClientMessage::SetupOutputs {
                frequency: *frequency,
                names,
            },
            Client::SetupInputs(names) => ClientMessage::SetupInputs { names },
            Client::Start => ClientMessage::Start,
            Client::Pause => ClientMessage::Pause,
            Client::Data(recipe_id, payload) => ClientMessage::DataPackage {
                recipe_id: *recipe_id,
                payload,
            },
        }
    }
}

fn client(version: ProtocolVersion) -> impl Strategy<Value = Client> {
    let frequency = match version {
        ProtocolVersion::V1 => Just(None).boxed(),
        ProtocolVersion::V2 => double().prop_map(Some).boxed(),
    };
    prop_oneof![
        any::<u16>().prop_map(Client::RequestProtocolVersion),
        Just(Client::GetUrcontrolVersion),
        text(version).prop_map(Client::Text),
        (frequency, list()).prop_map(|(f, n)| Client::SetupOutputs(f, n)),
        list().prop_map(Client::SetupInputs),
        Just(Client::Start),
        Just(Client::Pause),
        (any::<u8>(), payload()).prop_map(|(id, p)| Client::Data(id, p)),
    ]
}

/// A controller package's owned parts.
#[derive(Clone, Debug)]
enum Controller {
    ProtocolVersionReply(bool),
    UrcontrolVersion([u32; 4]),
    Text(Text),
    SetupOutputsReply(Option<u8>, String),
    SetupInputsReply(u8, String),
    StartReply(bool),
    PauseReply(bool),
    Data(Option<u8>, Vec<u8>),
}

impl Controller {
    fn borrow(&self) -> ControllerMessage<'_> {
        match self {
            Controller::ProtocolVersionReply(accepted) => ControllerMessage::ProtocolVersionReply {
                accepted: *accepted,
            },
            Controller::UrcontrolVersion([a, b, c, d]) => {
                ControllerMessage::UrcontrolVersion(ControllerVersion::new(*a, *b, *c, *d))
            }
            Controller::Text(t) => ControllerMessage::TextMessage(t.borrow()),
            Controller::SetupOutputsReply(recipe_id, types) => {
                ControllerMessage::SetupOutputsReply {
                    recipe_id: *recipe_id,
                    types,
                }
            }
            Controller::SetupInputsReply(recipe_id, types) => ControllerMessage::SetupInputsReply {
                recipe_id: *recipe_id,
                types,
            },
            Controller::StartReply(accepted) => ControllerMessage::StartReply {
                accepted: *accepted,
            },
            Controller::PauseReply(accepted) => ControllerMessage::PauseReply {
                accepted: *accepted,
            },
            Controller::Data(recipe_id, payload) => ControllerMessage::DataPackage {
                recipe_id: *recipe_id,
                payload,
            },
        }
    }
}

fn controller(version: ProtocolVersion) -> impl Strategy<Value = Controller> {
    // v2 output packages and setup-outputs replies carry a recipe id, v1 ones none.
    let id = match version {
        ProtocolVersion::V1 => Just(None).boxed(),
        ProtocolVersion::V2 => any::<u8>().prop_map(Some).boxed(),
    };
    prop_oneof![
        any::<bool>().prop_map(Controller::ProtocolVersionReply),
        any::<[u32; 4]>().prop_map(Controller::UrcontrolVersion),
        text(version).prop_map(Controller::Text),
        (id.clone(), list()).prop_map(|(id, t)| Controller::SetupOutputsReply(id, t)),
        (any::<u8>(), list()).prop_map(|(id, t)| Controller::SetupInputsReply(id, t)),
        any::<bool>().prop_map(Controller::StartReply),
        any::<bool>().prop_map(Controller::PauseReply),
        (id, payload()).prop_map(|(id, p)| Controller::Data(id, p)),
    ]
}

fn versioned_client() -> impl Strategy<Value = (ProtocolVersion, Client)> {
    version().prop_flat_map(|v| client(v).prop_map(move |m| (v, m)))
}

fn versioned_controller() -> impl Strategy<Value = (ProtocolVersion, Controller)> {
    version().prop_flat_map(|v| controller(v).prop_map(move |m| (v, m)))
}

fn encode_client(version: ProtocolVersion, msg: &ClientMessage<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 70_000];
    let n = msg
        .encode(version, &mut buf)
        .expect("generated packages encode");
    assert_eq!(msg.encoded_len(version).unwrap(), n, "encoded_len");
    buf.truncate(n);
    buf
}

fn encode_controller(version: ProtocolVersion, msg: &ControllerMessage<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 70_000];
    let n = msg
        .encode(version, &mut buf)
        .expect("generated packages encode");
    assert_eq!(msg.encoded_len(version).unwrap(), n, "encoded_len");
    buf.truncate(n);
    buf
}

/// Decodes every package in `bytes` with every decoder; must never panic.
fn decode_everything(bytes: &[u8]) {
    let mut rest = bytes;
    while let Ok(Some((frame, used))) = Frame::parse(rest) {
        assert!(used >= 3 && used <= rest.len());
        for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
            let _ = ClientMessage::decode(frame, version);
            let _ = ControllerMessage::decode(frame, version);
        }
        rest = &rest[used..];
    }
}

// ---- properties ----

proptest! {
    #[test]
    fn every_value_round_trips_bit_for_bit(v in value()) {
        let t = v.wire_type();
        let bytes = wire_bytes(&v);
        prop_assert_eq!(bytes.len(), t.size());
        let mut back = Value::zero(t);
        prop_assert!(back.read_be(t, &bytes));
        prop_assert_eq!(back.wire_type(), t);
        prop_assert_eq!(wire_bytes(&back), bytes);
        if !has_nan(&v) {
            prop_assert_eq!(back, v);
        }
    }

    #[test]
    fn any_bytes_of_a_type_decode_and_encode_back(t in prop::sample::select(WireType::ALL.to_vec()), bytes in vec(any::<u8>(), 48)) {
        let bytes = &bytes[..t.size()];
        let mut v = Value::zero(t);
        prop_assert!(v.read_be(t, bytes));
        let back = wire_bytes(&v);
        if t == WireType::Bool {
            // Any non-zero byte is true, written back as 1.
            prop_assert_eq!(back, vec![u8::from(bytes[0] != 0)]);
        } else {
            prop_assert_eq!(back.as_slice(), bytes);
        }
    }

    #[test]
    fn every_client_package_round_trips((version, owned) in versioned_client()) {
        let msg = owned.borrow();
        let bytes = encode_client(version, &msg);
        let (frame, used) = Frame::parse(&bytes).unwrap().expect("a whole frame");
        prop_assert_eq!(used, bytes.len());
        let back = ClientMessage::decode(frame, version).unwrap();
        prop_assert_eq!(&encode_client(version, &back), &bytes);
        let nan_frequency = matches!(owned, Client::SetupOutputs(Some(f), _) if f.is_nan());
        if !nan_frequency {
            prop_assert_eq!(back, msg);
        }
    }

    #[test]
    fn every_controller_package_round_trips((version, owned) in versioned_controller()) {
        let msg = owned.borrow();
        let bytes = encode_controller(version, &msg);
        let (frame, used) = Frame::parse(&bytes).unwrap().expect("a whole frame");
        prop_assert_eq!(used, bytes.len());
        let back = ControllerMessage::decode(frame, version).unwrap();
        prop_assert_eq!(back, msg);
    }

    #[test]
    fn a_stream_in_any_chunks_frames_to_the_same_packages(
        (version, packages) in version().prop_flat_map(|v| vec(controller(v), 0..20).prop_map(move |p| (v, p))),
        chunks in vec(1usize..300, 1..50),
    ) {
        let expected: Vec<Vec<u8>> = packages.iter().map(|p| encode_controller(version, &p.borrow())).collect();
        let stream = expected.concat();
        let mut frames = FrameBuffer::new();
        let mut got = Vec::new();
        let mut pos = 0;
        let mut sizes = chunks.iter().cycle();
        while pos < stream.len() {
            let n = (*sizes.next().unwrap()).min(stream.len() - pos);
            frames.spare()[..n].copy_from_slice(&stream[pos..pos + n]);
            frames.commit(n);
            pos += n;
            while let Some(frame) = frames.next_frame().unwrap() {
                let msg = ControllerMessage::decode(frame, version).unwrap();
                got.push(encode_controller(version, &msg));
            }
        }
        prop_assert!(frames.buffered().is_empty());
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..600)) {
        decode_everything(&bytes);
        let mut frames = FrameBuffer::new();
        frames.spare()[..bytes.len()].copy_from_slice(&bytes);
        frames.commit(bytes.len());
        while let Ok(Some(_)) = frames.next_frame() {}
    }

    #[test]
    fn random_payloads_of_every_package_type_never_panic(
        kind in prop::sample::select(package_type::ALL.to_vec()),
        payload in vec(any::<u8>(), 0..300),
    ) {
        let size = u16::try_from(3 + payload.len()).unwrap();
        let mut bytes = size.to_be_bytes().to_vec();
        bytes.push(kind);
        bytes.extend_from_slice(&payload);
        let (frame, used) = Frame::parse(&bytes).unwrap().expect("a whole frame");
        prop_assert_eq!((frame.kind, frame.payload, used), (kind, payload.as_slice(), bytes.len()));
        decode_everything(&bytes);
    }

    #[test]
    fn dynamic_recipes_from_the_registry_round_trip(
        (names, values) in prop::sample::subsequence(
            fields::fields(Direction::Output).iter().map(|f| (f.name(), f.wire_type())).collect::<Vec<_>>(),
            1..12,
        )
        .prop_flat_map(|picked| {
            let names: Vec<&'static str> = picked.iter().map(|(n, _)| *n).collect();
            let values: Vec<BoxedStrategy<Value>> = picked.iter().map(|(_, t)| value_of(*t)).collect();
            (Just(names), values)
        })
    ) {
        let mut source = DynamicRecipe::outputs(&names).unwrap();
        for (name, v) in names.iter().zip(&values) {
            source.set(name, *v).unwrap();
        }
        let mut payload = vec![0u8; source.payload_size()];
        prop_assert_eq!(source.encode_into(&mut payload).unwrap(), payload.len());
        prop_assert_eq!(source.spec().payload_size(), payload.len());
        let mut sink = DynamicRecipe::outputs(&names).unwrap();
        sink.decode_into(&payload).unwrap();
        for (a, b) in source.values().iter().zip(sink.values()) {
            prop_assert_eq!(wire_bytes(a), wire_bytes(b));
        }
    }
}
