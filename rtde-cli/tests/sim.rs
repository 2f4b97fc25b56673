//! `rtde sim` serves the simulator on the port it prints.

mod common;
// The same check per fault flag as the `rtde-sim` binary's tests.
use rtde_testkit::sim_faults as fault_checks;

use std::time::Duration;

use common::{Spawned, rtde};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_sim::Motion;

#[test]
fn serves_the_simulator_on_the_port_it_prints() {
    let mut cmd = rtde();
    cmd.args([
        "sim",
        "--port",
        "0",
        "--version",
        "3.15.8",
        "--arm",
        "ur5",
        "--deterministic",
    ]);
    let mut sim = Spawned::new(cmd);
    let addr = sim.listening_on();
    assert!(addr.ip().is_loopback());
    let line = sim.line(Duration::from_secs(5));
    assert!(
        line.contains("controller 3.15.8 (125 Hz control loop)"),
        "{line}"
    );

    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let mut client = Client::connect(addr, options).unwrap();
    assert_eq!(client.controller_version().to_string(), "3.15.8");
    let mut recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    client.start().unwrap();
    for _ in 0..10 {
        client.recv_into(&mut recipe).unwrap();
        let Some(&Value::Double(t)) = recipe.get("timestamp") else {
            panic!()
        };
        assert_eq!(
            recipe.get("actual_q"),
            Some(&Value::Vector6d(Motion::DEFAULT.position(t)))
        );
    }
}

#[test]
fn serves_a_fleet_on_the_ports_it_prints() {
    let mut cmd = rtde();
    cmd.args(["sim", "--robots", "3", "--port", "0", "--deterministic"]);
    let mut sim = Spawned::new(cmd);
    let addrs: Vec<_> = (0..3).map(|_| sim.listening_on()).collect();
    let line = sim.line(Duration::from_secs(5));
    assert!(
        line.contains("3 controllers 5.21.0 (500 Hz control loop)"),
        "{line}"
    );
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    for addr in addrs {
        let mut client = Client::connect(addr, options.clone()).unwrap();
        let mut recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
        client.setup_outputs(recipe.spec(), 500.0).unwrap();
        client.start().unwrap();
        client.recv_into(&mut recipe).unwrap();
        let Some(&Value::Double(t)) = recipe.get("timestamp") else {
            panic!()
        };
        assert_eq!(
            recipe.get("actual_q"),
            Some(&Value::Vector6d(Motion::DEFAULT.position(t)))
        );
    }
}

#[test]
fn a_fleet_past_the_last_port_is_one_line() {
    let run = common::run(&["sim", "--robots", "10", "--port", "65530"]);
    assert_eq!(
        run.one_line_error(),
        "error: 10 robots from port 65530 would pass port 65535"
    );
}

#[test]
fn a_bad_version_is_one_line() {
    let run = common::run(&["sim", "--port", "0", "--version", "4.1"]);
    assert_eq!(
        run.one_line_error(),
        "error: controller version 4.1.0 belongs to no generation: use 3.x (CB3), 5.x (e-Series) or 10.x (PolyScope X)"
    );
}

#[test]
fn every_fault_flag_reaches_the_simulator() {
    for (spec, extra, check) in fault_checks::FAULTS {
        let mut cmd = rtde();
        cmd.args(["sim", "--port", "0", "--fault", spec])
            .args(*extra);
        let mut sim = Spawned::new(cmd);
        check(sim.listening_on());
    }
}

#[test]
fn a_bad_fault_flag_is_one_line() {
    let run = common::run(&["sim", "--fault", "close-mid-frame=reply:NOPE"]);
    assert!(
        run.stderr.contains("`NOPE` is no RTDE package type"),
        "{}",
        run.stderr
    );
    assert!(!run.status.success());
}

#[test]
fn refuse_unrecorded_answers_not_found_for_fields_of_unrecorded_version() {
    let mut cmd = rtde();
    cmd.args(["sim", "--port", "0", "--refuse-unrecorded"]);
    let mut sim = Spawned::new(cmd);
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let mut client = Client::connect(sim.listening_on(), options).unwrap();
    let recipe =
        DynamicRecipe::inputs(["tool_digital_output_mask", "tool_digital_output"]).unwrap();
    let err = client.setup_inputs(recipe.spec()).unwrap_err();
    let rtde_core::Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        refused.not_found(),
        ["tool_digital_output_mask", "tool_digital_output"]
    );
}

#[test]
fn program_servo_runs_the_servo_programs_behaviour() {
    let mut cmd = rtde();
    cmd.args([
        "sim",
        "--port",
        "0",
        "--deterministic",
        "--program",
        "servo",
    ]);
    let mut sim = Spawned::new(cmd);
    let addr = sim.listening_on();
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let mut client = Client::connect(addr, options).unwrap();
    let mut recipe = DynamicRecipe::outputs(["runtime_state", "output_int_register_25"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    client.recv_into(&mut recipe).unwrap();
    // PLAYING, waiting for the first waypoint: the program runs.
    assert_eq!(recipe.get("runtime_state"), Some(&Value::Uint32(2)));
    assert_eq!(recipe.get("output_int_register_25"), Some(&Value::Int32(0)));
}
