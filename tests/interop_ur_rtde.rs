//! Interoperability with a real client nobody here wrote: ur_rtde (SDU Robotics, PyPI
//! `ur_rtde`) reads from and writes to the simulator, and the values it sees are checked
//! exactly against the simulator's deterministic motion law.
//!
//! `.ci/run` installs `ur_rtde` into a virtual environment and runs this test with
//! `RTDE_UR_RTDE_PYTHON` pointing at that environment's Python; it fails when the package
//! cannot be installed. In a plain `cargo test` it is ignored (and says so): run
//! `tests/interop/setup.sh` once, then
//! `RTDE_UR_RTDE_PYTHON=target/interop-venv/bin/python cargo test -p rtde-tests --test interop_ur_rtde -- --ignored`.

mod common;

use std::net::{IpAddr, SocketAddr};

use common::interop::{run_python_script, sim_on_fixed_port};
use rtde_sim::Motion;

/// Runs `tests/interop/SCRIPT` with ur_rtde's Python against the simulator at `ip`.
fn run_ur_rtde_script(script: &str, ip: IpAddr) -> String {
    run_python_script("RTDE_UR_RTDE_PYTHON", script, ip)
}

#[test]
#[ignore = "needs ur_rtde from PyPI; .ci/run installs it and runs this test"]
fn ur_rtde_reads_exact_values_and_writes_a_digital_output() {
    // ur_rtde always connects to port 30004.
    let (sim, ip) = sim_on_fixed_port(30004, |b, addr| b.deterministic().bind(addr));
    let stdout = run_ur_rtde_script("ur_rtde_client.py", ip);

    let mut samples = Vec::new();
    let mut dout = None;
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("sample") => {
                let v: Vec<f64> = words.map(|w| w.parse().unwrap()).collect();
                assert_eq!(v.len(), 7, "{line}");
                samples.push((v[0], [v[1], v[2], v[3], v[4], v[5], v[6]]));
            }
            Some("dout") => {
                let v: Vec<u64> = words.map(|w| w.parse().unwrap()).collect();
                dout = Some((v[0], v[1]));
            }
            _ => panic!("unexpected line from the ur_rtde client: {line}"),
        }
    }

    assert_eq!(samples.len(), 20, "{stdout}");
    let mut previous = f64::NEG_INFINITY;
    for (t, q) in &samples {
        // What ur_rtde decoded is the motion law at the package's own timestamp, exactly.
        assert_eq!(*q, Motion::DEFAULT.position(*t), "at t = {t}");
        // Timestamps advance by whole 2 ms control periods.
        assert!(*t > previous, "{previous} then {t}");
        let ticks = t * 500.0;
        assert!(
            (ticks - ticks.round()).abs() < 1e-6,
            "{t} is not on a 2 ms tick"
        );
        previous = *t;
    }

    // A digital output written through ur_rtde's RTDEIOInterface, read back through its
    // RTDEReceiveInterface: on, then off again.
    let (on, off) = dout.expect("the client reported the digital output");
    assert_eq!(on & 0xff, 0b1000, "standard output 3 on");
    assert_eq!(off & 0xff, 0, "standard output 3 off");
    assert_eq!(sim.io().digital_output_bits() & 0xff, 0);
}

#[test]
#[ignore = "needs ur_rtde from PyPI; .ci/run installs it and runs this test"]
fn ur_rtde_dashboard_client_drives_the_simulators_dashboard_server() {
    // ur_rtde's DashboardClient always uses port 29999.
    let (sim, ip) = sim_on_fixed_port(29999, |b, addr| {
        b.bind(SocketAddr::new(addr.ip(), 0)).dashboard_on(addr)
    });
    let stdout = run_ur_rtde_script("ur_rtde_dashboard.py", ip);
    let expected = [
        "connected True",
        "power_on Robotmode: IDLE",
        "brake_release Robotmode: RUNNING",
        "loaded Loaded program: /programs/interop.urp",
        "play PLAYING interop.urp",
        "running True",
        "robot_mode Robotmode: RUNNING",
        "safety_status Safetystatus: NORMAL",
        "stop STOPPED interop.urp",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected, "{stdout}");
    // What ur_rtde did reached the robot: the state it left behind.
    let robot = sim.robot_state().unwrap();
    assert_eq!(robot.robot_mode(), rtde_core::RobotMode::Running);
    assert_eq!(robot.loaded_program(), Some("/programs/interop.urp"));
    assert_eq!(robot.program_state(), rtde_core::RuntimeState::Stopped);
    sim.shutdown().unwrap();
}
