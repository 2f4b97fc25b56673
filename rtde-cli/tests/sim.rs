//! `rtde sim` serves the simulator on the port it prints.

mod common;

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
