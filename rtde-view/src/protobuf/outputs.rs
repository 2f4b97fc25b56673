//! The recipe's messages in MCAP files: protobuf, with a descriptor made from the recipe.
//!
//! Field `i` of the recipe (from 0) is protobuf field `i + 1`, named as in RTDE; vectors
//! are packed repeated fields. Every field is written, zeros included, so each package of
//! a recipe encodes to the same layout. Doubles travel as their IEEE bits (little-endian,
//! protobuf's `double`), so they read back exactly, NaN and infinities included.
//!
//! | RTDE | protobuf |
//! | --- | --- |
//! | `BOOL` | `bool` |
//! | `UINT8`, `UINT32` | `uint32` |
//! | `UINT64` | `uint64` |
//! | `INT32` | `int32` |
//! | `DOUBLE` | `double` |
//! | `VECTOR3D`, `VECTOR6D` | `repeated double` |
//! | `VECTOR6INT32` | `repeated int32` |
//! | `VECTOR6UINT32` | `repeated uint32` |

use rtde_core::Value;
use rtde_core::fields::{Field, WireType};

use super::{
    FIXED64, FieldDef, FileDef, Item, LENGTH, Reader, TYPE_BOOL, TYPE_DOUBLE, TYPE_INT32,
    TYPE_UINT32, TYPE_UINT64, bytes_field, descriptor_set, tag, varint, varint_field,
};

/// The descriptor's file name, package and message name: `rtde.Outputs`.
const FILE: &str = "rtde/outputs.proto";
const PACKAGE: &str = "rtde";
const MESSAGE: &str = "Outputs";

/// The element type of a field, and whether it repeats.
fn proto_type(t: WireType) -> (u64, bool) {
    match t {
        WireType::Bool => (TYPE_BOOL, false),
        WireType::Uint8 | WireType::Uint32 => (TYPE_UINT32, false),
        WireType::Uint64 => (TYPE_UINT64, false),
        WireType::Int32 => (TYPE_INT32, false),
        WireType::Double => (TYPE_DOUBLE, false),
        WireType::Vector3d | WireType::Vector6d => (TYPE_DOUBLE, true),
        WireType::Vector6Int32 => (TYPE_INT32, true),
        WireType::Vector6Uint32 => (TYPE_UINT32, true),
    }
}

/// The schema name of the recipe's messages.
pub(crate) const SCHEMA_NAME: &str = "rtde.Outputs";

/// A serialized `google.protobuf.FileDescriptorSet` declaring `rtde.Outputs` with one
/// field per recipe field: the schema MCAP readers decode the messages with.
pub(crate) fn descriptor(fields: &[&Field]) -> Vec<u8> {
    let declared: Vec<FieldDef<'_>> = fields
        .iter()
        .zip(1..)
        .map(|(f, number)| {
            let (kind, repeated) = proto_type(f.wire_type());
            FieldDef {
                repeated,
                // The JSON name as RTDE spells it (protoc would camel-case it).
                json_name: Some(f.name()),
                ..FieldDef::scalar(f.name(), number, kind)
            }
        })
        .collect();
    descriptor_set(&[FileDef {
        name: FILE,
        package: PACKAGE,
        dependencies: &[],
        messages: &[(MESSAGE, &declared)],
    }])
}

/// Encodes one package's values (big-endian, as on the RTDE wire) as `rtde.Outputs`,
/// appended to `out`. The caller has checked the payload's size against the recipe's.
pub(crate) fn encode(fields: &[&Field], payload: &[u8], out: &mut Vec<u8>) {
    let mut at = 0;
    for (i, f) in fields.iter().enumerate() {
        let number = i as u64 + 1;
        let t = f.wire_type();
        let bytes = &payload[at..at + t.size()];
        at += t.size();
        match t {
            WireType::Double | WireType::Vector3d | WireType::Vector6d => {
                if t == WireType::Double {
                    tag(out, number, FIXED64);
                } else {
                    tag(out, number, LENGTH);
                    varint(out, bytes.len() as u64);
                }
                for d in bytes.chunks_exact(8) {
                    out.extend(d.iter().rev());
                }
            }
            WireType::Bool => varint_field(out, number, u64::from(bytes[0] != 0)),
            WireType::Uint8 => varint_field(out, number, u64::from(bytes[0])),
            WireType::Uint32 | WireType::Int32 => {
                let v = be32(bytes);
                varint_field(out, number, widen(t, v));
            }
            WireType::Uint64 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(bytes);
                varint_field(out, number, u64::from_be_bytes(b));
            }
            WireType::Vector6Int32 | WireType::Vector6Uint32 => {
                let mut packed = Vec::with_capacity(60);
                for x in bytes.chunks_exact(4) {
                    varint(&mut packed, widen(t, be32(x)));
                }
                bytes_field(out, number, &packed);
            }
        }
    }
}

fn be32(b: &[u8]) -> u32 {
    let mut four = [0u8; 4];
    four.copy_from_slice(&b[..4]);
    u32::from_be_bytes(four)
}

/// A 32-bit value as protobuf's varint carries it: `int32` sign-extended to 64 bits.
fn widen(t: WireType, v: u32) -> u64 {
    match t {
        // The bits as i32, sign-extended, as protobuf writes a negative int32.
        #[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)]
        WireType::Int32 | WireType::Vector6Int32 => i64::from(v as i32) as u64,
        _ => u64::from(v),
    }
}

/// Decodes an `rtde.Outputs` message of this recipe into one value per field. A field
/// the message leaves out is zero, as in proto3; fields the recipe does not have are
/// skipped.
///
/// # Errors
/// Bytes that are no such message, in words.
pub(crate) fn decode(fields: &[&Field], bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut values: Vec<Value> = fields
        .iter()
        .map(|f| {
            let mut v = Value::Bool(false);
            let zeros = [0u8; 48];
            v.read_be(f.wire_type(), &zeros);
            v
        })
        .collect();
    let mut r = Reader { bytes };
    while let Some((number, item)) = r.next_field()? {
        let field = usize::try_from(number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| fields.get(i).map(|f| (i, f.wire_type())));
        let Some((i, t)) = field else { continue };
        let body: Vec<u64> = match item {
            Item::Varint(v) | Item::Fixed64(v) => vec![v],
            Item::Bytes(inner) if proto_type(t).0 == TYPE_DOUBLE => inner
                .chunks(8)
                .map(|c| {
                    let eight: [u8; 8] = c.try_into().map_err(|_| "a packed double cut short")?;
                    Ok(u64::from_le_bytes(eight))
                })
                .collect::<Result<_, String>>()?,
            Item::Bytes(inner) => {
                let mut inner = Reader { bytes: inner };
                let mut all = Vec::new();
                while !inner.bytes.is_empty() {
                    all.push(inner.varint()?);
                }
                all
            }
            Item::Fixed32(_) => Vec::new(),
        };
        values[i] = value(t, &body).ok_or_else(|| {
            format!(
                "field {number} (`{}`) does not hold a {t}",
                fields[i].name()
            )
        })?;
    }
    Ok(values)
}

/// A field's value from its decoded words (bits of doubles, varints of integers).
fn value(t: WireType, words: &[u64]) -> Option<Value> {
    let one = || (words.len() == 1).then(|| words[0]);
    let u32_of = |w: u64| u32::try_from(w).ok();
    // An int32 comes sign-extended to 64 bits.
    let i32_of = |w: u64| {
        #[allow(clippy::cast_possible_wrap)]
        i32::try_from(w as i64).ok()
    };
    fn array<T: Default + Copy, const N: usize>(
        words: &[u64],
        f: impl Fn(u64) -> Option<T>,
    ) -> Option<[T; N]> {
        if words.len() != N {
            return None;
        }
        let mut out = [T::default(); N];
        for (o, &w) in out.iter_mut().zip(words) {
            *o = f(w)?;
        }
        Some(out)
    }
    Some(match t {
        WireType::Bool => Value::Bool(one()? != 0),
        WireType::Uint8 => Value::Uint8(u8::try_from(one()?).ok()?),
        WireType::Uint32 => Value::Uint32(u32_of(one()?)?),
        WireType::Uint64 => Value::Uint64(one()?),
        WireType::Int32 => Value::Int32(i32_of(one()?)?),
        WireType::Double => Value::Double(f64::from_bits(one()?)),
        WireType::Vector3d => Value::Vector3d(array(words, |w| Some(f64::from_bits(w)))?),
        WireType::Vector6d => Value::Vector6d(array(words, |w| Some(f64::from_bits(w)))?),
        WireType::Vector6Int32 => Value::Vector6Int32(array(words, i32_of)?),
        WireType::Vector6Uint32 => Value::Vector6Uint32(array(words, u32_of)?),
    })
}

#[cfg(test)]
mod tests {
    use rtde_core::fields::{Direction, lookup};

    use super::*;

    #[test]
    fn every_wire_type_round_trips_bit_for_bit() {
        let fields: Vec<&Field> = [
            "timestamp",
            "actual_q",
            "actual_tool_accelerometer",
            "robot_mode",
            "safety_status_bits",
            "actual_digital_output_bits",
            "joint_mode",
            "output_bit_register_64",
            "output_int_register_24",
        ]
        .iter()
        .map(|n| lookup(Direction::Output, n).unwrap())
        .collect();
        let values = vec![
            Value::Double(f64::from_bits(0x7ff8_0000_0000_0001)),
            Value::Vector6d([0.1, -0.0, f64::INFINITY, 5e-324, -1.5, 1e300]),
            Value::Vector3d([1.0, 2.0, 3.0]),
            Value::Int32(-1),
            Value::Uint32(u32::MAX),
            Value::Uint64(u64::MAX),
            Value::Vector6Int32([i32::MIN, -1, 0, 1, i32::MAX, 7]),
            Value::Bool(true),
            Value::Int32(i32::MIN),
        ];
        let mut payload = vec![0u8; fields.iter().map(|f| f.wire_type().size()).sum()];
        let mut at = 0;
        for v in &values {
            at += v.write_be(&mut payload[at..]).unwrap();
        }
        let mut encoded = Vec::new();
        encode(&fields, &payload, &mut encoded);
        let back = decode(&fields, &encoded).unwrap();
        let mut again = vec![0u8; payload.len()];
        let mut at = 0;
        for v in &back {
            at += v.write_be(&mut again[at..]).unwrap();
        }
        assert_eq!(again, payload);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let fields = [lookup(Direction::Output, "actual_q").unwrap()];
        // A length past the end, a packed double cut short, a varint of eleven bytes, a
        // group (wire type 3) in a field of the recipe and in one it does not have.
        for bytes in [
            &[0x0a, 0xff][..],
            &[0x0a, 0x03, 1, 2, 3],
            &[0xff; 11],
            &[0x0b],
            &[0x13],
        ] {
            assert!(decode(&fields, bytes).is_err(), "{bytes:?}");
        }
    }
}
