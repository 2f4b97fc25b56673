//! End to end: derived output and input recipes over one connection to the simulator, in
//! deterministic mode, where every value is known in advance.

use std::time::Duration;

use rtde_core::{
    Client, ConnectOptions, DigitalBits, FromPayload, Pose, RecipeView, RobotMode, RtdeRecipe,
    StaticRecipe,
};
use rtde_sim::{Arm, Motion, Sim};

#[derive(RtdeRecipe, Debug)]
struct State {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_tcp_pose: Pose,
    robot_mode: RobotMode,
    actual_digital_output_bits: DigitalBits,
    input_int_register_24: i32,
    input_double_register_25: f64,
}

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_digital_output_mask: u8,
    standard_digital_output: u8,
    input_int_register_24: i32,
    input_double_register_25: f64,
}

fn connect(sim: &Sim) -> Client {
    Client::connect(
        sim.addr(),
        ConnectOptions::new().read_timeout(Some(Duration::from_secs(5))),
    )
    .unwrap()
}

#[test]
fn derived_recipes_read_the_motion_law_and_write_inputs_that_take_effect() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = connect(&sim);
    client.setup_outputs(State::SPEC, 125.0).unwrap();
    let inputs = client.setup_inputs(Command::SPEC).unwrap();
    client.start().unwrap();

    // Outputs follow the documented motion law bit for bit: q(t) at t = timestamp.
    let mut previous: Option<f64> = None;
    for _ in 0..50 {
        let s: State = client.recv_as().unwrap();
        assert_eq!(
            s.actual_q,
            Motion::DEFAULT.position(s.timestamp),
            "t = {}",
            s.timestamp
        );
        assert_eq!(
            s.actual_tcp_pose.to_array(),
            Arm::UR5E.tcp_pose(&s.actual_q)
        );
        assert_eq!(s.robot_mode, RobotMode::Running);
        if let Some(p) = previous {
            // 125 Hz on a 500 Hz loop: every 4th tick, 8 ms apart.
            assert!(
                (s.timestamp - p - 0.008).abs() < 1e-9,
                "{p} -> {}",
                s.timestamp
            );
        }
        previous = Some(s.timestamp);
    }
    assert_eq!(client.stats().skipped, 0);

    // Inputs written through the derived input recipe read back through the output recipe.
    let command = Command {
        standard_digital_output_mask: 0b0000_1001,
        standard_digital_output: 0b1111_1111,
        input_int_register_24: -7,
        input_double_register_25: 0.25,
    };
    client.send(&inputs, &command).unwrap();
    let mut seen = None;
    for _ in 0..500 {
        let payload = client.recv().unwrap();
        // The zero-copy view agrees with the decoded struct on every package.
        let view = State::view(payload).unwrap();
        let decoded = State::from_payload(payload).unwrap();
        assert_eq!(view.timestamp(), decoded.timestamp);
        assert_eq!(view.actual_q(), decoded.actual_q);
        if decoded.input_int_register_24 == -7 {
            seen = Some(decoded);
            break;
        }
    }
    let s = seen.expect("the input took effect within 500 packages");
    assert_eq!(s.input_double_register_25, 0.25);
    assert!(s.actual_digital_output_bits.standard(0));
    assert!(s.actual_digital_output_bits.standard(3));
    assert!(
        !s.actual_digital_output_bits.standard(1),
        "outside the mask"
    );
    assert_eq!(s.actual_digital_output_bits.bits() & 0xff, 0b0000_1001);
    client.close().unwrap();
}

#[test]
fn a_derived_recipe_too_new_for_the_controller_is_refused_before_setup() {
    #[derive(RtdeRecipe)]
    struct Wrench {
        timestamp: f64,
        ft_raw_wrench: [f64; 6],
    }
    let sim = Sim::builder()
        .controller_version("5.8.2")
        .deterministic()
        .start()
        .unwrap();
    let mut client = connect(&sim);
    let err = client.setup_outputs(Wrench::SPEC, 125.0).unwrap_err();
    assert!(err.to_string().contains("ft_raw_wrench"), "{err}");
    assert!(err.to_string().contains("5.9.0"), "{err}");
}
