//! The mode and state codes: robot, safety, runtime, joint and tool.
//!
//! Code tables as in Universal Robots' RTDE guide and client interface documentation.

use std::fmt;

use super::TypedValue;
use crate::wire;

/// Declares the code enums: each with its variants and their UR names, `Unknown(code)`,
/// conversions and `Display`. Their conversions to and from the wire are written out below;
/// the fields each carries are in rtde-fields' table (see the module above). All are
/// declared in one invocation, so [`code_names`] and the tests see every one of them.
macro_rules! code_enums {
    ($(
        $(#[$meta:meta])*
        pub enum $name:ident: $code:ty {
            $($(#[$vmeta:meta])* $variant:ident = $value:literal => $ur:literal,)*
        }
    )*) => {
        $(
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A code this version of rtde does not know, kept as received.
            Unknown($code),
        }

        impl $name {
            /// Every known value, in code order.
            pub const KNOWN: &'static [$name] = &[$($name::$variant),*];

            // Codes are `i32` or `u32` literals: every one fits an `i64`.
            #[allow(clippy::unnecessary_cast)]
            const NAMES: &'static [(i64, &'static str)] = &[$(($value as i64, $ur)),*];

            /// The value of a code; never fails.
            #[must_use]
            pub const fn from_code(code: $code) -> Self {
                match code {
                    $($value => $name::$variant,)*
                    other => $name::Unknown(other),
                }
            }

            /// The code on the wire.
            #[must_use]
            pub const fn code(self) -> $code {
                match self {
                    $($name::$variant => $value,)*
                    $name::Unknown(code) => code,
                }
            }

            /// The name Universal Robots' documentation gives the code, or `"UNKNOWN"`.
            #[must_use]
            pub const fn ur_name(self) -> &'static str {
                match self {
                    $($name::$variant => $ur,)*
                    $name::Unknown(_) => "UNKNOWN",
                }
            }
        }

        impl fmt::Display for $name {
            /// The UR name of the code (`ROBOT_MODE_RUNNING`), or `UNKNOWN(code)`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $name::Unknown(code) => write!(f, "UNKNOWN({code})"),
                    known => f.write_str(known.ur_name()),
                }
            }
        }

        impl From<$code> for $name {
            fn from(code: $code) -> Self {
                $name::from_code(code)
            }
        }

        impl From<$name> for $code {
            fn from(value: $name) -> Self {
                value.code()
            }
        }

        )*

        /// The UR names of the codes a field carries, `(code, name)` in code order, for
        /// the fields that have a typed value ([`RobotMode`] for `robot_mode`,
        /// [`JointMode`] for each element of `joint_mode`, …); `None` for any other field.
        ///
        /// For programs that handle fields by name, as `rtde plot` does.
        ///
        /// ```
        /// let names = rtde_core::code_names("robot_mode").unwrap();
        /// assert!(names.contains(&(7, "ROBOT_MODE_RUNNING")));
        /// assert_eq!(rtde_core::code_names("actual_q"), None);
        /// ```
        #[must_use]
        pub fn code_names(field: &str) -> Option<&'static [(i64, &'static str)]> {
            // The table says which type a field carries; an array carries its elements'.
            let carried = rtde_fields::typed_value(field)?;
            let element = carried
                .strip_prefix('[')
                .and_then(|t| t.split(';').next())
                .unwrap_or(carried);
            match element {
                $(stringify!($name) => Some($name::NAMES),)*
                _ => None,
            }
        }

        /// Every code enum, by name: the `Display` of each known value and of one unknown
        /// code.
        #[cfg(test)]
        pub(super) fn displays() -> Vec<(&'static str, Vec<String>, String)> {
            vec![$((
                stringify!($name),
                $name::KNOWN.iter().map(ToString::to_string).collect(),
                $name::Unknown(42).to_string(),
            )),*]
        }
    };
}

code_enums! {
    /// The robot's mode: the `robot_mode` output (`INT32`).
    pub enum RobotMode: i32 {
        /// -1: no controller.
        NoController = -1 => "ROBOT_MODE_NO_CONTROLLER",
        /// 0: the controller is not connected to the arm.
        Disconnected = 0 => "ROBOT_MODE_DISCONNECTED",
        /// 1: the safety configuration waits for confirmation.
        ConfirmSafety = 1 => "ROBOT_MODE_CONFIRM_SAFETY",
        /// 2: booting.
        Booting = 2 => "ROBOT_MODE_BOOTING",
        /// 3: the arm is powered off.
        PowerOff = 3 => "ROBOT_MODE_POWER_OFF",
        /// 4: the arm is powered on, brakes engaged.
        PowerOn = 4 => "ROBOT_MODE_POWER_ON",
        /// 5: powered on and ready to release the brakes.
        Idle = 5 => "ROBOT_MODE_IDLE",
        /// 6: backdrive: the brakes are released and the arm can be moved by hand.
        Backdrive = 6 => "ROBOT_MODE_BACKDRIVE",
        /// 7: running: the brakes are released and the arm is under control.
        Running = 7 => "ROBOT_MODE_RUNNING",
        /// 8: updating joint firmware.
        UpdatingFirmware = 8 => "ROBOT_MODE_UPDATING_FIRMWARE",
    }

    /// The safety system's mode: the `safety_mode` output (`INT32`).
    ///
    /// Codes 12 and 13 appear on e-Series controllers; `safety_status` ([`SafetyStatus`])
    /// reports the same states and is the newer field.
    pub enum SafetyMode: i32 {
        /// 1: normal.
        Normal = 1 => "SAFETY_MODE_NORMAL",
        /// 2: reduced limits are active.
        Reduced = 2 => "SAFETY_MODE_REDUCED",
        /// 3: protective stop.
        ProtectiveStop = 3 => "SAFETY_MODE_PROTECTIVE_STOP",
        /// 4: recovery mode (a joint is outside its limits).
        Recovery = 4 => "SAFETY_MODE_RECOVERY",
        /// 5: safeguard stop.
        SafeguardStop = 5 => "SAFETY_MODE_SAFEGUARD_STOP",
        /// 6: system emergency stop.
        SystemEmergencyStop = 6 => "SAFETY_MODE_SYSTEM_EMERGENCY_STOP",
        /// 7: robot emergency stop.
        RobotEmergencyStop = 7 => "SAFETY_MODE_ROBOT_EMERGENCY_STOP",
        /// 8: a safety limit was violated.
        Violation = 8 => "SAFETY_MODE_VIOLATION",
        /// 9: safety fault.
        Fault = 9 => "SAFETY_MODE_FAULT",
        /// 10: joint ids are being validated.
        ValidateJointId = 10 => "SAFETY_MODE_VALIDATE_JOINT_ID",
        /// 11: undefined.
        UndefinedSafetyMode = 11 => "SAFETY_MODE_UNDEFINED_SAFETY_MODE",
        /// 12: safeguard stop from the automatic-mode safeguard input.
        AutomaticModeSafeguardStop = 12 => "SAFETY_MODE_AUTOMATIC_MODE_SAFEGUARD_STOP",
        /// 13: stop from the system's three-position enabling device.
        SystemThreePositionEnablingStop = 13 => "SAFETY_MODE_SYSTEM_THREE_POSITION_ENABLING_STOP",
    }

    /// The safety status: the `safety_status` output (`INT32`, from 3.10 and 5.4).
    pub enum SafetyStatus: i32 {
        /// 1: normal.
        Normal = 1 => "SAFETY_STATUS_NORMAL",
        /// 2: reduced limits are active.
        Reduced = 2 => "SAFETY_STATUS_REDUCED",
        /// 3: protective stop.
        ProtectiveStop = 3 => "SAFETY_STATUS_PROTECTIVE_STOP",
        /// 4: recovery mode.
        Recovery = 4 => "SAFETY_STATUS_RECOVERY",
        /// 5: safeguard stop.
        SafeguardStop = 5 => "SAFETY_STATUS_SAFEGUARD_STOP",
        /// 6: system emergency stop.
        SystemEmergencyStop = 6 => "SAFETY_STATUS_SYSTEM_EMERGENCY_STOP",
        /// 7: robot emergency stop.
        RobotEmergencyStop = 7 => "SAFETY_STATUS_ROBOT_EMERGENCY_STOP",
        /// 8: a safety limit was violated.
        Violation = 8 => "SAFETY_STATUS_VIOLATION",
        /// 9: safety fault.
        Fault = 9 => "SAFETY_STATUS_FAULT",
        /// 10: joint ids are being validated.
        ValidateJointId = 10 => "SAFETY_STATUS_VALIDATE_JOINT_ID",
        /// 11: undefined.
        UndefinedSafetyMode = 11 => "SAFETY_STATUS_UNDEFINED_SAFETY_MODE",
        /// 12: safeguard stop from the automatic-mode safeguard input.
        AutomaticModeSafeguardStop = 12 => "SAFETY_STATUS_AUTOMATIC_MODE_SAFEGUARD_STOP",
        /// 13: stop from the system's three-position enabling device.
        SystemThreePositionEnablingStop = 13 => "SAFETY_STATUS_SYSTEM_THREE_POSITION_ENABLING_STOP",
    }

    /// The program's state: the `runtime_state` output (`UINT32`).
    pub enum RuntimeState: u32 {
        /// 0: the program is stopping.
        Stopping = 0 => "STOPPING",
        /// 1: no program is running.
        Stopped = 1 => "STOPPED",
        /// 2: a program is running.
        Playing = 2 => "PLAYING",
        /// 3: the program is pausing.
        Pausing = 3 => "PAUSING",
        /// 4: the program is paused (also after a protective stop).
        Paused = 4 => "PAUSED",
        /// 5: the program is resuming.
        Resuming = 5 => "RESUMING",
    }

    /// One joint's mode: an element of the `joint_mode` output, read as `[JointMode; 6]`
    /// (`VECTOR6INT32`).
    pub enum JointMode: i32 {
        /// 236: shutting down.
        ShuttingDown = 236 => "JOINT_SHUTTING_DOWN_MODE",
        /// 237: part D calibration.
        PartDCalibration = 237 => "JOINT_PART_D_CALIBRATION_MODE",
        /// 238: backdrive.
        Backdrive = 238 => "JOINT_BACKDRIVE_MODE",
        /// 239: powered off.
        PowerOff = 239 => "JOINT_POWER_OFF_MODE",
        /// 240: ready for power off.
        ReadyForPowerOff = 240 => "JOINT_READY_FOR_POWER_OFF_MODE",
        /// 245: not responding.
        NotResponding = 245 => "JOINT_NOT_RESPONDING_MODE",
        /// 246: motor initialisation.
        MotorInitialisation = 246 => "JOINT_MOTOR_INITIALISATION_MODE",
        /// 247: booting.
        Booting = 247 => "JOINT_BOOTING_MODE",
        /// 248: part D calibration error.
        PartDCalibrationError = 248 => "JOINT_PART_D_CALIBRATION_ERROR_MODE",
        /// 249: bootloader.
        Bootloader = 249 => "JOINT_BOOTLOADER_MODE",
        /// 250: calibration.
        Calibration = 250 => "JOINT_CALIBRATION_MODE",
        /// 251: a limit was violated (formerly security stopped).
        Violation = 251 => "JOINT_VIOLATION_MODE",
        /// 252: fault.
        Fault = 252 => "JOINT_FAULT_MODE",
        /// 253: running.
        Running = 253 => "JOINT_RUNNING_MODE",
        /// 255: idle.
        Idle = 255 => "JOINT_IDLE_MODE",
    }

    /// The tool's mode: the `tool_mode` output (`UINT32`).
    pub enum ToolMode: u32 {
        /// 249: bootloader.
        Bootloader = 249 => "TOOL_BOOTLOADER_MODE",
        /// 253: running.
        Running = 253 => "TOOL_RUNNING_MODE",
        /// 255: idle.
        Idle = 255 => "TOOL_IDLE_MODE",
    }
}

impl TypedValue for RobotMode {
    type Wire = wire::INT32;
    #[inline]
    fn from_raw(raw: i32) -> Self {
        RobotMode::from_code(raw)
    }
    #[inline]
    fn to_raw(&self) -> i32 {
        self.code()
    }
}

impl TypedValue for SafetyMode {
    type Wire = wire::INT32;
    #[inline]
    fn from_raw(raw: i32) -> Self {
        SafetyMode::from_code(raw)
    }
    #[inline]
    fn to_raw(&self) -> i32 {
        self.code()
    }
}

impl TypedValue for SafetyStatus {
    type Wire = wire::INT32;
    #[inline]
    fn from_raw(raw: i32) -> Self {
        SafetyStatus::from_code(raw)
    }
    #[inline]
    fn to_raw(&self) -> i32 {
        self.code()
    }
}

impl TypedValue for RuntimeState {
    type Wire = wire::UINT32;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        RuntimeState::from_code(raw)
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        self.code()
    }
}

impl TypedValue for [JointMode; 6] {
    type Wire = wire::VECTOR6INT32;
    #[inline]
    fn from_raw(raw: [i32; 6]) -> Self {
        raw.map(JointMode::from_code)
    }
    #[inline]
    fn to_raw(&self) -> [i32; 6] {
        self.map(JointMode::code)
    }
}

impl TypedValue for ToolMode {
    type Wire = wire::UINT32;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        ToolMode::from_code(raw)
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        self.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{IsWire, field};

    #[test]
    fn codes_round_trip_and_unknown_codes_are_kept() {
        for &m in RobotMode::KNOWN {
            assert_eq!(RobotMode::from_code(m.code()), m);
        }
        assert_eq!(RobotMode::from_code(-1), RobotMode::NoController);
        assert_eq!(RobotMode::from_code(6), RobotMode::Backdrive);
        assert_eq!(RobotMode::from_code(8), RobotMode::UpdatingFirmware);
        assert_eq!(RobotMode::from_code(9), RobotMode::Unknown(9));
        assert_eq!(RobotMode::Unknown(9).code(), 9);
        assert_eq!(RobotMode::from_code(i32::MIN), RobotMode::Unknown(i32::MIN));
        assert_eq!(SafetyMode::from_code(10), SafetyMode::ValidateJointId);
        assert_eq!(SafetyMode::from_code(11), SafetyMode::UndefinedSafetyMode);
        assert_eq!(SafetyMode::from_code(0), SafetyMode::Unknown(0));
        assert_eq!(SafetyStatus::from_code(13).code(), 13);
        assert_eq!(RuntimeState::from_code(5), RuntimeState::Resuming);
        assert_eq!(
            RuntimeState::from_code(u32::MAX),
            RuntimeState::Unknown(u32::MAX)
        );
        assert_eq!(JointMode::from_code(253), JointMode::Running);
        assert_eq!(JointMode::from_code(254), JointMode::Unknown(254));
        assert_eq!(ToolMode::from_code(255), ToolMode::Idle);
        assert_eq!(RobotMode::Running.to_string(), "ROBOT_MODE_RUNNING");
        assert_eq!(RobotMode::Unknown(42).to_string(), "UNKNOWN(42)");
        for code in -300..300 {
            assert_eq!(JointMode::from_code(code).code(), code);
            assert_eq!(SafetyStatus::from_code(code).code(), code);
        }
    }

    #[test]
    fn known_tables_are_complete_and_sorted() {
        assert_eq!(RobotMode::KNOWN.len(), 10);
        assert_eq!(SafetyMode::KNOWN.len(), 13);
        assert_eq!(SafetyStatus::KNOWN.len(), 13);
        assert_eq!(RuntimeState::KNOWN.len(), 6);
        assert_eq!(JointMode::KNOWN.first().map(|m| m.code()), Some(236));
        assert_eq!(JointMode::KNOWN.last().map(|m| m.code()), Some(255));
        assert!(
            JointMode::KNOWN
                .windows(2)
                .all(|w| w[0].code() < w[1].code())
        );
    }

    #[test]
    fn fields_with_a_typed_value_have_its_names() {
        assert_eq!(code_names("robot_mode"), Some(RobotMode::NAMES));
        assert_eq!(code_names("safety_status").map(<[_]>::len), Some(13));
        assert_eq!(
            code_names("runtime_state").map(|n| n[2]),
            Some((2, "PLAYING"))
        );
        assert_eq!(
            code_names("joint_mode").map(|n| n[0]),
            Some((236, "JOINT_SHUTTING_DOWN_MODE"))
        );
        assert_eq!(
            code_names("robot_mode").map(|n| n[0]),
            Some((-1, "ROBOT_MODE_NO_CONTROLLER"))
        );
        assert_eq!(code_names("actual_q"), None);
        assert_eq!(code_names("ROBOT_MODE"), None);
    }

    #[test]
    fn joint_modes_decode_per_joint() {
        let modes = <[JointMode; 6] as IsWire<wire::VECTOR6INT32, field::joint_mode>>::from_wire([
            253, 253, 255, 7, 239, 236,
        ]);
        assert_eq!(modes[0], JointMode::Running);
        assert_eq!(modes[3], JointMode::Unknown(7));
        assert_eq!(
            IsWire::<wire::VECTOR6INT32, field::joint_mode>::to_wire(&modes),
            [253, 253, 255, 7, 239, 236]
        );
    }
}
