//! The rules a Dashboard client follows around each line, whichever driver carries it:
//! the greeting and the version question on connect, the version check before sending,
//! and reading a reply as success or a refusal.

use rtde_core::fields::{ControllerVersion, Generation};

use super::command::Command;
use super::error::DashboardError;
use super::reply::{self, GREETING, Reply};

/// The greeting's check: anything else on the port is no Dashboard server.
///
/// ```
/// use rtde_robot_proto::dashboard::{DashboardError, check_greeting};
///
/// assert!(check_greeting("Connected: Universal Robots Dashboard Server").is_ok());
/// let err = check_greeting("RTDE").unwrap_err();
/// assert!(matches!(err, DashboardError::NotADashboard { .. }));
/// ```
pub fn check_greeting(line: &str) -> Result<(), DashboardError> {
    if line.starts_with(GREETING) {
        Ok(())
    } else {
        Err(DashboardError::NotADashboard {
            greeting: line.to_owned(),
        })
    }
}

/// The request line of `command`, after the version check: nothing is sent for a command
/// the controller lacks.
///
/// ```
/// use rtde_robot_proto::dashboard::{Command, DashboardError, request};
///
/// let v = |s: &str| s.parse().ok();
/// assert_eq!(request(&Command::Play, v("5.21.0"))?, "play\n");
/// let refused = request(&Command::GetOperationalMode, v("3.15.0")).unwrap_err();
/// assert!(matches!(refused, DashboardError::Unsupported { .. }));
/// # Ok::<(), DashboardError>(())
/// ```
pub fn request(
    command: &Command,
    version: Option<ControllerVersion>,
) -> Result<String, DashboardError> {
    if let Some(version) = version {
        command.spec().check(version)?;
    }
    command.line()
}

/// The reply to `command`, typed, or the controller's refusal quoted.
///
/// ```
/// use rtde_robot_proto::dashboard::{Command, DashboardError, Reply, answer};
///
/// assert_eq!(answer(&Command::Play, "Starting program")?, Reply::Done("Starting program".into()));
/// let refused = answer(&Command::Play, "Failed to execute: play").unwrap_err();
/// assert!(matches!(refused, DashboardError::Refused { command: "play", .. }));
/// # Ok::<(), DashboardError>(())
/// ```
pub fn answer(command: &Command, line: &str) -> Result<Reply, DashboardError> {
    reply::parse(command, line).ok_or_else(|| DashboardError::Refused {
        command: command.name(),
        reply: line.to_owned(),
    })
}

/// The controller's version from its `PolyscopeVersion` reply: a PolyScope X version is
/// an error (its controllers have no Dashboard server; one that answers is not a real one).
///
/// ```
/// use rtde_robot_proto::dashboard::{DashboardError, Reply, version_of};
///
/// let v = "5.21.0".parse().unwrap();
/// assert_eq!(version_of(&Reply::Version(v))?, v);
/// let x = Reply::Version("10.7.0".parse().unwrap());
/// assert!(matches!(version_of(&x), Err(DashboardError::PolyScopeX { .. })));
/// # Ok::<(), DashboardError>(())
/// ```
pub fn version_of(reply: &Reply) -> Result<ControllerVersion, DashboardError> {
    match reply {
        Reply::Version(v) if v.generation() == Some(Generation::PolyScopeX) => {
            Err(DashboardError::PolyScopeX { version: *v })
        }
        Reply::Version(v) => Ok(*v),
        other => Err(DashboardError::Refused {
            command: "PolyscopeVersion",
            reply: other.to_string(),
        }),
    }
}

/// What a client does once the server has greeted it: the greeting's check, then the
/// question to ask when the controller's version is not yet known (`PolyscopeVersion`),
/// or nothing more.
///
/// ```
/// use rtde_robot_proto::dashboard::{Command, after_greeting};
///
/// let greeting = "Connected: Universal Robots Dashboard Server";
/// assert_eq!(after_greeting(greeting, false)?, Some(Command::PolyscopeVersion));
/// assert_eq!(after_greeting(greeting, true)?, None);
/// assert!(after_greeting("RTDE", false).is_err());
/// # Ok::<(), rtde_robot_proto::dashboard::DashboardError>(())
/// ```
///
/// # Errors
/// [`DashboardError::NotADashboard`] for anything but a Dashboard server's greeting.
pub fn after_greeting(
    greeting: &str,
    version_known: bool,
) -> Result<Option<Command>, DashboardError> {
    check_greeting(greeting)?;
    Ok((!version_known).then_some(Command::PolyscopeVersion))
}

/// The controller's version from the reply line to the question [`after_greeting`] asked.
///
/// ```
/// use rtde_robot_proto::dashboard::version_from_reply;
///
/// let version = version_from_reply("URSoftware 5.21.0.1234 (Jan 01 2026)")?;
/// assert_eq!((version.major, version.minor), (5, 21));
/// assert!(version_from_reply("could not understand: 'PolyscopeVersion'").is_err());
/// # Ok::<(), rtde_robot_proto::dashboard::DashboardError>(())
/// ```
///
/// # Errors
/// As [`answer`] and [`version_of`]: a refusal, or a PolyScope X version.
pub fn version_from_reply(line: &str) -> Result<ControllerVersion, DashboardError> {
    version_of(&answer(&Command::PolyscopeVersion, line)?)
}
