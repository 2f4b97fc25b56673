//! The behaviour of `rtde_command.script`, run by the simulated controller:
//! motion commands from the registers of [`CommandLayout`], with the program's handshake,
//! its watchdog and the stops a controller makes.
//!
//! [`CommandProgram`] says what it models.

use std::time::Instant;

use rtde_core::Value;
use rtde_kinematics::{Arm, compose, invert, matrix_of, mul3, pose_of};
use rtde_robot_proto::programs::WATCHDOG_TIMEOUT_CYCLES;
use rtde_robot_proto::programs::command::{
    Command, CommandLayout, DOUBLE_INPUTS, Failure, PROGRESS, ProgramState, int_in, int_out,
};

use crate::io::IoState;
use crate::program::{self, MAX_JOINT_ACCELERATION};

/// `runtime_state` values.
const PLAYING: u32 = 2;
const STOPPED: u32 = 1;
/// `safety_mode`/`safety_status` values.
const SAFETY_NORMAL: i32 = 1;
const SAFETY_PROTECTIVE_STOP: i32 = 3;

/// A joint may not move more than this many times its speed limit's step in one tick when
/// following a straight line: more means the inverse kinematics jumped branches (a
/// singularity on the line).
const IK_JUMP_FACTOR: f64 = 4.0;

/// Joint or Cartesian space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    Joint,
    Linear,
}

/// A trapezoidal (or triangular) profile over a distance.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Trapezoid {
    length: f64,
    accel_time: f64,
    cruise_time: f64,
    peak: f64,
    accel: f64,
}

impl Trapezoid {
    fn new(length: f64, speed: f64, accel: f64) -> Trapezoid {
        if length <= 0.0 {
            return Trapezoid {
                length: 0.0,
                accel_time: 0.0,
                cruise_time: 0.0,
                peak: 0.0,
                accel,
            };
        }
        if length < speed * speed / accel {
            let accel_time = (length / accel).sqrt();
            Trapezoid {
                length,
                accel_time,
                cruise_time: 0.0,
                peak: accel * accel_time,
                accel,
            }
        } else {
            Trapezoid {
                length,
                accel_time: speed / accel,
                cruise_time: (length - speed * speed / accel) / speed,
                peak: speed,
                accel,
            }
        }
    }

    fn duration(&self) -> f64 {
        2.0 * self.accel_time + self.cruise_time
    }

    /// The fraction of the length covered at `t`.
    fn fraction(&self, t: f64) -> f64 {
        if self.length <= 0.0 || t >= self.duration() {
            return 1.0;
        }
        let (ta, tc, a, v) = (self.accel_time, self.cruise_time, self.accel, self.peak);
        let s = if t < ta {
            0.5 * a * t * t
        } else if t < ta + tc {
            0.5 * a * ta * ta + v * (t - ta)
        } else {
            let td = self.duration() - t;
            self.length - 0.5 * a * td * td
        };
        (s / self.length).clamp(0.0, 1.0)
    }
}

/// One move of a path.
#[derive(Clone, Debug, PartialEq)]
struct Segment {
    seq: i32,
    /// Joint displacement, or `[dx, dy, dz, wx, wy, wz]` (position, then the rotation
    /// vector of the turn in the base frame).
    delta: [f64; 6],
    profile: Trapezoid,
    /// Profile time run, already scaled by the slider.
    t: f64,
    blend: f64,
    /// The TCP position the segment ends at, for the blend zone.
    end_tcp: [f64; 3],
}

impl Segment {
    fn fraction(&self) -> f64 {
        self.profile.fraction(self.t)
    }

    fn finished(&self) -> bool {
        self.t >= self.profile.duration()
    }
}

/// A path of moves of one space, their profiles added.
#[derive(Clone, Debug, PartialEq)]
struct Path {
    space: Space,
    /// Joints (joint space) or the TCP pose (linear) where the first segment starts.
    base: [f64; 6],
    segments: Vec<Segment>,
}

impl Path {
    /// The end of the last segment, in the path's space.
    fn end(&self) -> [f64; 6] {
        self.segments
            .iter()
            .fold(self.base, |at, s| apply(self.space, &at, &s.delta, 1.0))
    }

    /// Where the path is now, in its space.
    fn now(&self) -> [f64; 6] {
        self.segments.iter().fold(self.base, |at, s| {
            apply(self.space, &at, &s.delta, s.fraction())
        })
    }
}

/// `at` moved by `fraction` of `delta`.
fn apply(space: Space, at: &[f64; 6], delta: &[f64; 6], fraction: f64) -> [f64; 6] {
    match space {
        Space::Joint => std::array::from_fn(|j| at[j] + delta[j] * fraction),
        Space::Linear => {
            let (r, p) = matrix_of(at);
            let (turn, _) = matrix_of(&[
                0.0,
                0.0,
                0.0,
                delta[3] * fraction,
                delta[4] * fraction,
                delta[5] * fraction,
            ]);
            pose_of(
                &mul3(&turn, &r),
                &std::array::from_fn(|i| p[i] + delta[i] * fraction),
            )
        }
    }
}

/// What the arm is doing.
#[derive(Clone, Debug, PartialEq)]
enum Motion {
    Still,
    Path(Path),
    /// Velocity in joint or TCP space, ramping to `target` at `accel`.
    Speed {
        space: Space,
        target: [f64; 6],
        accel: f64,
        velocity: [f64; 6],
        /// The TCP pose being integrated (linear).
        pose: [f64; 6],
    },
    Servo {
        target: [f64; 6],
    },
}

/// The force mode the program was given, as `force_mode` takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceMode {
    /// The task frame.
    pub frame: [f64; 6],
    /// The compliant axes (1) and the others (0).
    pub selection: [i32; 6],
    /// The wrench to apply on compliant axes.
    pub wrench: [f64; 6],
    /// The force mode type: 1, 2 or 3.
    pub kind: i32,
    /// Speed limits on compliant axes, deviation limits on the others.
    pub limits: [f64; 6],
}

/// When a fault of the simulator stops the program: after this much motion time (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ProgramFaults {
    pub(crate) protective_stop_after: Option<f64>,
    pub(crate) runtime_stop_after: Option<f64>,
}

impl ProgramFaults {
    /// The program's share of the simulator's faults.
    pub(crate) fn of(faults: &[crate::Fault]) -> Self {
        let mut f = ProgramFaults::default();
        for fault in faults {
            match fault {
                crate::Fault::ProtectiveStopMidMove(after) => {
                    f.protective_stop_after = Some(after.as_secs_f64());
                }
                crate::Fault::RuntimeStopMidMove(after) => {
                    f.runtime_stop_after = Some(after.as_secs_f64());
                }
                _ => {}
            }
        }
        f
    }
}

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
///   cannot reach (or a straight line through a singularity), and the faults
///   [`Fault::ProtectiveStopMidMove`](crate::Fault::ProtectiveStopMidMove) and
///   [`Fault::RuntimeStopMidMove`](crate::Fault::RuntimeStopMidMove). A protective stop goes
///   through [`CommandProgram::protective_stop`] and is reported as `safety_mode`
///   PROTECTIVE_STOP with the program stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandProgram {
    arm: Arm,
    layout: CommandLayout,
    q: [f64; 6],
    qd: [f64; 6],
    motion: Motion,
    pending: Option<(Command, i32, [f64; 9])>,
    accepted: i32,
    done: i32,
    state: ProgramState,
    failure: Failure,
    protective: bool,
    watchdog: Option<i32>,
    unchanged: u32,
    armed: bool,
    tcp: [f64; 6],
    payload: (f64, [f64; 3]),
    force: Option<ForceMode>,
    teach: bool,
    progress: f64,
    faults: ProgramFaults,
    moving_time: f64,
    ticks: u64,
    messages: Vec<String>,
    started: Option<(i32, u64, Instant)>,
    decelerating: Option<(u64, Instant)>,
    /// The last move of a path, finished in the tick before.
    settling: Option<i32>,
    /// A setting finished while a move taken before it ran: DONE reaches it once that move
    /// has finished (`Command::is_setting`).
    setting_done: Option<i32>,
}

impl CommandProgram {
    /// A program started with the arm `arm` at `q`, reading the registers of `layout`.
    #[must_use]
    pub fn new(arm: Arm, q: [f64; 6], layout: CommandLayout) -> Self {
        CommandProgram {
            arm,
            layout,
            q,
            qd: [0.0; 6],
            motion: Motion::Still,
            pending: None,
            accepted: 0,
            done: 0,
            state: ProgramState::Idle,
            failure: Failure::None,
            protective: false,
            watchdog: None,
            unchanged: 0,
            armed: false,
            tcp: [0.0; 6],
            payload: (0.0, [0.0; 3]),
            force: None,
            teach: false,
            progress: 0.0,
            faults: ProgramFaults::default(),
            moving_time: 0.0,
            ticks: 0,
            messages: Vec::new(),
            started: None,
            decelerating: None,
            settling: None,
            setting_done: None,
        }
    }

    pub(crate) fn with_faults(mut self, faults: ProgramFaults) -> Self {
        self.faults = faults;
        self
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        self.q
    }

    /// Joint velocities.
    #[must_use]
    pub fn qd(&self) -> [f64; 6] {
        self.qd
    }

    /// The TCP offset `set_tcp` gave (zero at start).
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        self.tcp
    }

    /// The TCP pose: the flange's pose with the TCP offset.
    #[must_use]
    pub fn tcp_pose(&self) -> [f64; 6] {
        compose(&self.arm.tcp_pose(&self.q), &self.tcp)
    }

    /// The payload `set_payload` gave: mass (kg) and centre of gravity (m).
    #[must_use]
    pub fn payload(&self) -> (f64, [f64; 3]) {
        self.payload
    }

    /// The force mode in effect, if any.
    #[must_use]
    pub fn force_mode(&self) -> Option<ForceMode> {
        self.force
    }

    /// Whether teach mode is on.
    #[must_use]
    pub fn in_teach_mode(&self) -> bool {
        self.teach
    }

    /// The program's state (int out +2).
    #[must_use]
    pub fn state(&self) -> ProgramState {
        self.state
    }

    /// Why it stopped (int out +3).
    #[must_use]
    pub fn failure(&self) -> Failure {
        self.failure
    }

    /// Whether a protective stop holds the arm.
    #[must_use]
    pub fn is_protective_stopped(&self) -> bool {
        self.protective
    }

    /// The sequence numbers of the last command taken and the last finished.
    #[must_use]
    pub fn handshake(&self) -> (i32, i32) {
        (self.accepted, self.done)
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
        self.started
    }

    /// The tick and moment the last stop's deceleration began.
    #[must_use]
    pub fn last_stop_started(&self) -> Option<(u64, Instant)> {
        self.decelerating
    }

    /// Every message the program has logged, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
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
        let safety = if self.protective {
            SAFETY_PROTECTIVE_STOP
        } else {
            SAFETY_NORMAL
        };
        Some(match name {
            // `actual_q` and `actual_qd` are the simulated robot's (with its noise, unless
            // deterministic), from these.
            "target_q" => Value::Vector6d(self.q),
            "target_qd" => Value::Vector6d(self.qd),
            "runtime_state" => Value::Uint32(self.runtime_state()),
            "safety_mode" | "safety_status" => Value::Int32(safety),
            // Bit 0 powered on, bit 1 program running.
            "robot_status_bits" => Value::Uint32(if self.runtime_state() == PLAYING {
                0b11
            } else {
                0b01
            }),
            // Bit 0 normal mode, bit 2 protective stopped.
            "safety_status_bits" => Value::Uint32(if self.protective { 1 << 2 } else { 1 }),
            "tcp_offset" => Value::Vector6d(self.tcp),
            "payload" => Value::Double(self.payload.0),
            "payload_cog" => Value::Vector3d(self.payload.1),
            n if n == int(int_out::ACCEPTED) => Value::Int32(self.accepted),
            n if n == int(int_out::DONE) => Value::Int32(self.done),
            n if n == int(int_out::STATE) => Value::Int32(self.state.to_register()),
            n if n == int(int_out::FAILURE) => Value::Int32(self.failure.to_register()),
            n if n == l.double_output(PROGRESS) => Value::Double(self.progress),
            _ => return None,
        })
    }

    /// The one way the program meets a protective stop: the arm stops at once (a stop of
    /// category 2 that the simulator makes within a tick), the program stops, and
    /// `safety_mode` reports PROTECTIVE_STOP until the simulator restarts.
    pub fn protective_stop(&mut self, reason: &str) {
        self.protective = true;
        self.qd = [0.0; 6];
        self.motion = Motion::Still;
        self.halt(
            Failure::None,
            format!("rtde_command: protective stop: {reason}"),
        );
    }

    /// One tick of `dt` seconds with the inputs `io` holds.
    pub fn step(&mut self, io: &IoState, dt: f64) {
        self.tick(io, dt, true);
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
        let settled = self.settling.take().inspect(|&seq| {
            self.finish_move(seq);
            if self.state == ProgramState::Moving && matches!(self.motion, Motion::Still) {
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
        let before = self.q;
        let moving = self.advance(io.speed_fraction(), dt);
        self.qd = std::array::from_fn(|j| (self.q[j] - before[j]) / dt);
        if moving && self.state != ProgramState::Stopped {
            self.moving_time += dt;
            self.check_faults();
        }
    }

    fn int(&self, io: &IoState, offset: u8) -> i32 {
        match io.input(&self.layout.int_input(offset)) {
            Some(Value::Int32(v)) => *v,
            _ => 0,
        }
    }

    fn doubles(&self, io: &IoState) -> [f64; DOUBLE_INPUTS as usize] {
        std::array::from_fn(|i| {
            let offset = u8::try_from(i).unwrap_or(0);
            match io.input(&self.layout.double_input(offset)) {
                Some(Value::Double(v)) => *v,
                _ => 0.0,
            }
        })
    }

    fn check_watchdog(&mut self, io: &IoState) {
        let value = self.int(io, int_in::WATCHDOG);
        if self.watchdog == Some(value) {
            self.unchanged += 1;
        } else {
            self.watchdog = Some(value);
            self.unchanged = 0;
        }
        if self.armed && self.unchanged >= WATCHDOG_TIMEOUT_CYCLES {
            let message = format!(
                "rtde_command: watchdog: {} did not change for {} cycles; the robot stopped",
                self.layout.int_input(int_in::WATCHDOG),
                self.unchanged
            );
            self.halt(Failure::Watchdog, message);
        }
    }

    fn check_faults(&mut self) {
        let f = self.faults;
        if f.protective_stop_after
            .is_some_and(|t| self.moving_time >= t)
        {
            self.faults.protective_stop_after = None;
            self.protective_stop("the simulator's fault flag (a collision mid-move)");
        } else if f.runtime_stop_after.is_some_and(|t| self.moving_time >= t) {
            self.faults.runtime_stop_after = None;
            self.halt(
                Failure::None,
                "rtde_command: the program was stopped (the simulator's fault flag)".to_owned(),
            );
        }
    }

    /// Stops the program: the arm decelerates to rest, nothing more is taken.
    fn halt(&mut self, failure: Failure, message: String) {
        self.state = ProgramState::Stopped;
        self.failure = failure;
        self.pending = None;
        self.stop_motion(Space::Joint, MAX_JOINT_ACCELERATION);
        self.messages.push(message);
    }

    /// Starts from the registers as it finds them: a controller keeps its input registers
    /// after a client leaves, so a previous session's sequence number and watchdog count
    /// are still there. The sequence number in them counts as taken and finished (that
    /// command was the previous program's, never this one's), and the next one is the
    /// first this program runs; the watchdog counts from the value found.
    fn adopt_registers(&mut self, io: &IoState) {
        let seq = self.int(io, int_in::SEQUENCE);
        self.accepted = seq;
        self.done = seq;
        self.watchdog = Some(self.int(io, int_in::WATCHDOG));
    }

    /// Takes the command in the registers, when it is the next one and can be taken.
    fn take_command(&mut self, io: &IoState) {
        let seq = self.int(io, int_in::SEQUENCE);
        if seq == self.accepted {
            return;
        }
        if seq != self.accepted.wrapping_add(1) {
            let message = format!(
                "rtde_command: handshake: command {seq} arrived after command {}; the robot \
                 stopped",
                self.accepted
            );
            return self.halt(Failure::Handshake, message);
        }
        let code = self.int(io, int_in::COMMAND);
        let Some(command) = Command::from_code(code) else {
            let message =
                format!("rtde_command: command code {code} is not one this program knows");
            return self.halt(Failure::UnknownCommand, message);
        };
        let d = self.doubles(io);
        let six = |first: usize| -> [f64; 6] { std::array::from_fn(|i| d[first + i]) };
        if command.is_move() {
            if self.pending.is_some() {
                return;
            }
            self.pending = Some((command, seq, std::array::from_fn(|i| d[i])));
        } else {
            match command {
                Command::SpeedJ | Command::SpeedL => {
                    let space = if command == Command::SpeedJ {
                        Space::Joint
                    } else {
                        Space::Linear
                    };
                    self.speed(space, six(0), d[6]);
                    self.state = ProgramState::Moving;
                }
                Command::StopJ | Command::ServoStop => {
                    self.stop_motion(Space::Joint, d[0]);
                    self.mark_stop();
                }
                Command::StopL => {
                    self.stop_motion(Space::Linear, d[0]);
                    self.mark_stop();
                }
                Command::ServoJ => {
                    self.pending = None;
                    self.motion = Motion::Servo { target: six(0) };
                    self.state = ProgramState::Moving;
                }
                Command::SetTcp => self.tcp = six(0),
                Command::SetPayload => self.payload = (d[0], [d[1], d[2], d[3]]),
                Command::TeachMode => {
                    self.teach = true;
                    self.stop_motion(Space::Joint, MAX_JOINT_ACCELERATION);
                }
                Command::EndTeachMode => self.teach = false,
                Command::ForceMode => {
                    let ints: [i32; 7] = std::array::from_fn(|i| {
                        self.int(io, int_in::ARGS + u8::try_from(i).unwrap_or(0))
                    });
                    self.force = Some(ForceMode {
                        frame: six(0),
                        selection: std::array::from_fn(|i| ints[1 + i]),
                        wrench: six(6),
                        kind: ints[0],
                        limits: six(12),
                    });
                }
                Command::EndForceMode => self.force = None,
                // Nothing to zero: the simulated sensor reads zero.
                _ => {}
            }
            if command.is_setting() && self.first_move_in_flight().is_some() {
                self.setting_done = Some(seq);
            } else {
                self.done = seq;
                self.setting_done = None;
            }
        }
        self.accepted = seq;
        self.armed = true;
    }

    /// A stop under way: the program is moving until the arm rests (URScript's `stopj`
    /// returns then).
    fn mark_stop(&mut self) {
        self.pending = None;
        self.decelerating = Some((self.ticks, Instant::now()));
    }

    /// Switches to a velocity ramp in `space`, starting from the arm's current velocity.
    fn speed(&mut self, space: Space, target: [f64; 6], accel: f64) {
        let pose = self.tcp_pose();
        let velocity = match space {
            Space::Joint => self.qd,
            Space::Linear => self.arm.tcp_speed(&self.q, &self.qd),
        };
        self.pending = None;
        self.motion = Motion::Speed {
            space,
            target,
            accel,
            velocity,
            pose,
        };
    }

    fn stop_motion(&mut self, space: Space, accel: f64) {
        if matches!(self.motion, Motion::Still) {
            return;
        }
        self.speed(space, [0.0; 6], accel);
    }

    /// Starts the pending move when it can start: on a still arm, or blending into a path
    /// of its kind whose last move is within its blend radius of its target.
    fn take_pending(&mut self) {
        let Some((command, seq, args)) = self.pending else {
            return;
        };
        if self.state == ProgramState::Stopped {
            return;
        }
        let space = if command == Command::MoveJ {
            Space::Joint
        } else {
            Space::Linear
        };
        let tcp_now = self.tcp_pose();
        let can_blend = match &self.motion {
            Motion::Path(path) => {
                path.space == space
                    && path.segments.last().is_some_and(|last| {
                        last.blend > 0.0
                            && last.t > 0.0
                            && distance3(&[tcp_now[0], tcp_now[1], tcp_now[2]], &last.end_tcp)
                                <= last.blend
                    })
            }
            _ => false,
        };
        let starts = match &self.motion {
            Motion::Path(path) => can_blend || path.segments.is_empty(),
            Motion::Still | Motion::Servo { .. } => true,
            Motion::Speed { velocity, .. } => velocity.iter().all(|v| *v == 0.0),
        };
        if !starts {
            return;
        }
        let target: [f64; 6] = std::array::from_fn(|i| args[i]);
        let (speed, accel, blend) = (args[6], args[7], args[8]);
        let mut path = match std::mem::replace(&mut self.motion, Motion::Still) {
            Motion::Path(path) if can_blend => path,
            _ => Path {
                space,
                base: match space {
                    Space::Joint => self.q,
                    Space::Linear => tcp_now,
                },
                segments: Vec::new(),
            },
        };
        let from = path.end();
        let (delta, length, end_tcp) = match space {
            Space::Joint => {
                let delta: [f64; 6] = std::array::from_fn(|j| target[j] - from[j]);
                let length = delta.iter().map(|d| d.abs()).fold(0.0, f64::max);
                (delta, length, [0.0; 3])
            }
            Space::Linear => {
                let (r0, p0) = matrix_of(&from);
                let (r1, p1) = matrix_of(&target);
                // The turn in the base frame: r1 · r0ᵀ.
                let turn = pose_of(&mul3(&r1, &rtde_kinematics::transpose3(&r0)), &[0.0; 3]);
                let delta = [
                    p1[0] - p0[0],
                    p1[1] - p0[1],
                    p1[2] - p0[2],
                    turn[3],
                    turn[4],
                    turn[5],
                ];
                let dp = distance3(&p0, &p1);
                let angle = (turn[3] * turn[3] + turn[4] * turn[4] + turn[5] * turn[5]).sqrt();
                (
                    delta,
                    if dp > 1e-9 { dp } else { angle },
                    [p1[0], p1[1], p1[2]],
                )
            }
        };
        let end_tcp = match space {
            Space::Joint => {
                let p = compose(&self.arm.tcp_pose(&target), &self.tcp);
                [p[0], p[1], p[2]]
            }
            Space::Linear => end_tcp,
        };
        // The move before this one returns (in URScript) on entering its blend radius.
        let returned = path.segments.last().map(|previous| previous.seq);
        path.segments.push(Segment {
            seq,
            delta,
            profile: Trapezoid::new(length, speed, accel),
            t: 0.0,
            blend,
            end_tcp,
        });
        self.motion = Motion::Path(path);
        self.pending = None;
        if let Some(previous) = returned {
            self.finish_move(previous);
        }
        self.state = ProgramState::Moving;
        self.progress = 0.0;
        self.started = Some((seq, self.ticks, Instant::now()));
    }

    /// The first move taken and not finished (returned, in URScript's terms), if any.
    fn first_move_in_flight(&self) -> Option<i32> {
        let running = match &self.motion {
            Motion::Path(path) => path
                .segments
                .iter()
                .map(|s| s.seq)
                .filter(|&seq| seq > self.done)
                .min(),
            _ => None,
        };
        let pending = self.pending.map(|(_, seq, _)| seq);
        [running, pending, self.settling]
            .into_iter()
            .flatten()
            .min()
    }

    /// Move `seq` finished: DONE reaches it, and a setting finished meanwhile once no move
    /// before that setting is left. The progress register is the move under way's: 0 when
    /// the next one waits to start, 1 when none is left.
    fn finish_move(&mut self, seq: i32) {
        self.done = self.done.max(seq);
        if self.pending.is_some() {
            self.progress = 0.0;
        }
        if let Some(setting) = self.setting_done {
            let waits = self.first_move_in_flight().is_some_and(|m| m < setting);
            if setting <= self.done {
                self.setting_done = None;
            } else if !waits {
                self.done = setting;
                self.setting_done = None;
            }
        }
    }

    /// Moves the arm one tick; `true` while it moves.
    fn advance(&mut self, slider: f64, dt: f64) -> bool {
        match &mut self.motion {
            Motion::Still => false,
            Motion::Servo { target } => {
                let target = *target;
                program::track(&mut self.q, &mut self.qd, Some(&target), dt);
                true
            }
            Motion::Speed {
                space,
                target,
                accel,
                velocity,
                pose,
            } => {
                let goal: [f64; 6] = target.map(|v| v * slider);
                let step = *accel * dt;
                let gap = velocity
                    .iter()
                    .zip(&goal)
                    .map(|(v, g)| (g - v).abs())
                    .fold(0.0, f64::max);
                // Within rounding of the goal counts as there: a ramp must end exactly.
                let k = if gap <= step * (1.0 + 1e-9) {
                    1.0
                } else {
                    step / gap
                };
                for (v, g) in velocity.iter_mut().zip(&goal) {
                    *v += (g - *v) * k;
                }
                let (space, velocity) = (*space, *velocity);
                let rest = velocity.iter().all(|v| *v == 0.0) && goal.iter().all(|g| *g == 0.0);
                match space {
                    Space::Joint => {
                        for (q, v) in self.q.iter_mut().zip(&velocity) {
                            *q += v * dt;
                        }
                    }
                    Space::Linear => {
                        let delta = velocity.map(|v| v * dt);
                        *pose = apply(Space::Linear, pose, &delta, 1.0);
                        let flange = compose(pose, &invert(&self.tcp));
                        if !self.follow_pose(&flange, dt) {
                            return false;
                        }
                    }
                }
                if rest {
                    self.motion = Motion::Still;
                    if self.state == ProgramState::Moving {
                        self.state = ProgramState::Idle;
                    }
                    return false;
                }
                true
            }
            Motion::Path(path) => {
                for s in &mut path.segments {
                    s.t += dt * slider;
                }
                let space = path.space;
                let now = path.now();
                let mut folded = None;
                // Fold finished segments into the base.
                while path.segments.first().is_some_and(Segment::finished) {
                    let s = path.segments.remove(0);
                    path.base = apply(space, &path.base, &s.delta, 1.0);
                    if path.segments.is_empty() {
                        // The last move is finished once the arm is still: the next tick.
                        self.settling = Some(s.seq);
                    } else {
                        folded = Some(s.seq);
                    }
                }
                self.progress = path.segments.last().map_or(1.0, Segment::fraction);
                let finished = path.segments.is_empty();
                if let Some(seq) = folded {
                    self.finish_move(seq);
                }
                match space {
                    Space::Joint => self.q = now,
                    Space::Linear => {
                        let flange = compose(&now, &invert(&self.tcp));
                        if !self.follow_pose(&flange, dt) {
                            return false;
                        }
                    }
                }
                if finished {
                    self.motion = Motion::Still;
                }
                true
            }
        }
    }

    /// Moves the joints to the flange pose `pose`, nearest where they are; on no solution,
    /// or a jump no joint can make in a tick, the program stops (`false`).
    fn follow_pose(&mut self, pose: &[f64; 6], dt: f64) -> bool {
        let limit = IK_JUMP_FACTOR * program::MAX_JOINT_SPEED * dt;
        match self.arm.inverse_nearest(pose, &self.q) {
            Ok(q) if q.iter().zip(&self.q).all(|(a, b)| (a - b).abs() <= limit) => {
                self.q = q;
                true
            }
            Ok(_) => {
                self.motion = Motion::Still;
                self.halt(
                    Failure::Unreachable,
                    "rtde_command: move_l: the straight line passes a singularity; the robot \
                     stopped"
                        .to_owned(),
                );
                false
            }
            Err(e) => {
                self.motion = Motion::Still;
                self.halt(Failure::Unreachable, format!("rtde_command: move_l: {e}"));
                false
            }
        }
    }
}

fn distance3(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtde_core::fields::{Direction, lookup};

    const DT: f64 = 0.002;
    const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

    /// The client's side of the registers, written into an `IoState` as a client's
    /// packages would, and the program stepped tick by tick.
    struct Bench {
        io: IoState,
        program: CommandProgram,
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
            let mut program = CommandProgram::new(Arm::UR5E, q, CommandLayout::UPPER);
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
            while self.program.handshake().1 < seq {
                assert!(self.trace.len() - start < 100_000, "never finished");
                assert_ne!(
                    self.program.state(),
                    ProgramState::Stopped,
                    "{:?}",
                    self.program.messages()
                );
                self.tick();
            }
            self.trace.len() - start
        }

        fn tcp(&self, q: &[f64; 6]) -> [f64; 6] {
            Arm::UR5E.tcp_pose(q)
        }
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
        assert_eq!(b.program.state(), ProgramState::Idle);
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
            while blended.program.handshake().0 < blended.seq {
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

    #[test]
    fn stop_j_decelerates_from_the_tick_that_takes_it() {
        let mut b = Bench::new();
        b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 1.0, 2.0, 0.0);
        for _ in 0..400 {
            b.tick();
        }
        let before = b.program.qd()[0];
        assert!(before > 0.5);
        b.command(Command::StopJ, &[4.0], &[]);
        b.tick();
        let (tick, _) = b.program.last_stop_started().unwrap();
        assert_eq!(tick, b.program.ticks());
        let first = b.program.qd()[0];
        assert!(
            (before - first - 4.0 * DT).abs() < 1e-9,
            "{before} -> {first}"
        );
        while max_abs(b.program.qd()) > 0.0 {
            b.tick();
        }
        assert_eq!(b.program.state(), ProgramState::Idle);
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
    fn the_watchdog_stops_the_program() {
        let mut b = Bench::new();
        b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
        b.tick();
        b.kick = false;
        for _ in 0..WATCHDOG_TIMEOUT_CYCLES {
            b.tick();
        }
        assert_eq!(b.program.failure(), Failure::Watchdog);
        assert_eq!(b.program.runtime_state(), STOPPED);
        assert!(b.program.messages()[0].contains("watchdog"));
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
        assert_eq!(b.program.failure(), Failure::None);
        assert_eq!(b.program.state(), ProgramState::Moving);
    }

    #[test]
    fn a_new_program_starts_from_the_registers_a_previous_session_left() {
        // The previous session's last command, a move, is still in the registers.
        let mut b = Bench::new();
        b.program = CommandProgram::new(Arm::UR5E, HOME, CommandLayout::UPPER);
        b.seq = 41;
        b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
        b.tick();
        let p = &b.program;
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
        assert_eq!(b.program.failure(), Failure::Handshake);
    }

    #[test]
    fn a_protective_stop_mid_move_is_reported_as_a_controller_reports_it() {
        let mut b = Bench::new();
        b.program = b.program.clone().with_faults(ProgramFaults {
            protective_stop_after: Some(0.2),
            runtime_stop_after: None,
        });
        b.move_j([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, 0.0);
        for _ in 0..200 {
            b.tick();
        }
        let p = &b.program;
        assert!(p.is_protective_stopped());
        assert_eq!(p.output("safety_mode"), Some(Value::Int32(3)));
        assert_eq!(p.output("runtime_state"), Some(Value::Uint32(STOPPED)));
        assert_eq!(p.qd(), [0.0; 6]);
    }

    #[test]
    fn a_line_through_the_base_axis_stops_the_program_as_unreachable() {
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
        assert_eq!(b.program.failure(), Failure::Unreachable);
        assert_eq!(b.program.runtime_state(), STOPPED);
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
        let p = &b.program;
        assert_eq!(p.handshake(), (4, 4));
        assert_eq!(p.tcp_offset()[2], 0.1);
        assert_eq!(p.payload(), (1.5, [0.0, 0.0, 0.05]));
        let f = p.force_mode().unwrap();
        assert_eq!(
            (f.kind, f.selection, f.wrench[2]),
            (2, [0, 0, 1, 0, 0, 0], -10.0)
        );
        assert!(p.in_teach_mode());
        let tcp = p.tcp_pose();
        let flange = Arm::UR5E.tcp_pose(&p.q());
        // Tool pointing down at home: the TCP is 10 cm below the flange.
        assert!(
            (flange[2] - tcp[2] - 0.1).abs() < 1e-6,
            "{flange:?} {tcp:?}"
        );
    }
}
