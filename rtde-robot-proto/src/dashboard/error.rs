//! Everything a Dashboard command can end in other than its success reply.

use std::io;
use std::time::Duration;

use rtde_core::fields::ControllerVersion;

use super::stranger::Stranger;

/// Why a Dashboard command did not succeed.
///
/// One vocabulary for the codec here and both of rtde-robot's drivers, so that a
/// refusal reads the same whichever of them found it; the variants for a broken link
/// carry the operating system's error as data, nothing here does I/O.
///
/// The controller's refusals ([`DashboardError::Refused`]) are kept apart from a broken
/// link ([`DashboardError::Io`], [`DashboardError::Timeout`], [`DashboardError::Closed`])
/// and from what rtde refuses before sending ([`DashboardError::Unsupported`],
/// [`DashboardError::InvalidArgument`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DashboardError {
    /// The Dashboard server could not be reached.
    #[error("cannot reach the Dashboard server at {addr}")]
    Connect {
        /// The address tried.
        addr: String,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The controller runs PolyScope X, which has no Dashboard server.
    #[error(
        "controller {version} runs PolyScope X, which has no Dashboard server (port 29999); \
         PolyScope X offers a REST interface instead, which rtde does not speak"
    )]
    PolyScopeX {
        /// The controller's version.
        version: ControllerVersion,
    },
    /// What answered on the port did not greet as a Dashboard server does.
    #[error("not a Dashboard server: it greeted with {greeting:?}")]
    NotADashboard {
        /// The first line it sent.
        greeting: String,
    },
    /// What answered on the port sent no greeting: another of the controller's ports, or
    /// something else.
    #[error("{addr} is not a Dashboard server: {found}")]
    NotADashboardServer {
        /// The address connected to.
        addr: String,
        /// What answered there.
        found: Stranger,
    },
    /// The connected controller's version lacks the command; nothing was sent.
    #[error("{}", unsupported(command, *since, *version))]
    Unsupported {
        /// The command's name.
        command: &'static str,
        /// The first version of the controller's generation with it; `None` if the
        /// generation never had it.
        since: Option<ControllerVersion>,
        /// The controller's version.
        version: ControllerVersion,
    },
    /// An argument that cannot be sent; nothing was sent.
    #[error("`{command}`: invalid argument: {why}")]
    InvalidArgument {
        /// The command's name.
        command: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The controller answered something other than the command's success reply: a
    /// refusal such as `Failed to execute: play` or `File not found: pick.urp`, quoted.
    #[error("the controller refused `{command}`: {reply:?}")]
    Refused {
        /// The command's name.
        command: &'static str,
        /// The controller's reply, as it wrote it.
        reply: String,
    },
    /// No reply within the timeout. The connection is dropped, so that the late reply
    /// is never taken for the next command's; the next command reconnects when
    /// reconnection is on.
    #[error("no reply to `{command}` within {after:?}")]
    Timeout {
        /// The command's name (`connect` while waiting for the greeting).
        command: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The Dashboard server closed the connection.
    #[error("the Dashboard server closed the connection{}", during(command))]
    Closed {
        /// The command under way, if any.
        command: Option<&'static str>,
    },
    /// A line longer than any Dashboard reply, or not text.
    #[error("the Dashboard server sent a line that is no reply ({why})")]
    BadLine {
        /// What is wrong with it.
        why: &'static str,
    },
    /// Reading or writing failed.
    #[error("the Dashboard connection failed")]
    Io(#[from] io::Error),
    /// The robot did not reach a mode in the time given (rtde-robot's
    /// `Dashboard::wait_for_robot_mode`).
    #[error("the robot did not reach {wanted} within {within:?}: it is in {last}")]
    ModeNotReached {
        /// The mode waited for.
        wanted: rtde_core::RobotMode,
        /// The mode it was in at the end.
        last: rtde_core::RobotMode,
        /// How long it was given.
        within: Duration,
    },
}

fn unsupported(
    command: &str,
    since: Option<ControllerVersion>,
    version: ControllerVersion,
) -> String {
    let generation = version
        .generation()
        .map_or_else(|| format!("{}.x", version.major), |g| g.to_string());
    match since {
        Some(since) => format!(
            "`{command}` needs controller software {since} or later; this controller runs {version}"
        ),
        None => format!(
            "`{command}` does not exist on {generation} controllers (this one runs {version})"
        ),
    }
}

fn during(command: &Option<&'static str>) -> String {
    command.map_or_else(String::new, |c| format!(" during `{c}`"))
}
