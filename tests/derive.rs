//! What the derive generates, at run time: names and layout, decode, the view, encode,
//! length errors; and the same under `#![no_implicit_prelude]` with the prelude shadowed.

use rtde_core::fields::{ControllerVersion, Direction, WireType};
use rtde_core::{
    DigitalBits, FromPayload, InputRecipe, JointMode, OutputRecipe, PayloadError, Pose, Recipe,
    RecipeView, RobotMode, RobotStatusBits, RtdeRecipe, SafetyStatus, StaticRecipe, ToPayload,
};

#[derive(Debug, Clone, PartialEq, RtdeRecipe)]
#[rtde(min_controller = "5.4", min_controller = "3.10")]
struct Telemetry {
    timestamp: f64,
    actual_tcp_pose: Pose,
    robot_mode: RobotMode,
    safety_status: SafetyStatus,
    joint_mode: [JointMode; 6],
    #[rtde(name = "actual_digital_input_bits")]
    inputs: DigitalBits,
    robot_status_bits: RobotStatusBits,
}

#[derive(Debug, Clone, PartialEq, RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    input_int_register_24: i32,
    input_bit_register_64: bool,
}

fn telemetry_payload() -> Vec<u8> {
    let mut p = Vec::new();
    p.extend(1.5f64.to_be_bytes());
    for x in [0.1, 0.2, 0.3, 0.0, 0.0, 1.0f64] {
        p.extend(x.to_be_bytes());
    }
    p.extend(7i32.to_be_bytes());
    p.extend(3i32.to_be_bytes());
    for m in [253, 253, 253, 253, 255, 9999i32] {
        p.extend(m.to_be_bytes());
    }
    p.extend(0b101u64.to_be_bytes());
    p.extend(0b11u32.to_be_bytes());
    p
}

#[test]
fn spec_names_types_and_sizes() {
    assert_eq!(Telemetry::SPEC.direction(), Direction::Output);
    assert_eq!(
        Telemetry::SPEC.names(),
        [
            "timestamp",
            "actual_TCP_pose",
            "robot_mode",
            "safety_status",
            "joint_mode",
            "actual_digital_input_bits",
            "robot_status_bits"
        ]
    );
    assert_eq!(Telemetry::SPEC.types()[1], WireType::Vector6d);
    assert_eq!(Telemetry::PAYLOAD_SIZE, 8 + 48 + 4 + 4 + 24 + 8 + 4);
    assert_eq!(Telemetry::SPEC.payload_size(), Telemetry::PAYLOAD_SIZE);
    assert_eq!(Command::SPEC.direction(), Direction::Input);
    assert_eq!(Command::PAYLOAD_SIZE, 7);
    // safety_status is the newest field: 3.10 on CB3, 5.4 on e-Series.
    assert_eq!(
        Telemetry::MIN_CONTROLLER,
        [
            Some(ControllerVersion::new(3, 10, 0, 0)),
            Some(ControllerVersion::new(5, 4, 0, 0)),
            Some(ControllerVersion::new(10, 7, 0, 0)),
        ]
    );
    let t = Telemetry::from_payload(&telemetry_payload()).unwrap();
    assert_eq!(t.spec(), Telemetry::SPEC);
}

#[test]
fn decodes_typed_values_and_unknown_codes() {
    let payload = telemetry_payload();
    let t = Telemetry::from_payload(&payload).unwrap();
    assert_eq!(t.timestamp, 1.5);
    assert_eq!(t.actual_tcp_pose, Pose::new(0.1, 0.2, 0.3, 0.0, 0.0, 1.0));
    assert_eq!(t.robot_mode, RobotMode::Running);
    assert_eq!(t.safety_status, SafetyStatus::ProtectiveStop);
    assert_eq!(t.joint_mode[4], JointMode::Idle);
    assert_eq!(t.joint_mode[5], JointMode::Unknown(9999));
    assert!(t.inputs.standard(0) && t.inputs.standard(2) && !t.inputs.standard(1));
    assert!(t.robot_status_bits.is_power_on() && t.robot_status_bits.is_program_running());

    // Every field starts different (NaN, all bits set, unknown codes), so a field the
    // decoder skipped would show.
    let mut again = Telemetry::from_payload(&vec![0xff; payload.len()]).unwrap();
    again.decode_into(&payload).unwrap();
    assert_eq!(again, t);
    assert_eq!(t.to_payload().as_slice(), payload.as_slice());
}

#[test]
fn view_reads_each_field_on_demand() {
    let payload = telemetry_payload();
    let t = Telemetry::from_payload(&payload).unwrap();
    let v = Telemetry::view(&payload).unwrap();
    assert_eq!(v.timestamp(), t.timestamp);
    assert_eq!(v.actual_tcp_pose(), t.actual_tcp_pose);
    assert_eq!(v.robot_mode(), t.robot_mode);
    assert_eq!(v.safety_status(), t.safety_status);
    assert_eq!(v.joint_mode(), t.joint_mode);
    assert_eq!(v.inputs(), t.inputs);
    assert_eq!(v.robot_status_bits(), t.robot_status_bits);
    assert_eq!(v.as_ref(), payload.as_slice());
    assert_eq!(format!("{v:?}"), "TelemetryView { .. }");
    let copy = v;
    assert_eq!(copy.timestamp(), v.timestamp());
}

#[test]
fn wrong_lengths_are_errors_and_leave_the_recipe_unchanged() {
    let payload = telemetry_payload();
    let t = Telemetry::from_payload(&payload).unwrap();
    let expected = PayloadError::WrongLength {
        expected: 100,
        found: 99,
    };
    assert_eq!(
        Telemetry::from_payload(&payload[..99]),
        Err(expected.clone())
    );
    assert_eq!(Telemetry::view(&payload[..99]).unwrap_err(), expected);
    let mut longer = payload.clone();
    longer.push(0);
    assert!(Telemetry::from_payload(&longer).is_err());
    let mut same = t.clone();
    assert!(same.decode_into(&payload[1..]).is_err());
    assert_eq!(same, t);
    assert!(Telemetry::from_payload(&[]).is_err());
}

#[test]
fn input_recipes_encode_into_fixed_arrays() {
    let c = Command {
        standard_digital_output_mask: 0b1000_0001,
        standard_digital_output: 0b1000_0000,
        input_int_register_24: -2,
        input_bit_register_64: true,
    };
    let bytes: [u8; 7] = c.to_payload();
    assert_eq!(bytes, [0x81, 0x80, 0xff, 0xff, 0xff, 0xfe, 1]);
    let mut buf = [0xaa; 9];
    assert_eq!(c.encode_into(&mut buf), Ok(7));
    assert_eq!(buf, [0x81, 0x80, 0xff, 0xff, 0xff, 0xfe, 1, 0xaa, 0xaa]);
    let mut short = [0u8; 6];
    assert_eq!(
        c.encode_into(&mut short),
        Err(PayloadError::BufferTooSmall {
            needed: 7,
            available: 6
        })
    );
    assert_eq!(short, [0; 6]);
    // A controller (or the simulator) decodes input recipes.
    assert_eq!(Command::from_payload(&bytes).unwrap(), c);
    assert!(Command::view(&bytes).unwrap().input_bit_register_64());
    // Any non-zero byte is true, as the controller reads BOOL.
    let mut two = bytes;
    two[6] = 2;
    assert!(Command::from_payload(&two).unwrap().input_bit_register_64);
}

/// The derive inside a module without the prelude, next to items shadowing it.
mod no_prelude {
    #![no_implicit_prelude]
    #![allow(dead_code)]

    struct Result;
    struct Ok;
    struct Some;
    struct Option;

    #[derive(::rtde_core::RtdeRecipe)]
    pub(super) struct Hygienic {
        pub(super) timestamp: f64,
        pub(super) robot_mode: ::rtde_core::RobotMode,
    }
}

#[test]
fn no_implicit_prelude() {
    let mut p = [0u8; 12];
    p[8..].copy_from_slice(&5i32.to_be_bytes());
    let h = no_prelude::Hygienic::from_payload(&p).unwrap();
    assert_eq!((h.timestamp, h.robot_mode), (0.0, RobotMode::Idle));
    let v = no_prelude::Hygienic::view(&p).unwrap();
    assert_eq!(v.robot_mode(), RobotMode::Idle);
}

/// A derived recipe is what the client takes: its spec to set up, the type to receive, the
/// recipe to send, the view over a received payload. Compiled, not run (the end-to-end test
/// against the simulator runs it).
#[allow(dead_code)]
fn with_a_client(client: &mut rtde_core::Client) -> Result<(), rtde_core::Error> {
    client.setup_outputs(Telemetry::SPEC, 125.0)?;
    let input = client.setup_inputs(Command::SPEC)?;
    client.start()?;
    let t: Telemetry = client.recv_as()?;
    let mut again = t.clone();
    client.recv_into(&mut again)?;
    let mode = Telemetry::view(client.recv()?)
        .map_err(rtde_core::Error::Payload)?
        .robot_mode();
    let command = Command {
        standard_digital_output_mask: 1,
        standard_digital_output: u8::from(mode == RobotMode::Running),
        input_int_register_24: 0,
        input_bit_register_64: false,
    };
    client.send(&input, &command)
}
