//! A robot application's whole life on one running controller, not its first run: a
//! session after another, a client killed mid-move, a protective stop and recovery, and
//! an arm that moves only when a program moves it. Every interface (RTDE, the Dashboard
//! server, the program) is asked, and they must agree.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RobotMode, RuntimeState, Value};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::motion::{CommandLayout, JointMove, MotionError, MotionOptions, Robot};
use rtde_robot_proto::programs::command::Failure;
use rtde_sim::Sim;

mod common;
use common::robots::{Driver, Handle};
use common::{max_diff, powered_off, waiting_for_a_program};

const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

/// A controller waiting for the command program, its protective stops unlockable at once.
fn controller() -> (Sim, Dashboard) {
    waiting_for_a_program(|b| b.protective_stop_unlock_delay(Duration::from_millis(200)))
}

/// Motion options that send the command program, as a session on a real controller does.
fn sending(sim: &Sim) -> MotionOptions {
    common::sending(sim, CommandLayout::UPPER)
}

/// What an observer reads over RTDE: `actual_q`, `actual_qd`, `runtime_state`.
fn observe(sim: &Sim) -> ([f64; 6], [f64; 6], u32) {
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    let mut outputs = DynamicRecipe::outputs(["actual_q", "actual_qd", "runtime_state"]).unwrap();
    client.setup_outputs(outputs.spec(), 125.0).unwrap();
    client.start().unwrap();
    client.recv_into(&mut outputs).unwrap();
    client.close().unwrap();
    match outputs.values() {
        [
            Value::Vector6d(q),
            Value::Vector6d(qd),
            Value::Uint32(state),
        ] => (*q, *qd, *state),
        other => panic!("{other:?}"),
    }
}

fn a_second_and_a_third_session_on_one_controller_each_move_the_arm<R: Driver>() {
    let (sim, _dashboard) = controller();
    for (i, shoulder) in [0.3, -0.3, 0.6].into_iter().enumerate() {
        let robot = R::connect(sim.addr(), sending(&sim))
            .unwrap_or_else(|e| panic!("session {}: {e}", i + 1));
        let target = [shoulder, -1.57, 1.57, -1.57, -1.57, 0.0];
        let reached = robot
            .move_j(JointMove::to(target).speed(2.0).accel(4.0))
            .unwrap_or_else(|e| panic!("session {}: {e}", i + 1));
        assert!(max_diff(&reached.q, &target) < 1e-9, "session {}", i + 1);
        robot.close().unwrap();
    }
    sim.shutdown().unwrap();
}

fn the_arm_stands_still_unless_a_program_moves_it<R: Driver>() {
    // The default motion law moves the joints; with the robot's state machine on, nothing
    // but a program may.
    let sim = powered_off().start().unwrap();
    let mut dashboard =
        Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap();
    let still = |sim: &Sim, when: &str| {
        let (q0, qd, _) = observe(sim);
        std::thread::sleep(Duration::from_millis(300));
        let (q1, _, _) = observe(sim);
        assert_eq!((q0, qd), (q1, [0.0; 6]), "{when}: the joints moved");
        q0
    };
    let rest = still(&sim, "powered off");
    dashboard.power_on().unwrap();
    dashboard
        .wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10))
        .unwrap();
    still(&sim, "idle");
    dashboard.brake_release().unwrap();
    assert_eq!(still(&sim, "running, no program"), rest);

    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    assert_eq!(
        observe(&sim).0,
        rest,
        "the program starts where the arm stands"
    );
    let target = [0.4, -1.4, 1.4, -1.57, -1.57, 0.2];
    robot.move_j(JointMove::to(target).speed(2.0)).unwrap();
    robot.close().unwrap();
    assert_eq!(still(&sim, "after the session"), target);
    sim.shutdown().unwrap();
}

#[test]
fn brake_release_from_power_off_runs_the_robot() {
    let sim = Sim::builder().dashboard().start().unwrap();
    let mut dashboard =
        Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap();
    assert_eq!(dashboard.robot_mode().unwrap(), RobotMode::PowerOff);
    dashboard.brake_release().unwrap();
    dashboard
        .wait_for_robot_mode(RobotMode::Running, Duration::from_secs(2))
        .unwrap();
    sim.shutdown().unwrap();
}

fn after_a_protective_stop_and_its_unlock_a_new_session_moves_the_arm<R: Driver>() {
    let (sim, mut dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let handle = robot
        .start_move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap();
    sim.protective_stop("a collision");
    let err = handle.wait().unwrap_err();
    assert!(matches!(err, MotionError::ProtectiveStop { .. }), "{err}");
    // The error says what to do next.
    assert!(err.to_string().contains("then Robot::recover"), "{err}");
    // Not unlocked yet: recovering is refused before anything is sent.
    let Err(refused) = robot.recover() else {
        panic!("a session started under a protective stop");
    };
    assert!(refused.to_string().contains("PROTECTIVE_STOP"), "{refused}");

    std::thread::sleep(Duration::from_millis(250));
    dashboard.unlock_protective_stop().unwrap();
    assert_eq!(
        dashboard.safety_status().unwrap(),
        rtde_core::SafetyStatus::Normal
    );
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    let mut safety = DynamicRecipe::outputs(["safety_mode"]).unwrap();
    client.setup_outputs(safety.spec(), 125.0).unwrap();
    client.start().unwrap();
    client.recv_into(&mut safety).unwrap();
    assert_eq!(safety.values(), [Value::Int32(1)], "RTDE agrees: normal");
    client.close().unwrap();

    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let target = [0.2, -1.57, 1.57, -1.57, -1.57, 0.0];
    let reached = robot.move_j(JointMove::to(target).speed(2.0)).unwrap();
    assert!(max_diff(&reached.q, &target) < 1e-9);
    // Recovering re-sends the program; the next session moves the arm as well.
    let robot = robot.recover().unwrap();
    let back = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
    let reached = robot.move_j(JointMove::to(back).speed(2.0)).unwrap();
    assert!(max_diff(&reached.q, &back) < 1e-9);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn closing_mid_move_stops_the_arm_before_it_returns<R: Driver>() {
    let (sim, _dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let _handle = robot
        .start_move_j(JointMove::to([2.5, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!robot.state().steady, "under way");
    robot.close().unwrap();
    let program = sim.command_program().unwrap();
    assert_eq!(program.qd(), [0.0; 6], "still moving after close()");
    assert_eq!(
        program.failure(),
        Failure::None,
        "stopped by the client, not the watchdog"
    );
    sim.shutdown().unwrap();
}

fn a_handle_waited_after_close_says_closed_at_once<R: Driver>() {
    let (sim, _dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let handle = robot
        .start_move_j(JointMove::to([2.5, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.3))
        .unwrap();
    // At once: the program may not have taken the move yet; it must not run after close.
    robot.close().unwrap();
    let program = sim.command_program().unwrap();
    assert_eq!(program.qd(), [0.0; 6], "moving after close()");
    let asked = Instant::now();
    let err = handle.wait().unwrap_err();
    assert!(matches!(err, MotionError::Closed), "{err}");
    // Not the 20 s of the options' timeout.
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    sim.shutdown().unwrap();
}

/// Set by the parent test for the child process it kills.
const CHILD_ADDR: &str = "RTDE_LIFECYCLE_CHILD_ADDR";

/// What the child prints once its move is under way.
const MOVING: &str = "CHILD-MOVE-UNDER-WAY";

/// Not a test of its own: the client the next test kills. It attaches to the program,
/// starts a long move, says so, and waits to be killed.
fn child_moving_until_killed<R: Driver>() {
    let Ok(addr) = std::env::var(CHILD_ADDR) else {
        return;
    };
    let robot = R::connect(addr.parse().unwrap(), MotionOptions::new()).unwrap();
    let _handle = robot
        .start_move_j(JointMove::to([2.5, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.3))
        .unwrap();
    println!("{MOVING}");
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
#[ignore = "the child process of a_client_killed_mid_move_stops_the_arm_with_nobody_connected"]
fn child_blocking() {
    child_moving_until_killed::<Robot>();
}

#[test]
#[ignore = "the child process of a_client_killed_mid_move_stops_the_arm_with_nobody_connected"]
fn child_tokio() {
    child_moving_until_killed::<common::robots::OnTokio>();
}

/// The child test that runs driver `R`.
fn child_of<R: Driver>() -> &'static str {
    if R::NAME == "Robot" {
        "child_blocking"
    } else {
        "child_tokio"
    }
}

fn a_client_killed_mid_move_stops_the_arm_with_nobody_connected<R: Driver>() {
    let sim = Sim::builder()
        .controller_version("3.15.8")
        .dashboard()
        .script_ports()
        .command_program()
        .deterministic()
        .start()
        .unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child_of::<R>(), "--ignored"])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD_ADDR, sim.addr().to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        // libtest may print the test's name on the same line first.
        lines.any(|l| l.is_ok_and(|l| l.ends_with(MOVING))),
        "the child never moved"
    );
    std::thread::sleep(Duration::from_millis(300));
    let moving = sim.command_program().unwrap();
    assert!(
        moving.qd().iter().any(|v| v.abs() > 0.1),
        "{:?}",
        moving.qd()
    );
    child.kill().unwrap(); // SIGKILL: no close, no goodbye
    let killed = Instant::now();
    child.wait().unwrap();

    // Nobody is connected: the controller's own loop must stop the arm.
    let stopped = loop {
        let program = sim.command_program().unwrap();
        if program.failure() == Failure::Watchdog && program.qd() == [0.0; 6] {
            break killed.elapsed();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the arm kept moving"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(
        sim.stats().connections_open,
        0,
        "stopped with nobody connected"
    );
    // The watchdog's 50 cycles at 125 Hz, the arm's deceleration, and a busy machine.
    eprintln!("the arm rested {stopped:?} after the kill, nobody connected");
    assert!(
        stopped < Duration::from_secs(2),
        "stopped after {stopped:?}"
    );
    let at_rest = sim.command_program().unwrap().q();

    // An observer that connects later sees the arm at rest and the program stopped, and so
    // does the Dashboard server.
    std::thread::sleep(Duration::from_millis(500));
    let (q, qd, state) = observe(&sim);
    assert_eq!((q, qd), (at_rest, [0.0; 6]));
    assert_eq!(state, RuntimeState::Stopped.code());
    let mut dashboard =
        Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap();
    assert!(!dashboard.running().unwrap());
    assert_eq!(
        dashboard.program_state().unwrap().state,
        RuntimeState::Stopped
    );

    // And the next session on the same controller moves the arm.
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let reached = robot.move_j(JointMove::to(HOME).speed(2.0)).unwrap();
    assert!(max_diff(&reached.q, &HOME) < 1e-9);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

every_driver!(
    a_second_and_a_third_session_on_one_controller_each_move_the_arm,
    the_arm_stands_still_unless_a_program_moves_it,
    after_a_protective_stop_and_its_unlock_a_new_session_moves_the_arm,
    closing_mid_move_stops_the_arm_before_it_returns,
    a_handle_waited_after_close_says_closed_at_once,
    a_client_killed_mid_move_stops_the_arm_with_nobody_connected,
);
