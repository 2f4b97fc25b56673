//! The robot's state machine behind the Dashboard server and the script ports: power,
//! brakes, the loaded program and its state, remote control, protective stops and the
//! safety status, each visible in the RTDE outputs a controller reports them in.
//!
//! ```text
//!   POWER_OFF --power on--> IDLE --brake release--> RUNNING
//!       ^                     |                        |
//!       +------power off------+------------------------+
//!
//!   program: STOPPED --play--> PLAYING --pause--> PAUSED --play--> PLAYING
//!            (any) --stop--> STOPPED;  a protective stop pauses it
//! ```

use std::time::{Duration, Instant};

use rtde_core::{RobotMode, RuntimeState, SafetyMode, SafetyStatus, Value};
use rtde_robot_proto::dashboard::UserRole;
use rtde_robot_proto::primary::PrimaryMessage;

/// How long after a protective stop the Dashboard server refuses to unlock it, as
/// controllers do ("Cannot unlock protective stop until 5s after occurrence").
pub const PROTECTIVE_STOP_UNLOCK_DELAY: Duration = Duration::from_secs(5);

/// Why the robot refused a request, in the words the Dashboard server answers with.
pub(crate) type Refusal = String;

/// The robot's state, as the Dashboard server and the RTDE outputs show it.
///
/// A simulator started with [`SimBuilder::dashboard`](crate::SimBuilder::dashboard) (or
/// [`SimBuilder::robot_state`](crate::SimBuilder::robot_state)) starts powered off, in
/// remote control, with no program loaded; [`Sim::robot_state`](crate::Sim::robot_state)
/// reads it.
#[derive(Clone, Debug)]
pub struct RobotState {
    mode: RobotMode,
    safety: SafetyStatus,
    protective_stop: Option<(Instant, String)>,
    unlock_delay: Duration,
    loaded: Option<String>,
    program: RuntimeState,
    program_started: Option<Instant>,
    remote_control: bool,
    operational_mode: Option<&'static str>,
    installation: String,
    /// The CB3 user role `setUserRole` set.
    user_role: UserRole,
    /// The flight reports generated so far: the next one's id follows.
    flight_reports: u32,
    popup: Option<String>,
    log: Vec<String>,
    /// Messages a controller shows: sent as RTDE text messages, oldest first.
    messages: Vec<String>,
    /// Robot messages for the primary interface, oldest first.
    primary: Vec<PrimaryMessage>,
}

impl Default for RobotState {
    fn default() -> Self {
        RobotState {
            mode: RobotMode::PowerOff,
            safety: SafetyStatus::Normal,
            protective_stop: None,
            unlock_delay: PROTECTIVE_STOP_UNLOCK_DELAY,
            loaded: None,
            program: RuntimeState::Stopped,
            program_started: None,
            remote_control: true,
            operational_mode: None,
            installation: "default.installation".into(),
            user_role: UserRole::Programmer,
            flight_reports: 0,
            popup: None,
            log: Vec::new(),
            messages: Vec::new(),
            primary: Vec::new(),
        }
    }
}

impl RobotState {
    /// The robot's mode.
    #[must_use]
    pub fn robot_mode(&self) -> RobotMode {
        self.mode
    }

    /// The safety status.
    #[must_use]
    pub fn safety_status(&self) -> SafetyStatus {
        self.safety
    }

    /// The safety mode (the older field: the same state for the states simulated).
    #[must_use]
    pub fn safety_mode(&self) -> SafetyMode {
        SafetyMode::from_code(self.safety.code())
    }

    /// The program's state.
    #[must_use]
    pub fn program_state(&self) -> RuntimeState {
        self.program
    }

    /// The loaded program's path, if any.
    #[must_use]
    pub fn loaded_program(&self) -> Option<&str> {
        self.loaded.as_deref()
    }

    /// Whether the controller is in remote control (e-Series).
    #[must_use]
    pub fn is_in_remote_control(&self) -> bool {
        self.remote_control
    }

    /// The lines `addToLog` added, oldest first.
    #[must_use]
    pub fn log(&self) -> &[String] {
        &self.log
    }

    /// The popup shown, if any.
    #[must_use]
    pub fn popup(&self) -> Option<&str> {
        self.popup.as_deref()
    }

    /// The loaded installation.
    #[must_use]
    pub fn installation(&self) -> &str {
        &self.installation
    }

    /// The operational mode set through the Dashboard server, if any (`manual`, `automatic`).
    #[must_use]
    pub fn operational_mode(&self) -> Option<&'static str> {
        self.operational_mode
    }

    /// Every message the robot has shown, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    pub(crate) fn set_unlock_delay(&mut self, delay: Duration) {
        self.unlock_delay = delay;
    }

    pub(crate) fn set_remote_control(&mut self, on: bool) {
        self.remote_control = on;
    }

    fn is_powered(&self) -> bool {
        matches!(
            self.mode,
            RobotMode::PowerOn | RobotMode::Idle | RobotMode::Running | RobotMode::Backdrive
        )
    }

    pub(crate) fn power_on(&mut self) {
        if !self.is_powered() {
            self.mode = RobotMode::Idle;
        }
    }

    pub(crate) fn power_off(&mut self) {
        self.mode = RobotMode::PowerOff;
        self.stop_program();
    }

    /// `brake release`: from a powered-off robot too, as a controller (and URSim) does:
    /// it powers on, then releases the brakes.
    pub(crate) fn brake_release(&mut self) {
        if matches!(
            self.mode,
            RobotMode::PowerOff | RobotMode::PowerOn | RobotMode::Idle
        ) {
            self.mode = RobotMode::Running;
        }
    }

    /// Loads a program file: the simulator has no file system, so any path ending in
    /// `.urp` exists.
    pub(crate) fn load(&mut self, path: &str) -> Result<(), Refusal> {
        if !path.ends_with(".urp") {
            return Err(format!("File not found: {path}"));
        }
        self.stop_program();
        self.loaded = Some(path.to_owned());
        Ok(())
    }

    pub(crate) fn load_installation(&mut self, path: &str) -> Result<(), Refusal> {
        if !path.ends_with(".installation") {
            return Err(format!("File not found: {path}"));
        }
        path.clone_into(&mut self.installation);
        Ok(())
    }

    /// Why a program cannot start now, if it cannot.
    pub(crate) fn why_not_play(&self) -> Option<String> {
        if self.mode != RobotMode::Running {
            Some(format!("the robot is in {}, not running", self.mode))
        } else if self.safety != SafetyStatus::Normal {
            Some(format!("the safety status is {}", self.safety))
        } else {
            None
        }
    }

    /// `play`: starts the loaded program, or resumes the paused one, whether loaded or
    /// sent to a script port (the pendant's Play button does the same).
    pub(crate) fn play(&mut self) -> Result<(), Refusal> {
        let resumes = self.program == RuntimeState::Paused;
        if (self.loaded.is_none() && !resumes) || self.why_not_play().is_some() {
            return Err("Failed to execute: play".into());
        }
        self.start_program();
        Ok(())
    }

    /// A program starts playing (the loaded one, or one sent to a script port).
    pub(crate) fn start_program(&mut self) {
        if self.program != RuntimeState::Playing {
            self.program_started = Some(Instant::now());
        }
        self.program = RuntimeState::Playing;
    }

    pub(crate) fn pause(&mut self) -> Result<(), Refusal> {
        if self.program != RuntimeState::Playing {
            return Err("Failed to execute: pause".into());
        }
        self.program = RuntimeState::Paused;
        Ok(())
    }

    pub(crate) fn stop_program(&mut self) {
        self.program = RuntimeState::Stopped;
        self.program_started = None;
    }

    /// How long the program has been playing, if it plays.
    pub(crate) fn playing_for(&self) -> Option<Duration> {
        match (self.program, self.program_started) {
            (RuntimeState::Playing, Some(at)) => Some(at.elapsed()),
            _ => None,
        }
    }

    /// A protective stop: the safety status says so and the program pauses. The entry
    /// point for everything that stops the robot this way (the Dashboard test hook, the
    /// fault flag, a program's move that hits something).
    pub fn protective_stop(&mut self, reason: &str) {
        self.safety = SafetyStatus::ProtectiveStop;
        self.protective_stop = Some((Instant::now(), reason.to_owned()));
        if self.program == RuntimeState::Playing {
            self.program = RuntimeState::Paused;
        }
        self.messages.push(format!("Protective stop: {reason}"));
        self.primary.push(PrimaryMessage::SafetyMode {
            code: 0,
            argument: 0,
            mode: SafetyMode::ProtectiveStop,
        });
    }

    /// Why the protective stop happened, while it holds.
    #[must_use]
    pub fn protective_stop_reason(&self) -> Option<&str> {
        self.protective_stop.as_ref().map(|(_, r)| r.as_str())
    }

    pub(crate) fn unlock_protective_stop(&mut self) -> Result<(), Refusal> {
        let Some((at, _)) = &self.protective_stop else {
            // Controllers answer the unlock whether or not a stop holds.
            return Ok(());
        };
        if at.elapsed() < self.unlock_delay {
            return Err("Cannot unlock protective stop until 5s after occurrence. \
                        Always inspect cause of protective stop before unlocking"
                .into());
        }
        self.protective_stop = None;
        self.safety = SafetyStatus::Normal;
        Ok(())
    }

    pub(crate) fn restart_safety(&mut self) {
        self.protective_stop = None;
        self.safety = SafetyStatus::Normal;
        self.power_off();
    }

    pub(crate) fn set_user_role(&mut self, role: UserRole) {
        self.user_role = role;
    }

    /// The CB3 user role set (`getUserRole`): programmer until `setUserRole` says otherwise.
    #[must_use]
    pub fn user_role(&self) -> UserRole {
        self.user_role
    }

    /// A flight report is generated: its id.
    pub(crate) fn generate_flight_report(&mut self) -> u32 {
        self.flight_reports += 1;
        self.flight_reports
    }

    pub(crate) fn set_operational_mode(&mut self, mode: Option<&'static str>) {
        self.operational_mode = mode;
    }

    pub(crate) fn set_popup(&mut self, popup: Option<String>) {
        self.popup = popup;
    }

    pub(crate) fn add_to_log(&mut self, line: &str) {
        self.log.push(line.to_owned());
    }

    /// A message shown over RTDE (a text message) and the primary interface.
    pub(crate) fn say(&mut self, message: String) {
        self.primary.push(PrimaryMessage::Text(message.clone()));
        self.messages.push(message);
    }

    /// A robot message for the primary interface only.
    pub(crate) fn tell_primary(&mut self, message: PrimaryMessage) {
        self.primary.push(message);
    }

    /// The primary interface's robot messages, oldest first.
    pub(crate) fn primary_messages(&self) -> &[PrimaryMessage] {
        &self.primary
    }

    /// The value of an output field the robot's state decides; `None` for the others.
    pub(crate) fn output(&self, name: &str) -> Option<Value> {
        Some(match name {
            "robot_mode" => Value::Int32(self.mode.code()),
            "safety_mode" => Value::Int32(self.safety_mode().code()),
            "safety_status" => Value::Int32(self.safety.code()),
            "runtime_state" => Value::Uint32(self.program.code()),
            "robot_status_bits" => {
                let power = u32::from(self.is_powered());
                let running = u32::from(self.program == RuntimeState::Playing) << 1;
                Value::Uint32(power | running)
            }
            "safety_status_bits" => Value::Uint32(match self.safety {
                SafetyStatus::Normal => 1,
                // Protective stop (bit 2) and stopped due to safety (bit 10).
                SafetyStatus::ProtectiveStop => 1 << 2 | 1 << 10,
                _ => 1 << 10,
            }),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_brakes_and_program() {
        let mut r = RobotState::default();
        assert_eq!(r.output("robot_mode"), Some(Value::Int32(3)));
        assert_eq!(r.output("robot_status_bits"), Some(Value::Uint32(0)));
        r.load("/programs/a.urp").unwrap();
        assert_eq!(r.play().unwrap_err(), "Failed to execute: play");
        r.power_on();
        assert_eq!(r.robot_mode(), RobotMode::Idle);
        r.brake_release();
        assert_eq!(r.robot_mode(), RobotMode::Running);
        r.play().unwrap();
        assert_eq!(r.output("runtime_state"), Some(Value::Uint32(2)));
        assert_eq!(r.output("robot_status_bits"), Some(Value::Uint32(3)));
        r.pause().unwrap();
        assert_eq!(r.output("runtime_state"), Some(Value::Uint32(4)));
        r.power_off();
        assert_eq!(r.program_state(), RuntimeState::Stopped);
        assert!(r.load("a.txt").unwrap_err().starts_with("File not found"));
    }

    #[test]
    fn brake_release_from_power_off_powers_on_and_runs() {
        let mut r = RobotState::default();
        assert_eq!(r.robot_mode(), RobotMode::PowerOff);
        r.brake_release();
        assert_eq!(r.robot_mode(), RobotMode::Running);
        assert_eq!(r.output("robot_status_bits"), Some(Value::Uint32(1)));
    }

    #[test]
    fn protective_stop_pauses_and_unlocks_after_the_delay() {
        let mut r = RobotState::default();
        r.power_on();
        r.brake_release();
        r.load("a.urp").unwrap();
        r.play().unwrap();
        r.protective_stop("collision");
        assert_eq!(r.program_state(), RuntimeState::Paused);
        assert_eq!(r.output("safety_status"), Some(Value::Int32(3)));
        assert_eq!(r.output("safety_status_bits"), Some(Value::Uint32(0x404)));
        assert!(r.unlock_protective_stop().is_err());
        r.set_unlock_delay(Duration::ZERO);
        r.unlock_protective_stop().unwrap();
        assert_eq!(r.safety_status(), SafetyStatus::Normal);
    }
}
