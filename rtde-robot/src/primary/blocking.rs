//! The blocking primary interface client.

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_robot_proto::primary::{Decoded, Decoder, DecoderStats, RobotState};

use super::{DEFAULT_TIMEOUT, PrimaryError};

/// A primary (or secondary) interface connection, read package by package.
#[derive(Debug)]
pub struct PrimaryClient {
    stream: TcpStream,
    addr: SocketAddr,
    decoder: Decoder,
    version: ControllerVersion,
    timeout: Duration,
}

impl PrimaryClient {
    /// Connects and reads the version message every connection starts with, each within
    /// [`DEFAULT_TIMEOUT`](super::DEFAULT_TIMEOUT).
    ///
    /// # Errors
    /// [`PrimaryError::Connect`] when no address answers; the errors of
    /// [`recv`](Self::recv) while the version message is read, and
    /// [`PrimaryError::NoVersion`] when the first package is another.
    pub fn connect(addr: impl ToSocketAddrs + ToString) -> Result<Self, PrimaryError> {
        let connect_error = |source| PrimaryError::Connect {
            addr: addr.to_string(),
            source,
        };
        let mut last = std::io::Error::new(ErrorKind::NotFound, "no address");
        let addrs = addr.to_socket_addrs().map_err(connect_error)?;
        for candidate in addrs {
            match TcpStream::connect_timeout(&candidate, DEFAULT_TIMEOUT) {
                Ok(stream) => return Self::on(stream, candidate),
                Err(e) => last = e,
            }
        }
        Err(connect_error(last))
    }

    fn on(stream: TcpStream, addr: SocketAddr) -> Result<Self, PrimaryError> {
        let io = |source| PrimaryError::Io { addr, source };
        stream.set_read_timeout(Some(DEFAULT_TIMEOUT)).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let mut client = PrimaryClient {
            stream,
            addr,
            decoder: Decoder::new(),
            version: ControllerVersion::new(0, 0, 0, 0),
            timeout: DEFAULT_TIMEOUT,
        };
        client.version = super::first_version(addr, client.recv()?)?;
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

    /// How long [`recv`](Self::recv) waits for a package before
    /// [`PrimaryError::Silent`].
    ///
    /// # Errors
    /// [`PrimaryError::Io`] when the socket refuses the timeout (zero).
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), PrimaryError> {
        self.stream
            .set_read_timeout(Some(timeout))
            .map_err(|source| PrimaryError::Io {
                addr: self.addr,
                source,
            })?;
        self.timeout = timeout;
        Ok(())
    }

    /// The next package: a robot state message (the state so far, its sub-packages
    /// applied) or a robot message.
    ///
    /// # Errors
    /// [`PrimaryError::Silent`] when nothing arrives within the timeout,
    /// [`PrimaryError::Closed`] when the controller closes the connection,
    /// [`PrimaryError::Decode`] when the stream cannot be followed.
    pub fn recv(&mut self) -> Result<Decoded<'_>, PrimaryError> {
        let addr = self.addr;
        let decode = |source| PrimaryError::Decode { addr, source };
        while !self.decoder.ready().map_err(decode)? {
            match self.stream.read(self.decoder.read_buf()) {
                Ok(0) => return Err(PrimaryError::Closed { addr }),
                Ok(n) => self.decoder.filled(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(PrimaryError::of_read(addr, self.timeout, e)),
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
