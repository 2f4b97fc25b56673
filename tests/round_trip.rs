//! Round trips through the codec: values are encoded with `Value` into a data package,
//! framed and parsed by `rtde_core::protocol`, then decoded by derived recipes; the view
//! must agree with the decoded struct and encoding must give the same bytes back.
//!
//! `build.rs` generates recipes covering every field of the registry, in both directions.

use rtde_core::fields::{Direction, WireType, fields};
use rtde_core::protocol::{ClientMessage, ControllerMessage, Frame, ProtocolVersion};
use rtde_core::wire::{self, WireKind};
use rtde_core::{FromPayload, RecipeView, StaticRecipe, ToPayload, Value};

/// A generated recipe: its values and its view's values, in recipe order.
trait Chunk: FromPayload + ToPayload + RecipeView + PartialEq + std::fmt::Debug {
    fn values(&self) -> Vec<Value>;
    fn view_values(view: &Self::View<'_>) -> Vec<Value>;
}

include!(concat!(env!("OUT_DIR"), "/all_fields.rs"));

/// A value of `t` that differs per field and per seed, with the extremes of each type.
fn sample(t: WireType, seed: u64) -> Value {
    let s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
    let d = |k: u64| {
        f64::from_bits(0x3ff0_0000_0000_0000 | ((s ^ k) >> 12))
            * if k.is_multiple_of(2) { -1.0 } else { 3.5 }
    };
    let bytes = s.to_be_bytes();
    let i = |k: usize| {
        i32::from_be_bytes([
            bytes[k % 8],
            bytes[(k + 1) % 8],
            bytes[(k + 2) % 8],
            bytes[(k + 3) % 8],
        ])
    };
    match t {
        WireType::Bool => Value::Bool(s % 2 == 1),
        WireType::Uint8 => Value::Uint8(bytes[0]),
        WireType::Uint32 => Value::Uint32(i(1).cast_unsigned()),
        WireType::Uint64 => Value::Uint64(s),
        WireType::Int32 => Value::Int32(i(2)),
        WireType::Double => Value::Double(d(0)),
        WireType::Vector3d => Value::Vector3d([d(1), d(2), f64::MAX]),
        WireType::Vector6d => Value::Vector6d([d(1), d(2), d(3), d(4), -0.0, f64::MIN_POSITIVE]),
        WireType::Vector6Int32 => Value::Vector6Int32([i(0), i(1), i(2), i(3), i32::MIN, i32::MAX]),
        WireType::Vector6Uint32 => {
            Value::Vector6Uint32([0, 1, u32::MAX, i(3).cast_unsigned(), 5, 6])
        }
    }
}

/// Encodes sample values with the codec, decodes them with the derive, and back.
fn round_trip<R: Chunk>() {
    let spec = R::SPEC;
    for seed in [1u64, 2, 0xdead_beef] {
        let values: Vec<Value> = spec
            .types()
            .iter()
            .enumerate()
            .map(|(k, &t)| sample(t, seed * 1000 + k as u64))
            .collect();
        let mut payload = vec![0u8; R::PAYLOAD_SIZE];
        let mut at = 0;
        for v in &values {
            at += v.write_be(&mut payload[at..]).unwrap();
        }
        assert_eq!(at, R::PAYLOAD_SIZE);

        // Through the codec, as the controller sends outputs and a client sends inputs.
        let mut package = vec![0u8; R::PAYLOAD_SIZE + 8];
        let received = match spec.direction() {
            Direction::Output => {
                let msg = ControllerMessage::DataPackage {
                    recipe_id: Some(1),
                    payload: &payload,
                };
                let n = msg.encode(ProtocolVersion::V2, &mut package).unwrap();
                let (frame, used) = Frame::parse(&package[..n]).unwrap().unwrap();
                assert_eq!(used, n);
                match ControllerMessage::decode(frame, ProtocolVersion::V2).unwrap() {
                    ControllerMessage::DataPackage { payload, .. } => payload.to_vec(),
                    other => panic!("not a data package: {other:?}"),
                }
            }
            Direction::Input => {
                let msg = ClientMessage::DataPackage {
                    recipe_id: 1,
                    payload: &payload,
                };
                let n = msg.encode(ProtocolVersion::V2, &mut package).unwrap();
                let (frame, _) = Frame::parse(&package[..n]).unwrap().unwrap();
                match ClientMessage::decode(frame, ProtocolVersion::V2).unwrap() {
                    ClientMessage::DataPackage { payload, .. } => payload.to_vec(),
                    other => panic!("not a data package: {other:?}"),
                }
            }
        };

        let decoded = R::from_payload(&received).unwrap();
        assert_eq!(decoded.values(), values, "{:?}", spec.names());
        let decoded_as = R::from_payload_as::<rtde_core::Error>(&received).unwrap();
        assert_eq!(decoded_as, decoded, "from_payload_as disagrees");
        assert!(matches!(
            R::from_payload_as::<rtde_core::Error>(&received[1..]),
            Err(rtde_core::Error::Payload(_))
        ));
        let view = R::view(&received).unwrap();
        assert_eq!(R::view_values(&view), values, "the view disagrees");
        assert_eq!(decoded.to_payload().as_ref(), payload.as_slice());
    }
}

#[test]
fn every_field_of_the_registry_is_covered() {
    assert_eq!(OUTPUT_FIELDS_COVERED, fields(Direction::Output).len());
    assert_eq!(INPUT_FIELDS_COVERED, fields(Direction::Input).len());
}

/// One field of every wire type a registry field has, decoded by the derive; VECTOR6UINT32,
/// which no field has, through its wire marker.
#[derive(Debug, PartialEq, rtde_core::RtdeRecipe)]
struct EveryWireType {
    output_bit_register_64: bool,
    tool_output_mode: u8,
    runtime_state: u32,
    actual_digital_input_bits: u64,
    robot_mode: i32,
    timestamp: f64,
    actual_tool_accelerometer: [f64; 3],
    actual_q: [f64; 6],
    joint_mode: [i32; 6],
}

impl Chunk for EveryWireType {
    fn values(&self) -> Vec<Value> {
        vec![
            Value::Bool(self.output_bit_register_64),
            Value::Uint8(self.tool_output_mode),
            Value::Uint32(self.runtime_state),
            Value::Uint64(self.actual_digital_input_bits),
            Value::Int32(self.robot_mode),
            Value::Double(self.timestamp),
            Value::Vector3d(self.actual_tool_accelerometer),
            Value::Vector6d(self.actual_q),
            Value::Vector6Int32(self.joint_mode),
        ]
    }
    fn view_values(v: &EveryWireTypeView<'_>) -> Vec<Value> {
        vec![
            Value::Bool(v.output_bit_register_64()),
            Value::Uint8(v.tool_output_mode()),
            Value::Uint32(v.runtime_state()),
            Value::Uint64(v.actual_digital_input_bits()),
            Value::Int32(v.robot_mode()),
            Value::Double(v.timestamp()),
            Value::Vector3d(v.actual_tool_accelerometer()),
            Value::Vector6d(v.actual_q()),
            Value::Vector6Int32(v.joint_mode()),
        ]
    }
}

#[test]
fn every_wire_type() {
    round_trip::<EveryWireType>();
    let mut seen: Vec<WireType> = EveryWireType::SPEC.types().to_vec();
    seen.push(WireType::Vector6Uint32);
    seen.sort();
    assert_eq!(seen, WireType::ALL);

    let v = [7, 0, u32::MAX, 1, 2, 3];
    let bytes = <wire::VECTOR6UINT32 as WireKind>::encode(v);
    let mut value = Value::zero(WireType::Vector6Uint32);
    assert!(value.read_be(WireType::Vector6Uint32, &bytes));
    assert_eq!(value, Value::Vector6Uint32(v));
    assert_eq!(<wire::VECTOR6UINT32 as WireKind>::decode(bytes), v);
}

/// Recipes of at most 12 values decode inline in `from_payload`, larger ones (every recipe
/// above) out of line: the same wire types through the inline path.
#[derive(Debug, PartialEq, rtde_core::RtdeRecipe)]
struct FewScalars {
    output_bit_register_64: bool,
    tool_output_mode: u8,
    runtime_state: u32,
    actual_digital_input_bits: u64,
    robot_mode: i32,
    timestamp: f64,
    actual_tool_accelerometer: [f64; 3],
}

impl Chunk for FewScalars {
    fn values(&self) -> Vec<Value> {
        vec![
            Value::Bool(self.output_bit_register_64),
            Value::Uint8(self.tool_output_mode),
            Value::Uint32(self.runtime_state),
            Value::Uint64(self.actual_digital_input_bits),
            Value::Int32(self.robot_mode),
            Value::Double(self.timestamp),
            Value::Vector3d(self.actual_tool_accelerometer),
        ]
    }
    fn view_values(v: &FewScalarsView<'_>) -> Vec<Value> {
        vec![
            Value::Bool(v.output_bit_register_64()),
            Value::Uint8(v.tool_output_mode()),
            Value::Uint32(v.runtime_state()),
            Value::Uint64(v.actual_digital_input_bits()),
            Value::Int32(v.robot_mode()),
            Value::Double(v.timestamp()),
            Value::Vector3d(v.actual_tool_accelerometer()),
        ]
    }
}

/// Twelve values: the largest recipe that still decodes inline.
#[derive(Debug, PartialEq, rtde_core::RtdeRecipe)]
struct TwoVectors {
    actual_q: [f64; 6],
    joint_mode: [i32; 6],
}

impl Chunk for TwoVectors {
    fn values(&self) -> Vec<Value> {
        vec![
            Value::Vector6d(self.actual_q),
            Value::Vector6Int32(self.joint_mode),
        ]
    }
    fn view_values(v: &TwoVectorsView<'_>) -> Vec<Value> {
        vec![
            Value::Vector6d(v.actual_q()),
            Value::Vector6Int32(v.joint_mode()),
        ]
    }
}

#[test]
fn every_wire_type_inline() {
    round_trip::<FewScalars>();
    round_trip::<TwoVectors>();
}
