//! The primary and real-time interfaces, measured against the simulator:
//!
//! - the time to decode one robot state message (every e-Series sub-package, as the
//!   simulator sends it) with `Decoder`, against a hand-written floor that reads the same
//!   bytes at fixed offsets into the same `RobotState`, interleaved in one run;
//! - the robot state rate on 30001 (10 Hz: each interval within one period of 100 ms);
//! - the real-time package rate on 30003 at 125 Hz (CB3) and 500 Hz (e-Series): packages
//!   whose controller time skips a tick are missing.
//!
//! `cargo bench -p rtde-bench --bench primary [-- --seconds 60 --rounds 300]`

use std::hint::black_box;
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rtde_bench::interleave::Interleaved;
use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_robot::primary::{
    AdditionalInfo, CalibrationData, CartesianInfo, ConfigurationData, Decoded, Decoder,
    ForceModeData, Joint, JointData, KinematicsInfo, MasterboardData, PrimaryClient, RobotModeData,
    RobotState, ToolCommunicationInfo, ToolData, ToolModeInfo,
};
use rtde_robot::realtime::RealtimeState;
use rtde_robot::script::ScriptPort;
use rtde_sim::Sim;

const FLOOR: &str = "floor: by hand, fixed offsets";
const DECODER: &str = "Decoder::decode";

fn main() -> ExitCode {
    let seconds = arg("--seconds", 10);
    let rounds = usize::try_from(arg("--rounds", 300)).unwrap_or(300);
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!(
        "command: cargo bench -p rtde-bench --bench primary -- --seconds {seconds} --rounds {rounds}"
    );

    let sim = Sim::builder().script_ports().start().expect("a simulator");
    let primary = sim.script_addr(ScriptPort::Primary).expect("script ports");
    let message = first_state_message(primary);

    // The floor reads what the decoder reads before either is timed.
    let mut decoder = Decoder::new();
    let decoded = match decoder.decode(&message) {
        Ok(Some((Decoded::State { state, .. }, _))) => *state,
        other => panic!("no robot state decoded: {other:?}"),
    };
    let mut by_hand = RobotState::default();
    floor(&message, &mut by_hand);
    assert_eq!(by_hand, decoded, "the floor and the decoder disagree");

    let mut floor_state = RobotState::default();
    let mut cases = Interleaved::new();
    cases.case(FLOOR, |n| {
        for _ in 0..n {
            floor(black_box(&message), &mut floor_state);
            black_box(&floor_state);
        }
    });
    cases.case(DECODER, |n| {
        for _ in 0..n {
            if let Ok(Some((decoded, _))) = decoder.decode(black_box(&message)) {
                black_box(&decoded);
            }
        }
    });
    cases.run(rounds, Duration::from_micros(200));
    println!(
        "\nrobot state message ({} bytes, {rounds} interleaved rounds):",
        message.len()
    );
    for name in [FLOOR, DECODER] {
        println!("  {name:<32} {:>8.1} ns", cases.median(name));
    }
    println!(
        "  decoder / floor: {:.2} (median over rounds of the same round's ratio)",
        cases.ratio(DECODER, FLOOR)
    );

    let window = Duration::from_secs(seconds);
    let mut all_met = state_rate(primary, window);
    drop(sim);
    for (version, rate) in [("3.15.8", 125), ("5.21.0", 500)] {
        let sim = Sim::builder()
            .controller_version(version)
            .script_ports()
            .start()
            .expect("a simulator");
        let addr = sim.script_addr(ScriptPort::RealTime).expect("script ports");
        all_met &= realtime_rate(addr, rate, window);
    }
    if all_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The bytes of the first robot state message the primary interface at `addr` sends.
fn first_state_message(addr: SocketAddr) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).expect("the primary interface");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let mut buf = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        while buf.len() >= 5 {
            let size = usize::try_from(i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]))
                .expect("a package size");
            if buf.len() < size {
                break;
            }
            let package: Vec<u8> = buf.drain(..size).collect();
            if package[4] == 16 {
                return package;
            }
        }
        let n = stream.read(&mut chunk).expect("a robot state within 5 s");
        assert!(n > 0, "the simulator closed the primary interface");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Robot state messages on the primary interface for `window`: their rate, and each
/// interval against one period of 100 ms.
fn state_rate(addr: SocketAddr, window: Duration) -> bool {
    let mut client = PrimaryClient::connect(addr).expect("the primary interface");
    let mut arrivals = Vec::new();
    let start = Instant::now();
    while start.elapsed() < window {
        if let Decoded::State { .. } = client.recv().expect("robot state") {
            arrivals.push(Instant::now());
        }
    }
    let intervals: Vec<f64> = arrivals
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
        .collect();
    let (min, max) = intervals
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    #[allow(clippy::cast_precision_loss)] // a few hundred messages
    let rate = (arrivals.len().saturating_sub(1)) as f64
        / (arrivals[arrivals.len() - 1] - arrivals[0]).as_secs_f64();
    // 10 Hz ± one period: every interval between 0 and 200 ms.
    let met = max < 200.0 && min > 0.0 && (rate - 10.0).abs() < 1.0;
    println!(
        "\nrobot state on 30001 over {window:?}: {} messages, {rate:.2} Hz, intervals {min:.1}–{max:.1} ms: {}",
        arrivals.len(),
        verdict(met)
    );
    met
}

/// Real-time packages for `window`: how many, and how many ticks their controller times
/// skipped.
fn realtime_rate(addr: SocketAddr, rate: u32, window: Duration) -> bool {
    let mut stream = TcpStream::connect(addr).expect("the real-time interface");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let mut buf = Vec::new();
    let mut chunk = [0; 16384];
    let mut state = RealtimeState::default();
    let (mut packages, mut missing, mut last) = (0u64, 0u64, None::<u64>);
    let start = Instant::now();
    while start.elapsed() < window {
        let n = stream.read(&mut chunk).expect("real-time packages");
        assert!(n > 0, "the simulator closed the real-time interface");
        buf.extend_from_slice(&chunk[..n]);
        let mut at = 0;
        while let Some((used, _)) = state.decode(&buf[at..]).expect("a real-time package") {
            at += used;
            packages += 1;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // whole ticks
            let tick = (state.time * f64::from(rate)).round() as u64;
            if let Some(last) = last {
                missing += tick.saturating_sub(last + 1);
            }
            last = Some(tick);
        }
        buf.drain(..at);
    }
    let met = missing == 0;
    println!(
        "real-time on 30003 at {rate} Hz over {window:?}: {packages} packages, {missing} missing: {}",
        verdict(met)
    );
    met
}

fn at<const N: usize>(b: &[u8], offset: usize) -> [u8; N] {
    let mut raw = [0; N];
    raw.copy_from_slice(&b[offset..offset + N]);
    raw
}
fn f64_at(b: &[u8], o: usize) -> f64 {
    f64::from_be_bytes(at(b, o))
}
fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_be_bytes(at(b, o))
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes(at(b, o))
}
fn i32_at(b: &[u8], o: usize) -> i32 {
    i32::from_be_bytes(at(b, o))
}
fn f64s<const N: usize>(b: &[u8], o: usize) -> [f64; N] {
    std::array::from_fn(|i| f64_at(b, o + 8 * i))
}

/// The floor: an e-Series robot state message read by hand, each field at its offset.
#[inline(never)]
#[allow(clippy::too_many_lines)] // one sub-package per arm, as a hand-written parser is
fn floor(message: &[u8], s: &mut RobotState) {
    let mut offset = 5;
    while offset + 5 <= message.len() {
        let size = usize::try_from(i32_at(message, offset)).unwrap_or(0);
        let kind = message[offset + 4];
        let b = &message[offset + 5..offset + size];
        match kind {
            0 => {
                s.robot_mode = Some(RobotModeData {
                    timestamp: u64::from_be_bytes(at(b, 0)),
                    real_robot_connected: b[8] != 0,
                    real_robot_enabled: b[9] != 0,
                    robot_power_on: b[10] != 0,
                    emergency_stopped: b[11] != 0,
                    protective_stopped: b[12] != 0,
                    program_running: b[13] != 0,
                    program_paused: b[14] != 0,
                    robot_mode: i8::from_be_bytes([b[15]]),
                    control_mode: b[16],
                    target_speed_fraction: f64_at(b, 17),
                    speed_scaling: f64_at(b, 25),
                    target_speed_fraction_limit: f64_at(b, 33),
                });
            }
            1 => {
                s.joints = Some(JointData {
                    joints: std::array::from_fn(|j| {
                        let o = 41 * j;
                        Joint {
                            q_actual: f64_at(b, o),
                            q_target: f64_at(b, o + 8),
                            qd_actual: f64_at(b, o + 16),
                            i_actual: f32_at(b, o + 24),
                            v_actual: f32_at(b, o + 28),
                            t_motor: f32_at(b, o + 32),
                            t_micro: f32_at(b, o + 36),
                            mode: b[o + 40],
                        }
                    }),
                });
            }
            2 => {
                s.tool = Some(ToolData {
                    analog_input_range: [b[0], b[1]],
                    analog_input: f64s(b, 2),
                    voltage_48v: f32_at(b, 18),
                    output_voltage: b[22],
                    current: f32_at(b, 23),
                    temperature: f32_at(b, 27),
                    tool_mode: b[31],
                });
            }
            3 => {
                s.masterboard = Some(MasterboardData {
                    digital_input_bits: u32_at(b, 0),
                    digital_output_bits: u32_at(b, 4),
                    analog_input_range: [b[8], b[9]],
                    analog_input: f64s(b, 10),
                    analog_output_domain: [b[26], b[27]],
                    analog_output: f64s(b, 28),
                    temperature: f32_at(b, 44),
                    robot_voltage_48v: f32_at(b, 48),
                    robot_current: f32_at(b, 52),
                    io_current: f32_at(b, 56),
                    safety_mode: b[60],
                    in_reduced_mode: b[61],
                    // No Euromap 67 interface (b[62] is 0), four reserved bytes.
                    euromap67: None,
                    operational_mode_selector_input: b[67],
                    three_position_enabling_device_input: b[68],
                });
            }
            4 => {
                s.cartesian = Some(CartesianInfo {
                    tcp_pose: f64s(b, 0),
                    tcp_offset: f64s(b, 48),
                });
            }
            5 => {
                s.kinematics = Some(KinematicsInfo {
                    checksum: std::array::from_fn(|i| u32_at(b, 4 * i)),
                    dh_theta: f64s(b, 24),
                    dh_a: f64s(b, 72),
                    dh_d: f64s(b, 120),
                    dh_alpha: f64s(b, 168),
                    calibration_status: u32_at(b, 216),
                });
            }
            6 => {
                s.configuration = Some(ConfigurationData {
                    joint_min_limit: std::array::from_fn(|j| f64_at(b, 16 * j)),
                    joint_max_limit: std::array::from_fn(|j| f64_at(b, 16 * j + 8)),
                    joint_max_speed: std::array::from_fn(|j| f64_at(b, 96 + 16 * j)),
                    joint_max_acceleration: std::array::from_fn(|j| f64_at(b, 104 + 16 * j)),
                    v_joint_default: f64_at(b, 192),
                    a_joint_default: f64_at(b, 200),
                    v_tool_default: f64_at(b, 208),
                    a_tool_default: f64_at(b, 216),
                    eq_radius: f64_at(b, 224),
                    dh_a: f64s(b, 232),
                    dh_d: f64s(b, 280),
                    dh_alpha: f64s(b, 328),
                    dh_theta: f64s(b, 376),
                    masterboard_version: i32_at(b, 424),
                    controller_box_type: i32_at(b, 428),
                    robot_type: i32_at(b, 432),
                    robot_sub_type: i32_at(b, 436),
                });
            }
            7 => {
                s.force_mode = Some(ForceModeData {
                    wrench: f64s(b, 0),
                    robot_dexterity: f64_at(b, 48),
                });
            }
            8 => {
                s.additional = Some(AdditionalInfo {
                    button_state: b[0],
                    freedrive_button_enabled: b[1] != 0,
                    io_enabled_freedrive: b[2] != 0,
                });
            }
            9 => s.calibration = Some(CalibrationData { values: f64s(b, 0) }),
            11 => {
                s.tool_communication = Some(ToolCommunicationInfo {
                    enabled: b[0] != 0,
                    baud_rate: i32_at(b, 1),
                    parity: i32_at(b, 5),
                    stop_bits: i32_at(b, 9),
                    rx_idle_chars: f32_at(b, 13),
                    tx_idle_chars: f32_at(b, 17),
                });
            }
            12 => {
                s.tool_mode = Some(ToolModeInfo {
                    output_mode: b[0],
                    digital_output_mode: [b[1], b[2]],
                });
            }
            _ => {}
        }
        offset += size;
    }
}
