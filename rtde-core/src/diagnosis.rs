//! Educated guesses at the cause of a refusal, for error messages that say what to look at.
//!
//! A controller answers `IN_USE` for an input field another writer holds, and says nothing
//! about who. Who usually holds which field is common knowledge among people who run UR
//! robots, and this module writes it down once: [`InUseOwner::likely_for`] maps a field to
//! the kind of writer that typically holds it, and [`SetupRefused`](crate::SetupRefused)'s
//! message and [`SetupRefused::in_use_owners`](crate::SetupRefused::in_use_owners) use it.
//!
//! ```
//! use rtde_core::diagnosis::InUseOwner;
//!
//! assert_eq!(InUseOwner::likely_for("tool_digital_output_mask"), InUseOwner::GripperUrcap);
//! assert_eq!(InUseOwner::likely_for("speed_slider_fraction"), InUseOwner::RosDriver);
//! assert_eq!(InUseOwner::likely_for("input_int_register_3"), InUseOwner::FieldbusAdapter);
//! assert_eq!(InUseOwner::likely_for("input_int_register_30"), InUseOwner::AnotherClient);
//! ```

use std::fmt;
use std::io;

use rtde_fields::Direction;

/// The kind of writer that most likely holds an input field a controller answered `IN_USE`
/// for. A guess from the field's name, not something the controller said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum InUseOwner {
    /// A register in the range reserved for fieldbus adapters (integer and double registers
    /// 0..23, bit registers 0..63): an enabled EtherNet/IP, PROFINET or Modbus adapter.
    FieldbusAdapter,
    /// `tool_digital_output*`: a gripper URCap (OnRobot's, among others) drives the tool
    /// outputs through RTDE.
    GripperUrcap,
    /// `speed_slider*` and `standard_digital_output*`: the default input recipe of the
    /// Universal Robots ROS driver (ROS 1 and ROS 2).
    RosDriver,
    /// `external_force_torque`: a force/torque sensor URCap feeding its readings.
    ForceTorqueUrcap,
    /// Anything else: another RTDE client, or a session of this same program that has not
    /// closed yet (a crashed or killed run whose connection the controller still holds).
    AnotherClient,
}

impl InUseOwner {
    /// The likely holder of the input field `name`.
    #[must_use]
    pub fn likely_for(name: &str) -> InUseOwner {
        let fieldbus = rtde_fields::lookup(Direction::Input, name)
            .and_then(rtde_fields::Field::register)
            .is_some_and(|r| r.is_reserved_for_fieldbus());
        if fieldbus {
            InUseOwner::FieldbusAdapter
        } else if name.starts_with("tool_digital_output") {
            InUseOwner::GripperUrcap
        } else if name.starts_with("speed_slider") || name.starts_with("standard_digital_output") {
            InUseOwner::RosDriver
        } else if name == "external_force_torque" {
            InUseOwner::ForceTorqueUrcap
        } else {
            InUseOwner::AnotherClient
        }
    }

    /// Every owner class, in the order messages list them.
    pub const ALL: [InUseOwner; 5] = [
        InUseOwner::FieldbusAdapter,
        InUseOwner::GripperUrcap,
        InUseOwner::RosDriver,
        InUseOwner::ForceTorqueUrcap,
        InUseOwner::AnotherClient,
    ];

    /// What to look at, in a sentence fragment that follows "probably held by".
    #[must_use]
    pub fn hint(self) -> &'static str {
        match self {
            InUseOwner::FieldbusAdapter => {
                "an enabled EtherNet/IP, PROFINET or Modbus adapter (these registers are in the \
                 range reserved for fieldbus adapters; registers 24..47 (int, double) and \
                 64..127 (bit) are the ranges meant for external clients)"
            }
            InUseOwner::GripperUrcap => {
                "a gripper URCap such as OnRobot's, which drives the tool outputs over RTDE; \
                 disable it in the installation, or write the tool outputs through it"
            }
            InUseOwner::RosDriver => {
                "the Universal Robots ROS driver, whose default input recipe writes the speed \
                 slider and the standard digital outputs; stop it or give it another recipe"
            }
            InUseOwner::ForceTorqueUrcap => {
                "a force/torque sensor URCap feeding `external_force_torque`; disable it in the \
                 installation"
            }
            InUseOwner::AnotherClient => {
                "another RTDE client, or an earlier session of this program that has not closed \
                 (the controller frees its inputs when that connection closes)"
            }
        }
    }
}

impl fmt::Display for InUseOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InUseOwner::FieldbusAdapter => "a fieldbus adapter",
            InUseOwner::GripperUrcap => "a gripper URCap",
            InUseOwner::RosDriver => "the UR ROS driver",
            InUseOwner::ForceTorqueUrcap => "a force/torque sensor URCap",
            InUseOwner::AnotherClient => "another RTDE client",
        })
    }
}

/// What a failed connection attempt suggests, beyond the socket's own error: a refused
/// connection to a controller that is on usually means RTDE is switched off.
pub(crate) fn connect_hint(source: &io::Error) -> &'static str {
    match source.kind() {
        io::ErrorKind::ConnectionRefused => {
            "; the controller refused the connection: if it is on, RTDE may be disabled in the \
             robot's security settings (PolyScope X and recent e-Series software can turn the \
             RTDE service off: Settings > Security > Services)"
        }
        _ => "; check the address and port, and that the controller is on",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_owner_class_has_its_fields() {
        let cases = [
            ("input_bit_registers0_to_31", InUseOwner::FieldbusAdapter),
            ("input_double_register_0", InUseOwner::FieldbusAdapter),
            ("tool_digital_output", InUseOwner::GripperUrcap),
            ("tool_digital_output_mask", InUseOwner::GripperUrcap),
            ("speed_slider_mask", InUseOwner::RosDriver),
            ("standard_digital_output_mask", InUseOwner::RosDriver),
            ("external_force_torque", InUseOwner::ForceTorqueUrcap),
            ("input_bit_register_64", InUseOwner::AnotherClient),
            ("configurable_digital_output", InUseOwner::AnotherClient),
        ];
        for (name, owner) in cases {
            assert_eq!(InUseOwner::likely_for(name), owner, "{name}");
        }
    }

    #[test]
    fn a_refused_connection_suggests_rtde_is_disabled() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert!(connect_hint(&refused).contains("security settings"));
        let timeout = io::Error::from(io::ErrorKind::TimedOut);
        assert!(!connect_hint(&timeout).contains("security"));
    }
}
