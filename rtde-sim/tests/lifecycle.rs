//! Starting and stopping: the builder's checks, shutdown and drop with clients
//! connected, and the `rtde-sim` binary.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Msg, Raw};
use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::ClientMessage;
use rtde_sim::{Error, Motion, SHUTDOWN_TIMEOUT, Sim};

#[test]
fn the_handle_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Sim>();
    shareable::<rtde_sim::IoState>();
}

#[test]
fn binds_loopback_on_a_free_port_by_default() {
    let a = Sim::builder().start().unwrap();
    let b = Sim::builder().start().unwrap();
    assert!(a.addr().ip().is_loopback());
    assert_ne!(a.addr().port(), 0);
    assert_ne!(a.addr().port(), b.addr().port());
    assert_eq!(a.controller_version(), ControllerVersion::new(5, 21, 0, 0));
    assert_eq!(a.loop_rate(), 500);
}

#[test]
fn the_builder_refuses_what_no_controller_is() {
    let err = |b: rtde_sim::SimBuilder| b.start().unwrap_err();
    assert!(matches!(
        err(Sim::builder().controller_version("5")),
        Error::InvalidVersion { .. }
    ));
    assert!(matches!(
        err(Sim::builder().controller_version("4.0.0")),
        Error::UnknownGeneration(_)
    ));
    assert!(matches!(
        err(Sim::builder().motion(Motion::still([0.0, 0.0, 0.0, 0.0, 0.0, 7.0]))),
        Error::InvalidMotion(_)
    ));
    let taken = Sim::builder().start().unwrap();
    assert!(matches!(
        err(Sim::builder().bind(taken.addr())),
        Error::Bind { .. }
    ));
}

#[test]
fn shutdown_closes_every_connection_and_joins_promptly() {
    let sim = Sim::builder().start().unwrap();
    let mut streaming = Raw::connect_v(sim.addr(), 2);
    streaming.setup_outputs(500.0, "timestamp");
    streaming.start();
    let mut idle = Raw::connect(sim.addr());
    idle.send(ClientMessage::GetUrcontrolVersion);
    assert!(matches!(idle.recv(), Msg::Urcontrol(_)));
    assert!(sim.wait_for_connections(2, common::READ_TIMEOUT));
    let started = Instant::now();
    sim.shutdown().unwrap();
    assert!(started.elapsed() < SHUTDOWN_TIMEOUT);
    // Both clients see the connection end (after what was already on its way).
    streaming.read_to_close();
    assert_eq!(idle.try_recv(), None);
}

#[test]
fn dropping_the_handle_stops_the_simulator() {
    let sim = Sim::builder().unpaced().start().unwrap();
    let addr = sim.addr();
    let mut c = Raw::connect_v(addr, 2);
    c.setup_outputs(500.0, "timestamp");
    c.start();
    drop(sim);
    c.read_to_close();
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "nobody listens any more"
    );
}

/// Runs the binary with `args`; returns its exit code, stdout and stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtde-sim"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_binary_explains_itself_and_rejects_bad_arguments() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("--version <VERSION>") && out.contains("--bind <ADDR>"),
        "{out}"
    );
    let (code, _, err) = run(&["--frobnicate"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--frobnicate"), "{err}");
    let (code, _, err) = run(&["--version", "4.1"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no generation"), "{err}");
}

#[test]
fn the_binary_serves_a_controller_until_killed() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtde-sim"))
        .args([
            "--version",
            "3.15.8",
            "--port",
            "0",
            "--deterministic",
            "--unpaced",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20));
    let served = line.map(|line| {
        // "rtde-sim: listening on 127.0.0.1:PORT", the first line
        let addr: SocketAddr = line
            .split("listening on ")
            .nth(1)
            .and_then(|a| a.trim().parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        assert!(
            addr.ip().is_loopback(),
            "loopback unless --bind says otherwise"
        );
        let mut c = Raw::connect_v(addr, 2);
        c.send(ClientMessage::GetUrcontrolVersion);
        c.recv()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        served.expect("the binary printed its address"),
        Msg::Urcontrol(ControllerVersion::new(3, 15, 8, 0))
    );
}
