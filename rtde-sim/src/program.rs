//! The behaviour of `rtde_servo.script`, run by the simulated controller: joint
//! targets from the registers, tracked within velocity and acceleration limits and stretched
//! by the speed slider, the waypoint handshake, and the watchdog stop.

use rtde_core::Value;
use rtde_robot_proto::programs::servo::{self as layout, ProgramStatus};

use crate::io::IoState;

/// Joint velocity limit of the tracking, rad/s (the URScript template's `servoj` follows
/// the controller's own joint limits; this is a UR5e's wrist speed).
pub const MAX_JOINT_SPEED: f64 = std::f64::consts::PI;

/// Joint acceleration limit of the tracking and of the stop, rad/s².
pub const MAX_JOINT_ACCELERATION: f64 = 40.0;

/// The runtime states the program reports in `runtime_state`.
const PLAYING: u32 = 2;
const STOPPED: u32 = 1;

/// The simulated robot program's state, advanced once per control-loop tick.
///
/// Each tick, in the template's order:
/// 1. the watchdog: when `input_int_register_24` has not changed for
///    [`layout::WATCHDOG_TIMEOUT_CYCLES`] ticks since the first waypoint, the program stops;
/// 2. the handshake, once no waypoint runs (the script is blocked in `servoj` meanwhile): a
///    waypoint id one past the last taken one starts that waypoint (joint targets from
///    `input_double_register_24..=29`) and is acknowledged in `output_int_register_24` at
///    once, so the client writes the next while it runs; the last taken id changes nothing;
///    any other id stops the program;
/// 3. the waypoint's setpoint moves from the previous target to the new one by the speed
///    slider's fraction of the way per tick (one tick per waypoint at 100 %, stretched as
///    the slider stretches `servoj`), and the next waypoint is taken once it reaches it;
/// 4. the joints track the setpoint within [`MAX_JOINT_SPEED`] and
///    [`MAX_JOINT_ACCELERATION`]; once stopped, they brake to rest at that acceleration.
#[derive(Clone, Debug, PartialEq)]
pub struct ServoProgram {
    q: [f64; 6],
    qd: [f64; 6],
    setpoint: [f64; 6],
    from: [f64; 6],
    to: [f64; 6],
    progress: f64,
    executing: Option<i32>,
    acked: i32,
    status: ProgramStatus,
    watchdog: Option<i32>,
    unchanged: u32,
    ticks: u64,
    /// Why the program stopped, once it did: the text message clients receive.
    messages: Vec<String>,
}

impl ServoProgram {
    /// A program started with the arm at `q`.
    #[must_use]
    pub fn new(q: [f64; 6]) -> Self {
        ServoProgram {
            q,
            qd: [0.0; 6],
            setpoint: q,
            from: q,
            to: q,
            progress: 0.0,
            executing: None,
            acked: 0,
            status: ProgramStatus::Waiting,
            watchdog: None,
            unchanged: 0,
            ticks: 0,
            messages: Vec::new(),
        }
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

    /// The setpoint the joints track (`target_q`).
    #[must_use]
    pub fn setpoint(&self) -> [f64; 6] {
        self.setpoint
    }

    /// The id of the last waypoint taken (`output_int_register_24`).
    #[must_use]
    pub fn acked(&self) -> i32 {
        self.acked
    }

    /// The program's status (`output_int_register_25`).
    #[must_use]
    pub fn status(&self) -> ProgramStatus {
        self.status
    }

    /// `runtime_state`: playing until the program stops, then stopped.
    #[must_use]
    pub fn runtime_state(&self) -> u32 {
        if self.status.is_stopped() {
            STOPPED
        } else {
            PLAYING
        }
    }

    /// The ticks run.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Every message the program has logged, oldest first: why it stopped.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    /// The value the program reports for an output field it owns; `None` for the others.
    #[must_use]
    pub fn output(&self, name: &str) -> Option<Value> {
        let ack = format!("output_int_register_{}", layout::ACK_REGISTER);
        let status = format!("output_int_register_{}", layout::STATUS_REGISTER);
        Some(match name {
            "actual_q" => Value::Vector6d(self.q),
            "actual_qd" => Value::Vector6d(self.qd),
            "target_q" => Value::Vector6d(self.setpoint),
            "runtime_state" => Value::Uint32(self.runtime_state()),
            n if n == ack => Value::Int32(self.acked),
            n if n == status => Value::Int32(self.status.to_register()),
            _ => return None,
        })
    }

    /// A paused tick ([`Program::hold`](crate::Program::hold)): the arm stands, and tracks
    /// its setpoint again at play.
    pub fn hold(&mut self) {
        self.qd = [0.0; 6];
    }

    /// One tick of `dt` seconds with the inputs `io` holds.
    pub fn step(&mut self, io: &IoState, dt: f64) {
        self.ticks += 1;
        if !self.status.is_stopped() {
            self.check_watchdog(io);
        }
        if !self.status.is_stopped() {
            self.follow(io);
        }
        self.track(dt);
    }

    fn int(io: &IoState, index: u8) -> i32 {
        match io.input(&format!("input_int_register_{index}")) {
            Some(Value::Int32(v)) => *v,
            _ => 0,
        }
    }

    fn check_watchdog(&mut self, io: &IoState) {
        let value = Self::int(io, layout::WATCHDOG_REGISTER);
        if self.watchdog == Some(value) {
            self.unchanged += 1;
        } else {
            self.watchdog = Some(value);
            self.unchanged = 0;
        }
        // The watchdog arms with the first waypoint: a program waiting for its client
        // has nothing to stop.
        if self.status == ProgramStatus::Running
            && self.unchanged >= layout::WATCHDOG_TIMEOUT_CYCLES
        {
            self.stop(
                ProgramStatus::WatchdogStopped,
                format!(
                    "rtde_servo: watchdog: input_int_register_{} did not change for {} cycles; \
                     the robot stopped",
                    layout::WATCHDOG_REGISTER,
                    self.unchanged
                ),
            );
        }
    }

    fn follow(&mut self, io: &IoState) {
        // While a waypoint runs, the script is blocked in its servoj and reads no id.
        if self.executing.is_none() {
            let id = Self::int(io, layout::WAYPOINT_REGISTER);
            if id == self.acked.wrapping_add(1) {
                let target = std::array::from_fn(|j| {
                    let index = layout::TARGET_REGISTERS.start() + u8::try_from(j).unwrap_or(0);
                    match io.input(&format!("input_double_register_{index}")) {
                        Some(Value::Double(v)) if v.is_finite() => *v,
                        _ => self.to[j],
                    }
                });
                self.from = self.to;
                self.to = target;
                self.progress = 0.0;
                self.executing = Some(id);
                // Taken: acknowledged at once, so the client writes the next one meanwhile.
                self.acked = id;
                self.status = ProgramStatus::Running;
            } else if id != self.acked {
                self.stop(
                    ProgramStatus::HandshakeStopped,
                    format!(
                        "rtde_servo: handshake: waypoint {id} arrived after waypoint {} (the \
                         next must be {}); the robot stopped",
                        self.acked,
                        self.acked.wrapping_add(1)
                    ),
                );
                return;
            }
        }
        if self.executing.is_some() {
            self.progress = (self.progress + io.speed_fraction()).min(1.0);
            let p = self.progress;
            self.setpoint = std::array::from_fn(|j| self.from[j] + (self.to[j] - self.from[j]) * p);
            if p >= 1.0 {
                self.setpoint = self.to;
                self.executing = None;
            }
        }
    }

    fn stop(&mut self, status: ProgramStatus, message: String) {
        self.status = status;
        self.executing = None;
        self.messages.push(message);
    }

    /// Moves the joints toward the setpoint (or to rest, once stopped) within the limits.
    fn track(&mut self, dt: f64) {
        let stopped = self.status.is_stopped();
        let setpoint = self.setpoint;
        track(
            &mut self.q,
            &mut self.qd,
            (!stopped).then_some(&setpoint),
            dt,
        );
        if stopped {
            self.setpoint = self.q;
        }
    }
}

/// Moves joints at `q` with velocities `qd` one tick toward `setpoint` (to rest when
/// `None`) within [`MAX_JOINT_SPEED`] and [`MAX_JOINT_ACCELERATION`]: the tracking of the
/// servo program and of the command program's `servo_j`.
pub(crate) fn track(q: &mut [f64; 6], qd: &mut [f64; 6], setpoint: Option<&[f64; 6]>, dt: f64) {
    for j in 0..6 {
        let desired = match setpoint {
            None => 0.0,
            Some(setpoint) => {
                let e = setpoint[j] - q[j];
                // The fastest speed from which the joint can still brake onto the setpoint.
                let braking = (2.0 * MAX_JOINT_ACCELERATION * e.abs()).sqrt();
                e.signum() * (e.abs() / dt).min(braking).min(MAX_JOINT_SPEED)
            }
        };
        let dv = MAX_JOINT_ACCELERATION * dt;
        qd[j] += (desired - qd[j]).clamp(-dv, dv);
        q[j] += qd[j] * dt;
    }
}
