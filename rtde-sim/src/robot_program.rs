//! The controller's program slot: the robot program the simulator runs, if any: a
//! URScript program on the engine, rtde's own included.

use rtde_core::Value;

use crate::io::IoState;
use crate::script_program::ScriptProgram;

/// A robot program the simulated controller runs.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Program {
    /// A URScript program run by the URScript engine: rtde's own, or a client's.
    Script(Box<ScriptProgram>),
    /// No program: the arm stands at these joint positions. With the robot's state machine
    /// on (the Dashboard server, the script ports) the joints move only when a program
    /// moves them, so between programs the arm stays where the last one left it.
    Still([f64; 6]),
}

impl Program {
    /// One tick of `dt` seconds with the inputs `io` holds.
    pub fn step(&mut self, io: &IoState, dt: f64) {
        match self {
            Program::Script(p) => p.step(io, dt),
            Program::Still(_) => {}
        }
    }

    /// A tick on which the program is paused (the Dashboard's `pause`, the pendant's Pause
    /// button): it does not run, so it takes no command and its watchdog does not count,
    /// and the arm stands; the motion under way resumes where it was at `play`. The arm
    /// stops within the tick, as the simulator's protective stop does.
    pub fn hold(&mut self) {
        match self {
            Program::Script(p) => p.hold(),
            Program::Still(_) => {}
        }
    }

    /// One tick the simulator runs late, catching up with its clock: as
    /// [`Program::step`], except that no watchdog counts it (no client could have written
    /// in it): a script's threads do not run (the arm moves on).
    pub fn step_late(&mut self, io: &IoState, dt: f64) {
        match self {
            Program::Script(p) => p.step_late(io, dt),
            Program::Still(_) => {}
        }
    }

    /// The controller's protective stop where no robot state machine pauses the program:
    /// the arm stops within the tick, the program stops, and `safety_mode` reports
    /// PROTECTIVE_STOP.
    pub fn protective_stop(&mut self, reason: &str) {
        match self {
            Program::Script(p) => p.protective_stop(reason),
            Program::Still(_) => {}
        }
    }

    /// The controller stops the program, as the pendant's Stop button does, and `message`
    /// says why.
    pub fn runtime_stop(&mut self, message: &str) {
        match self {
            Program::Script(p) => p.runtime_stop(message),
            Program::Still(_) => {}
        }
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        match self {
            Program::Script(p) => p.q(),
            Program::Still(q) => *q,
        }
    }

    /// Joint velocities.
    #[must_use]
    pub fn qd(&self) -> [f64; 6] {
        match self {
            Program::Script(p) => p.qd(),
            Program::Still(_) => [0.0; 6],
        }
    }

    /// The joint setpoint (`target_q`).
    #[must_use]
    pub fn setpoint(&self) -> [f64; 6] {
        match self {
            Program::Script(p) => p.q(),
            Program::Still(q) => *q,
        }
    }

    /// The TCP offset the program set (zero unless it called `set_tcp`).
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        match self {
            Program::Still(_) => [0.0; 6],
            Program::Script(p) => p.tcp_offset(),
        }
    }

    /// The value the program reports for an output field it owns; `None` for the others.
    #[must_use]
    pub fn output(&self, name: &str) -> Option<Value> {
        match self {
            Program::Script(p) => p.output(name),
            Program::Still(_) => None,
        }
    }

    /// The ticks run.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        match self {
            Program::Script(p) => p.ticks(),
            Program::Still(_) => 0,
        }
    }

    /// Every message the program has logged, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        match self {
            Program::Script(p) => p.messages(),
            Program::Still(_) => &[],
        }
    }

    /// Whether a program runs and has stopped itself (its watchdog, a handshake, an
    /// unreachable target, a fault); `false` for [`Program::Still`], which runs nothing.
    #[must_use]
    pub fn has_stopped(&self) -> bool {
        match self {
            Program::Script(p) => !p.is_running(),
            Program::Still(_) => false,
        }
    }
}
