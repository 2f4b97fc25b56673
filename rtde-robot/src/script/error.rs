//! How sending a program can end other than with the program playing.

use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_core::{RobotMode, RuntimeState, SafetyStatus};

use crate::dashboard::DashboardError;
use crate::primary::DecodeError;

/// Why a program did not start, or stopped at once. The precondition errors
/// ([`ScriptError::NotInRemoteControl`], [`ScriptError::RobotNotRunning`],
/// [`ScriptError::SafetyStop`]) are found through the Dashboard server, or the primary
/// interface's robot state ([`Preconditions`](super::Preconditions)), before anything is
/// sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The Dashboard server, asked for the preconditions, failed.
    #[error("checking the robot through the Dashboard server failed")]
    Dashboard(#[from] DashboardError),
    /// The controller is in local control: it ignores programs sent to its script ports.
    #[error(
        "the controller is in local control, so it ignores programs sent to its script ports; \
         switch it to remote control on the pendant (nothing was sent)"
    )]
    NotInRemoteControl,
    /// The arm is not running (powered off, idle with brakes engaged, …).
    #[error(
        "the robot is in {mode}, not running: power it on and release the brakes first \
         (`rtde dashboard power on`, `rtde dashboard brake release`; nothing was sent)"
    )]
    RobotNotRunning {
        /// Its mode.
        mode: RobotMode,
    },
    /// The primary interface sent no robot state to check the preconditions on.
    #[error(
        "the primary interface sent no robot state within {waited:?} to check the robot on \
         (nothing was sent)"
    )]
    NoRobotState {
        /// How long the sender waited.
        waited: Duration,
    },
    /// A safety stop holds.
    #[error("the safety status is {status}: clear it before sending a program (nothing was sent)")]
    SafetyStop {
        /// The safety status.
        status: SafetyStatus,
    },
    /// A port could not be reached.
    #[error("cannot reach the controller's {port} at {addr}")]
    Connect {
        /// Which port (`primary interface (30001)`, …).
        port: &'static str,
        /// The address tried.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The program fails the URScript check for the controller's version
    /// ([`rtde_urscript::check`]), so the controller would refuse it; nothing was sent.
    /// [`ScriptSender::check_script`](super::ScriptSender::check_script) turns the check
    /// off.
    #[error(
        "the program fails the URScript check for controller {version}: {} (nothing was sent)",
        first_of(errors)
    )]
    Check {
        /// The version it was checked against: the controller's, from the primary
        /// interface.
        version: ControllerVersion,
        /// Every error found, each with its line and column.
        errors: Vec<rtde_urscript::ScriptError>,
    },
    /// The controller did not compile the program.
    #[error("the program does not compile: line {line}, column {column}: {text}")]
    Compile {
        /// The line, from 1.
        line: i32,
        /// The column, from 1.
        column: i32,
        /// The controller's text.
        text: String,
    },
    /// The program stopped with a runtime exception.
    #[error("the program failed at line {line}, column {column}: {text}")]
    Runtime {
        /// The line, from 1.
        line: i32,
        /// The column, from 1.
        column: i32,
        /// The controller's text.
        text: String,
    },
    /// A protective stop happened while the program started (or, watched until its end, while
    /// it played).
    #[error("a protective stop stopped the program{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    ProtectiveStop {
        /// The controller's words, if it said any.
        reason: Option<String>,
    },
    /// The program was sent, and did not start: the controller reported it stopped
    /// without starting, or the timeout passed. Its messages of that time say why, if it
    /// said.
    #[error(
        "the program was sent but did not start, after {waited:?} (runtime state {}){}",
        runtime_state.map_or_else(|| "unknown".to_owned(), |s| s.to_string()),
        said(messages)
    )]
    NotStarted {
        /// How long it waited: the timeout, or until the controller said the program stopped.
        waited: Duration,
        /// The last runtime state RTDE reported.
        runtime_state: Option<RuntimeState>,
        /// What the controller said meanwhile (RTDE and primary interface text messages).
        messages: Vec<String>,
    },
    /// The primary interface sent bytes that are no package.
    #[error("the primary interface sent bytes that are no package")]
    Primary(#[from] DecodeError),
    /// The RTDE connection failed.
    #[error(transparent)]
    Rtde(#[from] rtde_core::Error),
    /// Reading or writing failed.
    #[error("the script port failed")]
    Io(#[from] std::io::Error),
}

/// The first error at its place, and how many more there are.
fn first_of(errors: &[rtde_urscript::ScriptError]) -> String {
    let Some(first) = errors.first() else {
        return "no error recorded".to_owned();
    };
    let more = match errors.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    format!(
        "line {}, column {}: {first}{more}",
        first.span.line, first.span.column
    )
}

fn said(messages: &[String]) -> String {
    if messages.is_empty() {
        String::new()
    } else {
        format!("; the controller said: {}", messages.join(" / "))
    }
}
