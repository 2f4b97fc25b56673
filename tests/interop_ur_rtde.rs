//! Interoperability with a real client nobody here wrote: ur_rtde (SDU Robotics, PyPI
//! `ur_rtde`) reads from and writes to the simulator, and the values it sees are checked
//! exactly against the simulator's deterministic motion law.
//!
//! `.ci/run` installs `ur_rtde` into a virtual environment and runs this test with
//! `RTDE_UR_RTDE_PYTHON` pointing at that environment's Python; it fails when the package
//! cannot be installed. In a plain `cargo test` it is ignored (and says so): run
//! `tests/interop/setup.sh` once, then
//! `RTDE_UR_RTDE_PYTHON=target/interop-venv/bin/python cargo test -p rtde-tests --test interop_ur_rtde -- --ignored`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Command;

use rtde_sim::{Motion, Sim};

/// ur_rtde always connects to port 30004. Each test takes its own loopback address
/// (127.0.0.N) so it collides neither with another run nor with a simulator on 127.0.0.1.
fn sim_on_port_30004() -> (Sim, IpAddr) {
    let first = 2 + (std::process::id() % 200) as u8;
    for n in (first..=254).chain(2..first) {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
        if let Ok(sim) = Sim::builder()
            .deterministic()
            .bind(SocketAddr::new(ip, 30004))
            .start()
        {
            return (sim, ip);
        }
    }
    panic!("no free 127.0.0.N:30004 for the simulator");
}

#[test]
#[ignore = "needs ur_rtde from PyPI; .ci/run installs it and runs this test"]
fn ur_rtde_reads_exact_values_and_writes_a_digital_output() {
    let python = std::env::var("RTDE_UR_RTDE_PYTHON")
        .expect("RTDE_UR_RTDE_PYTHON must name a Python with ur_rtde installed (see tests/interop/setup.sh)");
    let (sim, ip) = sim_on_port_30004();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/interop/ur_rtde_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(ip.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ur_rtde client failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

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

/// ur_rtde's DashboardClient always uses port 29999: the simulator's Dashboard server takes
/// its own loopback address for it, as the RTDE test does for 30004.
fn sim_with_dashboard_on_port_29999() -> (Sim, IpAddr) {
    let first = 2 + (std::process::id() % 200) as u8;
    for n in (first..=254).chain(2..first) {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
        if let Ok(sim) = Sim::builder()
            .bind(SocketAddr::new(ip, 0))
            .dashboard_on(SocketAddr::new(ip, 29999))
            .start()
        {
            return (sim, ip);
        }
    }
    panic!("no free 127.0.0.N:29999 for the simulator's Dashboard server");
}

#[test]
#[ignore = "needs ur_rtde from PyPI; .ci/run installs it and runs this test"]
fn ur_rtde_dashboard_client_drives_the_simulators_dashboard_server() {
    let python = std::env::var("RTDE_UR_RTDE_PYTHON")
        .expect("RTDE_UR_RTDE_PYTHON must name a Python with ur_rtde installed (see tests/interop/setup.sh)");
    let (sim, ip) = sim_with_dashboard_on_port_29999();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/interop/ur_rtde_dashboard.py");
    let out = Command::new(python)
        .arg(script)
        .arg(ip.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ur_rtde DashboardClient failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
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
