//! The built-ins: the pure ones computed in the engine against the manual's examples,
//! and the robot's reached through the host with their arguments in parameter order.

mod support;

use rtde_urscript::run::{State, Value};
use support::{E_SERIES, Robot, failure, log_of, machine_at, run_on};

fn show(expr: &str) -> String {
    log_of(&format!("textmsg({expr})\n")).remove(0)
}

#[test]
fn math_functions() {
    assert_eq!(show("atan2(1, 1)"), "0.785398");
    assert_eq!(show("pow(2, 10)"), "1024");
    assert_eq!(show("log(10, 1000)"), "3");
    assert_eq!(show("sqrt(16)"), "4");
    assert_eq!(show("floor(-1.5)"), "-2");
    assert_eq!(show("ceil(1.2)"), "2");
    assert_eq!(show("d2r(180)"), "3.14159");
    assert_eq!(show("r2d(pi)"), "180");
    assert_eq!(show("sin(0) + cos(0)"), "1");
    assert_eq!(show("norm(-3)"), "3");
    assert_eq!(show("norm([3, 4])"), "5");
    assert_eq!(show("normalize([3, 4])"), "[0.6, 0.8]");
}

#[test]
fn list_functions() {
    assert_eq!(show("make_list(3, 0)"), "[0, 0, 0]");
    assert_eq!(show("get_list_length([1, 2, 3, 4])"), "4");
    assert_eq!(show("length(\"abc\")"), "3");
    assert_eq!(
        show("binary_list_to_integer([True, False, False, True])"),
        "9"
    );
    assert_eq!(show("integer_to_binary_list(5)[2]"), "True");
    assert_eq!(show("integer_to_binary_list(5)[1]"), "False");
    assert_eq!(show("get_list_length(integer_to_binary_list(-1))"), "32");
    assert_eq!(
        failure("l = make_list(-1, 0)\n").2,
        format!(
            "a list of -1 elements is not possible (0 to {})",
            rtde_urscript::run::MAX_LENGTH
        )
    );
}

#[test]
fn string_functions_from_the_manual() {
    assert_eq!(show("str_cat(\"Hello\", \" World!\")"), "Hello World!");
    assert_eq!(show("str_cat(\"q: \", [1, 2])"), "q: [1, 2]");
    assert_eq!(show("str_sub(\"Hello\", 1, 3)"), "ell");
    assert_eq!(show("str_sub(\"Hello\", 2)"), "llo");
    assert_eq!(show("str_find(\"Hello World!\", \"o\")"), "4");
    assert_eq!(show("str_find(\"Hello World!\", \"o\", 5)"), "7");
    assert_eq!(show("str_find(\"Hello\", \"x\")"), "-1");
    assert_eq!(show("str_at(\"Hello\", 1)"), "e");
    assert_eq!(show("str_len(\"Hello\")"), "5");
    assert_eq!(show("str_empty(\"\")"), "True");
    assert_eq!(
        show("to_str(p[0.1, 0, 0, 0, 0, 0])"),
        "p[0.1, 0, 0, 0, 0, 0]"
    );
    assert_eq!(show("to_num(\"8.5\") + to_num(\"2\")"), "10.5");
    assert_eq!(
        failure("x = to_num(\"eight\")\n").2,
        "`eight` is not a number"
    );
}

#[test]
fn pose_functions() {
    assert_eq!(
        show("point_dist(p[0, 0, 0, 0, 0, 0], p[3, 4, 0, 1, 0, 0])"),
        "5"
    );
    assert_eq!(
        show("pose_dist(p[0, 0, 0, 0, 0, 0], p[3, 4, 0, 0, 0, 0])"),
        "5"
    );
    assert_eq!(
        show("pose_trans(p[0.1, 0.2, 0.3, 0, 0, 0], p[0, 0, 0.1, 0, 0, 0])"),
        "p[0.1, 0.2, 0.4, 0, 0, 0]"
    );
    // The tool offset's z turned by the base's half turn about x.
    assert_eq!(
        show("pose_trans(p[0, 0, 0, 3.14159265358979, 0, 0], p[0, 0, 0.1, 0, 0, 0])[2]"),
        "-0.1"
    );
    assert_eq!(
        show(
            "norm(pose_trans(p[0.3, -0.2, 0.4, 0.1, 3.0, 0.2], pose_inv(p[0.3, -0.2, 0.4, 0.1, 3.0, 0.2]))) < 1e-12"
        ),
        "True"
    );
    assert_eq!(
        show("pose_add(p[0.1, 0.2, 0.3, 0, 0, 0.5], p[0.1, 0, 0, 0, 0, 0.25])"),
        "p[0.2, 0.2, 0.3, 0, 0, 0.75]"
    );
    assert_eq!(
        show("pose_sub(p[0.1, 0.2, 0.3, 0, 0, 0.5], p[0.1, 0, 0, 0, 0, 0.25])"),
        "p[0, 0.2, 0.3, 0, 0, 0.25]"
    );
    assert_eq!(
        show("interpolate_pose(p[0, 0, 0, 0, 0, 0], p[0.2, 0, 0.4, 0, 0, 1], 0.5)"),
        "p[0.1, 0, 0.2, 0, 0, 0.5]"
    );
}

#[test]
fn robot_builtins_reach_the_host_with_arguments_in_parameter_order() {
    let mut robot = Robot::default();
    robot.int_in.insert(24, 7);
    robot.float_in.insert(25, 0.25);
    let mut machine = machine_at(
        "cmd = read_input_integer_register(24)\nwrite_output_float_register(address=3, value=read_input_float_register(25) * cmd)\n\
         set_standard_digital_out(2, True)\nq = get_actual_joint_positions()\ntextmsg(q[1])\n",
        E_SERIES,
    );
    assert_eq!(run_on(&mut robot, &mut machine, 5), State::Ended);
    assert_eq!(
        robot.outputs["write_output_float_register[3]"],
        Value::Float(1.75)
    );
    assert_eq!(
        robot.outputs["set_standard_digital_out[2]"],
        Value::Bool(true)
    );
    assert_eq!(robot.log, ["-1.57"]);
}

#[test]
fn servoj_each_tick_from_a_servo_thread_driven_by_a_register() {
    let mut robot = Robot::default();
    robot.int_in.insert(0, 1);
    let mut machine = machine_at(
        "global target = [0, 0, 0, 0, 0, 0]\nthread servo():\n  while True:\n    servoj(target, t=0.002, lookahead_time=0.1, gain=300)\n  end\nend\n\
         run servo()\nwhile read_input_integer_register(0) == 1:\n  target[0] = target[0] + 0.001\n  sync()\nend\n",
        E_SERIES,
    );
    run_on(&mut robot, &mut machine, 6);
    assert_eq!(
        robot.ticks_of("servoj"),
        [1, 2, 3, 4, 5, 6],
        "one servoj per tick"
    );
    let last = robot.calls.iter().rev().find(|c| c.1 == "servoj").unwrap();
    assert_eq!(
        last.2[0].six().unwrap()[0],
        0.006,
        "the target the main loop set"
    );
}
