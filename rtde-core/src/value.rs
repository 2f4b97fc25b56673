//! A value of any RTDE wire type, for recipes chosen at run time.

use std::fmt;

use rtde_fields::WireType;

use crate::wire::{self, WireKind};

/// One RTDE value, tagged with its wire type.
///
/// ```
/// use rtde_core::Value;
/// use rtde_fields::WireType;
///
/// let mut v = Value::zero(WireType::Int32);
/// v.read_be(WireType::Int32, &[0xff, 0xff, 0xff, 0xfe]);
/// assert_eq!(v, Value::Int32(-2));
/// let mut out = [0u8; 4];
/// v.write_be(&mut out);
/// assert_eq!(out, [0xff, 0xff, 0xff, 0xfe]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `BOOL`.
    Bool(bool),
    /// `UINT8`.
    Uint8(u8),
    /// `UINT32`.
    Uint32(u32),
    /// `UINT64`.
    Uint64(u64),
    /// `INT32`.
    Int32(i32),
    /// `DOUBLE`.
    Double(f64),
    /// `VECTOR3D`.
    Vector3d([f64; 3]),
    /// `VECTOR6D`.
    Vector6d([f64; 6]),
    /// `VECTOR6INT32`.
    Vector6Int32([i32; 6]),
    /// `VECTOR6UINT32`.
    Vector6Uint32([u32; 6]),
}

impl Value {
    /// The zero (or `false`) value of a wire type.
    #[must_use]
    pub const fn zero(wire_type: WireType) -> Value {
        match wire_type {
            WireType::Bool => Value::Bool(false),
            WireType::Uint8 => Value::Uint8(0),
            WireType::Uint32 => Value::Uint32(0),
            WireType::Uint64 => Value::Uint64(0),
            WireType::Int32 => Value::Int32(0),
            WireType::Double => Value::Double(0.0),
            WireType::Vector3d => Value::Vector3d([0.0; 3]),
            WireType::Vector6d => Value::Vector6d([0.0; 6]),
            WireType::Vector6Int32 => Value::Vector6Int32([0; 6]),
            WireType::Vector6Uint32 => Value::Vector6Uint32([0; 6]),
        }
    }

    /// The value's wire type.
    #[must_use]
    pub const fn wire_type(&self) -> WireType {
        match self {
            Value::Bool(_) => WireType::Bool,
            Value::Uint8(_) => WireType::Uint8,
            Value::Uint32(_) => WireType::Uint32,
            Value::Uint64(_) => WireType::Uint64,
            Value::Int32(_) => WireType::Int32,
            Value::Double(_) => WireType::Double,
            Value::Vector3d(_) => WireType::Vector3d,
            Value::Vector6d(_) => WireType::Vector6d,
            Value::Vector6Int32(_) => WireType::Vector6Int32,
            Value::Vector6Uint32(_) => WireType::Vector6Uint32,
        }
    }

    /// Overwrites `self` with a big-endian value of `wire_type` read from the front of `bytes`.
    ///
    /// Reads nothing and returns `false` when `bytes` is shorter than the type; a `BOOL` is
    /// true for any non-zero byte, as the controller treats it.
    pub fn read_be(&mut self, wire_type: WireType, bytes: &[u8]) -> bool {
        // Through `read_own_type_be`, hence `WireKind`: one big-endian codec for both
        // recipe kinds.
        if bytes.len() < wire_type.size() {
            return false;
        }
        if self.wire_type() != wire_type {
            *self = Value::zero(wire_type);
        }
        self.read_own_type_be(bytes).is_some()
    }

    /// Overwrites the value with one of its own wire type, read big-endian from the front of
    /// `bytes`, in place, through the same [`WireKind`] codec as derived recipes. Returns the
    /// bytes after the value, or `None` (reading nothing) when `bytes` is shorter than the
    /// type.
    fn read_own_type_be<'a>(&mut self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        fn read<'a, W: WireKind<Bytes = [u8; N]>, const N: usize>(
            slot: &mut W::Repr,
            bytes: &'a [u8],
        ) -> Option<&'a [u8]> {
            let (b, rest) = bytes.split_first_chunk::<N>()?;
            *slot = W::decode(*b);
            Some(rest)
        }
        match self {
            Value::Bool(v) => read::<wire::BOOL, 1>(v, bytes),
            Value::Uint8(v) => read::<wire::UINT8, 1>(v, bytes),
            Value::Uint32(v) => read::<wire::UINT32, 4>(v, bytes),
            Value::Uint64(v) => read::<wire::UINT64, 8>(v, bytes),
            Value::Int32(v) => read::<wire::INT32, 4>(v, bytes),
            Value::Double(v) => read::<wire::DOUBLE, 8>(v, bytes),
            Value::Vector3d(v) => read::<wire::VECTOR3D, 24>(v, bytes),
            Value::Vector6d(v) => read::<wire::VECTOR6D, 48>(v, bytes),
            Value::Vector6Int32(v) => read::<wire::VECTOR6INT32, 24>(v, bytes),
            Value::Vector6Uint32(v) => read::<wire::VECTOR6UINT32, 24>(v, bytes),
        }
    }

    /// Writes the value big-endian into the front of `out`; returns the bytes written, or
    /// `None` (writing nothing) when `out` is too short.
    pub fn write_be(&self, out: &mut [u8]) -> Option<usize> {
        // The one big-endian codec: each wire kind's `encode`, as derived recipes use.
        fn put<W: WireKind<Bytes = [u8; N]>, const N: usize>(
            value: W::Repr,
            out: &mut [u8],
        ) -> Option<usize> {
            out.first_chunk_mut::<N>()?
                .copy_from_slice(&W::encode(value));
            Some(N)
        }
        match *self {
            Value::Bool(v) => put::<wire::BOOL, 1>(v, out),
            Value::Uint8(v) => put::<wire::UINT8, 1>(v, out),
            Value::Uint32(v) => put::<wire::UINT32, 4>(v, out),
            Value::Uint64(v) => put::<wire::UINT64, 8>(v, out),
            Value::Int32(v) => put::<wire::INT32, 4>(v, out),
            Value::Double(v) => put::<wire::DOUBLE, 8>(v, out),
            Value::Vector3d(v) => put::<wire::VECTOR3D, 24>(v, out),
            Value::Vector6d(v) => put::<wire::VECTOR6D, 48>(v, out),
            Value::Vector6Int32(v) => put::<wire::VECTOR6INT32, 24>(v, out),
            Value::Vector6Uint32(v) => put::<wire::VECTOR6UINT32, 24>(v, out),
        }
    }

    /// The value as an `f64`, for `DOUBLE` and the integer types that fit one exactly.
    #[must_use]
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Double(v) => Some(v),
            Value::Uint8(v) => Some(f64::from(v)),
            Value::Uint32(v) => Some(f64::from(v)),
            Value::Int32(v) => Some(f64::from(v)),
            Value::Bool(v) => Some(f64::from(u8::from(v))),
            _ => None,
        }
    }

    /// The elements of a vector value as `f64`s (one element for a scalar), for tools that
    /// print or plot any field; `UINT64` is converted with rounding above 2^53.
    pub fn for_each_f64(&self, mut f: impl FnMut(f64)) {
        match *self {
            Value::Vector3d(v) => v.into_iter().for_each(f),
            Value::Vector6d(v) => v.into_iter().for_each(f),
            Value::Vector6Int32(v) => v.into_iter().for_each(|x| f(f64::from(x))),
            Value::Vector6Uint32(v) => v.into_iter().for_each(|x| f(f64::from(x))),
            #[allow(clippy::cast_precision_loss)] // documented above
            Value::Uint64(v) => f(v as f64),
            scalar => f(scalar.as_f64().unwrap_or(f64::NAN)),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(v) => write!(f, "{v}"),
            Value::Uint8(v) => write!(f, "{v}"),
            Value::Uint32(v) => write!(f, "{v}"),
            Value::Uint64(v) => write!(f, "{v}"),
            Value::Int32(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::Vector3d(v) => write!(f, "{v:?}"),
            Value::Vector6d(v) => write!(f, "{v:?}"),
            Value::Vector6Int32(v) => write!(f, "{v:?}"),
            Value::Vector6Uint32(v) => write!(f, "{v:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_through_bytes() {
        let values = [
            Value::Bool(true),
            Value::Uint8(200),
            Value::Uint32(u32::MAX),
            Value::Uint64(u64::MAX - 1),
            Value::Int32(i32::MIN),
            Value::Double(-0.5),
            Value::Vector3d([1.0, -2.0, f64::INFINITY]),
            Value::Vector6d([1.0, 2.0, 3.0, 4.0, 5.0, f64::MIN_POSITIVE]),
            Value::Vector6Int32([i32::MIN, -1, 0, 1, 2, i32::MAX]),
            Value::Vector6Uint32([0, 1, 2, 3, 4, u32::MAX]),
        ];
        for v in values {
            let t = v.wire_type();
            let mut buf = [0u8; 48];
            assert_eq!(v.write_be(&mut buf), Some(t.size()));
            let mut back = Value::zero(t);
            assert!(back.read_be(t, &buf[..t.size()]));
            assert_eq!(back, v);
            assert_eq!(v.write_be(&mut buf[..t.size() - 1]), None);
            assert!(!back.read_be(t, &buf[..t.size() - 1]));
        }
    }

    #[test]
    fn values_are_big_endian() {
        let mut buf = [0u8; 8];
        Value::Double(500.0).write_be(&mut buf);
        assert_eq!(buf, [0x40, 0x7f, 0x40, 0, 0, 0, 0, 0]);
        Value::Uint32(0x0102_0304).write_be(&mut buf);
        assert_eq!(buf[..4], [1, 2, 3, 4]);
    }

    #[test]
    fn read_be_takes_the_wire_type_given_and_a_short_read_changes_nothing() {
        // A slot of another type takes the type read, as a controller's reply dictates.
        let mut v = Value::Double(1.5);
        assert!(v.read_be(WireType::Int32, &[0xff, 0xff, 0xff, 0xfe]));
        assert_eq!(v, Value::Int32(-2));
        assert!(!v.read_be(WireType::Vector6d, &[0; 47]));
        assert_eq!(v, Value::Int32(-2), "nothing read, nothing changed");
        // BOOL: any non-zero byte is true, written back as 1 (the wire kind's rule).
        assert!(v.read_be(WireType::Bool, &[7]));
        let mut out = [9u8; 1];
        assert_eq!(v.write_be(&mut out), Some(1));
        assert_eq!(out, [1]);
    }
}
