//! `rtde dashboard` and `rtde run-script`: typed output, the controller's words and exit
//! code 1 on failure, the built-in simulator without --robot, and the workspace flag.

mod common;

use common::run;
use rtde_sim::Sim;

#[test]
fn a_query_prints_its_typed_reply() {
    let out = run(&["dashboard", "robotmode"]);
    out.ok();
    assert_eq!(out.stdout.trim(), "ROBOT_MODE_POWER_OFF");
    let out = run(&["dashboard", "programState"]);
    out.ok();
    assert_eq!(out.stdout.trim(), "STOPPED");
}

#[test]
fn a_refusal_is_one_line_in_the_controllers_words_and_exit_code_1() {
    let sim = Sim::builder().dashboard().start().unwrap();
    let robot = sim.dashboard_addr().unwrap().to_string();
    let out = run(&["dashboard", "--robot", &robot, "play"]);
    assert_eq!(
        out.one_line_error(),
        "error: the controller refused `play`: \"Failed to execute: play\""
    );
}

#[test]
fn a_robot_given_by_address_is_asked() {
    let sim = Sim::builder().dashboard().start().unwrap();
    let robot = sim.dashboard_addr().unwrap().to_string();
    run(&["dashboard", "--robot", &robot, "power", "on"]).ok();
    let out = run(&["dashboard", "--robot", &robot, "robotmode"]);
    out.ok();
    assert_eq!(out.stdout.trim(), "ROBOT_MODE_IDLE");
    assert!(out.stderr.is_empty(), "{out:?}");
}

#[test]
fn an_unknown_command_lists_the_known_ones() {
    let out = run(&["dashboard", "fly", "away"]);
    let line = out.one_line_error();
    assert!(
        line.contains("unknown Dashboard command `fly away`"),
        "{line}"
    );
    assert!(line.contains("brake release"), "{line}");
}

#[test]
fn run_script_reports_the_servo_program_playing_on_the_simulator() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rtde-robot-proto/src/programs/servo/rtde_servo.script"
    );
    let out = run(&["run-script", file]);
    let progress = out.ok();
    assert!(
        out.stdout.starts_with("started: rtde_program is playing"),
        "{out:?}"
    );
    for step in ["checked: remote control", "sent ", "runtime state PLAYING"] {
        assert!(progress.contains(step), "{step}: {progress}");
    }
}

#[test]
fn run_script_on_a_robot_needs_the_workspace_flag() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rtde-robot-proto/src/programs/servo/rtde_servo.script"
    );
    let out = run(&["run-script", file, "--robot", "127.0.0.1"]);
    let line = out.one_line_error();
    assert!(line.contains("--i-have-checked-the-workspace"), "{line}");
    assert!(line.contains("nothing was sent"), "{line}");
}

#[test]
fn run_script_takes_a_robot_as_host_and_port_as_the_other_commands_do() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rtde-robot-proto/src/programs/servo/rtde_servo.script"
    );
    // Nothing listens at the Dashboard server's standard port here: the sender, having
    // taken the address, stops at its first check, before it sends anything.
    let sim = Sim::builder().script_ports().start().unwrap();
    let secondary = sim
        .script_addr(rtde_robot::script::ScriptPort::Secondary)
        .unwrap();
    let robot = secondary.to_string();
    let out = run(&[
        "run-script",
        file,
        "--robot",
        &robot,
        "--i-have-checked-the-workspace",
    ]);
    let line = out.one_line_error();
    assert!(
        line.contains("cannot reach the Dashboard server at 127.0.0.1:29999"),
        "{line}"
    );
    let out = run(&["run-script", file, "--robot", "127.0.0.1:thirty"]);
    assert_eq!(
        out.one_line_error(),
        "error: `127.0.0.1:thirty`: `thirty` is no port number"
    );
}
