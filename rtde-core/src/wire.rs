//! The RTDE wire types as Rust types, and the trait that says which Rust types can hold a field.
//!
//! Each wire type has a marker type spelled as the controller spells it in setup replies
//! ([`BOOL`], [`UINT8`], …, [`VECTOR6D`]), so that compile errors read in RTDE terms. Each
//! field of the registry has a marker type in [`field`] named exactly as on the wire.
//!
//! A struct field of a `#[derive(RtdeRecipe)]` recipe may have any Rust type `T` that
//! implements [`IsWire<W, F>`](IsWire) for the field's wire type `W` and marker `F`:
//!
//! | wire type | plain Rust type (any field) | typed values (their own fields only) |
//! | --- | --- | --- |
//! | `BOOL` | `bool` | |
//! | `UINT8` | `u8` | |
//! | `UINT32` | `u32` | [`RuntimeState`](crate::RuntimeState), [`ToolMode`](crate::ToolMode), [`RobotStatusBits`](crate::RobotStatusBits), [`SafetyStatusBits`](crate::SafetyStatusBits) |
//! | `UINT64` | `u64` | [`DigitalBits`](crate::DigitalBits) |
//! | `INT32` | `i32` | [`RobotMode`](crate::RobotMode), [`SafetyMode`](crate::SafetyMode), [`SafetyStatus`](crate::SafetyStatus) |
//! | `DOUBLE` | `f64` | |
//! | `VECTOR3D` | `[f64; 3]` | |
//! | `VECTOR6D` | `[f64; 6]` | [`Pose`](crate::Pose) |
//! | `VECTOR6INT32` | `[i32; 6]` | `[JointMode; 6]` ([`JointMode`](crate::JointMode)) |
//! | `VECTOR6UINT32` | `[u32; 6]` | |
//!
//! Your own types opt in by implementing [`IsWire`], for every field of a wire type or for
//! one field:
//!
//! ```
//! use rtde_core::wire::{self, IsWire};
//!
//! /// Speed scaling as a percentage.
//! struct Percent(f64);
//!
//! impl<F: ?Sized> IsWire<wire::DOUBLE, F> for Percent {
//!     fn from_wire(raw: f64) -> Self { Percent(raw * 100.0) }
//!     fn to_wire(&self) -> f64 { self.0 / 100.0 }
//! }
//!
//! #[derive(rtde_core::RtdeRecipe)]
//! struct Scaling {
//!     speed_scaling: Percent,
//! }
//! ```

#![allow(non_camel_case_types)] // the markers are spelled as on the wire

use rtde_fields::WireType;

/// One marker type per RTDE field, named exactly as on the wire (`actual_TCP_pose`).
///
/// Uninhabited: they exist only as the `F` of [`IsWire<W, F>`](IsWire), so that a typed
/// value can be tied to the field it describes. Generated from the registry.
#[allow(missing_debug_implementations)] // uninhabited: there is no value to print
pub mod field {
    include!(concat!(env!("OUT_DIR"), "/field_markers.rs"));
}

mod sealed {
    pub trait Sealed {}
}

/// An RTDE wire type as a Rust type: its registry entry, its size, its plain Rust value and
/// its big-endian encoding. Implemented by the ten marker types of this module only.
pub trait WireKind: sealed::Sealed + 'static {
    /// The registry's wire type.
    const TYPE: WireType;
    /// The value's bytes in a data package: `[u8; N]` for the type's size `N`.
    type Bytes: Copy;
    /// The plain Rust type a value decodes into.
    type Repr: Copy;
    /// Decodes big-endian bytes; a `BOOL` is true for any non-zero byte.
    fn decode(bytes: Self::Bytes) -> Self::Repr;
    /// Encodes big-endian bytes; a `BOOL` is 0 or 1.
    fn encode(value: Self::Repr) -> Self::Bytes;
}

macro_rules! wire_kinds {
    ($($(#[$doc:meta])* $name:ident = $variant:ident, $size:literal, $repr:tt, $elem:tt;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}

        impl sealed::Sealed for $name {}

        impl WireKind for $name {
            const TYPE: WireType = WireType::$variant;
            type Bytes = [u8; $size];
            type Repr = $repr;
            #[inline]
            fn decode(bytes: [u8; $size]) -> $repr {
                wire_kinds!(@decode $repr, $elem, bytes)
            }
            #[inline]
            fn encode(value: $repr) -> [u8; $size] {
                wire_kinds!(@encode $repr, $elem, value, $size)
            }
        }
    )*};
    (@decode bool, $elem:tt, $b:ident) => { $b[0] != 0 };
    (@decode $repr:tt, scalar, $b:ident) => { <$repr>::from_be_bytes($b) };
    (@decode $repr:tt, $elem:tt, $b:ident) => {{
        const W: usize = size_of::<$elem>();
        let mut out = [<$elem>::default(); size_of::<$repr>() / W];
        for (v, chunk) in out.iter_mut().zip($b.chunks_exact(W)) {
            let mut one = [0u8; W];
            one.copy_from_slice(chunk);
            *v = <$elem>::from_be_bytes(one);
        }
        out
    }};
    (@encode bool, $elem:tt, $v:ident, $size:literal) => { [u8::from($v)] };
    (@encode $repr:tt, scalar, $v:ident, $size:literal) => { $v.to_be_bytes() };
    (@encode $repr:tt, $elem:tt, $v:ident, $size:literal) => {{
        let mut out = [0u8; $size];
        for (chunk, x) in out.chunks_exact_mut(size_of::<$elem>()).zip($v) {
            chunk.copy_from_slice(&x.to_be_bytes());
        }
        out
    }};
}

wire_kinds! {
    /// `BOOL`: one byte; decodes to `bool`.
    BOOL = Bool, 1, bool, scalar;
    /// `UINT8`: decodes to `u8`.
    UINT8 = Uint8, 1, u8, scalar;
    /// `UINT32`: decodes to `u32`.
    UINT32 = Uint32, 4, u32, scalar;
    /// `UINT64`: decodes to `u64`.
    UINT64 = Uint64, 8, u64, scalar;
    /// `INT32`: decodes to `i32`.
    INT32 = Int32, 4, i32, scalar;
    /// `DOUBLE`: decodes to `f64`.
    DOUBLE = Double, 8, f64, scalar;
    /// `VECTOR3D`: decodes to `[f64; 3]`.
    VECTOR3D = Vector3d, 24, [f64; 3], f64;
    /// `VECTOR6D`: decodes to `[f64; 6]`.
    VECTOR6D = Vector6d, 48, [f64; 6], f64;
    /// `VECTOR6INT32`: decodes to `[i32; 6]`.
    VECTOR6INT32 = Vector6Int32, 24, [i32; 6], i32;
    /// `VECTOR6UINT32`: decodes to `[u32; 6]`.
    VECTOR6UINT32 = Vector6Uint32, 24, [u32; 6], u32;
}

// The plain types hold every field of their wire type. Written out rather than generated:
// a compile error quotes the impl that would have fit.
impl<F: ?Sized> IsWire<BOOL, F> for bool {
    #[inline]
    fn from_wire(raw: bool) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> bool {
        *self
    }
}

impl<F: ?Sized> IsWire<UINT8, F> for u8 {
    #[inline]
    fn from_wire(raw: u8) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> u8 {
        *self
    }
}

impl<F: ?Sized> IsWire<UINT32, F> for u32 {
    #[inline]
    fn from_wire(raw: u32) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> u32 {
        *self
    }
}

impl<F: ?Sized> IsWire<UINT64, F> for u64 {
    #[inline]
    fn from_wire(raw: u64) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> u64 {
        *self
    }
}

impl<F: ?Sized> IsWire<INT32, F> for i32 {
    #[inline]
    fn from_wire(raw: i32) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> i32 {
        *self
    }
}

impl<F: ?Sized> IsWire<DOUBLE, F> for f64 {
    #[inline]
    fn from_wire(raw: f64) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> f64 {
        *self
    }
}

impl<F: ?Sized> IsWire<VECTOR3D, F> for [f64; 3] {
    #[inline]
    fn from_wire(raw: [f64; 3]) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> [f64; 3] {
        *self
    }
}

impl<F: ?Sized> IsWire<VECTOR6D, F> for [f64; 6] {
    #[inline]
    fn from_wire(raw: [f64; 6]) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> [f64; 6] {
        *self
    }
}

impl<F: ?Sized> IsWire<VECTOR6INT32, F> for [i32; 6] {
    #[inline]
    fn from_wire(raw: [i32; 6]) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> [i32; 6] {
        *self
    }
}

impl<F: ?Sized> IsWire<VECTOR6UINT32, F> for [u32; 6] {
    #[inline]
    fn from_wire(raw: [u32; 6]) -> Self {
        raw
    }
    #[inline]
    fn to_wire(&self) -> [u32; 6] {
        *self
    }
}

/// A Rust type that can hold the RTDE field `F`, whose wire type is `W`.
///
/// The plain types (`f64` for `DOUBLE`, `[f64; 6]` for `VECTOR6D`, … see the
/// [module docs](self)) implement it for every field of their wire type; the typed values of
/// this crate only for the fields they describe ([`RobotMode`](crate::RobotMode) for
/// `robot_mode`). Implement it for your own types, generically over `F` or for one marker of
/// [`field`].
///
/// The third parameter is the plain type of `W`, there only so that the compile error can
/// name it: leave it at its default.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the RTDE field `{F}`, which is `{W}` on the wire",
    label = "use `{P}` or a type that implements `IsWire<{W}, {F}>`",
    note = "`{W}` decodes into `{P}`; a typed value such as `RobotMode` fits only the field it describes; your own type can implement `rtde_core::wire::IsWire<{W}, F>`"
)]
pub trait IsWire<W: WireKind, F: ?Sized, P = <W as WireKind>::Repr>: Sized {
    /// The value from the wire type's plain value.
    fn from_wire(raw: W::Repr) -> Self;
    /// The wire type's plain value of this value.
    fn to_wire(&self) -> W::Repr;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    /// Encodes through `WireKind`, decodes through `Value`, and back.
    fn agrees<W: WireKind>(v: W::Repr, value: Value)
    where
        W::Bytes: AsRef<[u8]>,
        W::Repr: PartialEq + std::fmt::Debug,
    {
        let bytes = W::encode(v);
        assert_eq!(bytes.as_ref().len(), W::TYPE.size());
        let mut back = Value::zero(W::TYPE);
        assert!(back.read_be(W::TYPE, bytes.as_ref()));
        assert_eq!(back, value);
        assert_eq!(W::decode(bytes), v);
        let mut buf = [0u8; 48];
        assert_eq!(value.write_be(&mut buf), Some(W::TYPE.size()));
        assert_eq!(&buf[..W::TYPE.size()], bytes.as_ref());
    }

    #[test]
    fn every_wire_kind_agrees_with_value() {
        agrees::<BOOL>(true, Value::Bool(true));
        agrees::<UINT8>(200, Value::Uint8(200));
        agrees::<UINT32>(u32::MAX - 3, Value::Uint32(u32::MAX - 3));
        agrees::<UINT64>(u64::MAX - 1, Value::Uint64(u64::MAX - 1));
        agrees::<INT32>(i32::MIN, Value::Int32(i32::MIN));
        agrees::<DOUBLE>(-0.25, Value::Double(-0.25));
        agrees::<VECTOR3D>([1.0, -2.0, 3.5], Value::Vector3d([1.0, -2.0, 3.5]));
        let v6 = [1.0, 2.0, 3.0, -4.0, 5.0, f64::MAX];
        agrees::<VECTOR6D>(v6, Value::Vector6d(v6));
        let i6 = [i32::MIN, -1, 0, 1, 2, i32::MAX];
        agrees::<VECTOR6INT32>(i6, Value::Vector6Int32(i6));
        let u6 = [0, 1, 2, 3, 4, u32::MAX];
        agrees::<VECTOR6UINT32>(u6, Value::Vector6Uint32(u6));
    }

    #[test]
    fn any_non_zero_byte_is_true() {
        assert!(BOOL::decode([2]));
        assert!(!BOOL::decode([0]));
        assert_eq!(BOOL::encode(true), [1]);
    }
}
