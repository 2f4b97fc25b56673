//! The `rtde-sim` binary: every fault reachable from its command line, each exercised by
//! running it (`rtde_testkit::sim_faults`, shared with `rtde sim`'s tests).

use rtde_testkit::sim_faults as fault_checks;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `rtde-sim`, killed and reaped when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `rtde-sim --port 0 ARGS` and returns it with the address it prints.
fn start(args: &[&str]) -> (Running, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtde-sim"))
        .args(["--port", "0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rtde-sim");
    let out = child.stdout.take().expect("stdout");
    let running = Running(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("rtde-sim prints its address");
    let addr = line
        .split_once("listening on ")
        .map(|(_, rest)| rest.trim())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (running, addr.parse().expect("an address"))
}

#[test]
fn every_fault_flag_reaches_the_simulator() {
    for (spec, extra, check) in fault_checks::FAULTS {
        let mut args = vec!["--fault", spec];
        args.extend_from_slice(extra);
        let (_sim, addr) = start(&args);
        check(addr);
    }
}

#[test]
fn every_robot_fault_flag_reaches_the_simulator() {
    for (spec, check) in fault_checks::ROBOT_FAULTS {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rtde-sim"))
            .args(["--port", "0", "--fault", spec])
            .args(fault_checks::ROBOT_ARGS)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rtde-sim");
        let out = child.stdout.take().expect("stdout");
        let _running = Running(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let lines = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(20)).ok()).take(8);
        let services = fault_checks::Services::from_lines(lines).expect("the services' addresses");
        check(&services);
    }
}

#[test]
fn a_bad_fault_flag_is_refused_with_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_rtde-sim"))
        .args(["--fault", "skip-every=often"])
        .output()
        .expect("run rtde-sim");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`often` is not a whole number"), "{stderr}");
}

#[test]
fn refuse_unrecorded_makes_unrecorded_fields_not_found() {
    use rtde_core::protocol::{ClientMessage, ControllerMessage, FrameBuffer, ProtocolVersion};
    use std::io::{Read, Write};

    let setup = |args: &[&str]| -> String {
        let (_sim, addr) = start(args);
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 256];
        let mut frames = FrameBuffer::new();
        // Protocol v1 throughout: SETUP_INPUTS is the same in both versions.
        let n = ClientMessage::SetupInputs {
            names: "tool_digital_output_mask,tool_digital_output",
        }
        .encode(ProtocolVersion::V1, &mut buf)
        .unwrap();
        s.write_all(&buf[..n]).unwrap();
        loop {
            if let Some(frame) = frames.next_frame().unwrap() {
                if let Ok(ControllerMessage::SetupInputsReply { types, .. }) =
                    ControllerMessage::decode(frame, ProtocolVersion::V1)
                {
                    return types.to_owned();
                }
                continue;
            }
            let n = s.read(frames.spare()).unwrap();
            assert!(n > 0, "closed");
            frames.commit(n);
        }
    };
    assert_eq!(setup(&[]), "UINT8,UINT8");
    assert_eq!(setup(&["--refuse-unrecorded"]), "NOT_FOUND,NOT_FOUND");
}
