//! How a Dashboard client connects, waits and recovers; shared by both drivers.

use std::time::Duration;

use rtde_core::fields::ControllerVersion;

use rtde_robot_proto::dashboard::{GREETING_WAIT, PROBE_WAIT, Stranger, rtde_probe};

use super::DashboardError;

/// Options of [`Dashboard::connect`](super::Dashboard::connect) and its async twin.
///
/// ```
/// use std::time::Duration;
/// use rtde_robot::dashboard::DashboardOptions;
///
/// let options = DashboardOptions::new()
///     .timeout(Duration::from_secs(2))
///     .reconnect(false)
///     .controller_version("5.21.0".parse().unwrap());
/// # drop(options);
/// ```
#[derive(Clone, Debug)]
pub struct DashboardOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) timeout: Duration,
    pub(crate) reconnect: bool,
    pub(crate) version: Option<ControllerVersion>,
    pub(crate) rtde_port: Option<u16>,
}

impl Default for DashboardOptions {
    fn default() -> Self {
        DashboardOptions {
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(5),
            reconnect: true,
            version: None,
            rtde_port: Some(rtde_core::RTDE_PORT),
        }
    }
}

impl DashboardOptions {
    /// The defaults: 5 s to connect and to wait for each reply, reconnection on, the
    /// version asked with `PolyscopeVersion`, and a refused connection explained by asking
    /// the controller's RTDE port (30004) for its version.
    #[must_use]
    pub fn new() -> Self {
        DashboardOptions::default()
    }

    /// How long to wait for the connection. The server's greeting is waited for 750 ms at
    /// most (less if this is shorter): a Dashboard server greets as it accepts, and a port
    /// that does not is named for what it is (`DashboardError::NotADashboardServer`).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long to wait for each reply. A command that times out drops the connection
    /// (its late reply must not be read as the next command's).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether a command on a dropped connection (after a timeout, a `quit`, or the
    /// server closing it) first connects again; on by default. A command is never sent
    /// twice: one whose reply was lost is reported, not repeated.
    #[must_use]
    pub fn reconnect(mut self, reconnect: bool) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Declares the controller's version instead of asking it with `PolyscopeVersion` on
    /// connect; commands this version lacks are refused before they are sent.
    #[must_use]
    pub fn controller_version(mut self, version: ControllerVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// The RTDE port asked for the controller's version when the Dashboard port refuses
    /// the connection, so that a PolyScope X controller is named as such; `None` asks
    /// nothing. 30004 by default.
    #[must_use]
    pub fn rtde_port(mut self, port: Option<u16>) -> Self {
        self.rtde_port = port;
        self
    }
}

/// How long to wait for the greeting: [`GREETING_WAIT`], or the connect timeout if shorter.
pub(crate) fn greeting_wait(options: &DashboardOptions) -> Duration {
    GREETING_WAIT.min(options.connect_timeout)
}

/// The error for a greeting that did not come: what answered instead, named. Binary bytes
/// are one of the controller's binary interfaces; silence is asked whether it is RTDE, on a
/// connection of its own (blocking, [`PROBE_WAIT`] at most).
pub(crate) fn without_greeting(
    addr: std::net::SocketAddr,
    error: DashboardError,
    binary: bool,
) -> DashboardError {
    let found = match error {
        DashboardError::BadLine { .. } if binary => Stranger::RobotInterface,
        DashboardError::Timeout { .. } => probe_rtde(addr),
        other => return other,
    };
    DashboardError::NotADashboardServer {
        addr: addr.to_string(),
        found,
    }
}

fn probe_rtde(addr: std::net::SocketAddr) -> Stranger {
    use std::io::{Read, Write};
    let deadline = std::time::Instant::now() + PROBE_WAIT;
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, PROBE_WAIT) else {
        return Stranger::Silent;
    };
    if stream.write_all(&rtde_probe()).is_err() {
        return Stranger::Silent;
    }
    let (mut reply, mut got) = ([0u8; 64], 0);
    while got < reply.len() && Stranger::of_probe_reply(&reply[..got]).is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut reply[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    Stranger::after_probe(&reply[..got])
}

/// The error for a refused connection: PolyScope X by name when its RTDE port says so.
pub(crate) fn explain_refusal(
    addr: std::net::SocketAddr,
    source: std::io::Error,
    options: &DashboardOptions,
) -> DashboardError {
    if source.kind() == std::io::ErrorKind::ConnectionRefused
        && let Some(port) = options.rtde_port
    {
        let rtde = std::net::SocketAddr::new(addr.ip(), port);
        let probe = rtde_core::ConnectOptions::new().connect_timeout(options.connect_timeout);
        if let Ok(client) = rtde_core::Client::connect(rtde, probe) {
            let version = client.controller_version();
            let _ = client.close();
            if version.generation() == Some(rtde_core::fields::Generation::PolyScopeX) {
                return DashboardError::PolyScopeX { version };
            }
        }
    }
    DashboardError::Connect {
        addr: addr.to_string(),
        source,
    }
}
