//! Typed values for the RTDE fields that carry codes, flags or poses.
//!
//! Each implements [`IsWire`](crate::wire::IsWire) only for the fields it describes (the
//! table of `rtde_fields::typed_values!`, which the derive reads too), so
//! `safety_mode: RobotMode` is a compile error, one that names `SafetyMode`. Codes a controller sends that a type does not
//! know decode to an `Unknown(code)` variant (or, for flags, stay in the raw bits): decoding
//! never fails and never panics.
//!
//! A typed value that names a state displays the name Universal Robots' documentation gives
//! it, the constant engineers search for: `ROBOT_MODE_RUNNING`, `SAFETY_STATUS_NORMAL`,
//! `JOINT_RUNNING_MODE`, and `UNKNOWN(code)` for a code without a name. A flag word displays
//! its set flags by name, `POWER_ON | PROGRAM_RUNNING`. `Debug` shows the Rust variant
//! (`Running`). [`Pose`] and [`DigitalBits`] hold numbers, not names, and have no `Display`.

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
pub use modes::{
    JointMode, RobotMode, RuntimeState, SafetyMode, SafetyStatus, ToolMode, code_names,
};
pub use pose::Pose;

#[cfg(test)]
mod tests {
    /// Whether a name is written as UR writes its constants: `ROBOT_MODE_RUNNING`.
    fn is_constant_name(name: &str) -> bool {
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    }

    #[test]
    fn every_typed_value_displays_as_a_ur_constant_name() {
        let modes = super::modes::displays();
        let flags = super::bits::displays();
        assert!(modes.len() >= 6 && flags.len() >= 2);
        for (ty, known, unknown) in modes {
            assert!(!known.is_empty(), "{ty} has no values");
            for (i, name) in known.iter().enumerate() {
                assert!(is_constant_name(name), "{ty} displays as `{name}`");
                assert!(!known[..i].contains(name), "{ty}: `{name}` twice");
            }
            assert_eq!(unknown, "UNKNOWN(42)", "{ty}");
        }
        for (ty, names) in flags {
            assert!(!names.is_empty(), "{ty} has no flags");
            for (i, name) in names.iter().enumerate() {
                assert!(is_constant_name(name), "{ty} flag displays as `{name}`");
                assert!(!names[..i].contains(name), "{ty}: `{name}` twice");
            }
        }
    }
}
