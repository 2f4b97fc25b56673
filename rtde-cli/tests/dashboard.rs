//! `rtde dashboard` and `rtde run-script`: typed output, the controller's words and exit
//! code 1 on failure, the built-in simulator without --robot, and the workspace flag.

mod common;

use common::{run, scratch};
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

/// A user's program on the built-in simulator: watched until it ends, with what it says
/// on the way (the simulator ends with the command, so the command waits for the program).
#[test]
fn run_script_runs_a_users_program_to_its_end_on_the_simulator() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../urscript/examples/pick_and_place.script"
    );
    let out = run(&["run-script", file]);
    let progress = out.ok();
    for said in [
        "controller: cycle done: 1",
        "controller: cycle done: 3",
        "PROGRAM_XXX_STOPPED pick_and_place",
    ] {
        assert!(progress.contains(said), "{said}: {progress}");
    }
    let played: f64 = out
        .stdout
        .strip_prefix("ended: pick_and_place played for ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));
    // Six moves of 0.2 rad and more, and three 0.1 s waits.
    assert!(played > 1.0, "{played}");
}

/// Sent unchecked, a program with an error comes back with the controller's compile error
/// at its line and column; one that fails while it plays, with its runtime exception.
#[test]
fn run_script_reports_the_controllers_compile_error_and_runtime_exception() {
    let dir = scratch("run-script-errors");
    let typo = dir.join("typo.script");
    std::fs::write(
        &typo,
        "def typo():\n  movej([0.2, -1.4, 1.4, -1.57, -1.57, 0.1])\n  set_standrad_digital_out(0, True)\nend\n",
    )
    .unwrap();
    let out = run(&["run-script", typo.to_str().unwrap(), "--no-check"]);
    let line = out.stderr.lines().last().unwrap_or_default();
    assert!(out.status.code() == Some(1), "{out:?}");
    assert!(
        line.starts_with(
            "error: the program does not compile: line 3, column 3: compile_error_name_not_found"
        ),
        "{out:?}"
    );
    let late = dir.join("late.script");
    std::fs::write(
        &late,
        "def late():\n  movej([0.2, -1.4, 1.4, -1.57, -1.57, 0.1])\n  list = [1, 2]\n  textmsg(list[5])\nend\n",
    )
    .unwrap();
    let out = run(&["run-script", late.to_str().unwrap()]);
    let line = out.stderr.lines().last().unwrap_or_default();
    assert!(out.status.code() == Some(1), "{out:?}");
    assert!(
        line.starts_with("error: the program failed at line 4, column"),
        "{out:?}"
    );
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
