//! The controller's program slot: the robot program the simulator runs, if any: a
//! URScript program on the engine (rtde's own included), or the native baseline of
//! rtde's own programs.

use rtde_core::Value;

use crate::command_program::CommandProgram;
use crate::io::IoState;
use crate::program::ServoProgram;
use crate::script_program::ScriptProgram;

/// `runtime_state`'s code for a stopped program, as both programs report it.
const STOPPED: u32 = rtde_core::RuntimeState::Stopped.code();

/// A robot program the simulated controller runs.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
// The command program is boxed: the servo program stays inline.
#[allow(clippy::large_enum_variant)]
pub enum Program {
    /// `rtde_servo.script`'s native emulation
    /// ([`SimBuilder::native_own_programs`](crate::SimBuilder::native_own_programs)).
    Servo(ServoProgram),
    /// `rtde_command.script`'s native emulation
    /// ([`SimBuilder::native_own_programs`](crate::SimBuilder::native_own_programs)).
    Command(Box<CommandProgram>),
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
            Program::Servo(p) => p.step(io, dt),
            Program::Command(p) => p.step(io, dt),
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
            Program::Servo(p) => p.hold(),
            Program::Command(p) => p.hold(),
            Program::Script(p) => p.hold(),
            Program::Still(_) => {}
        }
    }

    /// One tick the simulator runs late, catching up with its clock: as
    /// [`Program::step`], except that no watchdog counts it (no client could have written
    /// in it): the native command program's skips it, and a script's threads do not run
    /// (the arm moves on). The native servo program counts every tick.
    pub fn step_late(&mut self, io: &IoState, dt: f64) {
        match self {
            Program::Servo(p) => p.step(io, dt),
            Program::Command(p) => p.step_late(io, dt),
            Program::Script(p) => p.step_late(io, dt),
            Program::Still(_) => {}
        }
    }

    /// The controller's protective stop where no robot state machine pauses the program:
    /// the arm stops within the tick, the program stops, and `safety_mode` reports
    /// PROTECTIVE_STOP. The native servo program does not model it.
    pub fn protective_stop(&mut self, reason: &str) {
        match self {
            Program::Command(p) => p.protective_stop(reason),
            Program::Script(p) => p.protective_stop(reason),
            Program::Servo(_) | Program::Still(_) => {}
        }
    }

    /// The controller stops the program, as the pendant's Stop button does, and `message`
    /// says why. The native servo program does not model it.
    pub fn runtime_stop(&mut self, message: &str) {
        match self {
            Program::Command(p) => p.runtime_stop(message),
            Program::Script(p) => p.runtime_stop(message),
            Program::Servo(_) | Program::Still(_) => {}
        }
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        match self {
            Program::Servo(p) => p.q(),
            Program::Command(p) => p.q(),
            Program::Script(p) => p.q(),
            Program::Still(q) => *q,
        }
    }

    /// Joint velocities.
    #[must_use]
    pub fn qd(&self) -> [f64; 6] {
        match self {
            Program::Servo(p) => p.qd(),
            Program::Command(p) => p.qd(),
            Program::Script(p) => p.qd(),
            Program::Still(_) => [0.0; 6],
        }
    }

    /// The joint setpoint (`target_q`).
    #[must_use]
    pub fn setpoint(&self) -> [f64; 6] {
        match self {
            Program::Servo(p) => p.setpoint(),
            Program::Command(p) => p.q(),
            Program::Script(p) => p.q(),
            Program::Still(q) => *q,
        }
    }

    /// The TCP offset the program set (zero unless the command program's `set_tcp`).
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        match self {
            Program::Servo(_) | Program::Still(_) => [0.0; 6],
            Program::Command(p) => p.tcp_offset(),
            Program::Script(p) => p.tcp_offset(),
        }
    }

    /// The value the program reports for an output field it owns; `None` for the others.
    #[must_use]
    pub fn output(&self, name: &str) -> Option<Value> {
        match self {
            Program::Servo(p) => p.output(name),
            Program::Command(p) => p.output(name),
            Program::Script(p) => p.output(name),
            Program::Still(_) => None,
        }
    }

    /// The ticks run.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        match self {
            Program::Servo(p) => p.ticks(),
            Program::Command(p) => p.ticks(),
            Program::Script(p) => p.ticks(),
            Program::Still(_) => 0,
        }
    }

    /// Every message the program has logged, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        match self {
            Program::Servo(p) => p.messages(),
            Program::Command(p) => p.messages(),
            Program::Script(p) => p.messages(),
            Program::Still(_) => &[],
        }
    }

    /// Whether a program runs and has stopped itself (its watchdog, a handshake, an
    /// unreachable target, a fault); `false` for [`Program::Still`], which runs nothing.
    #[must_use]
    pub fn has_stopped(&self) -> bool {
        match self {
            Program::Servo(p) => p.runtime_state() == STOPPED,
            Program::Command(p) => p.runtime_state() == STOPPED,
            Program::Script(p) => !p.is_running(),
            Program::Still(_) => false,
        }
    }
}
