//! Derived recipes decode any payload without panicking: `from_payload` and the view accept
//! exactly the recipe's size and agree on every field; an input recipe re-encodes what it
//! decoded to the same bytes (a BOOL re-encodes as 0 or 1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_core::{
    DigitalBits, FromPayload, Pose, RecipeView, RobotMode, RtdeRecipe, SafetyStatus, StaticRecipe,
    ToPayload,
};

/// The reference recipe of the benchmarks, with typed values.
#[derive(RtdeRecipe, Debug, Clone, Copy, PartialEq)]
struct Telemetry {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_qd: [f64; 6],
    actual_tcp_pose: Pose,
    actual_tcp_speed: [f64; 6],
    actual_tcp_force: [f64; 6],
    actual_digital_input_bits: DigitalBits,
    actual_digital_output_bits: u64,
    robot_mode: RobotMode,
    safety_status: SafetyStatus,
}

#[derive(RtdeRecipe, Debug, Clone, Copy, PartialEq)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    input_bit_register_64: bool,
    input_int_register_24: i32,
    input_double_register_24: f64,
    external_force_torque: [f64; 6],
}

fuzz_target!(|data: &[u8]| {
    let decoded = Telemetry::from_payload(data);
    let view = Telemetry::view(data);
    assert_eq!(decoded.is_ok(), data.len() == Telemetry::PAYLOAD_SIZE);
    assert_eq!(view.is_ok(), decoded.is_ok());
    if let (Ok(t), Ok(v)) = (decoded, view) {
        // Bit patterns, not floats: a NaN is not equal to itself.
        assert_eq!(v.timestamp().to_bits(), t.timestamp.to_bits());
        assert_eq!(v.actual_q().map(f64::to_bits), t.actual_q.map(f64::to_bits));
        assert_eq!(
            v.actual_tcp_pose().to_array().map(f64::to_bits),
            t.actual_tcp_pose.to_array().map(f64::to_bits)
        );
        assert_eq!(v.actual_digital_input_bits(), t.actual_digital_input_bits);
        assert_eq!(v.robot_mode(), t.robot_mode);
        assert_eq!(v.safety_status(), t.safety_status);
    }

    if let Ok(c) = Command::from_payload(data) {
        let again = c.to_payload();
        let mut expected = data.to_vec();
        expected[2] = u8::from(expected[2] != 0); // input_bit_register_64
        assert_eq!(again.as_ref(), &expected[..]);
    } else {
        assert_ne!(data.len(), Command::PAYLOAD_SIZE);
    }
});
