//! The simulated robot: joint motion, kinematics, and a value for every output field.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::f64::consts::{FRAC_PI_2, PI, TAU};

use rtde_core::Value;
use rtde_core::fields::{Field, WireType};

use crate::io::IoState;
use crate::robot_program::Program;
use crate::source::{OutputSource, Sample, Tick};
use rtde_kinematics::{Arm, mul3v, transpose3};

/// The joints' temperatures (°C), as `joint_temperatures` and a script's `get_joint_temp`
/// report them: a warm arm at rest in a room.
pub(crate) const JOINT_TEMPERATURES: [f64; 6] = [36.0, 36.5, 37.0, 38.0, 38.5, 39.0];

/// The controller's temperature (°C), as a script's `get_controller_temp` reports it.
pub(crate) const CONTROLLER_TEMPERATURE: f64 = 40.0;

/// The joint motion of the simulated robot: every joint swings sinusoidally about a centre.
///
/// At time `t` in seconds (the tick's `timestamp`, `tick as f64 / f64::from(loop_rate)`),
/// joint `j` is at exactly
///
/// ```text
/// target_q[j]   = center[j] + amplitude[j] * (TAU / period[j] * t).sin()
/// target_qd[j]  = amplitude[j] * (TAU / period[j]) * (TAU / period[j] * t).cos()
/// target_qdd[j] = -amplitude[j] * (TAU / period[j]).powi(2) * (TAU / period[j] * t).sin()
/// ```
///
/// with `TAU = std::f64::consts::TAU`, evaluated in that order in `f64` (so a test
/// computing the same expression gets the same bits). Without noise, `actual_q` and
/// `actual_qd` equal `target_q` and `target_qd`; with noise they differ from them by a
/// small seeded amount (see [`SimBuilder::noise`](crate::SimBuilder::noise)).
///
/// ```
/// use rtde_sim::Motion;
///
/// let m = Motion::DEFAULT;
/// assert_eq!(m.position(0.0), m.center);
/// let t = 1.25;
/// let j = 2;
/// let expected = m.center[j] + m.amplitude[j] * (std::f64::consts::TAU / m.period[j] * t).sin();
/// assert_eq!(m.position(t)[j], expected);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    /// The position each joint swings about, in radians.
    pub center: [f64; 6],
    /// How far each joint swings to either side, in radians.
    pub amplitude: [f64; 6],
    /// The period of each joint's swing, in seconds.
    pub period: [f64; 6],
}

/// The largest joint position a UR e-Series arm reaches, either side of zero: ±2π.
pub const JOINT_POSITION_LIMIT: f64 = TAU;

/// The joint speed the simulator's motion may not exceed, in rad/s: π (180°/s, the UR5e's
/// slowest joint limit).
pub const JOINT_SPEED_LIMIT: f64 = PI;

impl Motion {
    /// The default motion: about the pose `[0, -π/2, π/2, -π/2, -π/2, 0]` (arm up,
    /// forearm level, tool pointing down), with amplitudes `[0.5, 0.3, 0.4, 0.5, 0.5, 1.0]`
    /// rad and periods `[20, 16, 12, 10, 8, 6]` s: every joint stays below 1.05 rad/s.
    pub const DEFAULT: Motion = Motion {
        center: [0.0, -FRAC_PI_2, FRAC_PI_2, -FRAC_PI_2, -FRAC_PI_2, 0.0],
        amplitude: [0.5, 0.3, 0.4, 0.5, 0.5, 1.0],
        period: [20.0, 16.0, 12.0, 10.0, 8.0, 6.0],
    };

    /// A robot standing still at `q`.
    #[must_use]
    pub const fn still(q: [f64; 6]) -> Motion {
        Motion {
            center: q,
            amplitude: [0.0; 6],
            period: [1.0; 6],
        }
    }

    /// The joint positions at `t` seconds (`target_q`).
    #[must_use]
    pub fn position(&self, t: f64) -> [f64; 6] {
        std::array::from_fn(|j| {
            self.center[j] + self.amplitude[j] * (TAU / self.period[j] * t).sin()
        })
    }

    /// The joint velocities at `t` seconds (`target_qd`).
    #[must_use]
    pub fn velocity(&self, t: f64) -> [f64; 6] {
        std::array::from_fn(|j| {
            let w = TAU / self.period[j];
            self.amplitude[j] * w * (w * t).cos()
        })
    }

    /// The joint accelerations at `t` seconds (`target_qdd`).
    #[must_use]
    pub fn acceleration(&self, t: f64) -> [f64; 6] {
        std::array::from_fn(|j| {
            let w = TAU / self.period[j];
            -self.amplitude[j] * w.powi(2) * (w * t).sin()
        })
    }

    /// Why this motion would leave the joint limits, if it would.
    pub(crate) fn check(&self) -> Result<(), String> {
        for j in 0..6 {
            let (c, a, p) = (self.center[j], self.amplitude[j], self.period[j]);
            if !(c.is_finite() && a.is_finite() && p.is_finite() && p > 0.0) {
                return Err(format!(
                    "joint {j}: centre, amplitude and period must be finite and the period positive"
                ));
            }
            if c.abs() + a.abs() > JOINT_POSITION_LIMIT {
                return Err(format!(
                    "joint {j} would reach {:.3} rad, beyond the ±2π joint limit",
                    c.abs() + a.abs()
                ));
            }
            if a.abs() * TAU / p > JOINT_SPEED_LIMIT {
                return Err(format!(
                    "joint {j} would move at {:.3} rad/s, beyond {JOINT_SPEED_LIMIT:.3} rad/s",
                    a.abs() * TAU / p
                ));
            }
        }
        Ok(())
    }
}

/// The simulated robot: the default [`OutputSource`].
///
/// It moves its joints by a [`Motion`], computes `actual_TCP_pose` and the other
/// Cartesian fields from the joints by the [`Arm`]'s forward kinematics, reflects what
/// clients write (registers read back, digital outputs, the speed slider, analog
/// outputs), and gives every other output field of the registry a plausible value of its
/// wire type (zero where nothing better is known). Every value is a pure function of the
/// tick, the seed and the input state, so a fixed seed reproduces a run exactly.
#[derive(Clone, Debug)]
pub struct SimulatedRobot {
    arm: Arm,
    motion: Motion,
    seed: u64,
    noise: bool,
    fixed: HashMap<&'static str, Value>,
}

impl SimulatedRobot {
    /// A robot of model `arm` moving by `motion`, with seeded measurement noise (seed 0).
    #[must_use]
    pub fn new(arm: Arm, motion: Motion) -> Self {
        SimulatedRobot {
            arm,
            motion,
            seed: 0,
            noise: true,
            fixed: HashMap::new(),
        }
    }

    /// The same robot with another noise seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same robot with measurement noise on or off.
    #[must_use]
    pub fn with_noise(mut self, noise: bool) -> Self {
        self.noise = noise;
        self
    }

    /// The same robot, streaming `value` for `field` at every tick. The caller checks that
    /// the value has the field's wire type.
    pub(crate) fn with_fixed(mut self, field: &'static str, value: Value) -> Self {
        self.fixed.insert(field, value);
        self
    }

    /// The arm model.
    #[must_use]
    pub fn arm(&self) -> &Arm {
        &self.arm
    }

    /// The joint motion.
    #[must_use]
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// The noise seed.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether `actual_*` values carry measurement noise.
    #[must_use]
    pub fn has_noise(&self) -> bool {
        self.noise
    }

    /// The value the robot reports for `field` at `tick`, or `None` for a field it has no
    /// model of (the caller sends the zero of the field's type).
    fn value(&self, field: &'static Field, state: &State<'_>, io: &IoState) -> Option<Value> {
        if let Some(v) = self.fixed.get(field.name()) {
            return Some(*v);
        }
        if let Some(v) = state.program.and_then(|p| p.output(field.name())) {
            return Some(v);
        }
        if field.is_read_back() {
            return io.input(field.name()).copied();
        }
        let v6 = Value::Vector6d;
        let v3 = Value::Vector3d;
        Some(match field.name() {
            "timestamp" => Value::Double(state.tick.seconds()),
            "target_q" => v6(state.q),
            "target_qd" => v6(state.qd),
            "target_qdd" => v6(state.qdd),
            "actual_q" => v6(state.actual_q),
            "actual_qd" => v6(state.actual_qd),
            "target_moment" => v6(*state.moment()),
            "actual_current_as_torque" => v6(state.noisy(channel::TORQUE, 0.05, *state.moment())),
            "target_current" | "joint_control_output" => v6(*state.current()),
            "actual_current" => v6(state.noisy(channel::CURRENT, 0.02, *state.current())),
            "actual_TCP_pose" => v6(*state.actual_pose()),
            "target_TCP_pose" => v6(*state.target_pose()),
            "actual_TCP_speed" => v6(*state.actual_speed()),
            "target_TCP_speed" => v6(*state.target_speed()),
            "actual_TCP_acceleration" | "target_TCP_acceleration" => v6(state.tcp_acceleration()),
            "control_step" => Value::Uint64(state.tick.index()),
            "target_gravity" => v3([0.0, 0.0, -9.82]),
            "actual_TCP_force" => v6(state.noisy(channel::FORCE, 0.5, [0.0; 6])),
            "ft_raw_wrench" | "wrench_calc_from_currents" => {
                v6(state.noisy(channel::FT_RAW, 0.5, [0.0; 6]))
            }
            "tcp_force_scalar" => {
                let f = state.noisy(channel::FORCE, 0.5, [0.0; 6]);
                Value::Double((f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt())
            }
            "elbow_position" => v3(self.arm.elbow_position(&state.actual_q)),
            "elbow_velocity" => v3(self.arm.elbow_velocity(&state.actual_q, &state.actual_qd)),
            "actual_tool_accelerometer" => {
                let r = self.arm.tcp_rotation(&state.actual_q);
                v3(mul3v(&transpose3(&r), &[0.0, 0.0, 9.81]))
            }
            "actual_momentum" => {
                let v = state.actual_speed();
                Value::Double(5.0 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            }
            "joint_temperatures" => v6(JOINT_TEMPERATURES),
            "tool_temperature" => Value::Double(35.0),
            "actual_main_voltage" | "actual_robot_voltage" => {
                Value::Double(48.0 + state.noisy(channel::VOLTAGE, 0.05, [0.0; 6])[0])
            }
            "actual_joint_voltage" => v6(state.noisy(channel::VOLTAGE, 0.05, [48.0; 6])),
            "actual_robot_current" => {
                let c = state.current();
                Value::Double(0.5 + 0.1 * c.iter().map(|x| x.abs()).sum::<f64>())
            }
            "actual_execution_time" => Value::Double(0.3),
            "target_execution_time" => Value::Double(1.0),
            "io_current" => Value::Double(100.0),
            // ROBOT_MODE_RUNNING, JOINT_RUNNING_MODE, SAFETY_MODE_NORMAL.
            "robot_mode" => Value::Int32(7),
            "joint_mode" => Value::Vector6Int32([253; 6]),
            "safety_mode" | "safety_status" => Value::Int32(1),
            "tool_mode" => Value::Uint32(253),
            // Powered on, no program running, not in a protective or emergency stop.
            "robot_status_bits" | "safety_status_bits" => Value::Uint32(1),
            // STOPPED, and so no speed scaling source.
            "runtime_state" => Value::Uint32(1),
            "time_scale_source" => Value::Int32(0),
            "speed_scaling" | "target_speed_fraction" => Value::Double(io.speed_fraction()),
            "actual_digital_output_bits" => Value::Uint64(io.digital_output_bits()),
            "actual_configurable_digital_output_bits" => {
                Value::Uint64(io.digital_output_bits() >> 8 & 0xff)
            }
            "standard_analog_output0" => Value::Double(io.analog_output(0)),
            "standard_analog_output1" => Value::Double(io.analog_output(1)),
            // Bits 2 and 3 are the analog outputs' types (the mask table says where).
            "analog_io_types" => {
                Value::Uint32(u32::try_from(io.read_back_bits("analog_io_types")).unwrap_or(0))
            }
            _ => return None,
        })
    }
}

impl OutputSource for SimulatedRobot {
    fn sample(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        io: &IoState,
        out: &mut [Value],
    ) -> Sample {
        self.fill(State::new(self, tick, None), fields, io, out)
    }

    fn sample_with_program(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        io: &IoState,
        program: &Program,
        out: &mut [Value],
    ) -> Sample {
        self.fill(State::new(self, tick, Some(program)), fields, io, out)
    }
}

impl SimulatedRobot {
    fn fill(
        &self,
        state: State<'_>,
        fields: &[&'static Field],
        io: &IoState,
        out: &mut [Value],
    ) -> Sample {
        for (field, slot) in fields.iter().zip(out.iter_mut()) {
            *slot = fit(self.value(field, &state, io), field.wire_type());
        }
        Sample::Send
    }
}

/// `value` if it has the field's wire type, else the type's zero.
fn fit(value: Option<Value>, wire_type: WireType) -> Value {
    match value {
        Some(v) if v.wire_type() == wire_type => v,
        _ => Value::zero(wire_type),
    }
}

/// Noise channels: each noisy quantity draws from its own stream.
mod channel {
    pub(super) const ACTUAL_Q: u64 = 0;
    pub(super) const ACTUAL_QD: u64 = 1;
    pub(super) const CURRENT: u64 = 2;
    pub(super) const TORQUE: u64 = 3;
    pub(super) const FORCE: u64 = 4;
    pub(super) const FT_RAW: u64 = 5;
    pub(super) const VOLTAGE: u64 = 6;
}

/// One tick of the robot, with the costlier quantities computed on first use.
struct State<'a> {
    robot: &'a SimulatedRobot,
    /// The robot program running, if any: it moves the joints and owns its registers.
    program: Option<&'a Program>,
    tick: Tick,
    q: [f64; 6],
    qd: [f64; 6],
    qdd: [f64; 6],
    actual_q: [f64; 6],
    actual_qd: [f64; 6],
    moment: OnceCell<[f64; 6]>,
    current: OnceCell<[f64; 6]>,
    actual_pose: OnceCell<[f64; 6]>,
    target_pose: OnceCell<[f64; 6]>,
    actual_speed: OnceCell<[f64; 6]>,
    target_speed: OnceCell<[f64; 6]>,
}

/// Coarse joint inertias (kg·m²) and torque-per-current constants (N·m/A).
const INERTIA: [f64; 6] = [2.0, 2.0, 0.6, 0.05, 0.05, 0.02];
const TORQUE_PER_AMP: [f64; 6] = [13.0, 13.0, 13.0, 9.0, 9.0, 9.0];

impl<'a> State<'a> {
    fn new(robot: &'a SimulatedRobot, tick: Tick, program: Option<&'a Program>) -> Self {
        let t = tick.seconds();
        // A running program moves the joints; otherwise the motion law does.
        let (q, qd, qdd, actual) = match program {
            Some(p) => (p.setpoint(), p.qd(), [0.0; 6], Some((p.q(), p.qd()))),
            None => (
                robot.motion.position(t),
                robot.motion.velocity(t),
                robot.motion.acceleration(t),
                None,
            ),
        };
        let (aq, aqd) = actual.unwrap_or((q, qd));
        let mut state = State {
            robot,
            program,
            tick,
            q,
            qd,
            qdd,
            actual_q: q,
            actual_qd: qd,
            moment: OnceCell::new(),
            current: OnceCell::new(),
            actual_pose: OnceCell::new(),
            target_pose: OnceCell::new(),
            actual_speed: OnceCell::new(),
            target_speed: OnceCell::new(),
        };
        state.actual_q = state.noisy(channel::ACTUAL_Q, 2e-5, aq);
        state.actual_qd = state.noisy(channel::ACTUAL_QD, 1e-4, aqd);
        state
    }

    /// `base` plus uniform noise in `[-amplitude, amplitude)`, a pure function of the seed,
    /// the tick, the channel and the element; `base` itself when noise is off.
    fn noisy(&self, channel: u64, amplitude: f64, base: [f64; 6]) -> [f64; 6] {
        if !self.robot.noise {
            return base;
        }
        std::array::from_fn(|i| {
            let key = (channel << 3) | i as u64;
            base[i] + amplitude * unit_noise(self.robot.seed, self.tick.index(), key)
        })
    }

    /// Joint torques of a coarse model: inertia times acceleration plus the gravity load
    /// of the upper arm, forearm and wrist.
    fn moment(&self) -> &[f64; 6] {
        self.moment.get_or_init(|| {
            let arm = &self.robot.arm;
            let (upper, fore) = (arm.a[1].abs(), arm.a[2].abs());
            let c1 = self.q[1].cos();
            let c12 = (self.q[1] + self.q[2]).cos();
            let c123 = (self.q[1] + self.q[2] + self.q[3]).cos();
            let g = 9.81;
            let (m_upper, m_fore, m_wrist) = (8.0, 2.8, 3.0);
            let elbow = g * (m_fore * 0.4 * fore * c12 + m_wrist * fore * c12);
            let shoulder =
                g * (m_upper * 0.5 * upper * c1 + (m_fore + m_wrist) * upper * c1) + elbow;
            let gravity = [0.0, shoulder, elbow, g * 0.05 * c123, 0.0, 0.0];
            std::array::from_fn(|j| INERTIA[j] * self.qdd[j] + gravity[j])
        })
    }

    fn current(&self) -> &[f64; 6] {
        self.current.get_or_init(|| {
            let m = self.moment();
            std::array::from_fn(|j| m[j] / TORQUE_PER_AMP[j])
        })
    }

    fn actual_pose(&self) -> &[f64; 6] {
        self.actual_pose
            .get_or_init(|| self.with_tcp(self.robot.arm.tcp_pose(&self.actual_q)))
    }

    fn target_pose(&self) -> &[f64; 6] {
        self.target_pose
            .get_or_init(|| self.with_tcp(self.robot.arm.tcp_pose(&self.q)))
    }

    /// The TCP pose of a flange pose, with the offset the program set (if any).
    fn with_tcp(&self, flange: [f64; 6]) -> [f64; 6] {
        match self.program.map(Program::tcp_offset) {
            Some(tcp) if tcp != [0.0; 6] => rtde_kinematics::compose(&flange, &tcp),
            _ => flange,
        }
    }

    fn actual_speed(&self) -> &[f64; 6] {
        self.actual_speed
            .get_or_init(|| self.robot.arm.tcp_speed(&self.actual_q, &self.actual_qd))
    }

    /// The flange's acceleration along the motion law, by a central difference of its
    /// velocity; the simulated robot tracks its target, so actual and target agree.
    fn tcp_acceleration(&self) -> [f64; 6] {
        const H: f64 = 1e-4;
        let t = self.tick.seconds();
        let (motion, arm) = (&self.robot.motion, &self.robot.arm);
        let after = arm.tcp_speed(&motion.position(t + H), &motion.velocity(t + H));
        let before = arm.tcp_speed(&motion.position(t - H), &motion.velocity(t - H));
        std::array::from_fn(|i| (after[i] - before[i]) / (2.0 * H))
    }

    fn target_speed(&self) -> &[f64; 6] {
        self.target_speed
            .get_or_init(|| self.robot.arm.tcp_speed(&self.q, &self.qd))
    }
}

/// A uniform number in `[-1, 1)` from `(seed, tick, key)`, by SplitMix64 finalisers: the
/// same inputs give the same number on every run and platform.
fn unit_noise(seed: u64, tick: u64, key: u64) -> f64 {
    2.0 * unit(mix(mix(seed ^ mix(tick)) ^ key)) - 1.0
}

/// A uniform number in `[0, 1)` from a well-mixed `h`: its top 53 bits, exactly.
pub(crate) fn unit(h: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // 53 bits: exact
    let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
    unit
}

/// SplitMix64's step: every bit of the result depends on every bit of `z`.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtde_core::fields::{Direction, fields};

    #[test]
    fn every_modelled_field_has_its_registry_type() {
        let robot = SimulatedRobot::new(Arm::UR5E, Motion::DEFAULT);
        let state = State::new(&robot, Tick::new(1234, 500), None);
        let io = IoState::default();
        for f in fields(Direction::Output) {
            if let Some(v) = robot.value(f, &state, &io) {
                assert_eq!(v.wire_type(), f.wire_type(), "{}", f.name());
            }
        }
    }

    #[test]
    fn every_output_field_gets_a_value_of_its_type() {
        let robot = SimulatedRobot::new(Arm::UR5E, Motion::DEFAULT);
        let all: Vec<&'static Field> = fields(Direction::Output).iter().collect();
        let mut out = vec![Value::Bool(false); all.len()];
        let sample = robot.sample(Tick::new(7, 500), &all, &IoState::default(), &mut out);
        assert_eq!(sample, Sample::Send);
        for (f, v) in all.iter().zip(&out) {
            assert_eq!(v.wire_type(), f.wire_type(), "{}", f.name());
        }
    }

    #[test]
    fn noise_is_a_pure_function_of_its_inputs() {
        assert_eq!(unit_noise(1, 2, 3), unit_noise(1, 2, 3));
        assert_ne!(unit_noise(1, 2, 3), unit_noise(1, 2, 4));
        assert_ne!(unit_noise(1, 2, 3), unit_noise(2, 2, 3));
        let spread: Vec<f64> = (0..1000).map(|t| unit_noise(9, t, 0)).collect();
        assert!(spread.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = spread.iter().sum::<f64>() / 1000.0;
        assert!(mean.abs() < 0.1, "{mean}");
    }

    #[test]
    fn default_motion_respects_the_limits() {
        Motion::DEFAULT.check().unwrap();
        assert!(
            Motion::still([7.0, 0.0, 0.0, 0.0, 0.0, 0.0])
                .check()
                .is_err()
        );
        let mut fast = Motion::DEFAULT;
        fast.period[5] = 0.1;
        assert!(fast.check().unwrap_err().contains("rad/s"));
    }
}
