//! `rtde primary`: the version, the calibrated kinematics once, a line per robot state
//! and a summary; a robot's robot messages as they come; no robot, one line and exit 1.

mod common;

use std::io::Write;
use std::net::TcpStream;

use common::run;
use rtde_robot::script::ScriptPort;
use rtde_sim::{Fault, Sim};

#[test]
fn the_built_in_simulator_prints_ten_states_and_a_summary() {
    let out = run(&["primary"]);
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("controller 5.21.0 at 127.0.0.1:"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("kinematics (the controller's calibrated DH): a=[0.0000, -0.4250")
    );
    let states: Vec<&&str> = lines.iter().filter(|l| l.starts_with("state t=")).collect();
    assert_eq!(states.len(), 10, "{lines:?}");
    assert!(states[0].contains("ROBOT_MODE_POWER_OFF program stopped SAFETY_MODE_NORMAL q=["));
    assert!(
        out.stderr
            .contains("10 robot states, 1 robot messages; passed over: 0 packages"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_robots_messages_are_printed_as_they_come() {
    let sim = Sim::builder()
        .script_ports()
        .fault(Fault::RuntimeException { line: 2, column: 3 })
        .start()
        .unwrap();
    let robot = sim.script_addr(ScriptPort::Primary).unwrap().to_string();
    let secondary = sim.script_addr(ScriptPort::Secondary).unwrap();
    // The program fails as soon as it arrives; `rtde primary` reads for 3 s meanwhile.
    let sender = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let mut s = TcpStream::connect(secondary).unwrap();
        s.write_all(b"def fails():\n  textmsg(1)\nend\n").unwrap();
    });
    let out = run(&["primary", "--robot", &robot, "--count", "30"]);
    sender.join().unwrap();
    out.ok();
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("message RuntimeException { line: 2, column: 3")),
        "{}",
        out.stdout
    );
}

#[test]
fn no_robot_is_one_line_and_exit_code_1() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let robot = free.local_addr().unwrap().to_string();
    drop(free);
    let out = run(&["primary", "--robot", &robot]);
    assert!(
        out.one_line_error().starts_with(&format!(
            "error: could not connect to the primary interface at {robot}"
        )),
        "{out:?}"
    );
}
