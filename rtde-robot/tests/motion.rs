//! The motion API against the simulator's command program: what `wait()` returns, every
//! typed error forced through a fault flag, progress while a move runs, and every refused
//! input leaving the simulator untouched; the program sent through the script port, and a
//! protective stop shared by the program and the robot.

use std::f64::consts::PI;
use std::time::Duration;

use rtde_core::{SafetyStatus, Value};
use rtde_robot::motion::{
    Arm, ForceMode, ForceModeType, JointMove, Kinematics, LinearMove, MotionError, MotionOptions,
};
use rtde_robot::script::ScriptError;
use rtde_robot::script::ScriptPort;
use rtde_robot_proto::programs::command::{CommandLayout, int_in};
use rtde_sim::{Calibration, Fault, Motion, Sim, SimBuilder};

mod common;
use common::{
    max_diff, powered_off, sending, stopped_by_a_collision_mid_move, waiting_for_a_program,
};
use rtde_testkit::every_driver;
use rtde_testkit::robots::{Driver, Handle};

const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

/// The arm standing at [`HOME`] until a program moves it.
fn still(builder: SimBuilder) -> SimBuilder {
    builder.motion(Motion::still(HOME))
}

/// A CB3 (125 Hz) unless a test needs the e-Series: the program's watchdog is 50 cycles,
/// 400 ms at 125 Hz, which a test machine busy with other builds does not miss by starving
/// the client's threads (the watchdog's own test runs at 500 Hz).
fn sim_with(faults: Vec<Fault>) -> Sim {
    sim_on("3.15.8", faults)
}

fn sim_on(version: &str, faults: Vec<Fault>) -> Sim {
    let mut builder = Sim::builder()
        .controller_version(version)
        .command_program()
        .deterministic()
        .motion(Motion::still(HOME));
    for f in faults {
        builder = builder.fault(f);
    }
    builder.start().unwrap()
}

fn connect<R: Driver>(sim: &Sim) -> R {
    R::connect(
        sim.addr(),
        MotionOptions::new().timeout(Duration::from_secs(20)),
    )
    .unwrap()
}

fn wait_returns_the_reached_joints_and_pose<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let target = [0.3, -1.4, 1.4, -1.6, -1.5, 0.2];
    let reached = robot
        .move_j(JointMove::to(target).speed(1.0).accel(3.0))
        .unwrap();
    assert!(max_diff(&reached.q, &target) < 1e-9, "{reached:?}");
    assert!(max_diff(&reached.tcp_pose, &Arm::UR5E.tcp_pose(&target)) < 1e-9);

    let mut below = reached.tcp_pose;
    below[2] -= 0.1;
    let down = robot.move_l(LinearMove::to(below)).unwrap();
    // Reached within 1 µm and 1 µrad.
    assert!(max_diff(&down.tcp_pose, &below) < 1e-6, "{down:?}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// A handle's result is its own move's end, kept after later moves end elsewhere.
fn each_handle_returns_its_own_moves_end_after_later_moves<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let first = [0.3, -1.4, 1.4, -1.6, -1.5, 0.2];
    let second = [0.0, -1.2, 1.2, -1.5, -1.5, 0.1];
    let a = robot
        .start_move_j(JointMove::to(first).speed(1.0).accel(3.0))
        .unwrap();
    let b = robot
        .start_move_j(JointMove::to(second).speed(1.0).accel(3.0))
        .unwrap();
    let end_b = b.wait().unwrap();
    let end_a = a.wait().unwrap();
    assert!(max_diff(&end_b.q, &second) < 1e-9, "{end_b:?}");
    assert!(max_diff(&end_a.q, &first) < 1e-9, "{end_a:?}");
    assert!(max_diff(&end_a.tcp_pose, &Arm::UR5E.tcp_pose(&first)) < 1e-9);
    robot.close().unwrap();
}

fn a_path_with_blends_ends_on_its_last_waypoint<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let start = robot.move_j(JointMove::to(HOME)).unwrap().tcp_pose;
    let corners = [(0.08, 0.0), (0.08, 0.08), (0.0, 0.08)];
    let path: Vec<LinearMove> = corners
        .iter()
        .enumerate()
        .map(|(i, (dx, dy))| {
            let mut p = start;
            p[0] += dx;
            p[1] += dy;
            let blend = if i + 1 < corners.len() { 0.02 } else { 0.0 };
            LinearMove::to(p).speed(0.2).accel(1.0).blend(blend)
        })
        .collect();
    let reached = robot.move_l_path(&path).unwrap();
    assert!(max_diff(&reached.tcp_pose, &path[2].pose) < 1e-6);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// A path's handle says which waypoint is under way, and one progress figure for the
/// whole path that only grows: not a figure that restarts at every waypoint.
fn a_paths_progress_spans_the_whole_path<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let path: Vec<JointMove> = [0.3, 0.6, 0.9]
        .into_iter()
        .map(|base| JointMove::to([base, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(1.0))
        .collect();
    let handle = robot.start_move_j_path(&path).unwrap();
    let (mut seen, mut last) = (Vec::new(), 0.0);
    while !handle.is_finished() {
        let (waypoint, progress) = (handle.waypoint(), handle.progress());
        assert!(progress >= last - 1e-9, "{last} then {progress}");
        last = progress;
        if seen.last() != Some(&waypoint) {
            seen.push(waypoint);
        }
        // Waypoint 1 under way: a third of the path done, two thirds not.
        if waypoint == 1 {
            assert!((1.0 / 3.0..=2.0 / 3.0).contains(&progress), "{progress}");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(seen, [0, 1, 2], "the waypoints under way, in order");
    handle.wait().unwrap();
    assert_eq!(robot.state().progress, 1.0);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn progress_and_steadiness_are_readable_while_a_move_runs<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let handle = robot
        .start_move_j(JointMove::to([0.5, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap();
    let mut seen_midway = false;
    for _ in 0..2000 {
        let state = robot.state();
        if state.progress > 0.1 && state.progress < 0.9 && !state.steady {
            seen_midway = true;
            assert!(!handle.is_finished());
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(seen_midway, "never saw the move under way");
    handle.wait().unwrap();
    assert!(robot.state().steady);
    assert_eq!(robot.state().progress, 1.0);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn a_protective_stop_mid_move_is_a_typed_error<R: Driver>() {
    let sim = sim_with(vec![Fault::ProtectiveStopMidMove(Duration::from_millis(
        200,
    ))]);
    let robot = connect::<R>(&sim);
    let err = robot
        .move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap_err();
    assert!(matches!(err, MotionError::ProtectiveStop { .. }), "{err}");
    assert!(err.to_string().contains("protective stop"), "{err}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn a_runtime_stop_mid_move_is_program_stopped<R: Driver>() {
    let sim = sim_with(vec![Fault::RuntimeStopMidMove(Duration::from_millis(200))]);
    let robot = connect::<R>(&sim);
    let err = robot
        .move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap_err();
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");
    assert!(err.to_string().contains("was stopped"), "{err}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn a_silent_link_trips_the_watchdog<R: Driver>() {
    // 80 ticks (160 ms) without a package from tick 600 (1.2 s): the client cannot kick
    // the watchdog, and the program counts the silent ticks when the stream resumes.
    let silence = (600..680).collect();
    let sim = sim_on("5.21.0", vec![Fault::SkipTicks(silence)]);
    let robot = connect::<R>(&sim);
    let err = robot
        .move_j(JointMove::to([2.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap_err();
    assert!(matches!(err, MotionError::Watchdog { .. }), "{err}");
    assert!(err.to_string().contains("watchdog"), "{err}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// The arm cannot follow the line: the controller meets it with a protective stop (the
/// program's own check, `is_within_safety_limits`, is for the target only).
fn a_line_through_a_singularity_is_a_protective_stop<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    // Tool down; the wrist passes within d4 of the base axis halfway.
    let start = [0.4, -0.05, 0.3, 0.0, PI, 0.0];
    let q = robot.inverse_kinematics(&start, Some(HOME)).unwrap();
    robot.move_j(JointMove::to(q)).unwrap();
    let mut end = start;
    end[0] = -0.4;
    let err = robot.move_l(LinearMove::to(end)).unwrap_err();
    assert!(matches!(err, MotionError::ProtectiveStop { .. }), "{err}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn stop_j_ends_a_move_where_the_arm_stops<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let handle = robot
        .start_move_j(JointMove::to([2.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(1.0))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    robot.stop_j(4.0).unwrap();
    // stop_j returns with the arm at rest, and the move's handle says it was interrupted
    // there.
    let rest = robot.state();
    assert!(rest.steady, "{rest:?}");
    let Err(MotionError::Interrupted { at }) = handle.wait() else {
        panic!("a move cut short by stop_j did not say so");
    };
    assert!(at.q[0] > 0.0 && at.q[0] < 2.0, "{at:?}");
    assert!((at.q[0] - rest.q[0]).abs() < 1e-9, "{at:?} {rest:?}");
    // The next move is not: it reaches its target.
    let home = robot
        .move_j(JointMove::to(HOME).speed(1.0).accel(3.0))
        .unwrap();
    assert!(max_diff(&home.q, &HOME) < 1e-9, "{home:?}");
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// A setting taken while a move runs is done at once, and the move runs on: its handle is
/// not finished until the arm is at the target (the program's DONE register never passes a
/// running move).
fn a_setting_during_a_move_leaves_the_move_running<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let target = [1.5, -1.57, 1.57, -1.57, -1.57, 0.0];
    let handle = robot
        .start_move_j(JointMove::to(target).speed(0.5))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    robot.set_payload(1.5, [0.0, 0.0, 0.05]).unwrap();
    robot.set_tcp([0.0, 0.0, 0.05, 0.0, 0.0, 0.0]).unwrap();
    let during = robot.state();
    assert!(
        !during.steady,
        "the settings waited for the move: {during:?}"
    );
    assert!(!handle.is_finished(), "a running move said finished");
    let reached = handle.wait().unwrap();
    assert!(max_diff(&reached.q, &target) < 1e-9, "{reached:?}");
    assert_eq!(sim.command_program().unwrap().payload().0, 1.5);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// A newer motion (a speed) cuts the move under way short: its handle says so at once,
/// where the arm was when the program took the speed.
fn a_speed_after_a_move_interrupts_it<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let handle = robot
        .start_move_j(JointMove::to([2.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    robot.speed_j([0.0, 0.0, 0.0, 0.0, 0.0, 0.1], 1.0).unwrap();
    let Err(MotionError::Interrupted { at }) = handle.wait() else {
        panic!("a move cut short by speed_j did not say so");
    };
    assert!(at.q[0] > 0.0 && at.q[0] < 2.0, "{at:?}");
    robot.stop_j(2.0).unwrap();
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn configuration_commands_reach_the_program<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    robot.set_tcp([0.0, 0.0, 0.1, 0.0, 0.0, 0.0]).unwrap();
    robot.set_payload(1.2, [0.0, 0.0, 0.04]).unwrap();
    robot.zero_ft_sensor().unwrap();
    robot
        .force_mode(&ForceMode {
            task_frame: [0.0; 6],
            selection: [false, false, true, false, false, false],
            wrench: [0.0, 0.0, -5.0, 0.0, 0.0, 0.0],
            kind: ForceModeType::Simple,
            limits: [0.1, 0.1, 0.1, 0.3, 0.3, 0.3],
        })
        .unwrap();
    robot.end_force_mode().unwrap();
    robot.teach_mode().unwrap();
    let program = sim.command_program().unwrap();
    assert_eq!(program.tcp_offset()[2], 0.1);
    assert_eq!(program.payload(), (1.2, [0.0, 0.0, 0.04]));
    assert!(program.in_teach_mode());
    assert!(!program.in_force_mode());
    robot.end_teach_mode().unwrap();
    robot.speed_j([0.1, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0).unwrap();
    robot.stop_j(2.0).unwrap();
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// The command registers as the simulator holds them.
fn command_registers(sim: &Sim) -> Vec<Value> {
    let io = sim.io();
    let l = CommandLayout::UPPER;
    (int_in::COMMAND..int_in::COUNT)
        .map(|o| l.int_input(o))
        .chain((0..18).map(|o| l.double_input(o)))
        .map(|n| io.input(&n).copied().unwrap_or(Value::Int32(0)))
        .collect()
}

fn every_refused_input_names_its_value_and_limit_and_sends_nothing<R: Driver>() {
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    robot.move_j(JointMove::to(HOME)).unwrap();
    let before = (
        command_registers(&sim),
        sim.command_program().unwrap().handshake(),
    );
    let far = [2.0, 0.0, 0.3, 0.0, PI, 0.0];
    let refusals: Vec<(&str, Result<(), MotionError>, &str)> = vec![
        (
            "NaN joint",
            robot
                .move_j(JointMove::to([f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0]))
                .map(drop),
            "joint position [0] = NaN rad is not a finite number",
        ),
        (
            "joint beyond 2π",
            robot
                .move_j(JointMove::to([0.0, 7.0, 0.0, 0.0, 0.0, 0.0]))
                .map(drop),
            "joint position [1] = 7 rad is refused: it must be within -2π..2π rad",
        ),
        (
            "infinite speed",
            robot
                .move_j(JointMove::to(HOME).speed(f64::INFINITY))
                .map(drop),
            "joint speed = inf rad/s is not a finite number",
        ),
        (
            "joint speed beyond π",
            robot.move_j(JointMove::to(HOME).speed(4.0)).map(drop),
            "joint speed = 4 rad/s is refused: it must be > 0 and ≤ π rad/s",
        ),
        (
            "zero acceleration",
            robot.move_j(JointMove::to(HOME).accel(0.0)).map(drop),
            "joint acceleration = 0 rad/s² is refused: it must be > 0 and ≤ 40 rad/s²",
        ),
        (
            "zero tool acceleration",
            robot
                .move_l(LinearMove::to([0.3, -0.2, 0.3, 0.0, PI, 0.0]).accel(0.0))
                .map(drop),
            "tool acceleration = 0 m/s² is refused",
        ),
        (
            "tool speed beyond 3 m/s",
            robot
                .move_l(LinearMove::to([0.3, -0.2, 0.3, 0.0, PI, 0.0]).speed(5.0))
                .map(drop),
            "tool speed = 5 m/s is refused: it must be > 0 and ≤ 3 m/s",
        ),
        (
            "pose out of reach",
            robot.move_l(LinearMove::to(far)).map(drop),
            "out of the arm's reach",
        ),
        (
            "negative blend",
            robot
                .move_j_path(&[JointMove::to(HOME).blend(-0.1)])
                .map(drop),
            "blend radius = -0.1 m is refused: it must be within 0..2 m",
        ),
        (
            "a blend wider than half its segment",
            robot
                .move_j_path(&[
                    JointMove::to([0.1, -1.57, 1.57, -1.57, -1.57, 0.0]).blend(0.5),
                    JointMove::to(HOME),
                ])
                .map(drop),
            "blend radius [0] = 0.5 m is refused: it must be ≤",
        ),
        (
            "a path with one bad waypoint sends none",
            robot
                .move_j_path(&[
                    JointMove::to(HOME),
                    JointMove::to([0.0, 0.0, 9.0, 0.0, 0.0, 0.0]),
                ])
                .map(drop),
            "joint position [2] = 9 rad",
        ),
        (
            "speed_j beyond π",
            robot.speed_j([0.0, 0.0, 0.0, 0.0, 0.0, -4.0], 1.0),
            "joint velocity [5] = -4 rad/s is refused: it must be within -π..π rad/s",
        ),
        (
            "stop_j at zero deceleration",
            robot.stop_j(0.0),
            "joint acceleration = 0 rad/s² is refused",
        ),
        (
            "servo gain",
            robot.servo_j(HOME, 0.002, 0.1, 50.0),
            "servo gain = 50 is refused: it must be within 100..2000",
        ),
        (
            "payload mass",
            robot.set_payload(f64::NAN, [0.0; 3]),
            "payload mass = NaN kg is not a finite number",
        ),
        (
            "force limit 0",
            robot.force_mode(&ForceMode {
                task_frame: [0.0; 6],
                selection: [true; 6],
                wrench: [0.0; 6],
                kind: ForceModeType::PointToTcp,
                limits: [0.0; 6],
            }),
            "force mode limit [0] = 0 m/s or m is refused",
        ),
    ];
    for (what, result, message) in refusals {
        let err = result.expect_err(what);
        assert!(
            matches!(
                err,
                MotionError::Refused(_) | MotionError::OutOfReach(_) | MotionError::Blend(_)
            ),
            "{what}: {err:?}"
        );
        assert!(err.to_string().contains(message), "{what}: {err}");
        assert!(err.to_string().starts_with("nothing sent"), "{what}: {err}");
    }
    // A few cycles for anything sent to arrive: nothing did.
    std::thread::sleep(Duration::from_millis(50));
    let after = (
        command_registers(&sim),
        sim.command_program().unwrap().handshake(),
    );
    assert_eq!(before, after);
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn the_lower_layout_drives_the_program_on_the_lower_registers<R: Driver>() {
    let sim = Sim::builder()
        .controller_version("3.15.8")
        .command_program_on(CommandLayout::LOWER)
        .deterministic()
        .motion(Motion::still(HOME))
        .start()
        .unwrap();
    let robot = R::connect(
        sim.addr(),
        MotionOptions::new().layout(CommandLayout::LOWER),
    )
    .unwrap();
    let target = [0.2, -1.57, 1.57, -1.57, -1.57, 0.0];
    assert!(max_diff(&robot.move_j(JointMove::to(target)).unwrap().q, &target) < 1e-9);
    assert!(sim.io().input("input_int_register_2").is_some());
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

fn attaching_to_a_controller_without_the_program_says_so<R: Driver>() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let err = R::connect(sim.addr(), MotionOptions::new()).unwrap_err();
    assert!(matches!(err, MotionError::ProgramStopped { .. }), "{err}");
    assert!(err.to_string().contains("rtde_command.script"), "{err}");
    sim.shutdown().unwrap();
}

/// The command registers the simulator decoded: the code, the integer arguments and the
/// doubles, as the program reads them.
fn decoded(sim: &Sim) -> (i32, Vec<i32>, Vec<f64>) {
    let io = sim.io();
    let l = CommandLayout::UPPER;
    let int = |o: u8| match io.input(&l.int_input(o)) {
        Some(Value::Int32(v)) => *v,
        other => panic!("{other:?}"),
    };
    let doubles = (0..18)
        .map(|o| match io.input(&l.double_input(o)) {
            Some(Value::Double(v)) => *v,
            other => panic!("{other:?}"),
        })
        .collect();
    (
        int(int_in::COMMAND),
        (int_in::ARGS..int_in::COUNT).map(int).collect(),
        doubles,
    )
}

/// `values` from double +0 on, zero after.
fn doubles(values: &[f64]) -> Vec<f64> {
    let mut d = vec![0.0; 18];
    d[..values.len()].copy_from_slice(values);
    d
}

fn each_command_reaches_the_registers_the_program_reads<R: Driver>() {
    use rtde_robot_proto::programs::command::Command;
    let sim = sim_with(vec![]);
    let robot = connect::<R>(&sim);
    let code = |c: Command| c.code();
    let none = vec![0; 7];

    let q = [0.1, -1.5, 1.5, -1.6, -1.5, 0.1];
    robot
        .move_j(JointMove::to(q).speed(0.9).accel(2.5))
        .unwrap();
    let mut expected = q.to_vec();
    expected.extend([0.9, 2.5, 0.0]);
    assert_eq!(
        decoded(&sim),
        (code(Command::MoveJ), none.clone(), doubles(&expected))
    );

    let mut pose = robot.state().tcp_pose;
    pose[2] -= 0.02;
    robot
        .move_l(LinearMove::to(pose).speed(0.1).accel(0.8))
        .unwrap();
    let mut expected = pose.to_vec();
    expected.extend([0.1, 0.8, 0.0]);
    assert_eq!(
        decoded(&sim),
        (code(Command::MoveL), none.clone(), doubles(&expected))
    );

    robot
        .speed_j([0.05, 0.0, 0.0, 0.0, 0.0, -0.05], 0.7)
        .unwrap();
    assert_eq!(
        decoded(&sim),
        (
            code(Command::SpeedJ),
            none.clone(),
            doubles(&[0.05, 0.0, 0.0, 0.0, 0.0, -0.05, 0.7])
        )
    );
    robot.stop_j(3.0).unwrap();
    assert_eq!(
        decoded(&sim),
        (code(Command::StopJ), none.clone(), doubles(&[3.0]))
    );

    robot.speed_l([0.0, 0.01, 0.0, 0.0, 0.0, 0.0], 0.3).unwrap();
    assert_eq!(
        decoded(&sim),
        (
            code(Command::SpeedL),
            none.clone(),
            doubles(&[0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.3])
        )
    );
    robot.stop_l(0.6).unwrap();
    assert_eq!(
        decoded(&sim),
        (code(Command::StopL), none.clone(), doubles(&[0.6]))
    );

    let here = robot.state().q;
    robot.servo_j(here, 0.008, 0.05, 500.0).unwrap();
    let mut expected = here.to_vec();
    expected.extend([0.008, 0.05, 500.0]);
    assert_eq!(
        decoded(&sim),
        (code(Command::ServoJ), none.clone(), doubles(&expected))
    );
    robot.servo_stop(2.0).unwrap();
    assert_eq!(
        decoded(&sim),
        (code(Command::ServoStop), none.clone(), doubles(&[2.0]))
    );

    robot.set_tcp([0.0, 0.0, 0.12, 0.0, 0.0, 0.3]).unwrap();
    assert_eq!(
        decoded(&sim),
        (
            code(Command::SetTcp),
            none.clone(),
            doubles(&[0.0, 0.0, 0.12, 0.0, 0.0, 0.3])
        )
    );
    robot.set_payload(2.5, [0.01, 0.0, 0.06]).unwrap();
    assert_eq!(
        decoded(&sim),
        (
            code(Command::SetPayload),
            none.clone(),
            doubles(&[2.5, 0.01, 0.0, 0.06])
        )
    );
    for (call, command) in [
        (
            R::zero_ft_sensor as fn(&R) -> Result<(), MotionError>,
            Command::ZeroFtSensor,
        ),
        (R::teach_mode, Command::TeachMode),
        (R::end_teach_mode, Command::EndTeachMode),
        (R::end_force_mode, Command::EndForceMode),
    ] {
        call(&robot).unwrap();
        assert_eq!(decoded(&sim), (code(command), none.clone(), doubles(&[])));
    }
    let mode = ForceMode {
        task_frame: [0.1, 0.0, 0.0, 0.0, 0.0, 0.2],
        selection: [false, true, false, false, false, true],
        wrench: [0.0, 5.0, 0.0, 0.0, 0.0, 0.1],
        kind: ForceModeType::Motion,
        limits: [0.1, 0.2, 0.1, 0.3, 0.3, 0.4],
    };
    robot.force_mode(&mode).unwrap();
    let mut expected = mode.task_frame.to_vec();
    expected.extend(mode.wrench);
    expected.extend(mode.limits);
    assert_eq!(
        decoded(&sim),
        (
            code(Command::ForceMode),
            vec![3, 0, 1, 0, 0, 0, 1],
            expected
        )
    );
    robot.close().unwrap();
    sim.shutdown().unwrap();
}

/// Sent through the script port, the program runs on the URScript engine, on either
/// layout.
fn the_command_program_sent_through_the_script_port_runs_on_its_layout<R: Driver>() {
    for layout in [CommandLayout::UPPER, CommandLayout::LOWER] {
        let (sim, _dashboard) = waiting_for_a_program(still);
        assert!(
            sim.command_program().is_none(),
            "nothing plays before the send"
        );
        let robot = R::connect(sim.addr(), sending(&sim, layout)).unwrap();
        let target = [0.3, -1.57, 1.57, -1.57, -1.57, 0.0];
        let reached = robot.move_j(JointMove::to(target)).unwrap();
        assert!(
            max_diff(&reached.q, &target) < 1e-9,
            "{layout:?}: {reached:?}"
        );
        let watchdog = layout.int_input(int_in::WATCHDOG);
        assert!(
            sim.io().input(&watchdog).is_some(),
            "{layout:?}: {watchdog}"
        );
        assert!(sim.script_program().is_some(), "{layout:?}");
        assert!(sim.command_program().is_some(), "{layout:?}");
        robot.close().unwrap();
        sim.shutdown().unwrap();
    }
}

fn a_robot_not_ready_for_the_program_is_a_typed_error_and_nothing_runs<R: Driver>() {
    let sim = powered_off().start().unwrap();
    let err = R::connect(sim.addr(), sending(&sim, CommandLayout::UPPER)).unwrap_err();
    assert!(
        matches!(
            err,
            MotionError::Script(ScriptError::RobotNotRunning { .. })
        ),
        "{err}"
    );
    assert!(sim.command_program().is_none());
    sim.shutdown().unwrap();
}

fn a_protective_stop_is_the_robots_whoever_raises_it<R: Driver>() {
    // The program's motion meets it: the Dashboard reports it too.
    let (sim, mut dashboard) = waiting_for_a_program(|b| {
        still(b).fault(Fault::ProtectiveStopMidMove(Duration::from_millis(100)))
    });
    let robot = R::connect(sim.addr(), sending(&sim, CommandLayout::UPPER)).unwrap();
    let err = robot
        .move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap_err();
    assert!(matches!(err, MotionError::ProtectiveStop { .. }), "{err}");
    assert_eq!(
        dashboard.safety_status().unwrap(),
        SafetyStatus::ProtectiveStop
    );
    drop(robot);
    sim.shutdown().unwrap();

    // The robot meets it (a collision the controller sees): the move ends with it.
    let (sim, _dashboard) = waiting_for_a_program(still);
    let robot = R::connect(sim.addr(), sending(&sim, CommandLayout::UPPER)).unwrap();
    stopped_by_a_collision_mid_move(&sim, &robot);
    drop(robot);
    sim.shutdown().unwrap();
}

/// The robot computes with the arm the controller does: its calibrated table, read off the
/// primary interface. A line's target is reached on it, and the host's inverse kinematics
/// puts the controller's pose where asked, where the nominal table would miss by
/// millimetres.
fn the_robot_computes_with_the_controllers_calibration<R: Driver>() {
    let sim = still(Sim::builder())
        .controller_version("3.15.8")
        .arm(Arm::UR5)
        .command_program()
        .deterministic()
        .script_ports()
        .calibration(Calibration::random(11))
        .start()
        .unwrap();
    let primary = sim.script_addr(ScriptPort::Primary).unwrap().port();
    let options = MotionOptions::new()
        .arm(Arm::UR5)
        .primary_port(Some(primary))
        .timeout(Duration::from_secs(20));
    let robot = R::connect(sim.addr(), options).unwrap();
    assert_eq!(robot.kinematics(), &Kinematics::Calibrated(sim.arm()));
    assert_ne!(sim.arm(), Arm::UR5);

    let mut below = robot.state().tcp_pose;
    below[2] -= 0.05;
    let down = robot.move_l(LinearMove::to(below)).unwrap();
    assert!(max_diff(&down.tcp_pose, &below) < 1e-6, "{down:?}");
    let q = robot.inverse_kinematics(&below, None).unwrap();
    assert!(max_diff(&sim.arm().tcp_pose(&q), &below) < 1e-9);
    assert!(max_diff(&Arm::UR5.tcp_pose(&q)[..3], &below[..3]) > 1e-4);
    robot.close().unwrap();

    // An arm named that the controller says it is not: refused before anything moves.
    let wrong = R::connect(
        sim.addr(),
        MotionOptions::new()
            .arm(Arm::UR10)
            .primary_port(Some(primary)),
    );
    let Err(MotionError::Invalid(message)) = wrong else {
        panic!("a UR10 named for a UR5 was accepted");
    };
    assert!(
        message.starts_with("the controller's arm is a UR5, not the UR10 named"),
        "{message}"
    );
    // Unnamed, the controller's.
    let robot = R::connect(sim.addr(), MotionOptions::new().primary_port(Some(primary))).unwrap();
    assert_eq!(robot.kinematics(), &Kinematics::Calibrated(sim.arm()));
    robot.close().unwrap();

    // Without the primary interface, the nominal table, and why.
    let robot = R::connect(
        sim.addr(),
        MotionOptions::new().arm(Arm::UR5).primary_port(None),
    )
    .unwrap();
    assert!(matches!(
        robot.kinematics(),
        Kinematics::Nominal { arm, .. } if *arm == Arm::UR5
    ));
    robot.close().unwrap();
}

every_driver!(
    a_paths_progress_spans_the_whole_path,
    a_setting_during_a_move_leaves_the_move_running,
    a_speed_after_a_move_interrupts_it,
    wait_returns_the_reached_joints_and_pose,
    each_handle_returns_its_own_moves_end_after_later_moves,
    a_path_with_blends_ends_on_its_last_waypoint,
    progress_and_steadiness_are_readable_while_a_move_runs,
    a_protective_stop_mid_move_is_a_typed_error,
    a_runtime_stop_mid_move_is_program_stopped,
    a_silent_link_trips_the_watchdog,
    a_line_through_a_singularity_is_a_protective_stop,
    stop_j_ends_a_move_where_the_arm_stops,
    configuration_commands_reach_the_program,
    every_refused_input_names_its_value_and_limit_and_sends_nothing,
    the_lower_layout_drives_the_program_on_the_lower_registers,
    attaching_to_a_controller_without_the_program_says_so,
    each_command_reaches_the_registers_the_program_reads,
    the_command_program_sent_through_the_script_port_runs_on_its_layout,
    a_robot_not_ready_for_the_program_is_a_typed_error_and_nothing_runs,
    a_protective_stop_is_the_robots_whoever_raises_it,
    the_robot_computes_with_the_controllers_calibration,
);
