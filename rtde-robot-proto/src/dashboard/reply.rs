//! The Dashboard server's replies, parsed into typed values: each command's success
//! reply in one `match`, anything else a refusal quoted as the controller wrote it.

use std::fmt;

use rtde_core::fields::ControllerVersion;
use rtde_core::{RobotMode, RuntimeState, SafetyMode, SafetyStatus};

use super::command::Command;
use super::modes::{OperationalMode, UserRole};

/// The line the Dashboard server sends when a client connects.
pub const GREETING: &str = "Connected: Universal Robots Dashboard Server";

/// The program's state and name, from `programState` (`PLAYING pick.urp`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramState {
    /// Stopped, playing or paused.
    pub state: RuntimeState,
    /// The loaded program's name, if one is loaded.
    pub program: Option<String>,
}

/// A parsed reply: what each command answers when it succeeds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// The command was carried out (`Powering on`, `Starting program`, …); the text as
    /// the controller wrote it.
    Done(String),
    /// `running`, `isProgramSaved`, `is in remote control`.
    Bool(bool),
    /// `robotmode`.
    RobotMode(RobotMode),
    /// `safetymode`.
    SafetyMode(SafetyMode),
    /// `safetystatus`.
    SafetyStatus(SafetyStatus),
    /// `programState`.
    ProgramState(ProgramState),
    /// `get loaded program`: `None` when no program is loaded.
    LoadedProgram(Option<String>),
    /// `PolyscopeVersion`, `version`.
    Version(ControllerVersion),
    /// `getUserRole`.
    UserRole(UserRole),
    /// `get operational mode`: `None` when no mode is set (`NONE`).
    OperationalMode(Option<OperationalMode>),
    /// `get serial number`, `get robot model`, `generate flight report`,
    /// `generate support file`: the text the controller answered.
    Text(String),
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Done(text) | Reply::Text(text) => f.write_str(text),
            Reply::Bool(b) => write!(f, "{b}"),
            Reply::RobotMode(m) => write!(f, "{m}"),
            Reply::SafetyMode(m) => write!(f, "{m}"),
            Reply::SafetyStatus(s) => write!(f, "{s}"),
            Reply::ProgramState(p) => match &p.program {
                Some(name) => write!(f, "{} {name}", p.state),
                None => write!(f, "{}", p.state),
            },
            Reply::LoadedProgram(Some(p)) => f.write_str(p),
            Reply::LoadedProgram(None) => f.write_str("no program loaded"),
            Reply::Version(v) => write!(f, "{v}"),
            Reply::UserRole(r) => f.write_str(r.as_str()),
            Reply::OperationalMode(Some(m)) => f.write_str(m.as_str()),
            Reply::OperationalMode(None) => f.write_str("none"),
        }
    }
}

/// The success reply of `command`, parsed; `None` when `line` is anything else (a
/// refusal such as `Failed to execute: play`, or a text rtde does not know).
#[must_use]
pub fn parse(command: &Command, line: &str) -> Option<Reply> {
    let line = line.trim_end();
    let done = |prefix: &str| {
        line.starts_with(prefix)
            .then(|| Reply::Done(line.to_owned()))
    };
    match command {
        Command::Load(_) => done("Loading program:"),
        Command::Play => done("Starting program"),
        Command::Stop => done("Stopped"),
        Command::Pause => done("Pausing program"),
        Command::Quit => done("Disconnected"),
        Command::Shutdown => done("Shutting down"),
        Command::Popup(_) => done("showing popup"),
        Command::ClosePopup => done("closing popup"),
        Command::AddToLog(_) => done("Added log message"),
        Command::SetUserRole(_) => done("Setting user role"),
        Command::SetOperationalMode(_) => done("Operational mode"),
        Command::ClearOperationalMode => done("No longer controlling the operational mode"),
        Command::PowerOn => done("Powering on"),
        Command::PowerOff => done("Powering off"),
        Command::BrakeRelease => done("Brake releasing"),
        Command::UnlockProtectiveStop => done("Protective stop releasing"),
        Command::CloseSafetyPopup => done("closing safety popup"),
        Command::LoadInstallation(_) => done("Loading installation"),
        Command::RestartSafety => done("Restarting safety"),
        Command::SaveLog => done("Log saved to disk"),
        Command::Running => boolean(line.strip_prefix("Program running:")?),
        Command::IsProgramSaved => boolean(line.split_whitespace().next()?),
        Command::IsInRemoteControl => boolean(line),
        Command::RobotMode => {
            let name = line.strip_prefix("Robotmode:")?.trim();
            coded(RobotMode::KNOWN, name, "ROBOT_MODE_", |m| m.ur_name()).map(Reply::RobotMode)
        }
        Command::SafetyMode => {
            let name = line.strip_prefix("Safetymode:")?.trim();
            coded(SafetyMode::KNOWN, name, "SAFETY_MODE_", |m| m.ur_name()).map(Reply::SafetyMode)
        }
        Command::SafetyStatus => {
            let name = line.strip_prefix("Safetystatus:")?.trim();
            coded(SafetyStatus::KNOWN, name, "SAFETY_STATUS_", |m| m.ur_name())
                .map(Reply::SafetyStatus)
        }
        Command::ProgramState => {
            let (state, program) = match line.split_once(' ') {
                Some((state, program)) => (state, Some(program.trim())),
                None => (line, None),
            };
            let state = [
                RuntimeState::Stopped,
                RuntimeState::Playing,
                RuntimeState::Paused,
            ]
            .into_iter()
            .find(|s| s.ur_name() == state)?;
            let program = program.filter(|p| !p.is_empty()).map(str::to_owned);
            Some(Reply::ProgramState(ProgramState { state, program }))
        }
        Command::GetLoadedProgram => {
            if line == "No program loaded" {
                return Some(Reply::LoadedProgram(None));
            }
            let path = line.strip_prefix("Loaded program:")?.trim();
            Some(Reply::LoadedProgram(Some(path.to_owned())))
        }
        // `URSoftware 5.21.0.123456 (Jan 01 2025)`
        Command::PolyscopeVersion => {
            let version = line
                .strip_prefix("URSoftware ")?
                .split_whitespace()
                .next()?;
            version.parse().ok().map(Reply::Version)
        }
        Command::Version => line.trim().parse().ok().map(Reply::Version),
        Command::GetUserRole => line.parse().ok().map(Reply::UserRole),
        Command::GetOperationalMode => match line.trim() {
            "NONE" => Some(Reply::OperationalMode(None)),
            other => other.parse().ok().map(|m| Reply::OperationalMode(Some(m))),
        },
        Command::GetSerialNumber => (!line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
            .then(|| Reply::Text(line.to_owned())),
        Command::GetRobotModel => line.starts_with("UR").then(|| Reply::Text(line.to_owned())),
        Command::GenerateFlightReport(_) | Command::GenerateSupportFile(_) => {
            let refused = ["Error", "error", "Failed", "failed"]
                .iter()
                .any(|p| line.starts_with(p));
            (!refused && !line.is_empty()).then(|| Reply::Text(line.to_owned()))
        }
    }
}

fn boolean(word: &str) -> Option<Reply> {
    match word.trim().to_ascii_lowercase().as_str() {
        "true" => Some(Reply::Bool(true)),
        "false" => Some(Reply::Bool(false)),
        _ => None,
    }
}

/// The code whose UR name is `prefix` + `name` (the Dashboard server drops the prefix:
/// `Robotmode: RUNNING` is `ROBOT_MODE_RUNNING`).
fn coded<T: Copy>(
    known: &[T],
    name: &str,
    prefix: &str,
    ur_name: impl Fn(T) -> &'static str,
) -> Option<T> {
    known
        .iter()
        .copied()
        .find(|&code| ur_name(code).strip_prefix(prefix) == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(command: Command, line: &str) -> Option<Reply> {
        parse(&command, line)
    }

    #[test]
    fn typed_replies() {
        assert_eq!(
            p(Command::RobotMode, "Robotmode: RUNNING\n"),
            Some(Reply::RobotMode(RobotMode::Running))
        );
        assert_eq!(
            p(Command::RobotMode, "Robotmode: POWER_OFF"),
            Some(Reply::RobotMode(RobotMode::PowerOff))
        );
        assert_eq!(
            p(Command::SafetyStatus, "Safetystatus: PROTECTIVE_STOP"),
            Some(Reply::SafetyStatus(SafetyStatus::ProtectiveStop))
        );
        assert_eq!(
            p(Command::SafetyMode, "Safetymode: NORMAL"),
            Some(Reply::SafetyMode(SafetyMode::Normal))
        );
        assert_eq!(
            p(Command::ProgramState, "PLAYING pick.urp"),
            Some(Reply::ProgramState(ProgramState {
                state: RuntimeState::Playing,
                program: Some("pick.urp".into())
            }))
        );
        assert_eq!(
            p(Command::ProgramState, "STOPPED"),
            Some(Reply::ProgramState(ProgramState {
                state: RuntimeState::Stopped,
                program: None
            }))
        );
        assert_eq!(
            p(
                Command::PolyscopeVersion,
                "URSoftware 5.21.0.123456 (Mar 13 2025)"
            ),
            Some(Reply::Version(ControllerVersion::new(5, 21, 0, 123_456)))
        );
        assert_eq!(
            p(Command::Version, "5.21.0.123456"),
            Some(Reply::Version(ControllerVersion::new(5, 21, 0, 123_456)))
        );
        assert_eq!(
            p(Command::Running, "Program running: true"),
            Some(Reply::Bool(true))
        );
        assert_eq!(
            p(Command::IsProgramSaved, "false pick.urp"),
            Some(Reply::Bool(false))
        );
        assert_eq!(
            p(Command::IsInRemoteControl, "true"),
            Some(Reply::Bool(true))
        );
        assert_eq!(
            p(
                Command::GetLoadedProgram,
                "Loaded program: /programs/pick.urp"
            ),
            Some(Reply::LoadedProgram(Some("/programs/pick.urp".into())))
        );
        assert_eq!(
            p(Command::GetLoadedProgram, "No program loaded"),
            Some(Reply::LoadedProgram(None))
        );
        assert_eq!(
            p(Command::GetUserRole, "PROGRAMMER"),
            Some(Reply::UserRole(UserRole::Programmer))
        );
        assert_eq!(
            p(Command::GetOperationalMode, "NONE"),
            Some(Reply::OperationalMode(None))
        );
        assert_eq!(
            p(Command::GetOperationalMode, "AUTOMATIC"),
            Some(Reply::OperationalMode(Some(OperationalMode::Automatic)))
        );
        assert_eq!(
            p(Command::GetSerialNumber, "20185500001"),
            Some(Reply::Text("20185500001".into()))
        );
        assert_eq!(
            p(Command::GetRobotModel, "UR5"),
            Some(Reply::Text("UR5".into()))
        );
    }

    #[test]
    fn success_texts_of_the_commands_that_act() {
        let cases = [
            (Command::Load("a.urp".into()), "Loading program: a.urp"),
            (Command::Play, "Starting program"),
            (Command::Stop, "Stopped"),
            (Command::Pause, "Pausing program"),
            (Command::Quit, "Disconnected"),
            (Command::Shutdown, "Shutting down"),
            (Command::Popup("x".into()), "showing popup"),
            (Command::ClosePopup, "closing popup"),
            (Command::AddToLog("x".into()), "Added log message"),
            (
                Command::SetUserRole(UserRole::None),
                "Setting user role: none",
            ),
            (
                Command::SetOperationalMode(OperationalMode::Manual),
                "Operational mode 'manual' is set",
            ),
            (
                Command::ClearOperationalMode,
                "No longer controlling the operational mode. Current operational mode: 'manual'.",
            ),
            (Command::PowerOn, "Powering on"),
            (Command::PowerOff, "Powering off"),
            (Command::BrakeRelease, "Brake releasing"),
            (Command::UnlockProtectiveStop, "Protective stop releasing"),
            (Command::CloseSafetyPopup, "closing safety popup"),
            (
                Command::LoadInstallation("d.installation".into()),
                "Loading installation: d.installation",
            ),
            (Command::RestartSafety, "Restarting safety"),
            (Command::SaveLog, "Log saved to disk"),
        ];
        for (command, line) in cases {
            assert_eq!(
                p(command.clone(), line),
                Some(Reply::Done(line.into())),
                "{command}"
            );
        }
    }

    #[test]
    fn refusals_are_not_successes() {
        assert_eq!(p(Command::Play, "Failed to execute: play"), None);
        assert_eq!(
            p(Command::Load("x.urp".into()), "File not found: x.urp"),
            None
        );
        assert_eq!(
            p(
                Command::UnlockProtectiveStop,
                "Cannot unlock protective stop until 5s after occurrence. Always inspect cause of protective stop before unlocking"
            ),
            None
        );
        assert_eq!(p(Command::RobotMode, "Robotmode: FLYING"), None);
        assert_eq!(
            p(
                Command::GetSerialNumber,
                "could not understand: 'get serial number'"
            ),
            None
        );
        assert_eq!(
            p(
                Command::GenerateFlightReport("system".into()),
                "Error: no space"
            ),
            None
        );
        assert_eq!(p(Command::PolyscopeVersion, "URSoftware x.y"), None);
    }
}
