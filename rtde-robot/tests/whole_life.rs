//! A robot application's whole life on one running controller, in process, against both
//! Rust drivers: an arm that moves only when a program moves it, a protective stop refused
//! until unlocked and then recovered, a command a paused program has not taken withdrawn at
//! once, and closing mid-move. Every interface (RTDE, the Dashboard server, the program) is
//! asked, and they must agree. Sessions in a row, a killed client and every error's
//! recovery, for every entry point (Python's too) with the simulator as a process of its
//! own, are `rtde-cli/tests/lifecycle.rs`.

use std::time::{Duration, Instant};

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RobotMode, Value};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::motion::{CommandLayout, JointMove, MotionError, MotionOptions};
use rtde_robot_proto::programs::command::Failure;
use rtde_sim::Sim;

mod common;
use common::{max_diff, powered_off, stopped_by_a_collision_mid_move, waiting_for_a_program};
use rtde_testkit::every_driver;
use rtde_testkit::robots::{Driver, Handle};

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
    rtde_testkit::robots::observe(sim.addr())
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
    let err = stopped_by_a_collision_mid_move(&sim, &robot);
    // The error says what to do next.
    assert!(err.to_string().contains("then Robot::recover"), "{err}");
    // Not unlocked yet: recovering is refused before anything is sent.
    let Err(refused) = robot.recover() else {
        panic!("a session started under a protective stop");
    };
    let said = rtde_core::Report(&refused).to_string();
    assert!(said.contains("PROTECTIVE_STOP"), "{said}");

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

fn after_an_unlocked_protective_stop_a_move_fails_at_once_until_recovered<R: Driver>() {
    let (sim, mut dashboard) = controller();
    // Long enough that a move left to time out could not pass for a verdict.
    let options = sending(&sim).timeout(Duration::from_secs(8));
    let robot = R::connect(sim.addr(), options).unwrap();
    stopped_by_a_collision_mid_move(&sim, &robot);
    std::thread::sleep(Duration::from_millis(250));
    dashboard.unlock_protective_stop().unwrap();
    assert_eq!(
        dashboard.program_state().unwrap().state,
        rtde_core::RuntimeState::Paused,
        "unlocked, the program stays paused"
    );
    // At once: the packages sent before the unlock, which say PROTECTIVE_STOP, may still be
    // unread, and they say nothing of a command written after them.

    // The paused program takes no command: the move fails at once, not after 8 s.
    let target = [0.2, -1.57, 1.57, -1.57, -1.57, 0.0];
    let err = robot.move_j(JointMove::to(target).speed(2.0)).unwrap_err();
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");
    let said = err.to_string();
    assert!(
        said.contains("PAUSED") && said.contains("Robot::recover"),
        "{said}"
    );

    let robot = robot.recover().unwrap();
    let reached = robot.move_j(JointMove::to(target).speed(2.0)).unwrap();
    assert!(max_diff(&reached.q, &target) < 1e-9);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn a_command_a_paused_program_has_not_taken_is_withdrawn_and_never_runs<R: Driver>() {
    let (sim, mut dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim).timeout(Duration::from_secs(8))).unwrap();
    let rest = observe(&sim).0;
    dashboard.pause().unwrap();
    let away = [0.8, -1.57, 1.57, -1.57, -1.57, 0.0];
    let first = robot.start_move_j(JointMove::to(away).speed(2.0)).unwrap();
    // Written once the first is withdrawn, with its sequence number; withdrawn in turn, at
    // once rather than after 8 s.
    let err = robot.move_j(JointMove::to(away).speed(2.0)).unwrap_err();
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");
    assert!(err.to_string().contains("withdrawn"), "{err}");
    // A path ends at its withdrawn waypoint: the next is not written in its place.
    let path = [0.5, 0.9].map(|j| JointMove::to([j, -1.57, 1.57, -1.57, -1.57, 0.0]));
    let Err(err) = robot.start_move_j_path(&path) else {
        panic!("a path went on past its withdrawn waypoint");
    };
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");

    dashboard.play().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (q, qd, _) = observe(&sim);
    assert_eq!((q, qd), (rest, [0.0; 6]), "a withdrawn move ran at play");
    // Playing again, the same session moves the arm, with that sequence number once more.
    let target = [0.3, -1.57, 1.57, -1.57, -1.57, 0.0];
    let reached = robot.move_j(JointMove::to(target).speed(2.0)).unwrap();
    assert!(max_diff(&reached.q, &target) < 1e-9);
    // The first handle still says what became of its own command.
    assert!(!first.is_finished(), "withdrawn, yet finished");
    let err = first.wait().unwrap_err();
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn closing_withdraws_what_a_paused_program_had_not_taken<R: Driver>() {
    let (sim, mut dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let rest = observe(&sim).0;
    dashboard.pause().unwrap();
    let away = [0.8, -1.57, 1.57, -1.57, -1.57, 0.0];
    let _unawaited = robot.start_move_j(JointMove::to(away).speed(2.0)).unwrap();
    // Long enough for the command to reach the controller, well short of the 0.2 s after
    // which an open session withdraws it.
    std::thread::sleep(Duration::from_millis(50));
    robot.close().unwrap();
    // The registers keep what the session wrote last; played, the program takes nothing.
    dashboard.play().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (q, qd, _) = observe(&sim);
    assert_eq!(
        (q, qd),
        (rest, [0.0; 6]),
        "a move nobody awaited ran at play"
    );
    sim.shutdown().unwrap();
}

fn a_dashboard_pause_halts_the_arm_and_play_resumes_the_move<R: Driver>() {
    let (sim, mut dashboard) = controller();
    let robot = R::connect(sim.addr(), sending(&sim)).unwrap();
    let target = [1.5, -1.57, 1.57, -1.57, -1.57, 0.0];
    let handle = robot
        .start_move_j(JointMove::to(target).speed(0.5))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!robot.state().steady, "under way");
    dashboard.pause().unwrap();
    // Past the tick that was under way when the pause came.
    std::thread::sleep(Duration::from_millis(50));
    let (paused_at, qd, runtime_state) = observe(&sim);
    const PAUSED: u32 = 4;
    assert_eq!(
        (qd, runtime_state),
        ([0.0; 6], PAUSED),
        "paused: the arm stands"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(observe(&sim).0, paused_at, "the arm moved while paused");
    assert!(!handle.is_finished(), "a paused move is not over");
    assert!(
        max_diff(&paused_at, &target) > 0.1,
        "paused short of the target"
    );
    dashboard.play().unwrap();
    let reached = handle.wait().unwrap_or_else(|e| {
        panic!(
            "{e}; the program: {:?}; the Dashboard: {:?}",
            sim.command_program()
                .map(|p| (p.failure(), p.messages().to_vec())),
            dashboard.program_state()
        )
    });
    assert!(max_diff(&reached.q, &target) < 1e-9, "{:?}", reached.q);
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

every_driver!(
    the_arm_stands_still_unless_a_program_moves_it,
    after_a_protective_stop_and_its_unlock_a_new_session_moves_the_arm,
    after_an_unlocked_protective_stop_a_move_fails_at_once_until_recovered,
    a_command_a_paused_program_has_not_taken_is_withdrawn_and_never_runs,
    closing_withdraws_what_a_paused_program_had_not_taken,
    a_dashboard_pause_halts_the_arm_and_play_resumes_the_move,
    closing_mid_move_stops_the_arm_before_it_returns,
    a_handle_waited_after_close_says_closed_at_once,
);
