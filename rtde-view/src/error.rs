//! What can go wrong writing, reading or serving telemetry.

use std::io;
use std::net::SocketAddr;

/// Why a recording, a conversion or the view failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file or a socket failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The MCAP library refused a record, or a file is no MCAP it can read.
    #[error("the MCAP library failed")]
    Mcap(#[from] mcap::McapError),
    /// A data package does not fit the recipe (a payload of the wrong size).
    #[error("package {index} is {got} bytes; the recipe's packages are {expected}")]
    WrongSize {
        /// The package's number in the recording, from 0.
        index: u64,
        /// Its size.
        got: usize,
        /// The recipe's.
        expected: usize,
    },
    /// An MCAP file that is not an rtde recording this version reads: what is missing.
    #[error("not an rtde recording: {0}")]
    NotRtde(String),
    /// The background driver ended (the link is lost and was not brought back) while
    /// recording; the packages before are in the file, which is finished.
    #[error("the recording ended after {packages} packages")]
    Stream {
        /// The packages written.
        packages: u64,
        /// The driver's error.
        source: rtde_core::Error,
    },
    /// The connection to record from has no output recipe set up, or another one.
    #[error("cannot record this connection")]
    Setup(#[source] rtde_core::Error),
    /// The view could not listen on its address.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
}
