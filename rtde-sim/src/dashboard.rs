//! The Dashboard server (port 29999 on a controller): line-based ASCII, one reply line per
//! command, acting on the [`RobotState`](crate::RobotState).
//!
//! The replies are those of Universal Robots' Dashboard server manuals. Where the manuals
//! quote none, they are what real controllers were seen to answer by clients written for
//! them (`generate flight report`: `Flight Report generated with id: <id>`; CB3
//! `setUserRole` echoes the role as it was sent); the refusal of an acting command in local
//! control is the simulator's own wording. docs/dashboard.md lists which is which.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rtde_core::fields::Generation;
use rtde_robot_proto::dashboard::{Command, GREETING};

use crate::controller::Shared;
use crate::fault::Fault;
use crate::robot_state::RobotState;

/// The simulator's serial number (`get serial number`).
const SERIAL_NUMBER: &str = "20255500001";

/// Serves one Dashboard connection until `quit`, the client closing, or the shutdown.
pub(crate) fn serve(stream: TcpStream, shared: &Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let Ok(reader) = stream.try_clone() else {
        return;
    };
    let mut writer = stream;
    if writeln!(writer, "{GREETING}").is_err() {
        return;
    }
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if shared.is_shutting_down() {
            return;
        }
        let request = line.trim();
        if request.is_empty() {
            continue;
        }
        let delay = delay(&shared.config.faults);
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        let (reply, quit) = answer(request, shared);
        if writeln!(writer, "{reply}").is_err() || quit {
            return;
        }
    }
}

/// The delay every reply waits ([`Fault::DashboardDelay`]).
fn delay(faults: &[Fault]) -> Duration {
    faults
        .iter()
        .filter_map(|f| match f {
            Fault::DashboardDelay(d) => Some(*d),
            _ => None,
        })
        .fold(Duration::ZERO, Duration::saturating_add)
}

/// The reply to one request line, and whether the connection ends after it.
fn answer(request: &str, shared: &Shared) -> (String, bool) {
    let not_understood = || (format!("could not understand: '{request}'"), false);
    let Ok(command) = request.parse::<Command>() else {
        return not_understood();
    };
    let version = shared.config.version;
    // A controller older than the command does not know it.
    if command.spec().check(version).is_err() {
        return not_understood();
    }
    let refused = shared.config.faults.iter().any(|f| match f {
        Fault::DashboardRefuse(name) => name == command.name(),
        _ => false,
    });
    if refused {
        return (format!("Failed to execute: {}", command.name()), false);
    }
    let mut controller = shared.controller();
    controller.update_robot();
    let Some(robot) = controller.robot.as_mut() else {
        return not_understood();
    };
    let e_series = version.generation() == Some(Generation::ESeries);
    if e_series && !robot.is_in_remote_control() && acts(&command) {
        return (
            format!(
                "Command is not allowed in local control mode: {} (switch the robot to remote control)",
                command.name()
            ),
            false,
        );
    }
    let reply = reply(&command, request, robot, shared);
    // At once, not at the next tick: the next question must see the program gone.
    controller.share_program_state();
    (reply, matches!(command, Command::Quit))
}

/// Commands that change the robot, refused in local control on e-Series.
fn acts(command: &Command) -> bool {
    matches!(
        command,
        Command::Load(_)
            | Command::Play
            | Command::Pause
            | Command::Stop
            | Command::PowerOn
            | Command::PowerOff
            | Command::BrakeRelease
            | Command::UnlockProtectiveStop
            | Command::LoadInstallation(_)
            | Command::RestartSafety
            | Command::Shutdown
    )
}

fn reply(command: &Command, request: &str, robot: &mut RobotState, shared: &Shared) -> String {
    if matches!(command, Command::Quit) {
        return "Disconnected".into();
    }
    program_reply(command, robot)
        .or_else(|| power_and_safety_reply(command, robot))
        .or_else(|| role_and_mode_reply(command, request, robot))
        .or_else(|| message_reply(command, robot))
        .or_else(|| about_reply(command, robot, shared))
        // A command added to the client's table that the simulator does not know yet.
        .unwrap_or_else(|| format!("could not understand: '{command}'"))
}

/// The robot program: loading, playing, stopping, and what is loaded and running.
fn program_reply(command: &Command, robot: &mut RobotState) -> Option<String> {
    let program_name = |robot: &RobotState| {
        robot
            .loaded_program()
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_owned())
    };
    Some(match command {
        Command::Load(path) => done(robot.load(path), format!("Loading program: {path}")),
        Command::Play => done(robot.play(), "Starting program".into()),
        // The manual's failure is a program that fails to stop; one already stopped has
        // nothing to fail at. ur_rtde relies on it: after stopping its own script it
        // sends `stop` and requires `Stopped`.
        Command::Stop => {
            robot.stop_program();
            "Stopped".into()
        }
        Command::Pause => done(robot.pause(), "Pausing program".into()),
        Command::Running => format!(
            "Program running: {}",
            robot.program_state() == rtde_core::RuntimeState::Playing
        ),
        Command::GetLoadedProgram => match robot.loaded_program() {
            Some(p) => format!("Loaded program: {p}"),
            None => "No program loaded".into(),
        },
        Command::IsProgramSaved => match program_name(robot) {
            Some(name) => format!("true {name}"),
            None => "false".into(),
        },
        Command::ProgramState => {
            let state = robot.program_state().ur_name();
            match program_name(robot) {
                Some(name) => format!("{state} {name}"),
                None => state.to_owned(),
            }
        }
        _ => return None,
    })
}

/// Power, brakes and safety: the robot's mode and the stops.
fn power_and_safety_reply(command: &Command, robot: &mut RobotState) -> Option<String> {
    Some(match command {
        Command::Shutdown => {
            robot.power_off();
            "Shutting down".into()
        }
        Command::RobotMode => format!(
            "Robotmode: {}",
            strip(robot.robot_mode().ur_name(), "ROBOT_MODE_")
        ),
        Command::PowerOn => {
            robot.power_on();
            "Powering on".into()
        }
        Command::PowerOff => {
            robot.power_off();
            "Powering off".into()
        }
        Command::BrakeRelease => {
            robot.brake_release();
            "Brake releasing".into()
        }
        Command::SafetyMode => format!(
            "Safetymode: {}",
            strip(robot.safety_mode().ur_name(), "SAFETY_MODE_")
        ),
        Command::SafetyStatus => format!(
            "Safetystatus: {}",
            strip(robot.safety_status().ur_name(), "SAFETY_STATUS_")
        ),
        Command::UnlockProtectiveStop => done(
            robot.unlock_protective_stop(),
            "Protective stop releasing".into(),
        ),
        Command::RestartSafety => {
            robot.restart_safety();
            "Restarting safety".into()
        }
        _ => return None,
    })
}

/// Who operates the robot: the user role, the operational mode, remote control.
fn role_and_mode_reply(command: &Command, request: &str, robot: &mut RobotState) -> Option<String> {
    Some(match command {
        Command::SetUserRole(role) => {
            robot.set_user_role(*role);
            // Echoed as sent (`OPERATOR` stays upper case), as controllers do.
            let sent = request
                .strip_prefix(command.name())
                .map_or(role.as_str(), str::trim);
            format!("Setting user role: {sent}")
        }
        Command::GetUserRole => robot.user_role().as_str().to_ascii_uppercase(),
        Command::SetOperationalMode(mode) => {
            robot.set_operational_mode(Some(mode.as_str()));
            format!("Operational mode '{}' is set", mode.as_str())
        }
        Command::GetOperationalMode => robot
            .operational_mode()
            .map_or("NONE".into(), str::to_ascii_uppercase),
        Command::ClearOperationalMode => {
            let mode = robot.operational_mode().unwrap_or("automatic");
            robot.set_operational_mode(None);
            format!(
                "No longer controlling the operational mode. Current operational mode: '{mode}'."
            )
        }
        Command::IsInRemoteControl => robot.is_in_remote_control().to_string(),
        _ => return None,
    })
}

/// What the operator sees: popups and the log.
fn message_reply(command: &Command, robot: &mut RobotState) -> Option<String> {
    Some(match command {
        Command::Popup(text) => {
            robot.set_popup(Some(text.clone()));
            "showing popup".into()
        }
        Command::ClosePopup => {
            robot.set_popup(None);
            "closing popup".into()
        }
        Command::CloseSafetyPopup => "closing safety popup".into(),
        Command::AddToLog(text) => {
            robot.add_to_log(text);
            "Added log message".into()
        }
        Command::SaveLog => "Log saved to disk".into(),
        _ => return None,
    })
}

/// The controller itself: its software, serial number and model, its installation, and
/// the reports it generates.
fn about_reply(command: &Command, robot: &mut RobotState, shared: &Shared) -> Option<String> {
    Some(match command {
        Command::PolyscopeVersion => {
            format!("URSoftware {} (Jan 01 2026)", full(shared.config.version))
        }
        Command::Version => full(shared.config.version),
        Command::GetSerialNumber => SERIAL_NUMBER.into(),
        Command::GetRobotModel => shared.config.robot_model.into(),
        Command::LoadInstallation(path) => done(
            robot.load_installation(path),
            format!("Loading installation: {path}"),
        ),
        Command::GenerateFlightReport(_) => {
            let id = robot.generate_flight_report();
            format!("Flight Report generated with id: {id}")
        }
        Command::GenerateSupportFile(dir) => {
            format!("Completed successfully: {dir}/ur_support_file.zip")
        }
        _ => return None,
    })
}

/// The reply to a command that acts: `ok` when it did, else the robot's refusal.
fn done(r: Result<(), String>, ok: String) -> String {
    r.map_or_else(|refusal| refusal, |()| ok)
}

fn strip<'a>(name: &'a str, prefix: &str) -> &'a str {
    name.strip_prefix(prefix).unwrap_or(name)
}

/// The version with its build number, as `PolyscopeVersion` and `version` print it.
fn full(v: rtde_core::fields::ControllerVersion) -> String {
    format!("{}.{}.{}.{}", v.major, v.minor, v.bugfix, v.build)
}
