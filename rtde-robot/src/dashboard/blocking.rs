//! The blocking Dashboard client: a socket, a line buffer, and the rules of `options`.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use rtde_core::fields::ControllerVersion;
use rtde_core::{RobotMode, SafetyMode, SafetyStatus};

use rtde_robot_proto::dashboard::{
    self as rules, Command, DashboardError, LineBuffer, OperationalMode, ProgramState, Reply,
    UserRole,
};

use super::methods::typed_commands;
use super::mode_wait::{MODE_POLL, ModeWait};
use super::options::{self, DashboardOptions};

/// A connection to a controller's Dashboard server (port 29999), blocking.
///
/// ```
/// use rtde_robot::dashboard::{Dashboard, DashboardOptions};
/// use rtde_core::{RobotMode, SafetyStatus};
///
/// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
/// let mut dashboard = Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new())?;
/// dashboard.power_on()?;
/// dashboard.brake_release()?;
/// assert_eq!(dashboard.robot_mode()?, RobotMode::Running);
/// assert_eq!(dashboard.safety_status()?, SafetyStatus::Normal);
/// # Ok::<(), rtde_robot::dashboard::DashboardError>(())
/// ```
#[derive(Debug)]
pub struct Dashboard {
    addrs: Vec<SocketAddr>,
    options: DashboardOptions,
    stream: Option<TcpStream>,
    lines: LineBuffer,
    version: ControllerVersion,
}

impl Dashboard {
    /// Connects, reads the server's greeting and learns the controller's version (the
    /// declared one, or `PolyscopeVersion`'s reply).
    ///
    /// # Errors
    /// [`DashboardError::Connect`] (or [`DashboardError::PolyScopeX`] when the RTDE port
    /// says the controller runs PolyScope X), [`DashboardError::NotADashboard`], a timeout,
    /// or the version query's failure.
    pub fn connect(
        addr: impl ToSocketAddrs,
        options: DashboardOptions,
    ) -> Result<Dashboard, DashboardError> {
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
        if let Some(version) = options.version
            && version.generation() == Some(rtde_core::fields::Generation::PolyScopeX)
        {
            return Err(DashboardError::PolyScopeX { version });
        }
        let mut dashboard = Dashboard {
            addrs,
            version: options
                .version
                .unwrap_or(ControllerVersion::new(0, 0, 0, 0)),
            options,
            stream: None,
            lines: LineBuffer::default(),
        };
        dashboard.open()?;
        Ok(dashboard)
    }

    /// The controller's software version.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.version
    }

    /// Asks `robotmode` until the robot is in `mode`, for at most `within`: powering on
    /// and releasing the brakes take seconds on a controller, and their commands return at
    /// once.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::RobotMode;
    /// use rtde_robot::dashboard::{Dashboard, DashboardOptions};
    ///
    /// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
    /// let mut d = Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new())?;
    /// d.power_on()?;
    /// d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10))?;
    /// # Ok::<(), rtde_robot::dashboard::DashboardError>(())
    /// ```
    ///
    /// # Errors
    /// [`DashboardError::ModeNotReached`] when `within` passes first, with the mode the
    /// robot is in; as [`Dashboard::robot_mode`] when asking fails.
    pub fn wait_for_robot_mode(
        &mut self,
        mode: RobotMode,
        within: Duration,
    ) -> Result<(), DashboardError> {
        let wait = ModeWait::new(mode, within);
        loop {
            if let Some(end) = wait.after(self.robot_mode()?) {
                return end;
            }
            std::thread::sleep(MODE_POLL);
        }
    }

    /// Whether the connection is open (it closes on a timeout, `quit`, or the server
    /// closing it).
    #[must_use]
    pub fn is_connected(&self) -> bool {
        self.stream.is_some()
    }

    /// Closes the connection and opens a new one.
    ///
    /// # Errors
    /// As [`Dashboard::connect`].
    pub fn reconnect(&mut self) -> Result<(), DashboardError> {
        self.disconnect();
        self.open()
    }

    /// Closes the connection without `quit`.
    pub fn disconnect(&mut self) {
        self.stream = None;
        self.lines.clear();
    }

    /// `quit`: the server says `Disconnected` and closes the connection.
    ///
    /// # Errors
    /// As [`Dashboard::execute`].
    pub fn quit(&mut self) -> Result<(), DashboardError> {
        self.execute(&Command::Quit)?;
        self.disconnect();
        Ok(())
    }

    /// Sends `command` and returns its typed reply. A command the controller's version
    /// lacks, or with an argument that cannot be sent, is refused before anything is sent.
    ///
    /// # Errors
    /// [`DashboardError::Unsupported`], [`DashboardError::InvalidArgument`],
    /// [`DashboardError::Refused`] with the controller's words, or a link error.
    pub fn execute(&mut self, command: &Command) -> Result<Reply, DashboardError> {
        let version = (self.version.major != 0).then_some(self.version);
        let line = rules::request(command, version)?;
        if self.stream.is_none() {
            if !self.options.reconnect {
                return Err(DashboardError::Closed { command: None });
            }
            self.open()?;
        }
        let reply = self.exchange(command.name(), &line);
        if reply.is_err() {
            // A timeout or a broken link: a late reply must not answer the next command.
            self.disconnect();
        }
        rules::answer(command, &reply?)
    }

    fn open(&mut self) -> Result<(), DashboardError> {
        self.lines.clear();
        let mut last = None;
        let mut stream = None;
        for addr in &self.addrs {
            match TcpStream::connect_timeout(addr, self.options.connect_timeout) {
                Ok(s) => {
                    stream = Some((s, *addr));
                    break;
                }
                Err(e) => last = Some(options::explain_refusal(*addr, e, &self.options)),
            }
        }
        let Some((stream, addr)) = stream else {
            return Err(last.unwrap_or(DashboardError::Connect {
                addr: String::new(),
                source: ErrorKind::AddrNotAvailable.into(),
            }));
        };
        stream.set_nodelay(true)?;
        self.stream = Some(stream);
        let greeted = self
            .read_line("connect", options::greeting_wait(&self.options))
            .map_err(|e| options::without_greeting(addr, e, self.lines.holds_binary()))
            .and_then(|greeting| self.greeted(&greeting));
        if greeted.is_err() {
            self.disconnect();
        }
        greeted
    }

    /// The rules after the greeting: its check, and the version asked when not known.
    fn greeted(&mut self, greeting: &str) -> Result<(), DashboardError> {
        let known = self.options.version.is_some() || self.version.major != 0;
        if let Some(question) = rules::after_greeting(greeting, known)? {
            let reply = self.exchange(question.name(), &question.line()?)?;
            self.version = rules::version_from_reply(&reply)?;
        }
        Ok(())
    }

    fn exchange(&mut self, command: &'static str, line: &str) -> Result<String, DashboardError> {
        let stream = self.stream.as_mut().ok_or(DashboardError::Closed {
            command: Some(command),
        })?;
        stream.write_all(line.as_bytes())?;
        self.read_line(command, self.options.timeout)
    }

    fn read_line(
        &mut self,
        command: &'static str,
        timeout: Duration,
    ) -> Result<String, DashboardError> {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 512];
        loop {
            if let Some(line) = self.lines.next_line()? {
                return Ok(line);
            }
            let stream = self.stream.as_mut().ok_or(DashboardError::Closed {
                command: Some(command),
            })?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DashboardError::Timeout {
                    command,
                    after: timeout,
                });
            }
            stream.set_read_timeout(Some(left))?;
            match stream.read(&mut buf) {
                Ok(0) => {
                    return Err(DashboardError::Closed {
                        command: Some(command),
                    });
                }
                Ok(n) => self.lines.extend(&buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(DashboardError::Timeout {
                        command,
                        after: timeout,
                    });
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

macro_rules! blocking_methods {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $command:expr, $pattern:pat => $value:expr;)*) => {
        /// The typed commands. Each refuses before sending what the controller's version
        /// lacks, and returns [`DashboardError::Refused`] with the controller's words when
        /// it answers anything but the command's success reply.
        impl Dashboard {
            $(
                $(#[$doc])*
                ///
                /// # Errors
                /// As [`Dashboard::execute`].
                #[allow(clippy::unused_unit)]
                pub fn $name(&mut self, $($arg: $ty),*) -> Result<$ret, DashboardError> {
                    let command = $command;
                    match self.execute(&command)? {
                        $pattern => Ok($value),
                        other => Err(DashboardError::Refused { command: command.name(), reply: other.to_string() }),
                    }
                }
            )*
        }
    };
}

typed_commands!(blocking_methods);
