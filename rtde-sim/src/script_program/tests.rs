use rtde_kinematics::Arm;
use rtde_urscript::run::State;
use rtde_urscript::{ControllerVersion, check};

use super::ScriptProgram;
use crate::io::IoState;

const HOME: [f64; 6] = [0.0, -1.5, 1.5, -1.5, -1.5, 0.0];

fn program(script: &str) -> ScriptProgram {
    let checked = check(script, ControllerVersion::new(5, 9, 0, 0)).unwrap();
    ScriptProgram::new(&checked, Arm::UR5E, HOME).unwrap()
}

fn run(p: &mut ScriptProgram, ticks: u64) {
    let io = IoState::default();
    for _ in 0..ticks {
        if !p.is_running() {
            break;
        }
        p.step(&io, 0.002);
    }
}

#[test]
fn a_loop_of_moves_ends_at_the_last_target_with_the_output_set() {
    let mut p = program(
        "def prog():\n  i = 0\n  while i < 3:\n    movej([0.1 * (i + 1), -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\n    i = i + 1\n  end\n\
         set_standard_digital_out(2, True)\n  textmsg(\"done at \", get_actual_joint_positions()[0])\nend\n",
    );
    run(&mut p, 5_000);
    assert_eq!(p.state(), &State::Ended);
    assert!((p.q()[0] - 0.3).abs() < 1e-9, "{:?}", p.q());
    assert_eq!(p.digital_output_bits(), 1 << 2);
    assert_eq!(p.messages(), ["done at 0.3"]);
}

#[test]
fn a_move_takes_the_motion_models_time() {
    let mut p = program("movej([0.5, -1.5, 1.5, -1.5, -1.5, 0], a=1, v=1)\n");
    run(&mut p, 10_000);
    // 0.5 rad at 1 rad/s² and 1 rad/s never reaches speed: 2·sqrt(0.5/1) ≈ 1.414 s.
    let seconds = p.ticks() as f64 * 0.002;
    assert!((seconds - 1.414).abs() < 0.02, "{seconds} s");
}

#[test]
fn movel_follows_a_line_to_a_pose() {
    let mut p = program(
        "x = get_actual_tcp_pose()\nx[2] = x[2] + 0.05\nmovel(x, a=1, v=0.25)\ntextmsg(get_actual_tcp_pose()[2] - x[2])\n",
    );
    run(&mut p, 5_000);
    assert_eq!(p.state(), &State::Ended);
    let off: f64 = p.messages()[0].parse().unwrap();
    assert!(off.abs() < 1e-6, "{off}");
}

#[test]
fn registers_are_written_as_output_fields() {
    let mut p =
        program("write_output_float_register(3, 1.5)\nwrite_output_integer_register(2, 7)\n");
    run(&mut p, 10);
    assert_eq!(
        p.output("output_double_register_3"),
        Some(rtde_core::Value::Double(1.5))
    );
    assert_eq!(
        p.output("output_int_register_2"),
        Some(rtde_core::Value::Int32(7))
    );
}

#[test]
fn a_runtime_error_stops_the_program_with_its_place() {
    let mut p = program("def prog():\n  l = [1, 2]\n  x = l[2]\nend\n");
    run(&mut p, 10);
    assert!(matches!(p.state(), State::Failed(_)));
    assert_eq!(
        p.messages(),
        ["runtime exception at line 3, column 7: index 2 out of range for length 2"]
    );
}

#[test]
fn a_builtin_the_simulator_lacks_is_a_runtime_error_not_silence() {
    let mut p = program("torques = get_joint_torques()\n");
    run(&mut p, 10);
    assert!(
        p.messages()[0].ends_with("`get_joint_torques` is not simulated yet"),
        "{:?}",
        p.messages()
    );
}

#[test]
fn the_speed_slider_stretches_servoj() {
    let script = "def prog():\n  servoj([0.1, -1.5, 1.5, -1.5, -1.5, 0], t=0.002)\n  textmsg(\"after \", get_actual_joint_positions()[0])\nend\n";
    for (slider, ticks) in [(1.0, 2), (0.5, 3), (0.25, 5)] {
        let mut p = program(script);
        let mut io = IoState::default();
        io.write_inputs(&[
            ("speed_slider_mask", rtde_core::Value::Uint32(1)),
            ("speed_slider_fraction", rtde_core::Value::Double(slider)),
        ])
        .unwrap();
        while p.is_running() && p.ticks() < 100 {
            p.step(&io, 0.002);
        }
        // servoj blocks for t / slider, then the program ends on the next tick.
        assert_eq!(p.ticks(), ticks, "slider {slider}");
    }
}
