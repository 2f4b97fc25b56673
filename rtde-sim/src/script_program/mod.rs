//! A URScript program, run by the `rtde-urscript` engine on the simulator's tick, its
//! motion through the arm's one motion model: the same trapezoids, lines, blends and
//! speed slider, whatever program runs.
//!
//! Every program runs on it ([`Program::Script`](crate::Program::Script)), rtde's own
//! included (issue 34).

mod host;
mod rtde_watchdog;
mod sensing;
mod sockets;

use rtde_core::Value as RtdeValue;
use rtde_kinematics::Arm;
use rtde_urscript::run::{Machine, State};
use rtde_urscript::{Checked, ControllerVersion, ScriptError};

use crate::io::IoState;
use crate::motion::ArmMotion;
pub use host::NOT_SIMULATED;
use host::{Outputs, Pending, SimHost};
use rtde_watchdog::{Action, Watchdogs};
use sensing::{History, Random};
use sockets::Sockets;

/// A running URScript program.
///
/// ```
/// use rtde_kinematics::Arm;
/// use rtde_sim::IoState;
/// use rtde_sim::script_program::ScriptProgram;
/// use rtde_urscript::{check, ControllerVersion};
///
/// let script = "def prog():\n  movej([0.1, -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\n  set_standard_digital_out(3, True)\nend\n";
/// let checked = check(script, ControllerVersion::new(5, 9, 0, 0)).unwrap();
/// let mut program = ScriptProgram::new(&checked, Arm::UR5E, [0.0, -1.5, 1.5, -1.5, -1.5, 0.0]).unwrap();
/// let io = IoState::default();
/// while program.is_running() {
///     program.step(&io, 0.002);
/// }
/// assert!((program.q()[0] - 0.1).abs() < 1e-9);
/// assert_eq!(program.digital_output_bits(), 1 << 3);
/// ```
#[derive(Clone, Debug)]
pub struct ScriptProgram {
    machine: Machine,
    arm: ArmMotion,
    pending: Pending,
    outputs: Outputs,
    messages: Vec<String>,
    sockets: Sockets,
    history: History,
    random: Random,
    watchdogs: Watchdogs,
    ticks: u64,
    /// The controller's digital outputs at the last tick, under the script's own.
    io_bits: u64,
    /// The controller stopped the program with a protective stop.
    protective: bool,
}

/// Two runs stand alike: same ticks, arm, outputs, messages and state (the compiled code
/// holds function pointers, which do not compare).
impl PartialEq for ScriptProgram {
    fn eq(&self, other: &Self) -> bool {
        self.ticks == other.ticks
            && self.arm == other.arm
            && self.outputs.digital == other.outputs.digital
            && self.outputs.registers == other.outputs.registers
            && self.messages == other.messages
            && self.machine.state() == other.machine.state()
    }
}

impl ScriptProgram {
    /// A checked program, ready to run with the arm `model` at `q`.
    ///
    /// # Errors
    /// A construct the engine does not run, at its line and column.
    pub fn new(checked: &Checked, model: Arm, q: [f64; 6]) -> Result<Self, ScriptError> {
        Ok(ScriptProgram {
            machine: Machine::new(checked)?,
            arm: ArmMotion::new(model, q),
            pending: Pending::default(),
            outputs: Outputs::default(),
            messages: Vec::new(),
            sockets: Sockets::default(),
            history: History::new(q),
            random: Random::default(),
            watchdogs: Watchdogs::default(),
            ticks: 0,
            io_bits: 0,
            protective: false,
        })
    }

    /// A program's text checked against `version` and made ready to run with the arm
    /// `model` at `q`, as a controller compiles a program it is sent.
    ///
    /// # Errors
    /// The first compile error (or construct the engine does not run): its line, its
    /// column and its text.
    pub fn compile(
        text: &str,
        version: ControllerVersion,
        model: Arm,
        q: [f64; 6],
    ) -> Result<Self, (u32, u32, String)> {
        let compile_error = |e: &ScriptError| (e.span.line, e.span.column, e.to_string());
        let checked = rtde_urscript::check(text, version)
            .map_err(|errors| errors.first().map(compile_error).unwrap_or_default())?;
        ScriptProgram::new(&checked, model, q).map_err(|e| compile_error(&e))
    }

    /// One tick of `dt` seconds: the script's threads run, then the arm moves.
    pub fn step(&mut self, io: &IoState, dt: f64) {
        self.run(io, dt, true);
    }

    /// One tick the simulator runs late, catching up with its clock: the arm moves and
    /// the blocked calls count the tick, but the script's threads do not run, as a
    /// controller's starved program thread does not. No client could have written in it,
    /// so a script's own watchdog loop does not count it either.
    pub fn step_late(&mut self, io: &IoState, dt: f64) {
        self.run(io, dt, false);
    }

    fn run(&mut self, io: &IoState, dt: f64, script_runs: bool) {
        if !self.is_running() {
            return;
        }
        self.ticks += 1;
        self.io_bits = io.digital_output_bits();
        self.pending.start_waiting(&mut self.arm);
        let state = if script_runs {
            self.with_host(io, dt, |machine, host| machine.tick(host).clone())
        } else {
            State::Running
        };
        if script_runs
            && self.is_running()
            && let Some(quiet) = self.watchdogs.check(io, dt)
        {
            match quiet.action {
                Action::Stop => {
                    self.halt(quiet.message);
                    return;
                }
                Action::Pause | Action::Ignore => {
                    self.messages.push(quiet.message.clone());
                    self.outputs.pause = Some(quiet.message);
                }
            }
        }
        if let State::Failed(e) = state {
            self.messages.push(format!(
                "runtime exception at line {}, column {}: {}",
                e.span.line, e.span.column, e.message
            ));
            self.arm.stop(crate::motion::Space::Joint, 4.0);
        }
        let step = self.arm.advance(io.speed_fraction(), dt);
        self.history.push(self.arm.q);
        if let Some(why) = self.pending.after_step(&step) {
            self.with_host(io, dt, |machine, host| machine.stop(host));
            // A controller meets a line it cannot follow with a protective stop.
            self.messages.push(format!("protective stop: {why}"));
            self.protective = true;
            self.outputs.protective_stop = Some(why);
        }
    }

    /// Runs `f` with the engine and the simulator as its robot, for one call into the engine.
    fn with_host<R>(
        &mut self,
        io: &IoState,
        dt: f64,
        f: impl FnOnce(&mut Machine, &mut SimHost<'_>) -> R,
    ) -> R {
        let mut host = SimHost {
            arm: &mut self.arm,
            io,
            pending: &mut self.pending,
            outputs: &mut self.outputs,
            messages: &mut self.messages,
            sockets: &self.sockets,
            history: &self.history,
            random: &mut self.random,
            watchdogs: &mut self.watchdogs,
            dt,
        };
        f(&mut self.machine, &mut host)
    }

    /// The controller's protective stop, as after a collision, where no robot state machine
    /// pauses the program: the arm stops within the tick, the program stops, and
    /// `safety_mode` reports PROTECTIVE_STOP.
    pub fn protective_stop(&mut self, reason: &str) {
        if self.is_running() {
            self.protective = true;
            self.halt(format!("protective stop: {reason}"));
        }
    }

    /// The controller stops the program, as the pendant's Stop button does: the arm stops
    /// within the tick, and `message` says why.
    pub fn runtime_stop(&mut self, message: &str) {
        if self.is_running() {
            self.halt(message.to_owned());
        }
    }

    /// Ends the program from outside: each blocked call is cancelled and the arm stands.
    fn halt(&mut self, message: String) {
        let dt = self.machine.step_time();
        self.with_host(&IoState::default(), dt, |machine, host| machine.stop(host));
        self.arm.qd = [0.0; 6];
        self.arm.motion = crate::motion::Motion::Still;
        self.messages.push(message);
    }

    /// A paused tick: the script does not run and the arm stands; a velocity ramp starts
    /// again from rest at play.
    pub fn hold(&mut self) {
        self.arm.hold();
    }

    /// The TCP offset `set_tcp` gave.
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        self.arm.tcp
    }

    /// The payload the script set: its mass (kg) and centre of gravity (m).
    #[must_use]
    pub fn payload(&self) -> (f64, [f64; 3]) {
        (self.outputs.payload.mass, self.outputs.payload.cog)
    }

    /// Whether the script put the arm in freedrive (`freedrive_mode`, `teach_mode`).
    #[must_use]
    pub fn in_freedrive(&self) -> bool {
        self.outputs.freedrive
    }

    /// Whether the script put the arm in force mode (`force_mode`, until
    /// `end_force_mode`).
    #[must_use]
    pub fn in_force_mode(&self) -> bool {
        self.outputs.force
    }

    /// Whether the controller stopped the program with a protective stop
    /// ([`ScriptProgram::protective_stop`]).
    #[must_use]
    pub fn is_protective_stopped(&self) -> bool {
        self.protective
    }

    /// The TCP pose: the flange's pose with the TCP offset.
    #[must_use]
    pub fn tcp_pose(&self) -> [f64; 6] {
        self.arm.tcp_pose()
    }

    /// The joint target the arm tracks: the target of `servoj`, else where it stands.
    #[must_use]
    pub fn setpoint(&self) -> [f64; 6] {
        match self.arm.motion {
            crate::motion::Motion::Servo { target } => target,
            _ => self.arm.q,
        }
    }

    /// Whether the program still runs.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.machine.state() == &State::Running
    }

    /// Where the program stands: running, ended, or failed with its runtime error.
    #[must_use]
    pub fn state(&self) -> &State {
        self.machine.state()
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        self.arm.q
    }

    /// Joint velocities.
    #[must_use]
    pub fn qd(&self) -> [f64; 6] {
        self.arm.qd
    }

    /// The standard digital outputs the script set (bits 0–7), the configurable (8–15)
    /// and the tool's (16–17).
    #[must_use]
    pub fn digital_output_bits(&self) -> u64 {
        self.outputs.digital
    }

    /// The value the program reports for an output register it wrote; `None` otherwise.
    #[must_use]
    pub fn output(&self, name: &str) -> Option<RtdeValue> {
        let state = if self.is_running() {
            rtde_core::RuntimeState::Playing
        } else {
            rtde_core::RuntimeState::Stopped
        };
        Some(match name {
            "target_q" => RtdeValue::Vector6d(self.arm.q),
            "target_qd" => RtdeValue::Vector6d(self.arm.qd),
            "runtime_state" => RtdeValue::Uint32(state.code()),
            "tcp_offset" => RtdeValue::Vector6d(self.arm.tcp),
            "payload" => RtdeValue::Double(self.outputs.payload.mass),
            "payload_cog" => RtdeValue::Vector3d(self.outputs.payload.cog),
            // PROTECTIVE_STOP, and bit 2 of the safety status bits.
            "safety_mode" | "safety_status" if self.protective => RtdeValue::Int32(3),
            "safety_status_bits" if self.protective => RtdeValue::Uint32(1 << 2),
            "actual_digital_output_bits" => RtdeValue::Uint64(self.io_bits | self.outputs.digital),
            "standard_analog_output0" => RtdeValue::Double(self.outputs.analog[0]?),
            "standard_analog_output1" => RtdeValue::Double(self.outputs.analog[1]?),
            _ => return self.outputs.registers.get(name).cloned(),
        })
    }

    /// Why the program met a protective stop (it called `protective_stop()`, or the arm
    /// could not follow its line) since the last time this was asked: the controller
    /// raises the robot's protective stop for it.
    pub(crate) fn take_protective_stop(&mut self) -> Option<String> {
        self.outputs.protective_stop.take()
    }

    /// Why the program's RTDE watchdog asks the controller to pause it, once.
    pub(crate) fn take_pause(&mut self) -> Option<String> {
        self.outputs.pause.take()
    }

    /// Every message the program logged (`textmsg`, runtime exceptions), oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    /// The ticks run.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }
}

#[cfg(test)]
mod tests;
