//! The controller's other interfaces: the primary (30001) and secondary (30002) streams
//! of robot state, the real-time interface (30003), and their agreement with RTDE.

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use common::{Raw, double, outputs, tick_of, vector6};
use rtde_core::fields::ControllerVersion;
use rtde_core::{DynamicRecipe, Value};
use rtde_robot_proto::ports::ScriptPort;
use rtde_robot_proto::primary::{Decoded, Decoder, Layout, PrimaryMessage, RobotState};
use rtde_robot_proto::realtime::{RealtimeLayout, RealtimeState};
use rtde_sim::Sim;

const WAIT: Duration = Duration::from_secs(5);

fn sim(version: &str) -> Sim {
    Sim::builder()
        .controller_version(version)
        .script_ports()
        .start()
        .unwrap()
}

/// A primary or secondary interface connection, decoded package by package.
struct Primary {
    stream: TcpStream,
    buf: Vec<u8>,
    decoder: Decoder,
}

/// A package, owned.
#[derive(Debug)]
enum Package {
    State(Box<RobotState>, u32),
    Message(PrimaryMessage),
}

impl Primary {
    fn connect(addr: SocketAddr) -> Primary {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Primary {
            stream,
            buf: Vec::new(),
            decoder: Decoder::new(),
        }
    }

    fn next(&mut self) -> Package {
        loop {
            if let Some((decoded, used)) = self.decoder.decode(&self.buf).unwrap() {
                let package = match decoded {
                    Decoded::State { state, update } => {
                        Package::State(Box::new(*state), update.present)
                    }
                    Decoded::Message(m) => Package::Message(m),
                    other => panic!("{other:?}"),
                };
                self.buf.drain(..used);
                return package;
            }
            let mut chunk = [0; 4096];
            let n = self.stream.read(&mut chunk).expect("a package within 5 s");
            assert!(n > 0, "the simulator closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn next_state(&mut self) -> (RobotState, u32) {
        loop {
            if let Package::State(state, present) = self.next() {
                return (*state, present);
            }
        }
    }
}

/// A real-time interface connection.
struct Realtime {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Realtime {
    fn connect(addr: SocketAddr) -> Realtime {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Realtime {
            stream,
            buf: Vec::new(),
        }
    }

    fn next(&mut self) -> (RealtimeState, RealtimeLayout) {
        let mut state = RealtimeState::default();
        loop {
            if let Some((used, layout)) = state.decode(&self.buf).unwrap() {
                self.buf.drain(..used);
                return (state, layout);
            }
            let mut chunk = [0; 8192];
            let n = self.stream.read(&mut chunk).expect("a package within 5 s");
            assert!(n > 0, "the simulator closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The sub-package types each generation sends, as `Update::present` bits: every one
/// decoded here but safety data (10, undocumented), and on CB3 none of e-Series' tool
/// communication (11) and tool mode (12).
fn every_sub_package(version: &str) -> u32 {
    let cb3 = (0..=9).fold(0, |bits, kind| bits | 1 << kind);
    if version.starts_with('3') {
        cb3
    } else {
        cb3 | 1 << 11 | 1 << 12
    }
}

#[test]
fn primary_and_secondary_send_the_version_then_robot_state_at_10_hz() {
    for version in ["5.21.0", "3.15.8"] {
        let sim = sim(version);
        let period_ms = if version.starts_with('3') { 96 } else { 100 };
        for port in [ScriptPort::Primary, ScriptPort::Secondary] {
            let mut c = Primary::connect(sim.script_addr(port).unwrap());
            match c.next() {
                Package::Message(PrimaryMessage::Version {
                    project,
                    version: v,
                    ..
                }) => {
                    assert_eq!(project, "URControl");
                    assert_eq!(v, version.parse::<ControllerVersion>().unwrap());
                }
                other => panic!("{version} {port:?}: expected the version first, got {other:?}"),
            }
            assert_eq!(c.decoder.layout(), Layout::of(version.parse().unwrap()));
            let mut stamps = Vec::new();
            for _ in 0..6 {
                let (state, present) = c.next_state();
                assert_eq!(present, every_sub_package(version), "{version} {port:?}");
                stamps.push(state.robot_mode.unwrap().timestamp);
            }
            // On a grid of the period: a late wake-up may skip a message, never shift one.
            let steps: Vec<u64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
            assert!(
                steps.iter().all(|s| *s > 0 && s % period_ms == 0) && steps.contains(&period_ms),
                "{version} {port:?}: robot state timestamps step by {steps:?} ms"
            );
        }
    }
}

#[test]
fn the_real_time_interface_sends_every_control_cycle_in_its_generations_layout() {
    for (version, layout, rate) in [
        ("5.21.0", RealtimeLayout::V5_10, 500),
        ("3.15.8", RealtimeLayout::V3_10, 125),
    ] {
        let sim = sim(version);
        let mut c = Realtime::connect(sim.script_addr(ScriptPort::RealTime).unwrap());
        let mut last = None;
        for _ in 0..100 {
            let (state, seen) = c.next();
            assert_eq!(seen, layout, "{version}");
            let tick = tick_of(state.time, rate);
            if let Some(last) = last {
                assert_eq!(tick, last + 1, "{version}: a control cycle is missing");
            }
            last = Some(tick);
        }
    }
}

/// What RTDE streamed, by tick.
const RTDE_FIELDS: [&str; 9] = [
    "timestamp",
    "actual_q",
    "target_q",
    "actual_qd",
    "actual_TCP_pose",
    "robot_mode",
    "safety_mode",
    "joint_mode",
    "actual_digital_output_bits",
];

fn int(recipe: &DynamicRecipe, name: &str) -> i64 {
    match recipe.get(name) {
        Some(Value::Int32(v)) => i64::from(*v),
        Some(Value::Uint64(v)) => i64::try_from(*v).unwrap(),
        other => panic!("{name}: {other:?}"),
    }
}

fn joint_modes(recipe: &DynamicRecipe) -> [i32; 6] {
    match recipe.get("joint_mode") {
        Some(Value::Vector6Int32(v)) => *v,
        other => panic!("joint_mode: {other:?}"),
    }
}

/// The simulated arm's measurement noise differs every tick, so values that agree come
/// from the same tick's state.
#[test]
fn rtde_the_primary_and_the_real_time_interface_agree_in_the_same_tick() {
    let sim = sim("5.21.0");
    // Two digital outputs set through RTDE, so the I/O has something to agree on.
    let mut writer = Raw::connect_v(sim.addr(), 2);
    let (_, id, _) = writer.setup_inputs("standard_digital_output_mask,standard_digital_output");
    let mut inputs =
        DynamicRecipe::inputs(["standard_digital_output_mask", "standard_digital_output"]).unwrap();
    inputs
        .set("standard_digital_output_mask", Value::Uint8(0xff))
        .unwrap();
    inputs
        .set("standard_digital_output", Value::Uint8(0b101))
        .unwrap();
    writer.send_inputs(id, &inputs);
    let deadline = Instant::now() + WAIT;
    while sim.io().digital_output_bits() != 0b101 {
        assert!(Instant::now() < deadline, "the outputs never took effect");
        thread::sleep(Duration::from_millis(1));
    }

    let mut rtde = Raw::connect_v(sim.addr(), 2);
    rtde.setup_outputs(500.0, &RTDE_FIELDS.join(","));
    rtde.start();
    let realtime_addr = sim.script_addr(ScriptPort::RealTime).unwrap();
    let primary_addr = sim.script_addr(ScriptPort::Primary).unwrap();
    let realtime = thread::spawn(move || {
        let mut c = Realtime::connect(realtime_addr);
        (0..50).map(|_| c.next().0).collect::<Vec<_>>()
    });
    let primary = thread::spawn(move || {
        let mut c = Primary::connect(primary_addr);
        (0..3).map(|_| c.next_state().0).collect::<Vec<_>>()
    });
    let mut by_tick = HashMap::new();
    while !(realtime.is_finished() && primary.is_finished()) {
        let mut r = outputs(&RTDE_FIELDS);
        rtde.recv_data(&mut r);
        by_tick.insert(tick_of(double(&r, "timestamp"), 500), r);
    }
    // RTDE goes on a little longer than both, for the ticks they sent last.
    for _ in 0..50 {
        let mut r = outputs(&RTDE_FIELDS);
        rtde.recv_data(&mut r);
        by_tick.insert(tick_of(double(&r, "timestamp"), 500), r);
    }
    let rtde_at = |tick: u64| {
        by_tick
            .get(&tick)
            .unwrap_or_else(|| panic!("RTDE did not stream tick {tick}"))
    };

    for rt in realtime.join().unwrap() {
        let r = rtde_at(tick_of(rt.time, 500));
        assert_eq!(rt.q_actual, vector6(r, "actual_q"));
        assert_eq!(rt.q_target, vector6(r, "target_q"));
        assert_eq!(rt.qd_actual, vector6(r, "actual_qd"));
        assert_eq!(rt.tool_vector_actual, vector6(r, "actual_TCP_pose"));
        assert_eq!(rt.robot_mode, int(r, "robot_mode") as f64);
        assert_eq!(rt.safety_mode, int(r, "safety_mode") as f64);
        assert_eq!(rt.joint_modes, joint_modes(r).map(f64::from));
        assert_eq!(rt.digital_outputs, 5.0);
    }
    for state in primary.join().unwrap() {
        let mode = state.robot_mode.unwrap();
        // The timestamp is the controller's time in milliseconds: 2 ms a tick.
        let r = rtde_at(mode.timestamp / 2);
        let joints = state.joints.unwrap();
        assert_eq!(joints.q_actual(), vector6(r, "actual_q"));
        assert_eq!(joints.q_target(), vector6(r, "target_q"));
        assert_eq!(joints.qd_actual(), vector6(r, "actual_qd"));
        assert_eq!(joints.joints.map(|j| i32::from(j.mode)), joint_modes(r));
        assert_eq!(
            state.cartesian.unwrap().tcp_pose,
            vector6(r, "actual_TCP_pose")
        );
        assert_eq!(i64::from(mode.robot_mode), int(r, "robot_mode"));
        let masterboard = state.masterboard.unwrap();
        assert_eq!(i64::from(masterboard.safety_mode), int(r, "safety_mode"));
        assert_eq!(
            i64::from(masterboard.digital_output_bits),
            int(r, "actual_digital_output_bits")
        );
    }
}

#[test]
fn only_the_primary_interface_sends_robot_messages() {
    let sim = Sim::builder()
        .script_ports()
        .fault(rtde_sim::Fault::RuntimeException { line: 1, column: 1 })
        .start()
        .unwrap();
    let mut primary = Primary::connect(sim.script_addr(ScriptPort::Primary).unwrap());
    let mut secondary = Primary::connect(sim.script_addr(ScriptPort::Secondary).unwrap());
    for c in [&mut primary, &mut secondary] {
        assert!(matches!(
            c.next(),
            Package::Message(PrimaryMessage::Version { .. })
        ));
        c.next_state();
    }
    let mut sender = TcpStream::connect(sim.script_addr(ScriptPort::Secondary).unwrap()).unwrap();
    std::io::Write::write_all(&mut sender, b"def fails():\n  not_a_function()\nend\n").unwrap();
    let exception = (0..50).find_map(|_| match primary.next() {
        Package::Message(m @ PrimaryMessage::RuntimeException { .. }) => Some(m),
        _ => None,
    });
    assert!(
        exception.is_some(),
        "the primary interface sent no runtime exception"
    );
    // The secondary interface went on with robot state only, past the exception.
    for _ in 0..3 {
        assert!(matches!(secondary.next(), Package::State(..)));
    }
}

#[test]
fn the_read_only_copies_stream_the_same_and_take_no_program() {
    let sim = sim("5.21.0");
    let mut primary = Primary::connect(sim.read_only_addr(ScriptPort::Primary).unwrap());
    assert!(matches!(
        primary.next(),
        Package::Message(PrimaryMessage::Version { .. })
    ));
    let (_, present) = primary.next_state();
    assert_eq!(present, every_sub_package("5.21.0"));
    let mut realtime = Realtime::connect(sim.read_only_addr(ScriptPort::RealTime).unwrap());
    assert_eq!(realtime.next().1, RealtimeLayout::V5_10);

    // A program sent to a read-only copy is dropped; the same sent to the port itself
    // reaches the controller (which says it does not run it).
    let program = b"def hello():\n  textmsg(\"hi\")\nend\n";
    let said = |sim: &Sim| sim.robot_state().unwrap().messages().len();
    let mut copy = TcpStream::connect(sim.read_only_addr(ScriptPort::Secondary).unwrap()).unwrap();
    std::io::Write::write_all(&mut copy, program).unwrap();
    thread::sleep(Duration::from_millis(300));
    assert_eq!(said(&sim), 0, "{:?}", sim.robot_state().unwrap().messages());
    let mut port = TcpStream::connect(sim.script_addr(ScriptPort::Secondary).unwrap()).unwrap();
    std::io::Write::write_all(&mut port, program).unwrap();
    let deadline = Instant::now() + WAIT;
    while said(&sim) == 0 {
        assert!(
            Instant::now() < deadline,
            "the program sent to 30002 never arrived"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// Sends Dashboard commands and reads their replies, to get the arm running.
fn dashboard(sim: &Sim, commands: &[&str]) {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = TcpStream::connect(sim.dashboard_addr().unwrap()).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap(); // the greeting
    for command in commands {
        stream.write_all(format!("{command}\n").as_bytes()).unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
    }
}

/// Waits until `done`, at most [`WAIT`]; `what` and the state `show` gives say what did
/// not happen.
fn wait_until<T: std::fmt::Debug>(
    what: &str,
    mut done: impl FnMut() -> bool,
    show: impl Fn() -> T,
) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: {:?}", show());
        thread::sleep(Duration::from_millis(5));
    }
}

/// ur_rtde's script client sends its programs on 30003 and never reads: as on a
/// controller, it keeps its connection however long it does not read, the stream leaves
/// out what its buffers cannot take (whole messages, counted), others are served all
/// along, and a program it sends later runs (ur_rtde's `reuploadScript`).
#[test]
fn a_script_port_client_that_never_reads_keeps_its_connection_and_its_programs_run() {
    use std::io::Write;
    let sim = Sim::builder()
        .script_ports()
        .dashboard()
        .stall_timeout(Duration::from_millis(200))
        .start()
        .unwrap();
    dashboard(&sim, &["power on", "brake release"]);
    let addr = sim.script_addr(ScriptPort::RealTime).unwrap();
    // A small receive buffer, so that its buffers fill within a second or two.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut silent: TcpStream = socket.into();
    let mut reading = Realtime::connect(addr);
    let deadline = Instant::now() + Duration::from_secs(20);
    while sim.stats().script_port_messages_skipped == 0 {
        assert!(Instant::now() < deadline, "its buffers never filled");
        reading.next();
    }
    // Well past the stall timeout, and the client that reads is still served.
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        reading.next();
    }
    silent
        .write_all(b"def late():\n  textmsg(\"late runs\")\n  sleep(10)\nend\n")
        .unwrap();
    wait_until(
        "the program it sent did not run",
        || sim.robot_state().unwrap().program_state() == rtde_core::RuntimeState::Playing,
        || sim.robot_state(),
    );
    assert_eq!(sim.stats().stalled_clients_dropped, 0);
}

/// `protective_stop()` in a script raises the robot's protective stop: the program pauses
/// with the robot's, and goes on once the stop is unlocked and the program played again.
#[test]
fn a_scripts_protective_stop_is_the_robots_and_play_resumes_it() {
    use rtde_core::RuntimeState;
    use rtde_core::SafetyStatus;
    use std::io::Write;
    let sim = Sim::builder()
        .script_ports()
        .dashboard()
        .protective_stop_unlock_delay(Duration::from_millis(100))
        .start()
        .unwrap();
    dashboard(&sim, &["power on", "brake release"]);
    let mut port = TcpStream::connect(sim.script_addr(ScriptPort::Secondary).unwrap()).unwrap();
    port.write_all(
        b"def stopper():\n  protective_stop()\n  movej([0.2, -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\nend\n",
    )
    .unwrap();
    let state = || sim.robot_state().unwrap();
    wait_until(
        "no protective stop",
        || state().safety_status() == SafetyStatus::ProtectiveStop,
        state,
    );
    assert_eq!(state().program_state(), RuntimeState::Paused);
    thread::sleep(Duration::from_millis(200));
    let held = sim.script_program().unwrap().q();
    assert!(
        held[0].abs() < 1e-9,
        "the arm moved while stopped: {held:?}"
    );
    dashboard(&sim, &["unlock protective stop", "play"]);
    wait_until(
        "the program did not go on",
        || state().program_state() == RuntimeState::Stopped,
        state,
    );
    assert_eq!(state().safety_status(), SafetyStatus::Normal);
}
