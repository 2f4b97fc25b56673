//! What goes wrong on a primary interface connection.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use rtde_robot_proto::primary::DecodeError;

/// Why a primary interface client stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrimaryError {
    /// The address did not resolve, or no connection could be made.
    #[error("could not connect to the primary interface at {addr}")]
    Connect {
        /// The address, as given.
        addr: String,
        /// Why.
        source: io::Error,
    },
    /// Reading failed.
    #[error("the primary interface at {addr} failed")]
    Io {
        /// The controller.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// Nothing arrived for the timeout: a controller sends robot state every 100 ms.
    #[error("the primary interface at {addr} sent nothing for {timeout:?}")]
    Silent {
        /// The controller.
        addr: SocketAddr,
        /// How long the client waited.
        timeout: Duration,
    },
    /// The controller closed the connection.
    #[error("the primary interface at {addr} closed the connection")]
    Closed {
        /// The controller.
        addr: SocketAddr,
    },
    /// The first package was not the version message every connection starts with.
    #[error("the primary interface at {addr} did not start with its version message")]
    NoVersion {
        /// The controller.
        addr: SocketAddr,
    },
    /// A package size no package has: the stream cannot be followed.
    #[error("the primary interface at {addr} sent what cannot be decoded")]
    Decode {
        /// The controller.
        addr: SocketAddr,
        /// What was wrong.
        source: DecodeError,
    },
}

impl PrimaryError {
    /// The error a failed read is, by its kind.
    pub(crate) fn of_read(addr: SocketAddr, timeout: Duration, source: io::Error) -> Self {
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                PrimaryError::Silent { addr, timeout }
            }
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted => PrimaryError::Closed { addr },
            _ => PrimaryError::Io { addr, source },
        }
    }
}
