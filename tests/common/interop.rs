//! What the interoperability tests share: a simulator on a client's fixed ports, and
//! running that client's Python script against it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Command;

use rtde_sim::{Sim, SimBuilder};

/// A simulator whose fixed port `port` (the client's) is on a loopback address of its
/// own (127.0.0.N), so a test collides neither with another run nor with a simulator on
/// 127.0.0.1. `on` places the simulator's services on that address.
pub(crate) fn sim_on_fixed_port(
    port: u16,
    on: impl Fn(SimBuilder, SocketAddr) -> SimBuilder,
) -> (Sim, IpAddr) {
    let first = 2 + u8::try_from(std::process::id() % 200).unwrap_or(0);
    for n in (first..=254).chain(2..first) {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
        if let Ok(sim) = on(Sim::builder(), SocketAddr::new(ip, port)).start() {
            return (sim, ip);
        }
    }
    panic!("no free 127.0.0.N:{port} for the simulator");
}

/// Runs `tests/interop/SCRIPT` with the Python `python_var` names (set by `.ci/run` from
/// `tests/interop/setup.sh`) against the simulator at `ip`, and returns what it printed;
/// a failing script fails the test with its output.
pub(crate) fn run_python_script(python_var: &str, script: &str, ip: IpAddr) -> String {
    let python = std::env::var(python_var).unwrap_or_else(|_| {
        panic!(
            "{python_var} must name a Python with the client installed (see tests/interop/setup.sh)"
        )
    });
    let path = format!("{}/interop/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python)
        .arg(path)
        .arg(ip.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script} failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
