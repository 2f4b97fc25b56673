//! The behaviour of `rtde_command.script`, run by the simulated controller:
//! motion commands from the registers of [`CommandLayout`], with the program's handshake,
//! its watchdog and the stops a controller makes.
//!
//! [`CommandProgram`] says what it models.

mod commands;
mod handshake;
mod planner;
mod settings;
mod stops;
#[cfg(test)]
mod tests;

use std::time::Instant;

use rtde_core::Value;
use rtde_kinematics::Arm;
use rtde_robot_proto::programs::command::{
    CommandLayout, Failure, PROGRESS, ProgramState, int_out,
};

use crate::io::IoState;
use crate::motion::{ArmMotion, Motion, Space};
use crate::program::MAX_JOINT_ACCELERATION;
use handshake::Handshake;
pub use settings::ForceMode;
use settings::Settings;
use stops::Stops;

/// `runtime_state` values.
const PLAYING: u32 = 2;
const STOPPED: u32 = 1;
/// `safety_mode`/`safety_status` values.
const SAFETY_NORMAL: i32 = 1;
const SAFETY_PROTECTIVE_STOP: i32 = 3;

/// The simulated command program's state, advanced once per control-loop tick.
///
/// What it models, per tick of the control loop:
/// - `move_j`: the joints move together on a trapezoidal profile, the leading joint at the
///   command's speed and acceleration; `move_l`: the TCP follows the straight line (and the
///   orientation turns about one axis) on a trapezoidal profile, the joints from the arm's
///   inverse kinematics, nearest the current joints. A move with a blend radius starts the
///   next move of the same kind once the TCP is within the radius of its target, and the two
///   profiles add: velocity stays continuous. The speed slider scales the time of every
///   profile.
/// - `speed_j`/`speed_l` ramp the joint (or TCP) velocity to the command's, times the
///   slider; `stop_j`/`stop_l` ramp it to zero at the command's deceleration, starting in
///   the tick that takes the command.
/// - `servo_j` tracks the target within [`MAX_JOINT_SPEED`](crate::MAX_JOINT_SPEED) and
///   [`MAX_JOINT_ACCELERATION`](crate::MAX_JOINT_ACCELERATION), as the servo program does.
/// - `force_mode`, `teach_mode`, `set_tcp`, `set_payload` and `zero_ft_sensor` are taken and
///   reported ([`CommandProgram::force_mode`], [`CommandProgram::in_teach_mode`],
///   `tcp_offset`, `payload`, `payload_cog`). The simulated arm meets nothing and nobody
///   pushes it: in force mode and in teach mode it holds still, and the F/T readings stay
///   zero.
/// - The stops: the watchdog, a sequence number that skips, a target the inverse kinematics
///   cannot reach (or a straight line through a singularity), and the controller's (a
///   protective stop, [`CommandProgram::protective_stop`], reported as `safety_mode`
///   PROTECTIVE_STOP with the program stopped; a stop of the program,
///   [`CommandProgram::runtime_stop`]).
/// - A pause ([`CommandProgram::hold`]): the arm stands within the tick and the program
///   takes nothing; at play the path goes on where it stopped, and a velocity ramps up
///   again from rest.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandProgram {
    layout: CommandLayout,
    /// The program's state (int out +2).
    state: ProgramState,
    ticks: u64,
    arm: ArmMotion,
    settings: Settings,
    handshake: Handshake,
    stops: Stops,
}

impl CommandProgram {
    /// A program started with the arm `arm` at `q`, reading the registers of `layout`.
    #[must_use]
    pub fn new(arm: Arm, q: [f64; 6], layout: CommandLayout) -> Self {
        CommandProgram {
            layout,
            state: ProgramState::Idle,
            ticks: 0,
            arm: ArmMotion::new(arm, q),
            settings: Settings::default(),
            handshake: Handshake::new(),
            stops: Stops::new(),
        }
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

    /// The TCP offset `set_tcp` gave (zero at start).
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        self.arm.tcp
    }

    /// The TCP pose: the flange's pose with the TCP offset.
    #[must_use]
    pub fn tcp_pose(&self) -> [f64; 6] {
        self.arm.tcp_pose()
    }

    /// The payload `set_payload` gave: mass (kg) and centre of gravity (m).
    #[must_use]
    pub fn payload(&self) -> (f64, [f64; 3]) {
        self.settings.payload
    }

    /// The force mode in effect, if any.
    #[must_use]
    pub fn force_mode(&self) -> Option<ForceMode> {
        self.settings.force
    }

    /// Whether teach mode is on.
    #[must_use]
    pub fn in_teach_mode(&self) -> bool {
        self.settings.teach
    }

    /// The program's state (int out +2).
    #[must_use]
    pub fn state(&self) -> ProgramState {
        self.state
    }

    /// Why it stopped (int out +3).
    #[must_use]
    pub fn failure(&self) -> Failure {
        self.stops.failure
    }

    /// Whether a protective stop holds the arm.
    #[must_use]
    pub fn is_protective_stopped(&self) -> bool {
        self.stops.protective
    }

    /// The sequence numbers of the last command taken and the last finished.
    #[must_use]
    pub fn handshake(&self) -> (i32, i32) {
        (self.handshake.accepted, self.handshake.done)
    }

    /// The ticks run.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The last move started: its sequence number, the tick and the moment it started in
    /// (the tick that took it: the first tick of its motion).
    #[must_use]
    pub fn last_move_started(&self) -> Option<(i32, u64, Instant)> {
        self.handshake.started
    }

    /// The tick and moment the last stop's deceleration began.
    #[must_use]
    pub fn last_stop_started(&self) -> Option<(u64, Instant)> {
        self.handshake.decelerating
    }

    /// Every message the program has logged, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.stops.messages
    }

    /// `runtime_state`: playing until the program stops.
    #[must_use]
    pub fn runtime_state(&self) -> u32 {
        if self.state == ProgramState::Stopped {
            STOPPED
        } else {
            PLAYING
        }
    }

    /// The value the program reports for an output field it owns; `None` for the others.
    #[must_use]
    pub fn output(&self, name: &str) -> Option<Value> {
        let l = self.layout;
        let int = |offset: u8| l.int_output(offset);
        let protective = self.stops.protective;
        let safety = if protective {
            SAFETY_PROTECTIVE_STOP
        } else {
            SAFETY_NORMAL
        };
        let h = &self.handshake;
        Some(match name {
            // `actual_q` and `actual_qd` are the simulated robot's (with its noise, unless
            // deterministic), from these.
            "target_q" => Value::Vector6d(self.arm.q),
            "target_qd" => Value::Vector6d(self.arm.qd),
            "runtime_state" => Value::Uint32(self.runtime_state()),
            "safety_mode" | "safety_status" => Value::Int32(safety),
            // Bit 0 powered on, bit 1 program running.
            "robot_status_bits" => Value::Uint32(if self.runtime_state() == PLAYING {
                0b11
            } else {
                0b01
            }),
            // Bit 0 normal mode, bit 2 protective stopped.
            "safety_status_bits" => Value::Uint32(if protective { 1 << 2 } else { 1 }),
            "tcp_offset" => Value::Vector6d(self.arm.tcp),
            "payload" => Value::Double(self.settings.payload.0),
            "payload_cog" => Value::Vector3d(self.settings.payload.1),
            n if n == int(int_out::ACCEPTED) => Value::Int32(h.accepted),
            n if n == int(int_out::DONE) => Value::Int32(h.done),
            n if n == int(int_out::STATE) => Value::Int32(self.state.to_register()),
            n if n == int(int_out::FAILURE) => Value::Int32(self.stops.failure.to_register()),
            n if n == l.double_output(PROGRESS) => Value::Double(h.progress),
            _ => return None,
        })
    }

    /// The one way the program meets a protective stop: the arm stops at once (a stop of
    /// category 2 that the simulator makes within a tick), the program stops, and
    /// `safety_mode` reports PROTECTIVE_STOP until the simulator restarts.
    pub fn protective_stop(&mut self, reason: &str) {
        self.stops.protective = true;
        self.arm.qd = [0.0; 6];
        self.arm.motion = Motion::Still;
        self.halt(
            Failure::None,
            format!("rtde_command: protective stop: {reason}"),
        );
    }

    /// One tick of `dt` seconds with the inputs `io` holds.
    pub fn step(&mut self, io: &IoState, dt: f64) {
        self.tick(io, dt, true);
    }

    /// A paused tick ([`Program::hold`](crate::Program::hold)): the arm stands, a velocity
    /// ramp starts again from rest at play, and a path goes on from where it stopped.
    pub fn hold(&mut self) {
        self.arm.hold();
    }

    /// A tick the simulator runs late (catching up with its clock): the watchdog does not
    /// count it.
    pub fn step_late(&mut self, io: &IoState, dt: f64) {
        self.tick(io, dt, false);
    }

    fn tick(&mut self, io: &IoState, dt: f64, on_time: bool) {
        if self.ticks == 0 {
            self.adopt_registers(io);
        }
        self.ticks += 1;
        // A path that ended last tick: the arm is still now, as when URScript's movej
        // returns.
        // The tick a move settles, the next pending one waits: URScript's movej returns, the
        // program writes DONE, and the next move starts a cycle later, so the package that
        // says a move is done shows the arm where it ended.
        let settled = self.handshake.settling.take().inspect(|&seq| {
            self.finish_move(seq);
            if self.state == ProgramState::Moving && matches!(self.arm.motion, Motion::Still) {
                self.state = ProgramState::Idle;
            }
        });
        if on_time && self.state != ProgramState::Stopped {
            self.check_watchdog(io);
        }
        if self.state != ProgramState::Stopped {
            self.take_command(io);
        }
        if settled.is_none() {
            self.take_pending();
        }
        self.advance(io.speed_fraction(), dt);
    }

    /// The controller stops the program (the pendant's Stop button): the arm decelerates to
    /// rest, nothing more is taken, and `message` says why.
    pub fn runtime_stop(&mut self, message: &str) {
        self.halt(Failure::None, message.to_owned());
    }

    /// Stops the program: the arm decelerates to rest, nothing more is taken.
    fn halt(&mut self, failure: Failure, message: String) {
        self.state = ProgramState::Stopped;
        self.stops.failure = failure;
        self.handshake.pending = None;
        self.stop_motion(Space::Joint, MAX_JOINT_ACCELERATION);
        self.stops.messages.push(message);
    }

    /// Move `seq` finished (as [`Handshake::finish_move`] tells).
    fn finish_move(&mut self, seq: i32) {
        self.handshake.finish_move(seq, &self.arm.motion);
    }
}
