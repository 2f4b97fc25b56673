//! Interoperability of the primary, secondary and real-time interfaces with a client
//! nobody here wrote: python-urx (PyPI `urx`) reads the simulator's secondary interface
//! (robot state) and its real-time interface, and the values it decodes are checked
//! exactly against the simulator's.
//!
//! `.ci/run` installs `urx` (`tests/interop/setup.sh urx`) and runs this test with
//! `RTDE_URX_PYTHON` pointing at that environment's Python. In a plain `cargo test` it is
//! ignored: run `tests/interop/setup.sh urx` once, then
//! `RTDE_URX_PYTHON=target/interop-venv/bin/python cargo test -p rtde-tests --test interop_urx -- --ignored`.

mod common;

use std::net::SocketAddr;

use common::interop::{run_python_script, sim_on_fixed_port};
use rtde_sim::{Arm, Motion};

#[test]
#[ignore = "needs urx from PyPI; .ci/run installs it and runs this test"]
fn urx_reads_the_secondary_and_real_time_interfaces_exactly() {
    // urx always connects to 30002 and 30003.
    let (_sim, ip) = sim_on_fixed_port(30002, |b, addr| {
        let on = |port| SocketAddr::new(addr.ip(), port);
        b.deterministic()
            .bind(on(0))
            .script_ports_on(on(30001), on(30002), on(30003))
    });
    let stdout = run_python_script("RTDE_URX_PYTHON", "urx_client.py", ip);
    // The arm stands where it started, powered off, until a program moves it.
    let q = Motion::DEFAULT.position(0.0);
    let words = |line: &str| -> Vec<f64> {
        line.split_whitespace()
            .skip(1)
            .map(|w| w.parse().unwrap())
            .collect()
    };
    let realtime: Vec<Vec<f64>> = stdout
        .lines()
        .filter(|l| l.starts_with("realtime "))
        .map(words)
        .collect();
    assert_eq!(realtime.len(), 20, "{stdout}");
    for package in &realtime {
        let t = package[0];
        let ticks = t * 500.0;
        assert!(
            (ticks - ticks.round()).abs() < 1e-6,
            "{t} is not on a 2 ms tick"
        );
        assert_eq!(package[1..], q, "at t = {t}");
    }
    let secondary = stdout
        .lines()
        .find(|l| l.starts_with("secondary "))
        .map(words)
        .unwrap_or_else(|| panic!("no robot state from the secondary interface: {stdout}"));
    // ROBOT_MODE_POWER_OFF, then the joints.
    assert_eq!(secondary[0], 3.0);
    assert_eq!(secondary[1..], q);
    let cartesian = stdout
        .lines()
        .find(|l| l.starts_with("cartesian "))
        .map(words)
        .unwrap_or_else(|| panic!("no Cartesian info: {stdout}"));
    assert_eq!(cartesian, Arm::UR5E.tcp_pose(&q));
}
