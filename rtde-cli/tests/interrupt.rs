//! Ctrl-C stops every command that runs until it, with exit status 0, also when the
//! command was started with SIGINT ignored, as a non-interactive shell starts a background
//! job (and a test run from one): `rtde sim`, `rtde replay` and `rtde primary` relied on
//! the signal's default and ran on past every Ctrl-C.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use common::Spawned;
use rtde_robot::script::ScriptPort;

/// Starts `rtde ARGS` in `dir` through a shell that ignores SIGINT first.
fn with_sigint_ignored(dir: &std::path::Path, args: &str) -> Spawned {
    let rtde = env!("CARGO_BIN_EXE_rtde");
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &format!("trap '' INT; exec {rtde} {args}")])
        .current_dir(dir);
    Spawned::new(cmd)
}

/// Sends Ctrl-C and expects a clean exit within a few seconds.
fn stops_cleanly(mut child: Spawned, what: &str) {
    child.interrupt();
    let status = child.wait(Duration::from_secs(10));
    assert!(status.success(), "{what}: {status}");
}

#[test]
fn ctrl_c_stops_the_simulator_and_the_replay_and_frees_their_ports() {
    let dir = common::scratch("interrupt");
    common::run_in(
        &dir,
        &[
            "record",
            "--fields",
            "actual_q",
            "--samples",
            "10",
            "-o",
            "run.csv",
            "--raw",
            "run.rtde",
        ],
    )
    .ok();
    for args in [
        "sim --port 0",
        "sim --port 0 --robots 2",
        "replay run.rtde --port 0",
    ] {
        let mut child = with_sigint_ignored(&dir, args);
        let addr = child.listening_on();
        stops_cleanly(child, args);
        assert!(
            std::net::TcpStream::connect(addr).is_err(),
            "{args}: {addr} still accepts connections"
        );
    }
}

#[test]
fn ctrl_c_stops_the_primary_interface_reader_with_its_summary() {
    let any = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let sim = rtde_sim::Sim::builder()
        .script_ports_from(any)
        .start()
        .unwrap();
    let primary = sim.script_addr(ScriptPort::Primary).unwrap();
    let dir = common::scratch("interrupt-primary");
    let mut child = with_sigint_ignored(&dir, &format!("primary --robot {primary}"));
    // The version line, then robot states at 10 Hz.
    child.line(Duration::from_secs(10));
    child.line(Duration::from_secs(10));
    stops_cleanly(child, "primary");
}
