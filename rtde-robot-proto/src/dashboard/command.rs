//! The Dashboard server's commands: one table of names and the versions that added them,
//! and the typed [`Command`] that writes a request line.

use std::fmt;
use std::str::FromStr;

use rtde_core::fields::{ControllerVersion, Generation};

use super::error::DashboardError;
use super::modes::{OperationalMode, UserRole};

/// One Dashboard command as Universal Robots' Dashboard server manuals list it: its
/// text on the wire and the first controller version of each generation that has it.
///
/// `None` means the generation never had it (`setUserRole` left with CB3; the
/// operational-mode commands came with e-Series). PolyScope X has no Dashboard server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command's words, as sent (`"brake release"`).
    pub name: &'static str,
    /// The first CB3 (3.x) version with the command.
    pub cb3: Option<ControllerVersion>,
    /// The first e-Series (5.x) version with the command.
    pub e_series: Option<ControllerVersion>,
}

const fn v(major: u32, minor: u32) -> Option<ControllerVersion> {
    Some(ControllerVersion::new(major, minor, 0, 0))
}

/// Every command of the CB3 and e-Series Dashboard server manuals, with the version that
/// added it (the manuals' "version" column; CB3 software before 3.0 counts as 1.x).
pub const COMMANDS: &[CommandSpec] = &[
    spec("load", v(1, 4), v(5, 0)),
    spec("play", v(1, 4), v(5, 0)),
    spec("stop", v(1, 4), v(5, 0)),
    spec("pause", v(1, 4), v(5, 0)),
    spec("quit", v(1, 4), v(5, 0)),
    spec("shutdown", v(1, 4), v(5, 0)),
    spec("running", v(1, 6), v(5, 0)),
    spec("robotmode", v(1, 6), v(5, 0)),
    spec("get loaded program", v(1, 6), v(5, 0)),
    spec("popup", v(1, 6), v(5, 0)),
    spec("close popup", v(1, 6), v(5, 0)),
    spec("addToLog", v(1, 8), v(5, 0)),
    spec("isProgramSaved", v(1, 8), v(5, 0)),
    spec("programState", v(1, 8), v(5, 0)),
    spec("PolyscopeVersion", v(1, 8), v(5, 0)),
    spec("version", None, v(5, 0)),
    spec("setUserRole", v(3, 1), None),
    spec("getUserRole", v(3, 1), None),
    spec("set operational mode", None, v(5, 0)),
    spec("get operational mode", None, v(5, 6)),
    spec("clear operational mode", None, v(5, 0)),
    spec("power on", v(3, 0), v(5, 0)),
    spec("power off", v(3, 0), v(5, 0)),
    spec("brake release", v(3, 0), v(5, 0)),
    spec("safetymode", v(3, 0), v(5, 0)),
    spec("safetystatus", v(3, 11), v(5, 4)),
    spec("unlock protective stop", v(3, 1), v(5, 0)),
    spec("close safety popup", v(3, 1), v(5, 0)),
    spec("load installation", v(3, 2), v(5, 0)),
    spec("restart safety", v(3, 7), v(5, 1)),
    spec("is in remote control", None, v(5, 6)),
    spec("get serial number", v(3, 12), v(5, 6)),
    spec("get robot model", v(3, 12), v(5, 6)),
    spec("generate flight report", v(3, 13), v(5, 8)),
    spec("generate support file", v(3, 13), v(5, 8)),
    spec("saveLog", v(3, 13), v(5, 8)),
];

const fn spec(
    name: &'static str,
    cb3: Option<ControllerVersion>,
    e_series: Option<ControllerVersion>,
) -> CommandSpec {
    CommandSpec {
        name,
        cb3,
        e_series,
    }
}

impl CommandSpec {
    /// The spec of the command named `name` (exactly as sent), if the manuals list one.
    ///
    /// ```
    /// let spec = rtde_robot_proto::dashboard::CommandSpec::named("safetystatus").unwrap();
    /// assert_eq!(spec.e_series.unwrap().to_string(), "5.4.0");
    /// ```
    #[must_use]
    pub fn named(name: &str) -> Option<&'static CommandSpec> {
        COMMANDS.iter().find(|c| c.name == name)
    }

    /// The first version of `generation` with this command; `None` if it has none.
    #[must_use]
    pub fn since(&self, generation: Generation) -> Option<ControllerVersion> {
        match generation {
            Generation::Cb3 => self.cb3,
            Generation::ESeries => self.e_series,
            Generation::PolyScopeX => None,
        }
    }

    /// `Ok` if a controller of `version` has this command, else the error that says
    /// which version added it.
    ///
    /// # Errors
    /// [`DashboardError::PolyScopeX`] for a 10.x controller, [`DashboardError::Unsupported`]
    /// for an older one or another generation.
    pub fn check(&self, version: ControllerVersion) -> Result<(), DashboardError> {
        let generation = version.generation();
        if generation == Some(Generation::PolyScopeX) {
            return Err(DashboardError::PolyScopeX { version });
        }
        match generation.and_then(|g| self.since(g)) {
            Some(since) if version >= since => Ok(()),
            since => Err(DashboardError::Unsupported {
                command: self.name,
                since,
                version,
            }),
        }
    }
}

/// A Dashboard command with its argument, ready to be written as one line.
///
/// ```
/// use rtde_robot_proto::dashboard::Command;
///
/// assert_eq!(Command::Load("pick.urp".into()).line().unwrap(), "load pick.urp\n");
/// assert_eq!("brake release".parse::<Command>().unwrap(), Command::BrakeRelease);
/// assert_eq!(Command::PowerOn.name(), "power on");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// `load <program.urp>`: loads a program file (a path on the controller).
    Load(String),
    /// `play`: starts the loaded program.
    Play,
    /// `stop`: stops the program.
    Stop,
    /// `pause`: pauses the program.
    Pause,
    /// `quit`: closes the connection.
    Quit,
    /// `shutdown`: shuts the controller down and powers it off.
    Shutdown,
    /// `running`: whether a program runs.
    Running,
    /// `robotmode`: the robot's mode.
    RobotMode,
    /// `get loaded program`: the loaded program's path.
    GetLoadedProgram,
    /// `popup <text>`: shows a popup on the pendant.
    Popup(String),
    /// `close popup`: closes the popup.
    ClosePopup,
    /// `addToLog <text>`: adds a line to the controller's log.
    AddToLog(String),
    /// `isProgramSaved`: whether the loaded program is saved.
    IsProgramSaved,
    /// `programState`: the program's state and name.
    ProgramState,
    /// `PolyscopeVersion`: the software version, with its build date.
    PolyscopeVersion,
    /// `version`: the software version (e-Series).
    Version,
    /// `setUserRole <role>` (CB3).
    SetUserRole(UserRole),
    /// `getUserRole` (CB3).
    GetUserRole,
    /// `set operational mode <mode>` (e-Series): takes control of the operational mode.
    SetOperationalMode(OperationalMode),
    /// `get operational mode` (e-Series 5.6).
    GetOperationalMode,
    /// `clear operational mode` (e-Series): gives the mode back to the pendant.
    ClearOperationalMode,
    /// `power on`: powers the arm on (it ends in idle, brakes engaged).
    PowerOn,
    /// `power off`: powers the arm off.
    PowerOff,
    /// `brake release`: releases the brakes (the arm ends in running).
    BrakeRelease,
    /// `safetymode`: the safety mode (superseded by `safetystatus`).
    SafetyMode,
    /// `safetystatus`: the safety status.
    SafetyStatus,
    /// `unlock protective stop`: possible 5 s after the stop.
    UnlockProtectiveStop,
    /// `close safety popup`.
    CloseSafetyPopup,
    /// `load installation <file.installation>`.
    LoadInstallation(String),
    /// `restart safety`: after a safety fault or violation; the arm ends powered off.
    RestartSafety,
    /// `is in remote control` (e-Series 5.6).
    IsInRemoteControl,
    /// `get serial number`.
    GetSerialNumber,
    /// `get robot model`.
    GetRobotModel,
    /// `generate flight report <controller|software|system>`.
    GenerateFlightReport(String),
    /// `generate support file <directory>`.
    GenerateSupportFile(String),
    /// `saveLog`: flushes the log to disk.
    SaveLog,
}

impl Command {
    /// The command's words as sent, without its argument: its name in [`COMMANDS`].
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Command::Load(_) => "load",
            Command::Play => "play",
            Command::Stop => "stop",
            Command::Pause => "pause",
            Command::Quit => "quit",
            Command::Shutdown => "shutdown",
            Command::Running => "running",
            Command::RobotMode => "robotmode",
            Command::GetLoadedProgram => "get loaded program",
            Command::Popup(_) => "popup",
            Command::ClosePopup => "close popup",
            Command::AddToLog(_) => "addToLog",
            Command::IsProgramSaved => "isProgramSaved",
            Command::ProgramState => "programState",
            Command::PolyscopeVersion => "PolyscopeVersion",
            Command::Version => "version",
            Command::SetUserRole(_) => "setUserRole",
            Command::GetUserRole => "getUserRole",
            Command::SetOperationalMode(_) => "set operational mode",
            Command::GetOperationalMode => "get operational mode",
            Command::ClearOperationalMode => "clear operational mode",
            Command::PowerOn => "power on",
            Command::PowerOff => "power off",
            Command::BrakeRelease => "brake release",
            Command::SafetyMode => "safetymode",
            Command::SafetyStatus => "safetystatus",
            Command::UnlockProtectiveStop => "unlock protective stop",
            Command::CloseSafetyPopup => "close safety popup",
            Command::LoadInstallation(_) => "load installation",
            Command::RestartSafety => "restart safety",
            Command::IsInRemoteControl => "is in remote control",
            Command::GetSerialNumber => "get serial number",
            Command::GetRobotModel => "get robot model",
            Command::GenerateFlightReport(_) => "generate flight report",
            Command::GenerateSupportFile(_) => "generate support file",
            Command::SaveLog => "saveLog",
        }
    }

    /// The command's row of [`COMMANDS`].
    #[must_use]
    pub fn spec(&self) -> &'static CommandSpec {
        let name = self.name();
        // Every name above is a row of the table: a unit test walks them all.
        COMMANDS
            .iter()
            .find(|c| c.name == name)
            .unwrap_or(&COMMANDS[0])
    }

    /// The argument, as written after the command's name.
    fn argument(&self) -> Option<&str> {
        match self {
            Command::Load(a)
            | Command::Popup(a)
            | Command::AddToLog(a)
            | Command::LoadInstallation(a)
            | Command::GenerateFlightReport(a)
            | Command::GenerateSupportFile(a) => Some(a),
            Command::SetUserRole(role) => Some(role.as_str()),
            Command::SetOperationalMode(mode) => Some(mode.as_str()),
            _ => None,
        }
    }

    /// The request line, newline included.
    ///
    /// # Errors
    /// [`DashboardError::InvalidArgument`] for an argument that is empty where the
    /// command needs one, or that holds a line break (which would end the command early
    /// and send the rest as a second one).
    pub fn line(&self) -> Result<String, DashboardError> {
        match self.argument() {
            None => Ok(format!("{}\n", self.name())),
            Some(arg) => {
                let why = if arg.trim().is_empty() {
                    Some("it is empty")
                } else if arg.contains(['\n', '\r']) {
                    Some("it holds a line break, which would end the command there")
                } else {
                    None
                };
                match why {
                    Some(why) => Err(DashboardError::InvalidArgument {
                        command: self.name(),
                        why,
                    }),
                    None => Ok(format!("{} {arg}\n", self.name())),
                }
            }
        }
    }
}

impl fmt::Display for Command {
    /// The request line without its newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.argument() {
            Some(arg) => write!(f, "{} {arg}", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

/// Why a text is no Dashboard command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseCommandError(String);

impl FromStr for Command {
    type Err = ParseCommandError;

    /// A command line as typed: the command's words (matched exactly, the longest
    /// first: `load installation x` is not `load`), then its argument.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let mut best: Option<(&'static str, &str)> = None;
        for spec in COMMANDS {
            let Some(rest) = text.strip_prefix(spec.name) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with(' ')) {
                continue;
            }
            if best.is_none_or(|(name, _)| spec.name.len() > name.len()) {
                best = Some((spec.name, rest.trim()));
            }
        }
        let Some((name, arg)) = best else {
            return Err(ParseCommandError(format!(
                "unknown Dashboard command `{text}`; the commands are: {}",
                COMMANDS
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let needs = |what: &str| -> Result<String, ParseCommandError> {
            if arg.is_empty() {
                Err(ParseCommandError(format!("`{name}` needs {what}")))
            } else {
                Ok(arg.to_owned())
            }
        };
        // A path in double quotes, as some clients for real robots send it (`load
        // "/programs/pick.urp"`), is the path inside them.
        let path = |what: &str| needs(what).map(|p| unquoted(&p).to_owned());
        let none = |command: Command| -> Result<Command, ParseCommandError> {
            if arg.is_empty() {
                Ok(command)
            } else {
                Err(ParseCommandError(format!(
                    "`{name}` takes no argument (got `{arg}`)"
                )))
            }
        };
        match name {
            "load" => Ok(Command::Load(path("a program file: `load <program.urp>`")?)),
            "popup" => Ok(Command::Popup(needs("a text: `popup <text>`")?)),
            "addToLog" => Ok(Command::AddToLog(needs("a text: `addToLog <text>`")?)),
            "load installation" => Ok(Command::LoadInstallation(path(
                "a file: `load installation <file.installation>`",
            )?)),
            "generate flight report" => Ok(Command::GenerateFlightReport(needs(
                "a report type: controller, software or system",
            )?)),
            "generate support file" => Ok(Command::GenerateSupportFile(needs(
                "a directory: `generate support file <directory>`",
            )?)),
            "setUserRole" => {
                let role = needs("a role: programmer, operator, none, locked or restricted")?;
                role.parse()
                    .map(Command::SetUserRole)
                    .map_err(ParseCommandError)
            }
            "set operational mode" => {
                let mode = needs("a mode: manual or automatic")?;
                mode.parse()
                    .map(Command::SetOperationalMode)
                    .map_err(ParseCommandError)
            }
            "play" => none(Command::Play),
            "stop" => none(Command::Stop),
            "pause" => none(Command::Pause),
            "quit" => none(Command::Quit),
            "shutdown" => none(Command::Shutdown),
            "running" => none(Command::Running),
            "robotmode" => none(Command::RobotMode),
            "get loaded program" => none(Command::GetLoadedProgram),
            "close popup" => none(Command::ClosePopup),
            "isProgramSaved" => none(Command::IsProgramSaved),
            "programState" => none(Command::ProgramState),
            "PolyscopeVersion" => none(Command::PolyscopeVersion),
            "version" => none(Command::Version),
            "getUserRole" => none(Command::GetUserRole),
            "get operational mode" => none(Command::GetOperationalMode),
            "clear operational mode" => none(Command::ClearOperationalMode),
            "power on" => none(Command::PowerOn),
            "power off" => none(Command::PowerOff),
            "brake release" => none(Command::BrakeRelease),
            "safetymode" => none(Command::SafetyMode),
            "safetystatus" => none(Command::SafetyStatus),
            "unlock protective stop" => none(Command::UnlockProtectiveStop),
            "close safety popup" => none(Command::CloseSafetyPopup),
            "restart safety" => none(Command::RestartSafety),
            "is in remote control" => none(Command::IsInRemoteControl),
            "get serial number" => none(Command::GetSerialNumber),
            "get robot model" => none(Command::GetRobotModel),
            _ => none(Command::SaveLog),
        }
    }
}

/// `text` without one pair of surrounding double quotes, if it has them.
fn unquoted(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One command of every kind, each with an argument where it takes one.
    pub(crate) fn every_command() -> Vec<Command> {
        vec![
            Command::Load("/programs/pick.urp".into()),
            Command::Play,
            Command::Stop,
            Command::Pause,
            Command::Quit,
            Command::Shutdown,
            Command::Running,
            Command::RobotMode,
            Command::GetLoadedProgram,
            Command::Popup("hello there".into()),
            Command::ClosePopup,
            Command::AddToLog("a note".into()),
            Command::IsProgramSaved,
            Command::ProgramState,
            Command::PolyscopeVersion,
            Command::Version,
            Command::SetUserRole(UserRole::Operator),
            Command::GetUserRole,
            Command::SetOperationalMode(OperationalMode::Automatic),
            Command::GetOperationalMode,
            Command::ClearOperationalMode,
            Command::PowerOn,
            Command::PowerOff,
            Command::BrakeRelease,
            Command::SafetyMode,
            Command::SafetyStatus,
            Command::UnlockProtectiveStop,
            Command::CloseSafetyPopup,
            Command::LoadInstallation("default.installation".into()),
            Command::RestartSafety,
            Command::IsInRemoteControl,
            Command::GetSerialNumber,
            Command::GetRobotModel,
            Command::GenerateFlightReport("controller".into()),
            Command::GenerateSupportFile("/tmp/support".into()),
            Command::SaveLog,
        ]
    }

    #[test]
    fn every_row_of_the_table_has_a_command_and_back() {
        let all = every_command();
        assert_eq!(all.len(), COMMANDS.len());
        for (command, spec) in all.iter().zip(COMMANDS) {
            assert_eq!(command.name(), spec.name);
            assert_eq!(command.spec(), spec);
        }
    }

    #[test]
    fn request_bytes_of_every_command() {
        let expected = [
            "load /programs/pick.urp\n",
            "play\n",
            "stop\n",
            "pause\n",
            "quit\n",
            "shutdown\n",
            "running\n",
            "robotmode\n",
            "get loaded program\n",
            "popup hello there\n",
            "close popup\n",
            "addToLog a note\n",
            "isProgramSaved\n",
            "programState\n",
            "PolyscopeVersion\n",
            "version\n",
            "setUserRole operator\n",
            "getUserRole\n",
            "set operational mode automatic\n",
            "get operational mode\n",
            "clear operational mode\n",
            "power on\n",
            "power off\n",
            "brake release\n",
            "safetymode\n",
            "safetystatus\n",
            "unlock protective stop\n",
            "close safety popup\n",
            "load installation default.installation\n",
            "restart safety\n",
            "is in remote control\n",
            "get serial number\n",
            "get robot model\n",
            "generate flight report controller\n",
            "generate support file /tmp/support\n",
            "saveLog\n",
        ];
        for (command, line) in every_command().iter().zip(expected) {
            assert_eq!(command.line().unwrap().as_bytes(), line.as_bytes());
            // What the command line types parses back to the same command.
            assert_eq!(&line.trim_end().parse::<Command>().unwrap(), command);
        }
    }

    #[test]
    fn an_argument_with_a_line_break_is_refused() {
        let err = Command::Popup("one\nstop".into()).line().unwrap_err();
        assert!(
            matches!(
                err,
                DashboardError::InvalidArgument {
                    command: "popup",
                    ..
                }
            ),
            "{err}"
        );
        assert!(Command::Load(" ".into()).line().is_err());
    }

    #[test]
    fn the_longest_name_wins_and_arguments_are_checked() {
        assert_eq!(
            "load installation a.installation"
                .parse::<Command>()
                .unwrap(),
            Command::LoadInstallation("a.installation".into())
        );
        assert!("load".parse::<Command>().unwrap_err().0.contains("needs"));
        assert!("play now".parse::<Command>().is_err());
        assert!("fly".parse::<Command>().unwrap_err().0.contains("unknown"));
        assert!("playing".parse::<Command>().is_err());
    }

    #[test]
    fn a_quoted_path_is_the_path_inside_the_quotes() {
        for (line, path) in [
            ("load \"/programs/pick.urp\"", "/programs/pick.urp"),
            ("load /programs/pick.urp", "/programs/pick.urp"),
            ("load \"/programs/a b.urp\"", "/programs/a b.urp"),
        ] {
            assert_eq!(line.parse::<Command>().unwrap(), Command::Load(path.into()));
        }
        assert_eq!(
            "load installation \"x.installation\""
                .parse::<Command>()
                .unwrap(),
            Command::LoadInstallation("x.installation".into())
        );
    }

    #[test]
    fn versions_gate_the_commands() {
        let e = |s: &str| s.parse::<ControllerVersion>().unwrap();
        let status = CommandSpec::named("safetystatus").unwrap();
        assert!(status.check(e("5.4.0")).is_ok());
        assert!(matches!(
            status.check(e("5.3.9")),
            Err(DashboardError::Unsupported { since: Some(_), .. })
        ));
        let role = CommandSpec::named("setUserRole").unwrap();
        assert!(role.check(e("3.15.0")).is_ok());
        assert!(matches!(
            role.check(e("5.21.0")),
            Err(DashboardError::Unsupported { since: None, .. })
        ));
        assert!(matches!(
            CommandSpec::named("play").unwrap().check(e("10.7.0")),
            Err(DashboardError::PolyScopeX { .. })
        ));
    }
}
