// Generated code names nothing from the prelude and survives user items that shadow it.
#![no_implicit_prelude]
#![deny(warnings)]

#[allow(dead_code)]
struct Result;
#[allow(dead_code)]
struct Ok;
#[allow(dead_code)]
struct Err;
#[allow(dead_code)]
struct Option;
#[allow(dead_code)]
struct Some;
#[allow(dead_code)]
struct None;
#[allow(dead_code)]
struct Clone;
#[allow(dead_code)]
struct Copy;
#[allow(dead_code)]
struct AsRef;
// Constants turn bindings of the same name into patterns: generated locals avoid common names.
#[allow(dead_code, non_upper_case_globals)]
const payload: u8 = 0;
#[allow(dead_code, non_upper_case_globals)]
const out: u8 = 0;
#[allow(dead_code, non_upper_case_globals)]
const f: u8 = 0;
#[allow(dead_code, non_upper_case_globals)]
const bytes: u8 = 0;
#[allow(dead_code)]
mod rtde {}
#[allow(dead_code)]
mod __private {}

#[derive(::rtde_core::RtdeRecipe)]
#[rtde(min_controller = "5.4", min_controller = "3.15")]
struct Telemetry {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_tcp_pose: ::rtde_core::Pose,
    robot_mode: ::rtde_core::RobotMode,
    joint_mode: [::rtde_core::JointMode; 6],
    #[rtde(name = "actual_digital_input_bits")]
    inputs: ::rtde_core::DigitalBits,
}

#[derive(::rtde_core::RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    #[rtde(allow_fieldbus_registers)]
    input_int_register_0: i32,
}

fn main() {
    use ::rtde_core::{FromPayload, InputRecipe, RecipeView, ToPayload};
    let data = [0u8; 8 + 48 + 48 + 4 + 24 + 8];
    let t = <Telemetry as FromPayload>::from_payload(&data).unwrap();
    let v = <Telemetry as RecipeView>::view(&data).unwrap();
    let _ = (t.timestamp, t.actual_q, t.actual_tcp_pose, t.robot_mode, t.joint_mode, t.inputs);
    let _ = (v.timestamp(), v.robot_mode());
    let c = Command { standard_digital_output_mask: 1, standard_digital_output: 1, input_int_register_0: 3 };
    let mut buf = [0u8; 6];
    let _ = (c.encode_into(&mut buf).unwrap(), c.to_payload());
}
