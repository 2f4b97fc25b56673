//! rtde's own programs natively and on the URScript engine, tick by tick: the same
//! commands, written as rtde-robot writes them, move the arm the same way.

use rtde_core::Value;
use rtde_core::fields::{Direction, lookup};
use rtde_robot_proto::programs::command::{Command, CommandLayout, int_in, int_out};

use super::*;
use crate::io::IoState;

const DT: f64 = 0.002;
const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
const V5: ControllerVersion = ControllerVersion::new(5, 9, 0, 0);

fn name(n: &str) -> &'static str {
    lookup(Direction::Input, n).unwrap().name()
}

/// A client of the command program: its registers, written as rtde-robot's motion API
/// writes them, the program stepped tick by tick, and the joints after each tick.
struct Client {
    io: IoState,
    program: Program,
    seq: i32,
    watchdog: i32,
    trace: Vec<[f64; 6]>,
}

impl Client {
    fn new(program: Program) -> Client {
        let mut c = Client {
            io: IoState::default(),
            program,
            seq: 0,
            watchdog: 0,
            trace: Vec::new(),
        };
        c.tick();
        c
    }

    fn out(&self, offset: u8) -> i32 {
        match self
            .program
            .output(&CommandLayout::UPPER.int_output(offset))
        {
            Some(Value::Int32(v)) => v,
            _ => 0,
        }
    }

    fn tick(&mut self) {
        self.watchdog += 1;
        let w = name(&CommandLayout::UPPER.int_input(int_in::WATCHDOG));
        self.io.write(&[(w, Value::Int32(self.watchdog))]);
        self.program.step(&self.io, DT);
        assert!(!self.program.has_stopped(), "{:?}", self.program.messages());
        self.trace.push(self.program.q());
    }

    /// Writes the next command and ticks until the program has taken it.
    fn command(&mut self, command: Command, doubles: &[f64]) {
        self.seq += 1;
        let l = CommandLayout::UPPER;
        let mut values = vec![
            (
                name(&l.int_input(int_in::COMMAND)),
                Value::Int32(command.code()),
            ),
            (name(&l.int_input(int_in::SEQUENCE)), Value::Int32(self.seq)),
        ];
        for (i, v) in doubles.iter().enumerate() {
            let offset = u8::try_from(i).unwrap();
            values.push((name(&l.double_input(offset)), Value::Double(*v)));
        }
        self.io.write(&values);
        self.until(|c| c.out(int_out::ACCEPTED) >= c.seq);
    }

    fn until(&mut self, done: impl Fn(&Client) -> bool) {
        for _ in 0..100_000 {
            if done(self) {
                return;
            }
            self.tick();
        }
        panic!("never came");
    }

    fn until_done(&mut self) {
        self.until(|c| c.out(int_out::DONE) >= c.seq);
    }

    fn ticks(&mut self, n: usize) {
        for _ in 0..n {
            self.tick();
        }
    }
}

fn movement(target: [f64; 6], speed: f64, accel: f64, blend: f64) -> Vec<f64> {
    let mut d = target.to_vec();
    d.extend([speed, accel, blend]);
    d
}

/// The same session against the native command program and the interpreted one; the
/// joints of each at every tick.
fn both(session: impl Fn(&mut Client)) -> (Vec<[f64; 6]>, Vec<[f64; 6]>) {
    let text = command_text(CommandLayout::UPPER);
    let own = OwnProgram {
        kind: KnownProgram::Command,
        text: &text,
        arm: Arm::UR5E,
        q: HOME,
    };
    let mut native = Client::new(own.native().unwrap());
    let mut interpreted = Client::new(own.interpreted(V5).unwrap());
    session(&mut native);
    session(&mut interpreted);
    (native.trace, interpreted.trace)
}

/// The two runs move the arm alike: the same joints at every tick both ran (within
/// 1e-9 rad: the arithmetic is the same, in the same order), and the same joints at rest at
/// the end. The interpreted program takes a command after a stop later (its `stopj` blocks
/// its main loop until the arm rests; the native program takes the next one at once), so
/// a session ends with the stop, and one trace may be longer.
fn assert_same_motion((native, interpreted): (Vec<[f64; 6]>, Vec<[f64; 6]>)) {
    let diff = |x: &[f64; 6], y: &[f64; 6]| {
        x.iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max)
    };
    for (tick, (a, b)) in native.iter().zip(&interpreted).enumerate() {
        assert!(
            diff(a, b) <= 1e-9,
            "tick {tick}: native {a:?}, interpreted {b:?}"
        );
    }
    let (a, b) = (native.last().unwrap(), interpreted.last().unwrap());
    assert!(
        diff(a, b) <= 1e-9,
        "at rest: native {a:?}, interpreted {b:?}"
    );
}

#[test]
fn a_move_j_then_a_move_l_move_alike() {
    assert_same_motion(both(|c| {
        c.command(
            Command::MoveJ,
            &movement([0.3, -1.4, 1.4, -1.6, -1.5, 0.2], 1.0, 3.0, 0.0),
        );
        c.until_done();
        let mut below = Arm::UR5E.tcp_pose(&c.program.q());
        below[2] -= 0.1;
        c.command(Command::MoveL, &movement(below, 0.25, 1.2, 0.0));
        c.until_done();
        c.ticks(3);
    }));
}

/// A move sent while another runs, without a blend, waits for the first to end: the
/// first's DONE shows the arm at its end, and the next starts a tick later.
#[test]
fn a_move_queued_behind_another_moves_alike() {
    assert_same_motion(both(|c| {
        c.command(
            Command::MoveJ,
            &movement([0.3, -1.4, 1.4, -1.6, -1.5, 0.2], 1.0, 3.0, 0.0),
        );
        c.command(
            Command::MoveJ,
            &movement([0.0, -1.2, 1.2, -1.5, -1.5, 0.1], 1.0, 3.0, 0.0),
        );
        c.until_done();
        c.ticks(3);
    }));
}

#[test]
fn blended_paths_move_alike() {
    assert_same_motion(both(|c| {
        let start = Arm::UR5E.tcp_pose(&HOME);
        let corners = [(0.08, 0.0), (0.08, 0.08), (0.0, 0.08)];
        for (i, (dx, dy)) in corners.iter().enumerate() {
            let mut p = start;
            p[0] += dx;
            p[1] += dy;
            let blend = if i + 1 < corners.len() { 0.02 } else { 0.0 };
            c.command(Command::MoveL, &movement(p, 0.2, 1.0, blend));
        }
        c.until_done();
        c.command(
            Command::MoveJ,
            &movement([0.3, -1.4, 1.4, -1.6, -1.5, 0.2], 1.0, 3.0, 0.05),
        );
        c.command(
            Command::MoveJ,
            &movement([0.0, -1.2, 1.2, -1.5, -1.5, 0.1], 1.0, 3.0, 0.0),
        );
        c.until_done();
        c.ticks(3);
    }));
}

#[test]
fn speeds_and_stops_move_alike() {
    assert_same_motion(both(|c| {
        c.command(Command::SpeedJ, &[0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 1.0]);
        c.ticks(200);
        c.command(Command::StopJ, &[2.0]);
        c.until_done();
        c.ticks(100);
    }));
    assert_same_motion(both(|c| {
        c.command(Command::SpeedL, &[0.05, 0.0, -0.02, 0.0, 0.0, 0.0, 1.0]);
        c.ticks(100);
        c.command(Command::StopL, &[2.0]);
        c.until_done();
        c.ticks(100);
    }));
}

#[test]
fn a_stop_j_cuts_a_move_short_alike() {
    assert_same_motion(both(|c| {
        c.command(
            Command::MoveJ,
            &movement([2.0, -1.57, 1.57, -1.57, -1.57, 0.0], 1.0, 1.4, 0.0),
        );
        c.ticks(150);
        c.command(Command::StopJ, &[4.0]);
        c.until_done();
        c.ticks(100);
    }));
}

#[test]
fn servo_j_streams_move_alike() {
    assert_same_motion(both(|c| {
        for i in 0..300 {
            let f = f64::from(i) * 0.001;
            c.command(
                Command::ServoJ,
                &[f, -1.57, 1.57, -1.57, -1.57, f, 0.002, 0.1, 300.0],
            );
        }
        c.command(Command::ServoStop, &[4.0]);
        c.until_done();
        c.ticks(100);
    }));
}

/// A client of the servo program as rtde-robot's control loop is: every tick it kicks the
/// watchdog and, once the program has taken the current waypoint, writes the next one.
/// The joints after each tick, and the tick each waypoint was acknowledged at.
fn servo_session(program: Program, waypoints: &[[f64; 6]]) -> (Vec<[f64; 6]>, Vec<usize>) {
    let mut io = IoState::default();
    let mut program = program;
    let (mut trace, mut acks) = (Vec::new(), Vec::new());
    let mut current = 0;
    let acked = |p: &Program| match p.output("output_int_register_24") {
        Some(Value::Int32(v)) => v,
        _ => 0,
    };
    for tick in 0..waypoints.len() * 4 + 200 {
        let mut values = vec![(
            "input_int_register_24",
            Value::Int32(i32::try_from(tick).unwrap()),
        )];
        if acked(&program) == current && usize::try_from(current).unwrap() < waypoints.len() {
            let next = waypoints[usize::try_from(current).unwrap()];
            for (j, v) in next.iter().enumerate() {
                values.push((
                    name(&format!("input_double_register_{}", 24 + j)),
                    Value::Double(*v),
                ));
            }
            current += 1;
            values.push(("input_int_register_25", Value::Int32(current)));
        }
        io.write(&values);
        program.step(&io, DT);
        assert!(!program.has_stopped(), "{:?}", program.messages());
        if acked(&program) > i32::try_from(acks.len()).unwrap() {
            acks.push(tick);
        }
        trace.push(program.q());
    }
    (trace, acks)
}

/// The script acknowledges a waypoint as it takes it, before its `servoj` blocks, so a
/// client that waits for the acknowledgement sends one waypoint per tick, and both programs
/// take each at the same tick and move the arm alike, tick by tick.
#[test]
fn the_servo_program_takes_a_waypoint_per_tick_and_moves_alike() {
    let text = servo_text();
    let own = OwnProgram {
        kind: KnownProgram::Servo,
        text: &text,
        arm: Arm::UR5E,
        q: HOME,
    };
    let waypoints: Vec<[f64; 6]> = (1..=300)
        .map(|i| {
            let f = f64::from(i) * 0.002;
            [f, -1.57, 1.57, -1.57 + f, -1.57, f]
        })
        .collect();
    let (native, native_acks) = servo_session(own.native().unwrap(), &waypoints);
    let (interpreted, interpreted_acks) = servo_session(own.interpreted(V5).unwrap(), &waypoints);
    assert_eq!(native_acks.len(), waypoints.len());
    assert_eq!(interpreted_acks, native_acks);
    // One waypoint per tick: the last is taken within a tick or two of the count.
    assert!(
        *interpreted_acks.last().unwrap() <= waypoints.len() + 2,
        "{interpreted_acks:?}"
    );
    let last = waypoints.last().unwrap();
    for end in [native.last().unwrap(), interpreted.last().unwrap()] {
        let off = end
            .iter()
            .zip(last)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(off <= 1e-9, "{end:?}, the last waypoint {last:?}");
    }
    assert_same_motion((native, interpreted));
}

/// Both programs, as rtde sends them, compile on every generation and idle without a
/// runtime error while no client writes.
#[test]
fn both_programs_as_sent_run_on_the_engine_at_every_generation() {
    for version in [
        ControllerVersion::new(3, 15, 0, 0),
        V5,
        ControllerVersion::new(10, 7, 0, 0),
    ] {
        for (kind, text) in [
            (KnownProgram::Command, command_text(CommandLayout::UPPER)),
            (KnownProgram::Command, command_text(CommandLayout::LOWER)),
            (KnownProgram::Servo, servo_text()),
        ] {
            let own = OwnProgram {
                kind,
                text: &text,
                arm: Arm::UR5E,
                q: HOME,
            };
            let mut program = own
                .interpreted(version)
                .unwrap_or_else(|e| panic!("{kind:?} at {version}: {e:?}"));
            for _ in 0..500 {
                program.step(&IoState::default(), DT);
            }
            assert!(!program.has_stopped(), "{kind:?}: {:?}", program.messages());
            assert_eq!(program.q(), HOME);
        }
    }
}
