//! The transport of the drivers over std's `TcpStream`: opening it with the options' socket
//! settings, what one read brought, and writing what the session has to transmit. No rule
//! of the conversation lives here.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::session::ConnectOptions;
use crate::session::{CLOSE_GRACE, Session};

/// Opens a connection to the first of `addrs` that answers, with the options' socket
/// settings.
pub(crate) fn open(
    addrs: &[SocketAddr],
    options: &ConnectOptions,
) -> Result<(TcpStream, SocketAddr), Error> {
    let mut last_error = None;
    let mut connected = None;
    for a in addrs {
        match TcpStream::connect_timeout(a, options.get_connect_timeout()) {
            Ok(stream) => {
                connected = Some((stream, *a));
                break;
            }
            Err(e) => last_error = Some(e),
        }
    }
    let Some((stream, peer)) = connected else {
        return Err(Error::connect_failed(addrs, last_error));
    };
    let link = |source| Error::Io {
        source,
        mid_frame: false,
    };
    stream.set_nodelay(true).map_err(link)?;
    stream
        .set_write_timeout(options.get_write_timeout())
        .map_err(link)?;
    stream
        .set_read_timeout(options.get_read_timeout())
        .map_err(link)?;
    Ok((stream, peer))
}

/// What one read of a socket came to, for every driver that reads a `TcpStream`.
pub(crate) enum Got {
    Bytes(usize),
    /// The read timeout passed first.
    Nothing,
    /// A signal interrupted the read: read again.
    Interrupted,
    /// The link is gone: end of stream, or an error.
    Lost(Error),
}

impl Got {
    /// `mid_frame`: whether the session holds part of a package (for the error).
    pub(crate) fn from(read: io::Result<usize>, mid_frame: bool) -> Got {
        match read {
            Ok(0) => Got::Lost(Error::Closed { mid_frame }),
            Ok(n) => Got::Bytes(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Got::Interrupted,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Got::Nothing
            }
            Err(source) => Got::Lost(Error::Io { source, mid_frame }),
        }
    }
}

/// Writes what `session` has to transmit to `stream`, whose write timeout is
/// `write_timeout`: for every driver that writes a `TcpStream`. A failed write loses the
/// link (part of a package may have gone out: the stream is out of step).
pub(crate) fn flush(
    session: &mut Session,
    stream: &mut TcpStream,
    write_timeout: Option<Duration>,
) -> Result<(), Error> {
    while let Some(bytes) = session.poll_transmit() {
        match stream.write(bytes) {
            Ok(0) => return Err(lose_link(session, io::ErrorKind::WriteZero.into())),
            Ok(n) => session.transmitted(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // The socket's write timeout (the OS says "would block").
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                session.handle_link_lost(Instant::now());
                return Err(Error::write_timed_out(write_timeout));
            }
            Err(source) => return Err(lose_link(session, source)),
        }
    }
    Ok(())
}

fn lose_link(session: &mut Session, source: io::Error) -> Error {
    session.handle_link_lost(Instant::now());
    Error::Io {
        source,
        mid_frame: false,
    }
}

/// Ends a link on both sides: sends this side's end, then reads and drops what the
/// controller still sends until it closes its side too, or [`CLOSE_GRACE`] passes. Any
/// error means the link is gone already, which is what closing asks for.
pub(crate) fn close(stream: &TcpStream) {
    let deadline = Instant::now() + CLOSE_GRACE;
    if stream.shutdown(Shutdown::Write).is_ok() {
        let mut scratch = [0u8; 4096];
        let mut reading = stream;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
                break;
            }
            match reading.read(&mut scratch) {
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The controller's end (0), the grace's end, or an error.
                _ => break,
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}
