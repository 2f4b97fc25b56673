//! Typed values for the RTDE fields that carry codes, flags or poses.
//!
//! Each implements [`IsWire`](crate::wire::IsWire) only for the fields it describes (the
//! table of `rtde_fields::typed_values!`, which the derive reads too), so
//! `safety_mode: RobotMode` is a compile error, one that names `SafetyMode`. Codes a controller sends that a type does not
//! know decode to an `Unknown(code)` variant (or, for flags, stay in the raw bits): decoding
//! never fails and never panics.

mod bits;
mod modes;
mod pose;

use crate::__private::Carries;
use crate::wire::{self, IsWire, WireKind, field};

/// A typed value's conversion from and to its wire type's plain value. Which fields it
/// carries is not said here but in the table of `rtde_fields::typed_values!`, expanded below
/// into its `IsWire` impls.
pub(crate) trait TypedValue: Sized {
    /// The wire type of every field the value carries.
    type Wire: WireKind;
    /// The value of a plain value; never fails.
    fn from_raw(raw: <Self::Wire as WireKind>::Repr) -> Self;
    /// The plain value on the wire.
    fn to_raw(&self) -> <Self::Wire as WireKind>::Repr;
}

/// Per pair of the table: the value's `IsWire` impl for the field, and the field's
/// [`Carries`], through which a compile error for a type that does not fit names the value.
macro_rules! carried_by {
    ($($field:ident: $wire:ident => $value:ty,)*) => {$(
        impl IsWire<wire::$wire, field::$field> for $value {
            #[inline]
            fn from_wire(raw: <wire::$wire as WireKind>::Repr) -> Self {
                <$value as TypedValue>::from_raw(raw)
            }
            #[inline]
            fn to_wire(&self) -> <wire::$wire as WireKind>::Repr {
                <$value as TypedValue>::to_raw(self)
            }
        }

        impl Carries for field::$field {
            type Value = $value;
        }
    )*};
}

rtde_fields::typed_values!(carried_by);

pub use bits::{DigitalBits, RobotStatusBits, SafetyStatusBits};
pub use modes::{JointMode, RobotMode, RuntimeState, SafetyMode, SafetyStatus, ToolMode};
pub use pose::Pose;
