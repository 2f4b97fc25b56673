//! Composition: a recipe that flattens another is laid out, set up, decoded, encoded and
//! viewed exactly as the flat recipe listing the same fields in the same order.

use std::time::Duration;

use rtde_core::{
    Client, ConnectOptions, DigitalBits, FromPayload, InputRecipe, OutputRecipe, Pose, RecipeView,
    RobotMode, RtdeRecipe, StaticRecipe, ToPayload,
};
use rtde_sim::Sim;

#[derive(RtdeRecipe, Debug, PartialEq, Clone, Copy)]
struct Header {
    timestamp: f64,
    robot_mode: RobotMode,
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(min_controller = "5.4")]
struct Telemetry {
    actual_q: [f64; 6],
    #[rtde(flatten)]
    header: Header,
    actual_tcp_pose: Pose,
}

/// The same fields, written out: the layout `Telemetry` must have.
#[derive(RtdeRecipe, Debug, PartialEq)]
struct FlatTelemetry {
    actual_q: [f64; 6],
    timestamp: f64,
    robot_mode: RobotMode,
    actual_tcp_pose: Pose,
}

#[derive(RtdeRecipe, Debug, PartialEq, Clone, Copy)]
struct Outputs {
    actual_digital_output_bits: DigitalBits,
    input_int_register_24: i32,
}

/// Two parts and nothing of its own.
#[derive(RtdeRecipe, Debug, PartialEq)]
struct Both {
    #[rtde(flatten)]
    header: Header,
    #[rtde(flatten)]
    outputs: Outputs,
}

#[derive(RtdeRecipe, Debug, PartialEq, Clone, Copy)]
#[rtde(input)]
struct Registers {
    input_int_register_24: i32,
    #[rtde(registers = "input_double_register_25..=26")]
    doubles: [f64; 2],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    #[rtde(flatten)]
    registers: Registers,
}

/// Distinct bytes in every position, but `robot_mode` (bytes 56..60), which holds a valid
/// mode (7, running) so that decoding it is checked too.
fn telemetry_payload() -> Vec<u8> {
    let mut payload: Vec<u8> = (0..FlatTelemetry::PAYLOAD_SIZE)
        .map(|i| u8::try_from(i * 7 % 251).unwrap())
        .collect();
    payload[56..60].copy_from_slice(&7i32.to_be_bytes());
    payload
}

#[test]
fn a_flattened_recipe_has_the_flat_recipes_spec_and_layout() {
    assert_eq!(Telemetry::SPEC, FlatTelemetry::SPEC);
    assert_eq!(Telemetry::PAYLOAD_SIZE, FlatTelemetry::PAYLOAD_SIZE);
    assert_eq!(Telemetry::PAYLOAD_SIZE, 48 + 8 + 4 + 48);
    assert_eq!(
        Both::SPEC.names(),
        [
            "timestamp",
            "robot_mode",
            "actual_digital_output_bits",
            "input_int_register_24"
        ]
    );
    assert_eq!(
        Command::SPEC.names(),
        [
            "standard_digital_output_mask",
            "standard_digital_output",
            "input_int_register_24",
            "input_double_register_25",
            "input_double_register_26"
        ]
    );
    // The strictest part decides: Header and FlatTelemetry's fields are on every generation.
    assert_eq!(Telemetry::MIN_CONTROLLER, FlatTelemetry::MIN_CONTROLLER);
}

#[test]
fn a_flattened_recipe_decodes_encodes_and_views_as_the_flat_one_byte_for_byte() {
    let payload = telemetry_payload();
    let flat = FlatTelemetry::from_payload(&payload).unwrap();
    let nested = Telemetry::from_payload(&payload).unwrap();
    assert_eq!(nested.actual_q, flat.actual_q);
    assert_eq!(nested.header.timestamp.to_bits(), flat.timestamp.to_bits());
    assert_eq!(nested.header.robot_mode, flat.robot_mode);
    assert_eq!(nested.header.robot_mode, RobotMode::Running);
    assert_eq!(nested.actual_tcp_pose, flat.actual_tcp_pose);
    assert_eq!(nested.to_payload(), flat.to_payload());
    assert_eq!(nested.to_payload().as_slice(), payload.as_slice());

    let mut into = Telemetry::from_payload(&[0; 108]).unwrap();
    into.decode_into(&payload).unwrap();
    assert_eq!(into, nested);
    assert!(Telemetry::from_payload(&payload[1..]).is_err());

    let view = Telemetry::view(&payload).unwrap();
    assert_eq!(view.actual_q(), flat.actual_q);
    assert_eq!(
        view.header().timestamp().to_bits(),
        flat.timestamp.to_bits()
    );
    assert_eq!(view.header().robot_mode(), flat.robot_mode);
    assert_eq!(view.header().as_ref(), &payload[48..60]);
    assert_eq!(view.actual_tcp_pose(), flat.actual_tcp_pose);
}

#[test]
fn a_flattened_input_recipe_encodes_as_the_flat_one() {
    let command = Command {
        standard_digital_output_mask: 0b1001,
        standard_digital_output: 0xff,
        registers: Registers {
            input_int_register_24: -7,
            doubles: [0.25, -1.5],
        },
    };
    let bytes = command.to_payload();
    let mut expected = vec![0b1001, 0xff];
    expected.extend((-7i32).to_be_bytes());
    expected.extend(0.25f64.to_be_bytes());
    expected.extend((-1.5f64).to_be_bytes());
    assert_eq!(bytes.as_slice(), expected.as_slice());
    let mut out = [0u8; 64];
    assert_eq!(command.encode_into(&mut out).unwrap(), expected.len());
    assert_eq!(Command::from_payload(&bytes).unwrap(), command);
}

#[test]
fn flattened_recipes_read_and_write_through_the_simulator() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = Client::connect(
        sim.addr(),
        ConnectOptions::new().read_timeout(Some(Duration::from_secs(5))),
    )
    .unwrap();
    client.setup_outputs(Both::SPEC, 125.0).unwrap();
    let inputs = client.setup_inputs(Command::SPEC).unwrap();
    client.start().unwrap();
    let first: Both = client.recv_as().unwrap();
    assert_eq!(first.header.robot_mode, RobotMode::Running);
    // Deterministic mode: the arm follows the documented motion law, timed by `timestamp`.
    let second: Both = client.recv_as().unwrap();
    assert!((second.header.timestamp - first.header.timestamp - 0.008).abs() < 1e-9);

    let command = Command {
        standard_digital_output_mask: 0b0000_1001,
        standard_digital_output: 0b1111_1111,
        registers: Registers {
            input_int_register_24: -7,
            doubles: [0.25, 0.5],
        },
    };
    client.send(&inputs, &command).unwrap();
    let mut seen = None;
    for _ in 0..500 {
        let payload = client.recv().unwrap();
        let view = Both::view(payload).unwrap();
        let decoded = Both::from_payload(payload).unwrap();
        assert_eq!(
            view.outputs().input_int_register_24(),
            decoded.outputs.input_int_register_24
        );
        if decoded.outputs.input_int_register_24 == -7 {
            seen = Some(decoded);
            break;
        }
    }
    let s = seen.expect("the input took effect within 500 packages");
    assert_eq!(
        s.outputs.actual_digital_output_bits.bits() & 0xff,
        0b0000_1001
    );
    client.close().unwrap();
}
