//! `rtde_command.script` on the URScript engine, command by command, seen as a client
//! sees it: its registers ([`CommandProgramState`]), the arm's joints and its messages.

use rtde_core::Value;
use rtde_core::fields::{Direction, lookup};
use rtde_kinematics::Arm;
use rtde_robot_proto::programs::WATCHDOG_TIMEOUT_CYCLES;
use rtde_robot_proto::programs::command::{Command, CommandLayout, Failure, ProgramState, int_in};
use rtde_urscript::ControllerVersion;

use super::command_text;
use super::state::CommandProgramState;
use crate::io::IoState;
use crate::motion::{Trapezoid, distance3};
use crate::robot_program::Program;
use crate::script_program::ScriptProgram;

const DT: f64 = 0.002;
const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

/// The client's side of the registers, written into an `IoState` as a client's
/// packages would, and the program stepped tick by tick.
struct Bench {
    io: IoState,
    program: Program,
    seq: i32,
    watchdog: i32,
    kick: bool,
    /// `(q, qd)` after each tick.
    trace: Vec<([f64; 6], [f64; 6])>,
}

fn name(n: String) -> &'static str {
    lookup(Direction::Input, &n).unwrap().name()
}

impl Bench {
    fn new() -> Bench {
        Bench::at(HOME)
    }

    /// A program started on empty registers, after its first tick: it has taken
    /// sequence number 0 as its starting point.
    fn at(q: [f64; 6]) -> Bench {
        let io = IoState::default();
        let mut program = started(q);
        program.step(&io, DT);
        Bench {
            io,
            program,
            seq: 0,
            watchdog: 0,
            kick: true,
            trace: Vec::new(),
        }
    }

    /// What the program reports: its registers, its arm.
    fn state(&self) -> CommandProgramState {
        CommandProgramState::of(&self.program, CommandLayout::UPPER, false).unwrap()
    }

    fn slider(&mut self, fraction: f64) {
        self.io.write(&[
            ("speed_slider_mask", Value::Uint32(1)),
            ("speed_slider_fraction", Value::Double(fraction)),
        ]);
    }

    /// Writes the next command (the program takes it at the next tick it can).
    fn command(&mut self, command: Command, doubles: &[f64], ints: &[i32]) {
        self.seq += 1;
        let l = CommandLayout::UPPER;
        let mut values = vec![
            (
                name(l.int_input(int_in::COMMAND)),
                Value::Int32(command.code()),
            ),
            (name(l.int_input(int_in::SEQUENCE)), Value::Int32(self.seq)),
        ];
        for (i, v) in ints.iter().enumerate() {
            let offset = int_in::ARGS + u8::try_from(i).unwrap();
            values.push((name(l.int_input(offset)), Value::Int32(*v)));
        }
        for (i, v) in doubles.iter().enumerate() {
            let offset = u8::try_from(i).unwrap();
            values.push((name(l.double_input(offset)), Value::Double(*v)));
        }
        self.io.write(&values);
    }

    fn move_j(&mut self, q: [f64; 6], speed: f64, accel: f64, blend: f64) {
        let mut d = q.to_vec();
        d.extend([speed, accel, blend]);
        self.command(Command::MoveJ, &d, &[]);
    }

    fn move_l(&mut self, pose: [f64; 6], speed: f64, accel: f64, blend: f64) {
        let mut d = pose.to_vec();
        d.extend([speed, accel, blend]);
        self.command(Command::MoveL, &d, &[]);
    }

    fn tick(&mut self) {
        if self.kick {
            self.watchdog += 1;
            let w = name(CommandLayout::UPPER.int_input(int_in::WATCHDOG));
            self.io.write(&[(w, Value::Int32(self.watchdog))]);
        }
        self.program.step(&self.io, DT);
        self.trace.push((self.program.q(), self.program.qd()));
    }

    /// Ticks until the arm first stands on `q`, from the tick `start` of the trace:
    /// the motion's duration (the program reports the move finished a tick later,
    /// once the arm is still).
    fn ticks_to_reach(&self, start: usize, q: &[f64; 6]) -> usize {
        self.trace[start..]
            .iter()
            .position(|(at, _)| at == q)
            .map_or(usize::MAX, |i| i + 1)
    }

    /// Ticks until command `seq` is finished; the ticks it took.
    fn until_done(&mut self, seq: i32) -> usize {
        let start = self.trace.len();
        while self.state().handshake().1 < seq {
            assert!(self.trace.len() - start < 100_000, "never finished");
            assert!(!self.program.has_stopped(), "{:?}", self.program.messages());
            self.tick();
        }
        self.trace.len() - start
    }

    fn tcp(&self, q: &[f64; 6]) -> [f64; 6] {
        Arm::UR5E.tcp_pose(q)
    }
}

/// The command program as rtde-robot sends it, on the engine, the arm at `q`.
fn started(q: [f64; 6]) -> Program {
    let text = command_text(CommandLayout::UPPER);
    let v5 = ControllerVersion::new(5, 9, 0, 0);
    let program = ScriptProgram::compile(&text, v5, Arm::UR5E, q).unwrap();
    Program::Script(Box::new(program))
}

fn max_abs(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().map(f64::abs).fold(0.0, f64::max)
}

#[test]
fn the_trapezoid_is_continuous_and_ends_at_its_length() {
    for (length, speed, accel) in [(1.0, 0.5, 1.0), (0.01, 0.5, 1.0), (2.0, 1.0, 0.3)] {
        let p = Trapezoid::new(length, speed, accel);
        let (mut last, mut t) = (0.0, 0.0);
        while t < p.duration() + 0.01 {
            let f = p.fraction(t);
            assert!(f >= last && f - last <= speed * 0.001 / length + 1e-12);
            last = f;
            t += 0.001;
        }
        assert_eq!(p.fraction(p.duration()), 1.0);
    }
}

#[test]
fn move_j_keeps_to_its_speed_and_acceleration_and_ends_on_the_target() {
    let mut b = Bench::new();
    let target = [0.8, -1.2, 1.0, -1.9, -1.2, 0.5];
    let (speed, accel) = (0.6, 1.5);
    b.move_j(target, speed, accel, 0.0);
    b.until_done(1);
    let ticks = b.ticks_to_reach(0, &target);
    let lead = max_abs((0..6).map(|j| target[j] - HOME[j]));
    // The trapezoid's own duration, within a tick.
    let expected = Trapezoid::new(lead, speed, accel).duration() / DT;
    #[allow(clippy::cast_precision_loss)] // a few thousand ticks
    let took = ticks as f64;
    assert!(
        (took - expected).abs() <= 1.0,
        "{took} ticks, expected {expected}"
    );
    let mut previous = [0.0; 6];
    for (_, qd) in &b.trace {
        // The leading joint at most at the speed, every joint at its share.
        for j in 0..6 {
            let share = (target[j] - HOME[j]).abs() / lead;
            assert!(qd[j].abs() <= speed * share + 1e-9, "{qd:?}");
            // Accelerations within the limit (one tick of rounding).
            assert!(
                (qd[j] - previous[j]).abs() / DT <= accel * share + 1e-6,
                "{qd:?}"
            );
        }
        previous = *qd;
    }
    assert_eq!(b.program.q(), target);
    assert_eq!(b.state().state(), ProgramState::Idle);
}

#[test]
fn move_l_follows_the_straight_line_and_ends_on_the_pose() {
    let mut b = Bench::new();
    let start = b.tcp(&HOME);
    let mut target = start;
    target[0] += 0.1;
    target[2] -= 0.1;
    b.move_l(target, 0.25, 1.2, 0.0);
    b.until_done(1);
    let (p0, p1) = (
        [start[0], start[1], start[2]],
        [target[0], target[1], target[2]],
    );
    let dir: [f64; 3] = std::array::from_fn(|i| p1[i] - p0[i]);
    let len = distance3(&p0, &p1);
    let mut worst: f64 = 0.0;
    for (q, _) in &b.trace {
        let p = b.tcp(q);
        let rel: [f64; 3] = std::array::from_fn(|i| p[i] - p0[i]);
        let along = (0..3).map(|i| rel[i] * dir[i]).sum::<f64>() / len;
        let off = (0..3)
            .map(|i| (rel[i] - along * dir[i] / len).powi(2))
            .sum::<f64>()
            .sqrt();
        worst = worst.max(off);
    }
    assert!(worst < 1e-9, "{worst:e} m off the line");
    let reached = b.tcp(&b.program.q());
    assert!(
        max_abs((0..6).map(|i| reached[i] - target[i])) < 1e-9,
        "{reached:?}"
    );
}

/// The largest change of joint velocity between two ticks, per tick.
fn largest_velocity_step(trace: &[([f64; 6], [f64; 6])]) -> f64 {
    trace
        .windows(2)
        .map(|w| max_abs((0..6).map(|j| w[1].1[j] - w[0].1[j])))
        .fold(0.0, f64::max)
}

#[test]
fn blends_keep_the_velocity_continuous_and_do_not_stop_at_the_waypoints() {
    let (speed, accel) = (1.0, 2.0);
    let waypoints = [
        [0.5, -1.57, 1.57, -1.57, -1.57, 0.0],
        [0.5, -1.2, 1.2, -1.57, -1.57, 0.0],
        [0.0, -1.2, 1.2, -1.57, -1.57, 0.0],
    ];
    let mut blended = Bench::new();
    for (i, w) in waypoints.iter().enumerate() {
        let blend = if i + 1 < waypoints.len() { 0.05 } else { 0.0 };
        blended.move_j(*w, speed, accel, blend);
        // The client writes the next waypoint once this one is taken.
        while blended.state().handshake().0 < blended.seq {
            blended.tick();
        }
    }
    blended.until_done(3);
    let mut stopping = Bench::new();
    for (i, w) in waypoints.iter().enumerate() {
        stopping.move_j(*w, speed, accel, 0.0);
        stopping.until_done(i32::try_from(i + 1).unwrap());
    }
    // The blended path never comes to rest before its end, and arrives sooner.
    let moving = &blended.trace[1..blended.trace.len() - 1];
    assert!(moving.iter().all(|(_, qd)| max_abs(*qd) > 1e-6));
    assert!(blended.trace.len() < stopping.trace.len());
    // Continuous velocity: no step beyond the acceleration of both profiles at once.
    let step = largest_velocity_step(&blended.trace);
    assert!(step <= 2.0 * accel * DT + 1e-9, "velocity jumped by {step}");
    assert_eq!(blended.program.q(), waypoints[2]);
}

#[test]
fn move_l_paths_blend_too() {
    let mut b = Bench::new();
    let start = b.tcp(&HOME);
    let mut corner = start;
    corner[0] += 0.1;
    let mut end = corner;
    end[1] += 0.1;
    b.move_l(corner, 0.2, 1.0, 0.02);
    b.tick();
    b.move_l(end, 0.2, 1.0, 0.0);
    b.until_done(2);
    let moving = &b.trace[1..b.trace.len() - 1];
    assert!(moving.iter().all(|(_, qd)| max_abs(*qd) > 1e-6));
    let reached = b.tcp(&b.program.q());
    assert!(max_abs((0..3).map(|i| reached[i] - end[i])) < 1e-9);
}

#[test]
fn the_speed_slider_at_30_percent_stretches_a_move_j_by_1_over_0_3() {
    let target = [0.8, -1.2, 1.0, -1.9, -1.2, 0.5];
    let mut full = Bench::new();
    full.move_j(target, 1.0, 2.0, 0.0);
    full.until_done(1);
    let full_ticks = full.ticks_to_reach(0, &target);
    let mut slow = Bench::new();
    slow.slider(0.3);
    slow.move_j(target, 1.0, 2.0, 0.0);
    slow.until_done(1);
    let slow_ticks = slow.ticks_to_reach(0, &target);
    #[allow(clippy::cast_precision_loss)] // a few thousand ticks
    let (full_t, slow_t) = (full_ticks as f64, slow_ticks as f64);
    assert!(
        (slow_t - full_t / 0.3).abs() <= 1.0,
        "{slow_ticks} ticks at 30 %, {full_ticks} at 100 %"
    );
    assert_eq!(slow.program.q(), target);
}

/// A `stop_j` decelerates the arm at its rate from the tick after it is written (the
/// program reads it in its next tick), every tick, until it rests.
#[test]
fn stop_j_decelerates_at_its_rate_from_the_tick_after_it_is_written() {
    let mut b = Bench::new();
    b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 1.0, 2.0, 0.0);
    for _ in 0..400 {
        b.tick();
    }
    assert!(b.program.qd()[0] > 0.5);
    let written = b.trace.len();
    b.command(Command::StopJ, &[4.0], &[]);
    while max_abs(b.program.qd()) > 0.0 {
        b.tick();
    }
    // At speed (qd[0] = 1.0 rad/s) before the stop; then 4.0 rad/s² less each tick.
    let qd: Vec<f64> = b.trace[written - 1..].iter().map(|(_, qd)| qd[0]).collect();
    let first_drop = qd.windows(2).position(|w| w[1] < w[0]).unwrap();
    assert!(
        first_drop <= 2,
        "the stop began {first_drop} ticks after it was written"
    );
    for (tick, w) in qd[first_drop..].windows(2).enumerate() {
        // The last tick brakes only what speed is left.
        assert!(
            (w[0] - w[1] - 4.0 * DT).abs() < 1e-9 || w[1] == 0.0,
            "tick {tick} of the stop: {} -> {}",
            w[0],
            w[1]
        );
    }
    b.until_done(b.seq);
    assert_eq!(b.state().state(), ProgramState::Idle);
}

#[test]
fn speed_j_ramps_to_the_velocity_times_the_slider() {
    let mut b = Bench::new();
    b.slider(0.5);
    b.command(Command::SpeedJ, &[0.2, 0.0, 0.0, 0.0, 0.0, -0.4, 1.0], &[]);
    for _ in 0..500 {
        b.tick();
    }
    let qd = b.program.qd();
    assert!(
        (qd[0] - 0.1).abs() < 1e-9 && (qd[5] + 0.2).abs() < 1e-9,
        "{qd:?}"
    );
}

#[test]
fn a_paused_speed_j_stands_without_a_watchdog_and_ramps_again_from_rest_at_play() {
    let mut b = Bench::new();
    b.command(Command::SpeedJ, &[0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], &[]);
    for _ in 0..500 {
        b.tick();
    }
    assert!((b.program.qd()[0] - 0.2).abs() < 1e-9);
    let paused_at = b.program.q();
    // Paused for longer than the watchdog's timeout, and nobody writes meanwhile.
    for _ in 0..WATCHDOG_TIMEOUT_CYCLES * 2 {
        b.program.hold();
    }
    assert_eq!((b.program.q(), b.program.qd()), (paused_at, [0.0; 6]));
    b.tick();
    assert_eq!(b.state().failure(), Failure::None);
    // One tick's acceleration (1 rad/s²) from rest, not the speed it had.
    let qd = b.program.qd()[0];
    assert!(qd > 0.0 && qd <= 1.0 * DT + 1e-12, "{qd}");
}

/// A silent client trips the watchdog: the program reports why, brakes the arm and ends.
#[test]
fn the_watchdog_stops_the_program() {
    let mut b = Bench::new();
    b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
    b.tick();
    b.kick = false;
    for _ in 0..WATCHDOG_TIMEOUT_CYCLES {
        b.tick();
    }
    assert_eq!(b.state().failure(), Failure::Watchdog);
    // The script brakes the arm (`stopj`) before it ends.
    for _ in 0..1000 {
        if b.program.has_stopped() {
            break;
        }
        b.tick();
    }
    assert!(b.program.has_stopped());
    assert_eq!(b.program.qd(), [0.0; 6]);
    assert!(
        b.program.messages()[0].contains("watchdog"),
        "{:?}",
        b.program.messages()
    );
}

#[test]
fn ticks_run_late_do_not_count_against_the_watchdog() {
    let mut b = Bench::new();
    b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
    b.tick();
    // The simulator fell 100 ticks behind its clock: no client could write meanwhile.
    for _ in 0..100 {
        b.program.step_late(&b.io, DT);
    }
    b.tick();
    assert_eq!(b.state().failure(), Failure::None);
    assert_eq!(b.state().state(), ProgramState::Moving);
}

#[test]
fn a_new_program_starts_from_the_registers_a_previous_session_left() {
    // The previous session's last command, a move, is still in the registers.
    let mut b = Bench::new();
    b.program = started(HOME);
    b.seq = 41;
    b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
    b.tick();
    let p = b.state();
    assert_eq!(p.handshake(), (42, 42), "taken as the starting point");
    assert_eq!(p.state(), ProgramState::Idle, "and not run again");
    assert_eq!((p.q(), p.failure()), (HOME, Failure::None));
    // The next number is this session's first command.
    let target = [0.2, -1.57, 1.57, -1.57, -1.57, 0.0];
    b.move_j(target, 1.0, 3.0, 0.0);
    assert!(b.until_done(43) > 1);
    assert_eq!(b.program.q(), target);
}

#[test]
fn a_skipped_sequence_number_stops_the_program() {
    let mut b = Bench::new();
    b.seq = 1;
    b.move_j(HOME, 0.5, 1.0, 0.0);
    b.tick();
    assert_eq!(b.state().failure(), Failure::Handshake);
}

#[test]
fn a_protective_stop_mid_move_is_reported_as_a_controller_reports_it() {
    let mut b = Bench::new();
    b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
    for _ in 0..100 {
        b.tick();
    }
    b.program.protective_stop("a collision");
    for _ in 0..100 {
        b.tick();
    }
    let p = &b.program;
    assert!(b.state().is_protective_stopped());
    assert_eq!(p.output("safety_mode"), Some(Value::Int32(3)));
    let stopped = rtde_core::RuntimeState::Stopped.code();
    assert_eq!(p.output("runtime_state"), Some(Value::Uint32(stopped)));
    assert_eq!(p.qd(), [0.0; 6]);
}

/// A line the arm cannot follow is met as a controller meets it: a protective stop.
#[test]
fn a_line_through_the_base_axis_is_a_protective_stop() {
    // Tool pointing down; the wrist passes within d4 of the base axis mid-line.
    let start = [0.4, -0.05, 0.3, 0.0, std::f64::consts::PI, 0.0];
    let q = Arm::UR5E.inverse_nearest(start, &HOME).unwrap();
    let mut b = Bench::at(q);
    let mut end = start;
    end[0] = -0.4;
    assert!(Arm::UR5E.reaches(end));
    b.move_l(end, 0.25, 1.2, 0.0);
    for _ in 0..2000 {
        b.tick();
    }
    assert!(
        b.state().is_protective_stopped(),
        "{:?}",
        b.program.messages()
    );
    assert!(b.program.has_stopped());
    assert_eq!(b.program.qd(), [0.0; 6]);
}

#[test]
fn configuration_commands_are_taken_and_reported() {
    let mut b = Bench::new();
    b.command(Command::SetTcp, &[0.0, 0.0, 0.1, 0.0, 0.0, 0.0], &[]);
    b.tick();
    b.command(Command::SetPayload, &[1.5, 0.0, 0.0, 0.05], &[]);
    b.tick();
    let mut force = vec![0.0; 18];
    force[8] = -10.0;
    force[12..].copy_from_slice(&[0.1; 6]);
    b.command(Command::ForceMode, &force, &[2, 0, 0, 1, 0, 0, 0]);
    b.tick();
    b.command(Command::TeachMode, &[], &[]);
    b.tick();
    while b.state().handshake().1 < 4 {
        b.tick();
    }
    let p = b.state();
    assert_eq!(p.handshake(), (4, 4));
    assert_eq!(p.tcp_offset()[2], 0.1);
    assert_eq!(p.payload(), (1.5, [0.0, 0.0, 0.05]));
    assert!(p.in_force_mode());
    assert!(p.in_teach_mode());
    let tcp = p.tcp_pose();
    let flange = Arm::UR5E.tcp_pose(&p.q());
    // Tool pointing down at home: the TCP is 10 cm below the flange.
    assert!(
        (flange[2] - tcp[2] - 0.1).abs() < 1e-6,
        "{flange:?} {tcp:?}"
    );
}
