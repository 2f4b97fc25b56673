//! Which fields carry a typed value of rtde-core (`robot_mode` a `RobotMode`): one table, read
//! by rtde-core, which implements `IsWire` for exactly these pairs, and by the derive, whose
//! error for a Rust type that does not fit a field names the field's typed value.

/// Calls the macro `$callback` with the table, `field: WIRE_TYPE => Type, …`: each field,
/// its wire type (as the registry has it: a test compares them) and the rtde-core type that
/// carries it. Not an API: rtde-core and this crate expand it.
#[doc(hidden)]
#[macro_export]
macro_rules! typed_values {
    ($callback:ident) => {
        $callback! {
            actual_TCP_pose: VECTOR6D => Pose,
            target_TCP_pose: VECTOR6D => Pose,
            tcp_offset: VECTOR6D => Pose,
            actual_digital_input_bits: UINT64 => DigitalBits,
            actual_digital_output_bits: UINT64 => DigitalBits,
            actual_configurable_digital_input_bits: UINT64 => DigitalBits,
            actual_configurable_digital_output_bits: UINT64 => DigitalBits,
            robot_status_bits: UINT32 => RobotStatusBits,
            safety_status_bits: UINT32 => SafetyStatusBits,
            robot_mode: INT32 => RobotMode,
            safety_mode: INT32 => SafetyMode,
            safety_status: INT32 => SafetyStatus,
            runtime_state: UINT32 => RuntimeState,
            joint_mode: VECTOR6INT32 => [JointMode; 6],
            tool_mode: UINT32 => ToolMode,
        }
    };
}

macro_rules! names {
    ($($field:ident: $wire:ident => $value:ty,)*) => {
        /// `(field, wire type, type)`, the type as written in rtde-core.
        static TYPED_VALUES: &[(&str, &str, &str)] =
            &[$((stringify!($field), stringify!($wire), stringify!($value)),)*];
    };
}

typed_values!(names);

/// The rtde-core type that carries the field `name` (its canonical name), when it has one:
/// a typed value that fits this field and the others it describes only.
///
/// ```
/// assert_eq!(rtde_fields::typed_value("safety_mode"), Some("SafetyMode"));
/// assert_eq!(rtde_fields::typed_value("joint_mode"), Some("[JointMode; 6]"));
/// assert_eq!(rtde_fields::typed_value("actual_q"), None);
/// ```
#[must_use]
pub fn typed_value(name: &str) -> Option<&'static str> {
    TYPED_VALUES
        .iter()
        .find(|(field, ..)| *field == name)
        .map(|&(.., value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, lookup};

    #[test]
    fn every_typed_field_is_an_output_field_of_its_wire_type_once() {
        for (i, (field, wire, _)) in TYPED_VALUES.iter().enumerate() {
            let entry = lookup(Direction::Output, field);
            assert_eq!(
                entry.map(|e| e.wire_type().as_str()),
                Some(*wire),
                "{field}"
            );
            assert!(
                TYPED_VALUES[..i].iter().all(|(f, ..)| f != field),
                "{field} twice"
            );
        }
    }
}
