//! The async Dashboard client (feature `tokio`): the blocking client's rules over tokio's
//! socket.

use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_core::{RobotMode, SafetyMode, SafetyStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs, lookup_host};

use rtde_robot_proto::dashboard::{
    self as rules, Command, DashboardError, LineBuffer, OperationalMode, ProgramState, Reply,
    UserRole,
};

use super::methods::typed_commands;
use super::mode_wait::{MODE_POLL, ModeWait};
use super::options::{self, DashboardOptions};

/// A connection to a controller's Dashboard server, async (feature `tokio`); the same
/// commands and rules as [`Dashboard`](super::Dashboard).
///
/// Cancellation: a command future dropped before its reply leaves the reply unread, so
/// the connection is dropped at the next command's start and opened again (when
/// reconnection is on); no late reply is taken for another command's.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rtde_robot::dashboard::{AsyncDashboard, DashboardOptions};
///
/// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
/// let mut dashboard = AsyncDashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).await?;
/// dashboard.power_on().await?;
/// assert_eq!(dashboard.robot_mode().await?, rtde_core::RobotMode::Idle);
/// # Ok::<(), rtde_robot::dashboard::DashboardError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct AsyncDashboard {
    addrs: Vec<SocketAddr>,
    options: DashboardOptions,
    stream: Option<TcpStream>,
    lines: LineBuffer,
    version: ControllerVersion,
    /// A command is under way: set before sending, cleared with its reply.
    in_flight: bool,
}

impl AsyncDashboard {
    /// Connects, reads the greeting and learns the controller's version, as
    /// [`Dashboard::connect`](super::Dashboard::connect) does.
    ///
    /// # Errors
    /// As [`Dashboard::connect`](super::Dashboard::connect).
    pub async fn connect(
        addr: impl ToSocketAddrs,
        options: DashboardOptions,
    ) -> Result<AsyncDashboard, DashboardError> {
        let addrs: Vec<SocketAddr> = lookup_host(addr).await?.collect();
        if let Some(version) = options.version
            && version.generation() == Some(rtde_core::fields::Generation::PolyScopeX)
        {
            return Err(DashboardError::PolyScopeX { version });
        }
        let mut dashboard = AsyncDashboard {
            addrs,
            version: options
                .version
                .unwrap_or(ControllerVersion::new(0, 0, 0, 0)),
            options,
            stream: None,
            lines: LineBuffer::default(),
            in_flight: false,
        };
        dashboard.open().await?;
        Ok(dashboard)
    }

    /// The controller's software version.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.version
    }

    /// Asks `robotmode` until the robot is in `mode`, for at most `within`, as
    /// [`Dashboard::wait_for_robot_mode`](super::Dashboard::wait_for_robot_mode) does.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rtde_core::RobotMode;
    /// use rtde_robot::dashboard::{AsyncDashboard, DashboardOptions};
    ///
    /// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
    /// let mut d = AsyncDashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).await?;
    /// d.power_on().await?;
    /// d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10)).await?;
    /// # Ok::<(), rtde_robot::dashboard::DashboardError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`Dashboard::wait_for_robot_mode`](super::Dashboard::wait_for_robot_mode).
    pub async fn wait_for_robot_mode(
        &mut self,
        mode: RobotMode,
        within: Duration,
    ) -> Result<(), DashboardError> {
        let wait = ModeWait::new(mode, within);
        loop {
            if let Some(end) = wait.after(self.robot_mode().await?) {
                return end;
            }
            tokio::time::sleep(MODE_POLL).await;
        }
    }

    /// Whether the connection is open.
    #[must_use]
    pub fn is_connected(&self) -> bool {
        self.stream.is_some()
    }

    /// Closes the connection and opens a new one.
    ///
    /// # Errors
    /// As [`AsyncDashboard::connect`].
    pub async fn reconnect(&mut self) -> Result<(), DashboardError> {
        self.disconnect();
        self.open().await
    }

    /// Closes the connection without `quit`.
    pub fn disconnect(&mut self) {
        self.stream = None;
        self.lines.clear();
        self.in_flight = false;
    }

    /// `quit`, then the connection is closed.
    ///
    /// # Errors
    /// As [`AsyncDashboard::execute`].
    pub async fn quit(&mut self) -> Result<(), DashboardError> {
        self.execute(&Command::Quit).await?;
        self.disconnect();
        Ok(())
    }

    /// Sends `command` and returns its typed reply, as
    /// [`Dashboard::execute`](super::Dashboard::execute) does.
    ///
    /// # Errors
    /// As [`Dashboard::execute`](super::Dashboard::execute).
    pub async fn execute(&mut self, command: &Command) -> Result<Reply, DashboardError> {
        let version = (self.version.major != 0).then_some(self.version);
        let line = rules::request(command, version)?;
        if self.in_flight {
            // The last command's future was dropped before its reply came.
            self.disconnect();
        }
        if self.stream.is_none() {
            if !self.options.reconnect {
                return Err(DashboardError::Closed { command: None });
            }
            self.open().await?;
        }
        let reply = self.exchange(command.name(), &line).await;
        if reply.is_err() {
            self.disconnect();
        }
        rules::answer(command, &reply?)
    }

    async fn open(&mut self) -> Result<(), DashboardError> {
        self.lines.clear();
        self.in_flight = false;
        let mut last = None;
        let mut stream = None;
        for addr in &self.addrs {
            match tokio::time::timeout(self.options.connect_timeout, TcpStream::connect(addr)).await
            {
                Ok(Ok(s)) => {
                    stream = Some((s, *addr));
                    break;
                }
                Ok(Err(e)) => {
                    let (addr, options) = (*addr, self.options.clone());
                    // The RTDE probe blocks: off the runtime's workers.
                    let explained = tokio::task::spawn_blocking(move || {
                        options::explain_refusal(addr, e, &options)
                    })
                    .await;
                    last = explained.ok();
                }
                Err(_) => {
                    last = Some(DashboardError::Timeout {
                        command: "connect",
                        after: self.options.connect_timeout,
                    });
                }
            }
        }
        let Some((stream, addr)) = stream else {
            return Err(last.unwrap_or(DashboardError::Connect {
                addr: String::new(),
                source: std::io::ErrorKind::AddrNotAvailable.into(),
            }));
        };
        stream.set_nodelay(true)?;
        self.stream = Some(stream);
        let result = async {
            let greeting = match self
                .read_line("connect", options::greeting_wait(&self.options))
                .await
            {
                Ok(greeting) => greeting,
                Err(e) => {
                    let binary = self.lines.holds_binary();
                    // Naming a silent port asks it on a socket of its own, which blocks.
                    let named = tokio::task::spawn_blocking(move || {
                        options::without_greeting(addr, e, binary)
                    })
                    .await;
                    return Err(named.unwrap_or(DashboardError::Closed {
                        command: Some("connect"),
                    }));
                }
            };
            let known = self.options.version.is_some() || self.version.major != 0;
            if let Some(question) = rules::after_greeting(&greeting, known)? {
                let reply = self.exchange(question.name(), &question.line()?).await?;
                self.version = rules::version_from_reply(&reply)?;
            }
            Ok(())
        }
        .await;
        if result.is_err() {
            self.disconnect();
        }
        result
    }

    async fn exchange(
        &mut self,
        command: &'static str,
        line: &str,
    ) -> Result<String, DashboardError> {
        let stream = self.stream.as_mut().ok_or(DashboardError::Closed {
            command: Some(command),
        })?;
        self.in_flight = true;
        stream.write_all(line.as_bytes()).await?;
        let reply = self.read_line(command, self.options.timeout).await?;
        self.in_flight = false;
        Ok(reply)
    }

    async fn read_line(
        &mut self,
        command: &'static str,
        timeout: Duration,
    ) -> Result<String, DashboardError> {
        let read = async {
            let mut buf = [0u8; 512];
            loop {
                if let Some(line) = self.lines.next_line()? {
                    return Ok(line);
                }
                let stream = self.stream.as_mut().ok_or(DashboardError::Closed {
                    command: Some(command),
                })?;
                match stream.read(&mut buf).await? {
                    0 => {
                        return Err(DashboardError::Closed {
                            command: Some(command),
                        });
                    }
                    n => self.lines.extend(&buf[..n]),
                }
            }
        };
        tokio::time::timeout(timeout, read)
            .await
            .unwrap_or(Err(DashboardError::Timeout {
                command,
                after: timeout,
            }))
    }
}

macro_rules! async_methods {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $command:expr, $pattern:pat => $value:expr;)*) => {
        /// The typed commands, as [`Dashboard`](super::Dashboard)'s.
        impl AsyncDashboard {
            $(
                $(#[$doc])*
                ///
                /// # Errors
                /// As [`AsyncDashboard::execute`].
                #[allow(clippy::unused_unit)]
                pub async fn $name(&mut self, $($arg: $ty),*) -> Result<$ret, DashboardError> {
                    let command = $command;
                    match self.execute(&command).await? {
                        $pattern => Ok($value),
                        other => Err(DashboardError::Refused { command: command.name(), reply: other.to_string() }),
                    }
                }
            )*
        }
    };
}

typed_commands!(async_methods);
