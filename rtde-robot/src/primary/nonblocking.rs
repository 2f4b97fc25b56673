//! The primary interface client on tokio.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_robot_proto::primary::{Decoded, Decoder, DecoderStats, RobotState};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpStream, ToSocketAddrs};

use super::{DEFAULT_TIMEOUT, PrimaryError};

/// [`PrimaryClient`](super::PrimaryClient) on tokio: the same packages, awaited.
///
/// ```no_run
/// # async fn run() -> Result<(), rtde_robot::primary::PrimaryError> {
/// use rtde_robot::primary::{AsyncPrimaryClient, Decoded};
///
/// let mut primary = AsyncPrimaryClient::connect("192.168.1.10:30001").await?;
/// if let Decoded::State { state, .. } = primary.recv().await? {
///     println!("{:?}", state.robot_mode.map(|m| m.mode()));
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct AsyncPrimaryClient {
    stream: TcpStream,
    addr: SocketAddr,
    decoder: Decoder,
    version: ControllerVersion,
    timeout: Duration,
}

impl AsyncPrimaryClient {
    /// Connects and reads the version message, as
    /// [`PrimaryClient::connect`](super::PrimaryClient::connect).
    ///
    /// # Errors
    /// As [`PrimaryClient::connect`](super::PrimaryClient::connect).
    pub async fn connect(addr: impl ToSocketAddrs + ToString) -> Result<Self, PrimaryError> {
        let name = addr.to_string();
        let connect_error = |source| PrimaryError::Connect {
            addr: name.clone(),
            source,
        };
        let stream = match tokio::time::timeout(DEFAULT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(connect_error(e)),
            Err(_) => return Err(connect_error(ErrorKind::TimedOut.into())),
        };
        let addr = stream.peer_addr().map_err(connect_error)?;
        stream
            .set_nodelay(true)
            .map_err(|source| PrimaryError::Io { addr, source })?;
        let mut client = AsyncPrimaryClient {
            stream,
            addr,
            decoder: Decoder::new(),
            version: ControllerVersion::new(0, 0, 0, 0),
            timeout: DEFAULT_TIMEOUT,
        };
        client.version = super::first_version(addr, client.recv().await?)?;
        Ok(client)
    }

    /// The controller's software version, from its version message.
    #[must_use]
    pub fn version(&self) -> ControllerVersion {
        self.version
    }

    /// The controller's address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How long [`recv`](Self::recv) waits for a package.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The next package, as [`PrimaryClient::recv`](super::PrimaryClient::recv).
    ///
    /// # Errors
    /// As [`PrimaryClient::recv`](super::PrimaryClient::recv).
    pub async fn recv(&mut self) -> Result<Decoded<'_>, PrimaryError> {
        let addr = self.addr;
        let decode = |source| PrimaryError::Decode { addr, source };
        while !self.decoder.ready().map_err(decode)? {
            let read = self.stream.read(self.decoder.read_buf());
            match tokio::time::timeout(self.timeout, read).await {
                Ok(Ok(0)) => return Err(PrimaryError::Closed { addr }),
                Ok(Ok(n)) => self.decoder.filled(n),
                Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(PrimaryError::of_read(addr, self.timeout, e)),
                Err(_) => {
                    return Err(PrimaryError::Silent {
                        addr,
                        timeout: self.timeout,
                    });
                }
            }
        }
        self.decoder
            .poll()
            .map_err(decode)?
            .ok_or(PrimaryError::Closed { addr })
    }

    /// The robot state as the messages so far told it.
    #[must_use]
    pub fn state(&self) -> &RobotState {
        self.decoder.state()
    }

    /// What was decoded and passed over so far.
    #[must_use]
    pub fn stats(&self) -> DecoderStats {
        self.decoder.stats()
    }
}
