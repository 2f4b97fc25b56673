//! The blocking driver's transport: a `TcpStream`, its timeouts, and the bytes between it
//! and the session. No rule of the conversation lives here.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{Client, ConnectOptions};
use crate::error::Error;
use crate::session::Session;

/// The most non-blocking reads one latest-only receive makes.
const MAX_DRAIN_READS: usize = 64;

/// Opens a connection to the first of `addrs` that answers, with the options' socket
/// settings.
pub(super) fn open(
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
pub(super) enum Got {
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
    pub(super) fn from(read: io::Result<usize>, mid_frame: bool) -> Got {
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
pub(super) fn flush(
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

impl Client {
    /// Writes what the session has to transmit.
    pub(super) fn flush(&mut self) -> Result<(), Error> {
        flush(
            &mut self.session,
            &mut self.stream,
            self.options.get_write_timeout(),
        )
    }

    /// Reads more bytes into the session, until `deadline`; `Ok(false)` when it passed
    /// first.
    pub(super) fn fill(&mut self, deadline: Option<Instant>) -> Result<bool, Error> {
        let mid_frame = self.session.mid_frame();
        let timeout = match deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(false);
                }
                Some(ceil_to_millis(left))
            }
        };
        // Whole milliseconds: a wait that starts with the full timeout left needs no change.
        if timeout != self.socket_timeout {
            if let Err(source) = self.stream.set_read_timeout(timeout) {
                self.session.handle_link_lost(Instant::now());
                return Err(Error::Io { source, mid_frame });
            }
            self.socket_timeout = timeout;
        }
        loop {
            match Got::from(self.stream.read(self.session.receive_buffer()), mid_frame) {
                Got::Bytes(n) => {
                    self.session.handle_received(n, Instant::now());
                    return Ok(true);
                }
                Got::Nothing => return Ok(false),
                Got::Interrupted => {}
                Got::Lost(e) => {
                    self.session.handle_link_lost(Instant::now());
                    return Err(e);
                }
            }
        }
    }

    /// Reads what the socket holds without waiting (bounded: an unpaced peer cannot keep
    /// it going). Trouble is left for the next blocking read to find and report.
    pub(super) fn read_available(&mut self) {
        if self.stream.set_nonblocking(true).is_err() {
            return;
        }
        for _ in 0..MAX_DRAIN_READS {
            let spare = self.session.receive_buffer();
            if spare.is_empty() {
                break;
            }
            match self.stream.read(spare) {
                Ok(n) if n > 0 => self.session.handle_received(n, Instant::now()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // End of stream, nothing there (`WouldBlock`) or an error.
                _ => break,
            }
        }
        if self.stream.set_nonblocking(false).is_err() {
            // A socket stuck non-blocking would time out at once: lose it rather.
            self.session.handle_link_lost(Instant::now());
        }
    }
}

fn ceil_to_millis(d: Duration) -> Duration {
    let millis = d.as_nanos().div_ceil(1_000_000);
    Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX))
}
