//! The control-loop kit against the simulator running the servo program: the handshake
//! never skips a waypoint at 30 % speed, the watchdog stops the robot within the
//! documented number of cycles, a client that skips the handshake is stopped, and a control
//! function that outlasts a period is counted as a missed deadline.

use std::time::Duration;

use rtde_core::writer::{IoConfig, IoWriter};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RtdeRecipe, Value};
use rtde_robot::control::{ControlLoop, LoopEvent, ProgramStatus, layout};
use rtde_sim::{MAX_JOINT_ACCELERATION, MAX_JOINT_SPEED, Motion, Sim};

#[derive(RtdeRecipe, Debug, Clone, Copy)]
struct State {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_qd: [f64; 6],
    target_q: [f64; 6],
    runtime_state: u32,
}

#[derive(RtdeRecipe, Debug, Clone, Copy)]
#[rtde(input)]
struct Target {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

/// A simulator running the servo program, and a client.
fn start() -> (Sim, Client) {
    let sim = Sim::builder()
        .servo_program()
        .motion(Motion::still([0.0; 6]))
        .deterministic()
        .start()
        .unwrap();
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let client = Client::connect(sim.addr(), options).unwrap();
    (sim, client)
}

/// [`start`], the loop set up and started, and the client spawned as the background driver.
fn start_background() -> (
    Sim,
    ControlLoop<State, Target>,
    rtde_core::background::Background,
) {
    let (sim, mut client) = start();
    let control = ControlLoop::<State, Target>::setup(&mut client, 500.0).unwrap();
    client.start().unwrap();
    let driver = client
        .spawn(rtde_core::background::SpawnOptions::new())
        .unwrap();
    (sim, control, driver)
}

/// Waypoint `k` of a smooth move of joint 0 to 0.2 rad over `n` waypoints.
fn waypoint(k: i32, n: i32) -> [f64; 6] {
    let s = f64::from(k.min(n)) / f64::from(n);
    let mut q = [0.0; 6];
    q[0] = 0.2 * (0.5 - 0.5 * (std::f64::consts::PI * s).cos());
    q
}

#[test]
fn handshake_never_skips_a_waypoint_at_30_percent_speed() {
    const N: i32 = 120;
    let (sim, mut client) = start();
    let io = IoWriter::setup(&mut client, &IoConfig::new().speed_slider()).unwrap();
    let mut control = ControlLoop::<State, Target>::setup(&mut client, 500.0).unwrap();
    client.start().unwrap();
    io.speed_slider(&mut client, 0.3).unwrap();

    let mut acks = Vec::new();
    let (mut cycles, mut settled) = (0, 0);
    // The last waypoint is acknowledged as it is taken; its servoj, stretched to four
    // cycles at 30 %, takes the setpoint onto it.
    while settled < 4 {
        assert!(cycles < 20 * N, "the robot never took the waypoints");
        if control.handshake().acked() < N {
            cycles += 1;
        } else {
            settled += 1;
        }
        let report = control
            .cycle(&mut client, |_, handshake| {
                acks.push(handshake.acked());
                if handshake.current() < N {
                    handshake.advance();
                }
                Target {
                    q: waypoint(handshake.current(), N),
                }
            })
            .unwrap();
        assert!(!report.status.is_stopped(), "{report:?}");
    }
    // Every waypoint was acknowledged, in order, none skipped.
    assert!(
        acks.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1),
        "{acks:?}"
    );
    for k in 1..=N {
        assert!(
            acks.contains(&k) || k == N,
            "waypoint {k} was never acknowledged"
        );
    }
    // At 30 % each waypoint took three to four cycles: the slider slowed the trajectory
    // down instead of dropping waypoints.
    assert!(cycles >= 3 * N, "{cycles} cycles");
    let program = sim.program().unwrap();
    assert_eq!(program.status(), ProgramStatus::Running);
    assert_eq!(program.acked(), N);
    assert!(program.messages().is_empty(), "{:?}", program.messages());
    assert_eq!(program.setpoint(), waypoint(N, N));
    client.close().unwrap();
    sim.shutdown().unwrap();
}

/// The control loop through `n` waypoints and 100 cycles more on the last: where the arm
/// rests, and the cycles the waypoints took.
fn follow(mut client: Client, n: i32) -> ([f64; 6], u32) {
    let mut control = ControlLoop::<State, Target>::setup(&mut client, 500.0).unwrap();
    client.start().unwrap();
    let (mut cycles, mut settled, mut last) = (0, 0, None);
    while settled < 100 {
        assert!(
            cycles < 20 * n.unsigned_abs(),
            "the robot never finished the waypoints"
        );
        let report = control
            .cycle(&mut client, |state, handshake| {
                last = Some(state.actual_q);
                if handshake.current() < n {
                    handshake.advance();
                }
                Target {
                    q: waypoint(handshake.current(), n),
                }
            })
            .unwrap();
        assert!(!report.status.is_stopped(), "{report:?}");
        if control.handshake().acked() < n {
            cycles += 1;
        } else {
            settled += 1;
        }
    }
    client.close().unwrap();
    (last.unwrap(), cycles)
}

/// rtde_servo.script on the URScript engine: the control loop takes the arm through the
/// waypoints to the last, within 1e-6 rad, one waypoint per controller cycle: the script
/// acknowledges a waypoint as it takes it, before its servoj blocks, so the next is there
/// when servoj returns (acknowledged after servoj, the loop could only send one every
/// other cycle).
#[test]
fn the_servo_program_takes_a_waypoint_per_cycle() {
    const N: i32 = 300;
    let (sim, client) = start();
    assert!(sim.script_program().is_some());
    let (end, cycles) = follow(client, N);
    // A few cycles for the start-up (the first waypoints meet the program's first ticks);
    // acknowledged after servoj, it would take twice N.
    let limit = N.unsigned_abs() + 10;
    assert!(cycles <= limit, "{cycles} cycles for {N} waypoints");
    let last = waypoint(N, N);
    let off = end
        .iter()
        .zip(&last)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(off < 1e-6, "{end:?}, the last waypoint {last:?}");
    sim.shutdown().unwrap();
}

#[test]
fn watchdog_stops_the_robot_within_the_documented_cycles() {
    let (sim, mut client) = start();
    let mut control = ControlLoop::<State, Target>::setup(&mut client, 500.0).unwrap();
    client.start().unwrap();
    // Stream a fast move for a while, then stop answering (a hung client).
    let mut last = None;
    for _ in 0..100 {
        control
            .cycle(&mut client, |state, handshake| {
                last = Some(*state);
                handshake.advance();
                Target {
                    q: waypoint(handshake.current(), 100),
                }
            })
            .unwrap();
    }
    let last_command = last.unwrap().timestamp;
    let period = 1.0 / 500.0;
    let spec = control.output_spec();
    let names: Vec<&str> = spec.names().to_vec();
    let mut state = DynamicRecipe::outputs(&names).unwrap();
    let mut stopped_at = None;
    let mut rest_at = None;
    for _ in 0..1000 {
        client.recv_into(&mut state).unwrap();
        let t = state.get("timestamp").and_then(Value::as_f64).unwrap();
        let status = match state.get("output_int_register_25") {
            Some(Value::Int32(v)) => ProgramStatus::from_register(*v),
            other => panic!("{other:?}"),
        };
        if status == ProgramStatus::WatchdogStopped && stopped_at.is_none() {
            stopped_at = Some(t);
        }
        if stopped_at.is_some()
            && let Some(Value::Vector6d(qd)) = state.get("actual_qd")
            && qd.iter().all(|v| *v == 0.0)
        {
            rest_at = Some(t);
            break;
        }
    }
    let stopped_at = stopped_at.expect("the watchdog never stopped the robot");
    // The last command reached the controller within one cycle of the package it
    // answered; the program stops WATCHDOG_TIMEOUT_CYCLES cycles after that change.
    let cycles = ((stopped_at - last_command) / period).round();
    let limit = f64::from(layout::WATCHDOG_TIMEOUT_CYCLES) + 2.0;
    eprintln!("watchdog stop {cycles} cycles after the last command");
    assert!(
        cycles >= f64::from(layout::WATCHDOG_TIMEOUT_CYCLES) && cycles <= limit,
        "stopped {cycles} cycles after the last command"
    );
    // And the arm halts, braking at the acceleration limit.
    let rest_at = rest_at.expect("the arm never came to rest");
    let braking = MAX_JOINT_SPEED / MAX_JOINT_ACCELERATION / period;
    assert!((rest_at - stopped_at) / period <= braking + 1.0);
    // The program halts once its stopj has brought the arm to rest: STOPPED.
    let mut runtime_state = None;
    for _ in 0..10 {
        client.recv_into(&mut state).unwrap();
        runtime_state = state.get("runtime_state").copied();
        if runtime_state == Some(Value::Uint32(1)) {
            break;
        }
    }
    assert_eq!(runtime_state, Some(Value::Uint32(1)), "STOPPED");
    let texts: Vec<String> = client
        .text_messages()
        .map(|t| t.message.to_string())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("watchdog") && t.contains("input_int_register_24")),
        "{texts:?}"
    );
    client.close().unwrap();
    sim.shutdown().unwrap();
}

#[test]
fn a_client_that_ignores_the_handshake_is_stopped() {
    let (sim, mut client) = start();
    let outputs = DynamicRecipe::outputs(["timestamp", "output_int_register_25"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let mut inputs = DynamicRecipe::inputs(layout::INPUT_NAMES.iter().copied().chain([
        "input_double_register_24",
        "speed_slider_mask",
        "speed_slider_fraction",
    ]))
    .unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    inputs.set("speed_slider_mask", Value::Uint32(1)).unwrap();
    inputs
        .set("speed_slider_fraction", Value::Double(0.3))
        .unwrap();
    let mut status = ProgramStatus::Waiting;
    // A new waypoint every cycle, whatever the robot says: at 30 % it cannot keep up.
    for k in 1..200 {
        inputs
            .set("input_int_register_24", Value::Int32(k))
            .unwrap();
        inputs
            .set("input_int_register_25", Value::Int32(k))
            .unwrap();
        inputs
            .set(
                "input_double_register_24",
                Value::Double(f64::from(k) * 1e-3),
            )
            .unwrap();
        client.send(&handle, &inputs).unwrap();
        let payload = client.recv().unwrap();
        status =
            ProgramStatus::from_register(i32::from_be_bytes(payload[8..12].try_into().unwrap()));
        if status.is_stopped() {
            break;
        }
    }
    assert_eq!(status, ProgramStatus::HandshakeStopped);
    let program = sim.program().unwrap();
    assert!(
        program.messages()[0].contains("handshake"),
        "{:?}",
        program.messages()
    );
    client.close().unwrap();
    sim.shutdown().unwrap();
}

/// Cycles whose control function outlasts several periods: each must be a missed deadline.
const SLOW_CYCLES: [u64; 3] = [5, 12, 19];
/// Five periods at 500 Hz: the next package is certainly there when the command goes out.
const SLOW_WORK: Duration = Duration::from_millis(10);

/// The control function of the miss tests: sleeps past the next package on `SLOW_CYCLES`.
fn slow_on_some_cycles(cycle: u64, h: &mut rtde_robot::control::Handshake) -> Target {
    if SLOW_CYCLES.contains(&cycle) {
        std::thread::sleep(SLOW_WORK);
    }
    h.advance();
    Target { q: [0.0; 6] }
}

/// What a loop whose slow cycles were `SLOW_CYCLES` must report: each of them a miss, in its
/// cycle report (`missed`), its event and the stats, which agree.
fn assert_slow_cycles_missed(control: &mut ControlLoop<State, Target>, missed: &[u64]) {
    let stats = control.stats();
    let events: Vec<u64> = control
        .events()
        .filter_map(|e| match e {
            LoopEvent::DeadlineMiss {
                cycle, response, ..
            } => {
                if SLOW_CYCLES.contains(&cycle) {
                    assert!(response >= SLOW_WORK, "cycle {cycle}: {response:?}");
                }
                Some(cycle)
            }
            _ => None,
        })
        .collect();
    // A loaded machine may add misses of its own; the slow cycles are never absent.
    for cycle in SLOW_CYCLES {
        assert!(
            events.contains(&cycle),
            "cycle {cycle} not reported: {events:?}"
        );
        assert!(
            missed.contains(&cycle),
            "cycle {cycle}'s report: not missed"
        );
    }
    assert_eq!(u64::try_from(events.len()).unwrap(), stats.misses);
    assert_eq!(u64::try_from(missed.len()).unwrap(), stats.misses);
    assert!(stats.max_response >= SLOW_WORK, "{stats:?}");
}

#[test]
fn a_control_function_that_sleeps_past_the_next_package_is_a_missed_deadline() {
    let (sim, mut client) = start();
    let mut control = ControlLoop::<State, Target>::setup(&mut client, 500.0).unwrap();
    assert_eq!(
        control.input_spec().names()[6..],
        ["input_int_register_24", "input_int_register_25"]
    );
    client.start().unwrap();
    let mut missed = Vec::new();
    for cycle in 0..25 {
        let report = control
            .cycle(&mut client, |_, h| slow_on_some_cycles(cycle, h))
            .unwrap();
        if report.missed {
            missed.push(cycle);
        }
    }
    assert_eq!(control.stats().cycles, 25);
    assert_slow_cycles_missed(&mut control, &missed);
    assert_eq!(control.status(), Some(ProgramStatus::Running));
    client.close().unwrap();
    sim.shutdown().unwrap();
}

#[test]
fn a_slow_control_function_is_a_missed_deadline_over_the_background_driver_too() {
    let (sim, mut control, driver) = start_background();
    let (mut receiver, sender) = (driver.receiver(), driver.sender());
    let mut missed = Vec::new();
    for cycle in 0..25 {
        let report = control
            .cycle_background(
                &mut receiver,
                &sender,
                Some(Duration::from_secs(5)),
                |_, h| slow_on_some_cycles(cycle, h),
            )
            .unwrap();
        if report.missed {
            missed.push(cycle);
        }
    }
    assert_slow_cycles_missed(&mut control, &missed);
    driver.close().unwrap();
    sim.shutdown().unwrap();
}

#[test]
fn the_loop_runs_over_the_background_driver_too() {
    const N: i32 = 200;
    let (sim, mut control, driver) = start_background();
    let (mut receiver, sender) = (driver.receiver(), driver.sender());
    let mut acks = Vec::new();
    let mut cycles = 0;
    while control.handshake().acked() < N {
        assert!(cycles < 20 * N, "the robot never finished the waypoints");
        cycles += 1;
        let report = control
            .cycle_background(
                &mut receiver,
                &sender,
                Some(Duration::from_secs(5)),
                |_, h| {
                    acks.push(h.acked());
                    if h.current() < N {
                        h.advance();
                    }
                    Target {
                        q: waypoint(h.current(), N),
                    }
                },
            )
            .unwrap();
        assert!(!report.status.is_stopped(), "{report:?}");
    }
    assert!(
        acks.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1),
        "{acks:?}"
    );
    assert_eq!(control.stats().cycles, u64::try_from(cycles).unwrap());
    let program = sim.program().unwrap();
    assert_eq!(
        (program.acked(), program.status()),
        (N, ProgramStatus::Running)
    );
    driver.close().unwrap();
    sim.shutdown().unwrap();
}
