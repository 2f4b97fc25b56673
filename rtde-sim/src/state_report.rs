//! What the primary, secondary and real-time interfaces report: the same controller
//! state RTDE streams, sampled through the same source at the same tick, so that every
//! interface agrees field by field.

use rtde_core::Value;
use rtde_core::fields::{Direction, Field, lookup};
use rtde_kinematics::Arm;
use rtde_robot_proto::primary::{
    AdditionalInfo, CalibrationData, CartesianInfo, ConfigurationData, ForceModeData, Joint,
    JointData, KinematicsInfo, MasterboardData, RobotModeData, RobotState, ToolCommunicationInfo,
    ToolData, ToolModeInfo,
};
use rtde_robot_proto::realtime::RealtimeState;

use crate::controller::Shared;
use crate::source::Tick;

/// The RTDE outputs the other interfaces are made of.
const FIELDS: [&str; 41] = [
    "timestamp",
    "target_q",
    "target_qd",
    "target_qdd",
    "target_current",
    "target_moment",
    "actual_q",
    "actual_qd",
    "actual_current",
    "joint_control_output",
    "actual_TCP_pose",
    "actual_TCP_speed",
    "actual_TCP_force",
    "target_TCP_pose",
    "target_TCP_speed",
    "actual_digital_input_bits",
    "joint_temperatures",
    "actual_execution_time",
    "robot_mode",
    "joint_mode",
    "safety_mode",
    "actual_tool_accelerometer",
    "speed_scaling",
    "target_speed_fraction",
    "actual_momentum",
    "actual_main_voltage",
    "actual_robot_voltage",
    "actual_robot_current",
    "actual_joint_voltage",
    "actual_digital_output_bits",
    "runtime_state",
    "elbow_position",
    "elbow_velocity",
    "safety_status",
    "standard_analog_input0",
    "standard_analog_input1",
    "standard_analog_output0",
    "standard_analog_output1",
    "io_current",
    "tool_temperature",
    "tool_mode",
];

/// Runtime states (RTDE's `runtime_state`) in which a program is running or paused.
const PLAYING: [u32; 2] = [2, 5];
const PAUSED: [u32; 2] = [3, 4];

/// The configuration data's defaults: PolyScope's default joint speed (60°/s) and
/// acceleration (80°/s²), tool speed and acceleration, and equivalent radius.
const DEFAULTS: [f64; 5] = [
    std::f64::consts::FRAC_PI_3,
    80.0_f64.to_radians(),
    0.25,
    1.2,
    0.25,
];

/// One tick of the controller, as the other interfaces see it.
#[derive(Debug)]
pub(crate) struct Report {
    fields: Vec<&'static Field>,
    values: Vec<Value>,
    tick: Tick,
    arm: Arm,
}

impl Report {
    pub(crate) fn new() -> Self {
        let fields: Vec<&'static Field> = FIELDS
            .iter()
            .filter_map(|name| lookup(Direction::Output, name))
            .collect();
        let values = fields.iter().map(|f| Value::zero(f.wire_type())).collect();
        Report {
            fields,
            values,
            tick: Tick::new(0, 1),
            arm: Arm::UR5E,
        }
    }

    /// Samples the controller at `tick`, as an RTDE connection streaming that tick would.
    pub(crate) fn sample(&mut self, shared: &Shared, tick: Tick) {
        let mut controller = shared.controller();
        self.arm = controller.start.arm;
        // A source that skips or ends a tick leaves the values of the tick before.
        let _ = controller.sample(&*shared.config.source, tick, &self.fields, &mut self.values);
        self.tick = tick;
    }

    fn value(&self, name: &str) -> Option<&Value> {
        let at = self.fields.iter().position(|f| f.name() == name)?;
        self.values.get(at)
    }

    fn f64(&self, name: &str) -> f64 {
        match self.value(name) {
            Some(Value::Double(x)) => *x,
            Some(Value::Int32(x)) => f64::from(*x),
            Some(Value::Uint32(x)) => f64::from(*x),
            #[allow(clippy::cast_precision_loss)] // bit masks of at most 18 bits
            Some(Value::Uint64(x)) => *x as f64,
            _ => 0.0,
        }
    }

    fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            Some(Value::Int32(x)) => i64::from(*x),
            Some(Value::Uint32(x)) => i64::from(*x),
            Some(Value::Uint64(x)) => i64::try_from(*x).unwrap_or(i64::MAX),
            Some(Value::Uint8(x)) => i64::from(*x),
            _ => 0,
        }
    }

    fn vector6(&self, name: &str) -> [f64; 6] {
        match self.value(name) {
            Some(Value::Vector6d(v)) => *v,
            Some(Value::Vector6Int32(v)) => v.map(f64::from),
            _ => [0.0; 6],
        }
    }

    fn vector3(&self, name: &str) -> [f64; 3] {
        match self.value(name) {
            Some(Value::Vector3d(v)) => *v,
            _ => [0.0; 3],
        }
    }

    fn byte(&self, name: &str) -> u8 {
        u8::try_from(self.int(name)).unwrap_or(u8::MAX)
    }

    fn bits(&self, name: &str) -> u32 {
        u32::try_from(self.int(name)).unwrap_or(u32::MAX)
    }

    /// The controller's time in milliseconds.
    fn millis(&self) -> u64 {
        self.tick.index() * 1000 / u64::from(self.tick.rate().max(1))
    }

    /// The robot state message: every sub-package, each from the sample.
    pub(crate) fn robot_state(&self) -> RobotState {
        let mut state = RobotState::default();
        state.robot_mode = Some(self.robot_mode());
        state.joints = Some(self.joints());
        state.cartesian = Some(CartesianInfo {
            tcp_pose: self.vector6("actual_TCP_pose"),
            tcp_offset: [0.0; 6],
        });
        state.kinematics = Some(KinematicsInfo {
            // URSim sends every checksum as all ones, and status 0.
            checksum: [u32::MAX; 6],
            // The table the controller computes with: the arm's calibration applied.
            dh_theta: self.arm.theta,
            dh_a: self.arm.a,
            dh_d: self.arm.d,
            dh_alpha: self.arm.alpha,
            calibration_status: 0,
        });
        state.calibration = Some(CalibrationData::default());
        state.masterboard = Some(self.masterboard());
        state.tool = Some(self.tool());
        state.configuration = Some(self.configuration());
        state.force_mode = Some(ForceModeData::default());
        state.additional = Some(AdditionalInfo {
            button_state: 0,
            freedrive_button_enabled: true,
            io_enabled_freedrive: false,
        });
        state.tool_communication = Some(ToolCommunicationInfo {
            enabled: false,
            baud_rate: 115_200,
            parity: 0,
            stop_bits: 1,
            rx_idle_chars: 1.5,
            tx_idle_chars: 3.5,
        });
        state.tool_mode = Some(ToolModeInfo {
            output_mode: 0,
            digital_output_mode: [1, 1],
        });
        state
    }

    /// Robot mode data: power, stops and the program, from the modes in the sample.
    fn robot_mode(&self) -> RobotModeData {
        let robot_mode = i8::try_from(self.int("robot_mode")).unwrap_or(-1);
        let safety_mode = self.int("safety_mode");
        let runtime = self.bits("runtime_state");
        RobotModeData {
            timestamp: self.millis(),
            // The simulated controller stands in for one with an arm connected.
            real_robot_connected: true,
            real_robot_enabled: true,
            // Powered on: POWER_ON, IDLE, BACKDRIVE, RUNNING.
            robot_power_on: (4..=7).contains(&robot_mode),
            emergency_stopped: matches!(safety_mode, 6 | 7),
            protective_stopped: safety_mode == 3,
            program_running: PLAYING.contains(&runtime),
            program_paused: PAUSED.contains(&runtime),
            robot_mode,
            control_mode: 0,
            target_speed_fraction: self.f64("target_speed_fraction"),
            speed_scaling: self.f64("speed_scaling"),
            target_speed_fraction_limit: 1.0,
        }
    }

    /// Joint data: each joint's position, speed, current, voltage, temperature and mode.
    fn joints(&self) -> JointData {
        let (q, q_target, qd) = (
            self.vector6("actual_q"),
            self.vector6("target_q"),
            self.vector6("actual_qd"),
        );
        let (current, voltage, temperature, modes) = (
            self.vector6("actual_current"),
            self.vector6("actual_joint_voltage"),
            self.vector6("joint_temperatures"),
            self.vector6("joint_mode"),
        );
        #[allow(clippy::cast_possible_truncation)] // f32 on the wire
        let joint = |j: usize| Joint {
            q_actual: q[j],
            q_target: q_target[j],
            qd_actual: qd[j],
            i_actual: current[j] as f32,
            v_actual: voltage[j] as f32,
            t_motor: temperature[j] as f32,
            t_micro: temperature[j] as f32,
            mode: u8::try_from(modes[j] as i64).unwrap_or(u8::MAX),
        };
        JointData {
            joints: std::array::from_fn(joint),
        }
    }

    /// Masterboard data: the controller's I/O, power and safety mode.
    #[allow(clippy::cast_possible_truncation)] // f32 on the wire
    fn masterboard(&self) -> MasterboardData {
        let safety_mode = self.int("safety_mode");
        MasterboardData {
            digital_input_bits: self.bits("actual_digital_input_bits"),
            digital_output_bits: self.bits("actual_digital_output_bits"),
            analog_input_range: [0, 0],
            analog_input: [
                self.f64("standard_analog_input0"),
                self.f64("standard_analog_input1"),
            ],
            analog_output_domain: [0, 0],
            analog_output: [
                self.f64("standard_analog_output0"),
                self.f64("standard_analog_output1"),
            ],
            temperature: 40.0,
            robot_voltage_48v: self.f64("actual_robot_voltage") as f32,
            robot_current: self.f64("actual_robot_current") as f32,
            io_current: self.f64("io_current") as f32,
            safety_mode: u8::try_from(safety_mode).unwrap_or(u8::MAX),
            in_reduced_mode: u8::from(safety_mode == 2),
            euromap67: None,
            operational_mode_selector_input: 0,
            three_position_enabling_device_input: 0,
        }
    }

    /// Tool data: the tool's temperature and mode; the rest as a tool with nothing
    /// plugged in reports it.
    #[allow(clippy::cast_possible_truncation)] // f32 on the wire
    fn tool(&self) -> ToolData {
        ToolData {
            analog_input_range: [0, 0],
            analog_input: [0.0, 0.0],
            voltage_48v: 24.0,
            output_voltage: 0,
            current: 0.0,
            temperature: self.f64("tool_temperature") as f32,
            tool_mode: self.byte("tool_mode"),
        }
    }

    /// Configuration data: the arm's nominal table, its limits and PolyScope's defaults.
    fn configuration(&self) -> ConfigurationData {
        let [v_joint, a_joint, v_tool, a_tool, eq_radius] = DEFAULTS;
        let e_series = self.tick.rate() == 500;
        // The model's nominal table, whatever the arm's calibration.
        let nominal = Arm::named(self.arm.name).unwrap_or(self.arm);
        ConfigurationData {
            joint_min_limit: [-2.0 * std::f64::consts::PI; 6],
            joint_max_limit: [2.0 * std::f64::consts::PI; 6],
            joint_max_speed: [std::f64::consts::PI; 6],
            joint_max_acceleration: [40.0; 6],
            v_joint_default: v_joint,
            a_joint_default: a_joint,
            v_tool_default: v_tool,
            a_tool_default: a_tool,
            eq_radius,
            dh_a: nominal.a,
            dh_d: nominal.d,
            dh_alpha: nominal.alpha,
            dh_theta: nominal.theta,
            masterboard_version: if e_series { 6 } else { 3 },
            controller_box_type: if e_series { 4 } else { 2 },
            robot_type: self.arm.robot_type(),
            robot_sub_type: if e_series { 3 } else { 2 },
        }
    }

    /// The real-time package.
    pub(crate) fn realtime(&self) -> RealtimeState {
        RealtimeState {
            time: self.f64("timestamp"),
            q_target: self.vector6("target_q"),
            qd_target: self.vector6("target_qd"),
            qdd_target: self.vector6("target_qdd"),
            i_target: self.vector6("target_current"),
            m_target: self.vector6("target_moment"),
            q_actual: self.vector6("actual_q"),
            qd_actual: self.vector6("actual_qd"),
            i_actual: self.vector6("actual_current"),
            i_control: self.vector6("joint_control_output"),
            tool_vector_actual: self.vector6("actual_TCP_pose"),
            tcp_speed_actual: self.vector6("actual_TCP_speed"),
            tcp_force: self.vector6("actual_TCP_force"),
            tool_vector_target: self.vector6("target_TCP_pose"),
            tcp_speed_target: self.vector6("target_TCP_speed"),
            digital_input_bits: self.f64("actual_digital_input_bits"),
            motor_temperatures: self.vector6("joint_temperatures"),
            controller_timer: self.f64("actual_execution_time"),
            robot_mode: self.f64("robot_mode"),
            joint_modes: self.vector6("joint_mode"),
            safety_mode: self.f64("safety_mode"),
            tool_accelerometer: self.vector3("actual_tool_accelerometer"),
            speed_scaling: self.f64("speed_scaling"),
            linear_momentum_norm: self.f64("actual_momentum"),
            v_main: self.f64("actual_main_voltage"),
            v_robot: self.f64("actual_robot_voltage"),
            i_robot: self.f64("actual_robot_current"),
            v_actual: self.vector6("actual_joint_voltage"),
            digital_outputs: self.f64("actual_digital_output_bits"),
            program_state: self.f64("runtime_state"),
            elbow_position: self.vector3("elbow_position"),
            elbow_velocity: self.vector3("elbow_velocity"),
            safety_status: self.f64("safety_status"),
            payload_mass: 0.0,
            payload_cog: [0.0; 3],
            payload_inertia: [0.0; 6],
        }
    }
}
