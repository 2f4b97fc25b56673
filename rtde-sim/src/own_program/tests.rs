//! rtde's own programs on the URScript engine, tick by tick: commands written as
//! rtde-robot writes them move the arm where they say, and the servo program takes a
//! waypoint per tick.

use rtde_core::Value;
use rtde_core::fields::{Direction, lookup};
use rtde_robot_proto::programs::command::{Command, CommandLayout, int_in, int_out};

use rtde_kinematics::Arm;
use rtde_urscript::ControllerVersion;

use super::*;
use crate::io::IoState;
use crate::robot_program::Program;
use crate::script_program::ScriptProgram;

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

/// `text` on the engine, the arm at [`HOME`].
fn compiled(text: &str, version: ControllerVersion) -> Program {
    let program =
        ScriptProgram::compile(text, version, Arm::UR5E, HOME).unwrap_or_else(|e| panic!("{e:?}"));
    Program::Script(Box::new(program))
}

/// A session against the command program; the client at its end.
fn session(session: impl Fn(&mut Client)) -> Client {
    let mut client = Client::new(compiled(&command_text(CommandLayout::UPPER), V5));
    session(&mut client);
    client
}

/// The largest difference of two joint (or pose) vectors.
fn diff(x: &[f64; 6], y: &[f64; 6]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max)
}

/// The arm stands (every joint's velocity zero) at `q`, within 1e-6.
fn assert_rests_at(c: &Client, q: &[f64; 6]) {
    assert!(
        diff(&c.program.qd(), &[0.0; 6]) == 0.0,
        "{:?}",
        c.program.qd()
    );
    assert!(
        diff(&c.program.q(), q) <= 1e-6,
        "{:?}, not {q:?}",
        c.program.q()
    );
}

const FIRST: [f64; 6] = [0.3, -1.4, 1.4, -1.6, -1.5, 0.2];
const SECOND: [f64; 6] = [0.0, -1.2, 1.2, -1.5, -1.5, 0.1];

#[test]
fn a_move_j_then_a_move_l_reach_their_targets() {
    let c = session(|c| {
        c.command(Command::MoveJ, &movement(FIRST, 1.0, 3.0, 0.0));
        c.until_done();
        assert!(diff(&c.program.q(), &FIRST) <= 1e-6, "{:?}", c.program.q());
        let mut below = Arm::UR5E.tcp_pose(&c.program.q());
        below[2] -= 0.1;
        c.command(Command::MoveL, &movement(below, 0.25, 1.2, 0.0));
        c.until_done();
        let reached = Arm::UR5E.tcp_pose(&c.program.q());
        assert!(diff(&reached, &below) <= 1e-6, "{reached:?}, not {below:?}");
        c.ticks(3);
    });
    assert!(
        diff(&c.program.qd(), &[0.0; 6]) == 0.0,
        "{:?}",
        c.program.qd()
    );
}

/// A move sent while another runs, without a blend, waits for the first to end: the
/// first's DONE shows the arm at its end.
#[test]
fn a_move_queued_behind_another_waits_for_it() {
    let c = session(|c| {
        c.command(Command::MoveJ, &movement(FIRST, 1.0, 3.0, 0.0));
        c.command(Command::MoveJ, &movement(SECOND, 1.0, 3.0, 0.0));
        c.until(|c| c.out(int_out::DONE) >= c.seq - 1);
        assert!(diff(&c.program.q(), &FIRST) <= 1e-6, "{:?}", c.program.q());
        c.until_done();
        c.ticks(3);
    });
    assert_rests_at(&c, &SECOND);
}

/// Blended moves do not stop at the corners they blend, and end at the last target.
#[test]
fn blended_paths_pass_their_corners_without_stopping() {
    let c = session(|c| {
        let start = Arm::UR5E.tcp_pose(&HOME);
        let corners = [(0.08, 0.0), (0.08, 0.08), (0.0, 0.08)];
        let first = c.trace.len();
        for (i, (dx, dy)) in corners.iter().enumerate() {
            let mut p = start;
            p[0] += dx;
            p[1] += dy;
            let blend = if i + 1 < corners.len() { 0.02 } else { 0.0 };
            c.command(Command::MoveL, &movement(p, 0.2, 1.0, blend));
        }
        c.until_done();
        // Once under way, the arm does not come to rest before the last corner.
        let moving: Vec<bool> = c.trace[first..]
            .windows(2)
            .map(|w| diff(&w[0], &w[1]) > 0.0)
            .collect();
        let started = moving.iter().position(|m| *m).unwrap();
        let ended = moving.iter().rposition(|m| *m).unwrap();
        assert!(
            moving[started..=ended].iter().all(|m| *m),
            "it stopped at a corner"
        );
        c.command(Command::MoveJ, &movement(FIRST, 1.0, 3.0, 0.05));
        c.command(Command::MoveJ, &movement(SECOND, 1.0, 3.0, 0.0));
        c.until_done();
        c.ticks(3);
    });
    assert_rests_at(&c, &SECOND);
}

/// A joint speed moves only the joints it names, and a stop brings them to rest.
#[test]
fn speeds_move_and_stops_bring_the_arm_to_rest() {
    let c = session(|c| {
        c.command(Command::SpeedJ, &[0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 1.0]);
        c.ticks(200);
        c.command(Command::StopJ, &[2.0]);
        c.until_done();
        c.ticks(100);
    });
    let q = c.program.q();
    assert!(q[0] > HOME[0] && q[5] > HOME[5], "{q:?}");
    assert_rests_at(&c, &[q[0], HOME[1], HOME[2], HOME[3], HOME[4], q[5]]);
    let c = session(|c| {
        c.command(Command::SpeedL, &[0.05, 0.0, -0.02, 0.0, 0.0, 0.0, 1.0]);
        c.ticks(100);
        c.command(Command::StopL, &[2.0]);
        c.until_done();
        c.ticks(100);
    });
    let (from, to) = (
        Arm::UR5E.tcp_pose(&HOME),
        Arm::UR5E.tcp_pose(&c.program.q()),
    );
    assert!(to[0] > from[0] && to[2] < from[2], "{from:?} to {to:?}");
    assert_rests_at(&c, &c.program.q());
}

#[test]
fn a_stop_j_cuts_a_move_short() {
    let c = session(|c| {
        c.command(
            Command::MoveJ,
            &movement([2.0, -1.57, 1.57, -1.57, -1.57, 0.0], 1.0, 1.4, 0.0),
        );
        c.ticks(150);
        c.command(Command::StopJ, &[4.0]);
        c.until_done();
        c.ticks(100);
    });
    let q0 = c.program.q()[0];
    assert!(q0 > HOME[0] && q0 < 1.0, "{q0}");
    assert_rests_at(&c, &[q0, -1.57, 1.57, -1.57, -1.57, 0.0]);
}

/// A `servo_j` stream moves the arm along its targets; the servo stop brakes it from
/// where the stream took it (past the last target: it brakes from speed).
#[test]
fn a_servo_j_stream_moves_the_arm_and_a_servo_stop_brakes_it() {
    let c = session(|c| {
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
    });
    let q = c.program.q();
    assert!(q[0] >= 0.299 && q[0] < 0.4, "{q:?}");
    assert_rests_at(&c, &[q[0], -1.57, 1.57, -1.57, -1.57, q[5]]);
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
/// client that waits for the acknowledgement sends one waypoint per tick, and the arm ends
/// at the last waypoint.
#[test]
fn the_servo_program_takes_a_waypoint_per_tick() {
    let waypoints: Vec<[f64; 6]> = (1..=300)
        .map(|i| {
            let f = f64::from(i) * 0.002;
            [f, -1.57, 1.57, -1.57 + f, -1.57, f]
        })
        .collect();
    let (trace, acks) = servo_session(compiled(&servo_text(), V5), &waypoints);
    assert_eq!(acks.len(), waypoints.len());
    // One waypoint per tick: each taken the tick after the one before.
    assert!(acks.windows(2).all(|w| w[1] == w[0] + 1), "{acks:?}");
    assert!(*acks.last().unwrap() <= waypoints.len() + 2, "{acks:?}");
    let (end, last) = (trace.last().unwrap(), waypoints.last().unwrap());
    assert!(
        diff(end, last) <= 1e-9,
        "{end:?}, the last waypoint {last:?}"
    );
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
            ("command", command_text(CommandLayout::UPPER)),
            ("command", command_text(CommandLayout::LOWER)),
            ("servo", servo_text()),
        ] {
            let mut program = ScriptProgram::compile(&text, version, Arm::UR5E, HOME)
                .map(|p| Program::Script(Box::new(p)))
                .unwrap_or_else(|e| panic!("{kind} at {version}: {e:?}"));
            for _ in 0..500 {
                program.step(&IoState::default(), DT);
            }
            assert!(!program.has_stopped(), "{kind}: {:?}", program.messages());
            assert_eq!(program.q(), HOME);
        }
    }
}
