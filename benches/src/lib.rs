//! What the benchmarks share: the reference recipe (derived, typed and dynamic), the
//! hand-written decoder and encoder that are the floor, streams of data packages, and an
//! interleaved timer that measures ratios on a noisy machine.
//!
//! The reference recipe is the one the performance issue names: ten output fields, 272
//! bytes of payload, 276 bytes per data package on the wire.
//!
//! | field | wire type | offset |
//! | --- | --- | --- |
//! | `timestamp` | `DOUBLE` | 0 |
//! | `actual_q`, `actual_qd`, `actual_TCP_pose`, `actual_TCP_speed`, `actual_TCP_force` | `VECTOR6D` | 8, 56, 104, 152, 200 |
//! | `actual_digital_input_bits`, `actual_digital_output_bits` | `UINT64` | 248, 256 |
//! | `robot_mode`, `safety_status` | `INT32` | 264, 268 |

#![forbid(unsafe_code)]

pub mod asm;
pub mod floor;
pub mod interleave;
pub mod live;
pub mod process_cpu;
pub mod report;
pub mod stream;

use rtde_core::{DigitalBits, Pose, RobotMode, RtdeRecipe, SafetyStatus};

/// The reference recipe with plain Rust types: what the floor decodes into as well.
#[derive(RtdeRecipe, Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    /// `timestamp`.
    pub timestamp: f64,
    /// `actual_q`.
    pub actual_q: [f64; 6],
    /// `actual_qd`.
    pub actual_qd: [f64; 6],
    /// `actual_TCP_pose`.
    pub actual_tcp_pose: [f64; 6],
    /// `actual_TCP_speed`.
    pub actual_tcp_speed: [f64; 6],
    /// `actual_TCP_force`.
    pub actual_tcp_force: [f64; 6],
    /// `actual_digital_input_bits`.
    pub actual_digital_input_bits: u64,
    /// `actual_digital_output_bits`.
    pub actual_digital_output_bits: u64,
    /// `robot_mode`.
    pub robot_mode: i32,
    /// `safety_status`.
    pub safety_status: i32,
}

/// The reference recipe with the typed values a user would pick.
#[derive(RtdeRecipe, Clone, Copy, Debug, PartialEq)]
pub struct ReferenceTyped {
    /// `timestamp`.
    pub timestamp: f64,
    /// `actual_q`.
    pub actual_q: [f64; 6],
    /// `actual_qd`.
    pub actual_qd: [f64; 6],
    /// `actual_TCP_pose`.
    pub actual_tcp_pose: Pose,
    /// `actual_TCP_speed`.
    pub actual_tcp_speed: [f64; 6],
    /// `actual_TCP_force`.
    pub actual_tcp_force: [f64; 6],
    /// `actual_digital_input_bits`.
    pub actual_digital_input_bits: DigitalBits,
    /// `actual_digital_output_bits`.
    pub actual_digital_output_bits: DigitalBits,
    /// `robot_mode`.
    pub robot_mode: RobotMode,
    /// `safety_status`.
    pub safety_status: SafetyStatus,
}

/// The reference recipe's names, in order, for [`rtde_core::DynamicRecipe`] and peers.
pub const REFERENCE_NAMES: [&str; 10] = [
    "timestamp",
    "actual_q",
    "actual_qd",
    "actual_TCP_pose",
    "actual_TCP_speed",
    "actual_TCP_force",
    "actual_digital_input_bits",
    "actual_digital_output_bits",
    "robot_mode",
    "safety_status",
];

/// The reference recipe's payload size.
pub const REFERENCE_PAYLOAD: usize = 272;

/// An input recipe of the kind a servo loop sends: a command, six targets, the speed
/// slider and the digital outputs; ten fields, 66 bytes.
#[derive(RtdeRecipe, Clone, Copy, Debug, PartialEq)]
#[rtde(input)]
pub struct ServoInput {
    /// `input_int_register_24`: a command for the robot program.
    pub input_int_register_24: i32,
    /// `input_double_register_24`.
    pub input_double_register_24: f64,
    /// `input_double_register_25`.
    pub input_double_register_25: f64,
    /// `input_double_register_26`.
    pub input_double_register_26: f64,
    /// `input_double_register_27`.
    pub input_double_register_27: f64,
    /// `input_double_register_28`.
    pub input_double_register_28: f64,
    /// `input_double_register_29`.
    pub input_double_register_29: f64,
    /// `speed_slider_mask`.
    pub speed_slider_mask: u32,
    /// `speed_slider_fraction`.
    pub speed_slider_fraction: f64,
    /// `standard_digital_output_mask`.
    pub standard_digital_output_mask: u8,
    /// `standard_digital_output`.
    pub standard_digital_output: u8,
}

/// The servo input's payload size.
pub const SERVO_PAYLOAD: usize = 4 + 6 * 8 + 4 + 8 + 1 + 1;

/// The waypoint rtde's servo kit ([`rtde_robot::control::ControlLoop`]) sends in the
/// servo benchmarks (`control_loop`, `sim_cpu`): six joint targets in the double input
/// registers its servo program reads.
#[derive(RtdeRecipe, Clone, Copy, Debug, PartialEq)]
#[rtde(input)]
pub struct Waypoint {
    /// The joint targets, rad.
    #[rtde(registers = "input_double_register_24..=29")]
    pub q: [f64; 6],
}

/// Plausible values of a running robot at time `t` seconds: nothing is zero, so that no
/// decoder can be flattered by all-zero bytes.
#[must_use]
pub fn sample(t: f64) -> Reference {
    let six = |base: f64| {
        std::array::from_fn(|i| base + 0.1 * f64::from(u8::try_from(i).unwrap_or(0)) + 0.01 * t)
    };
    Reference {
        timestamp: t,
        actual_q: six(-1.5),
        actual_qd: six(0.05),
        actual_tcp_pose: [0.4, -0.2, 0.3, 0.0, 3.1, 0.0],
        actual_tcp_speed: six(0.001),
        actual_tcp_force: six(2.5),
        actual_digital_input_bits: 0x0001_0000_0000_0081,
        actual_digital_output_bits: 0x0000_0000_0001_0002,
        robot_mode: 7,
        safety_status: 1,
    }
}

/// A servo command with every field set.
#[must_use]
pub fn servo_sample() -> ServoInput {
    ServoInput {
        input_int_register_24: 3,
        input_double_register_24: 0.41,
        input_double_register_25: -0.19,
        input_double_register_26: 0.31,
        input_double_register_27: 0.0,
        input_double_register_28: 3.1,
        input_double_register_29: 0.01,
        speed_slider_mask: 1,
        speed_slider_fraction: 0.75,
        standard_digital_output_mask: 0b11,
        standard_digital_output: 0b01,
    }
}

#[cfg(test)]
mod tests {
    use rtde_core::{
        DynamicRecipe, FromPayload, OutputRecipe, RecipeView, StaticRecipe, ToPayload, Value,
    };

    use super::*;

    #[test]
    fn the_recipes_are_the_reference() {
        assert_eq!(Reference::SPEC.names(), REFERENCE_NAMES);
        assert_eq!(ReferenceTyped::SPEC.names(), REFERENCE_NAMES);
        assert_eq!(Reference::PAYLOAD_SIZE, REFERENCE_PAYLOAD);
        assert_eq!(ServoInput::PAYLOAD_SIZE, SERVO_PAYLOAD);
    }

    /// Every decoder the benchmarks compare reads the same values from the floor's bytes.
    #[test]
    fn every_decoder_agrees_with_the_floor() {
        let expected = sample(12.5);
        let payload = floor::encode(&expected);
        assert_eq!(Reference::from_payload(&payload), Ok(expected));
        assert_eq!(floor::decode(&payload), Some(expected));
        assert_eq!(expected.to_payload(), payload);

        let typed = ReferenceTyped::from_payload(&payload).unwrap();
        assert_eq!(typed.robot_mode, RobotMode::Running);
        assert_eq!(typed.actual_tcp_pose.to_array(), expected.actual_tcp_pose);

        let view = Reference::view(&payload).unwrap();
        assert_eq!(view.timestamp(), 12.5);
        assert_eq!(view.safety_status(), 1);

        let mut dynamic = DynamicRecipe::outputs(REFERENCE_NAMES).unwrap();
        dynamic.decode_into(&payload).unwrap();
        assert_eq!(dynamic.value(0), Some(&Value::Double(12.5)));
        assert_eq!(dynamic.value(8), Some(&Value::Int32(7)));
    }

    #[test]
    fn the_encoders_agree_with_the_floor() {
        let servo = servo_sample();
        assert_eq!(servo.to_payload(), floor::encode_servo(&servo));
    }

    #[test]
    fn the_stream_decodes_frame_by_frame() {
        let frames = stream::Frames::new(4);
        let mut pos = 0;
        for i in 0..4 {
            let (r, used) = stream::parse_and_decode(&frames.bytes()[pos..]).unwrap();
            assert_eq!(r.timestamp, stream::timestamp_of(i));
            pos += used;
        }
        assert_eq!(pos, frames.bytes().len());
    }
}
