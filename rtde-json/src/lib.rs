//! RTDE values as JSON, one rule for every writer in the workspace: the MQTT bridge's
//! JSON batches, the MCAP recordings and the live view.
//!
//! - Doubles are printed in the shortest form that reads back as the same `f64`
//!   (`0.1`, `-1.5707963267948966`, `1e-7`); an integral double prints without a fraction
//!   (`2`), which JSON allows. A non-finite double (NaN, ±∞), which JSON cannot carry,
//!   is `null`, and reads back as NaN.
//! - Integers in decimal, booleans as `true`/`false`, vectors as arrays.
//!
//! A crate of its own so that rtde-core stays without dependencies, and neither the bridge
//! nor the viewers carry the other's.
//!
//! ```
//! use rtde_core::Value;
//! use rtde_core::fields::WireType;
//!
//! let mut s = String::new();
//! rtde_json::write_value(&mut s, &Value::Vector3d([0.1, -2.0, f64::NAN]));
//! assert_eq!(s, "[0.1,-2,null]");
//! let json: serde_json::Value = serde_json::from_str("[0.1,-2,null]").unwrap();
//! let Some(Value::Vector3d(v)) = rtde_json::read_value(WireType::Vector3d, &json) else { panic!() };
//! assert_eq!((v[0], v[1]), (0.1, -2.0));
//! assert!(v[2].is_nan());
//! ```

#![forbid(unsafe_code)]

use rtde_core::Value;
use rtde_core::fields::WireType;
use serde_json::Value as Json;

pub use serde_json;

/// Appends a double: shortest exact digits, `null` when not finite.
pub fn write_number(s: &mut String, v: f64) {
    if v.is_finite() {
        let mut buf = zmij::Buffer::new();
        let digits = buf.format_finite(v);
        s.push_str(digits.strip_suffix(".0").unwrap_or(digits));
    } else {
        s.push_str("null");
    }
}

/// Appends an integer in decimal, without going through `fmt`.
pub fn write_integer(s: &mut String, n: impl itoa::Integer) {
    s.push_str(itoa::Buffer::new().format(n));
}

/// Appends a value: a number, `true`/`false`, or an array for a vector.
pub fn write_value(s: &mut String, v: &Value) {
    fn all<T: Copy>(s: &mut String, xs: &[T], mut one: impl FnMut(&mut String, T)) {
        s.push('[');
        for (i, &x) in xs.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            one(s, x);
        }
        s.push(']');
    }
    match v {
        Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Value::Uint8(n) => write_integer(s, *n),
        Value::Uint32(n) => write_integer(s, *n),
        Value::Uint64(n) => write_integer(s, *n),
        Value::Int32(n) => write_integer(s, *n),
        Value::Double(d) => write_number(s, *d),
        Value::Vector3d(xs) => all(s, xs, write_number),
        Value::Vector6d(xs) => all(s, xs, write_number),
        Value::Vector6Int32(xs) => all(s, xs, write_integer),
        Value::Vector6Uint32(xs) => all(s, xs, write_integer),
    }
}

/// A JSON value read as wire type `t`; `None` when it is no value of that type (`null`
/// is NaN for doubles).
#[must_use]
pub fn read_value(t: WireType, j: &Json) -> Option<Value> {
    fn double(j: &Json) -> Option<f64> {
        if j.is_null() {
            Some(f64::NAN)
        } else {
            j.as_f64()
        }
    }
    fn arr<T: Default + Copy, const N: usize>(
        j: &Json,
        one: impl Fn(&Json) -> Option<T>,
    ) -> Option<[T; N]> {
        let a = j.as_array().filter(|a| a.len() == N)?;
        let mut out = [T::default(); N];
        for (o, x) in out.iter_mut().zip(a) {
            *o = one(x)?;
        }
        Some(out)
    }
    let int = |j: &Json| j.as_i64().and_then(|n| i32::try_from(n).ok());
    let uint = |j: &Json| j.as_u64().and_then(|n| u32::try_from(n).ok());
    Some(match t {
        WireType::Bool => Value::Bool(j.as_bool()?),
        WireType::Uint8 => Value::Uint8(u8::try_from(j.as_u64()?).ok()?),
        WireType::Uint32 => Value::Uint32(uint(j)?),
        WireType::Uint64 => Value::Uint64(j.as_u64()?),
        WireType::Int32 => Value::Int32(int(j)?),
        WireType::Double => Value::Double(double(j)?),
        WireType::Vector3d => Value::Vector3d(arr(j, double)?),
        WireType::Vector6d => Value::Vector6d(arr(j, double)?),
        WireType::Vector6Int32 => Value::Vector6Int32(arr(j, int)?),
        WireType::Vector6Uint32 => Value::Vector6Uint32(arr(j, uint)?),
    })
}

/// The JSON Schema type of a wire type's values: what a viewer needs to plot them.
#[must_use]
pub fn schema_type(t: WireType) -> String {
    let scalar = match t {
        WireType::Bool => "{\"type\":\"boolean\"}",
        WireType::Uint8 | WireType::Uint32 | WireType::Uint64 | WireType::Int32 => {
            "{\"type\":\"integer\"}"
        }
        WireType::Double | WireType::Vector3d | WireType::Vector6d => "{\"type\":\"number\"}",
        WireType::Vector6Int32 | WireType::Vector6Uint32 => "{\"type\":\"integer\"}",
    };
    match rtde_record::csv::width(t) {
        1 => scalar.to_owned(),
        n => format!("{{\"type\":\"array\",\"items\":{scalar},\"minItems\":{n},\"maxItems\":{n}}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_double_reads_back_bit_for_bit() {
        for v in [
            0.1,
            -0.0,
            1e-300,
            5e-324,
            f64::MAX,
            1234.5678,
            2.0,
            -std::f64::consts::FRAC_PI_2,
        ] {
            let mut s = String::new();
            write_number(&mut s, v);
            let back = read_value(WireType::Double, &serde_json::from_str(&s).unwrap());
            assert_eq!(back, Some(Value::Double(v)), "{s}");
            assert_eq!(
                back.map(|b| match b {
                    Value::Double(b) => b.to_bits(),
                    _ => 0,
                }),
                Some(v.to_bits())
            );
        }
    }

    #[test]
    fn a_value_of_another_type_is_none() {
        let j: Json = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(read_value(WireType::Vector6d, &j), None);
        assert_eq!(read_value(WireType::Int32, &Json::from(1u64 << 40)), None);
    }
}
