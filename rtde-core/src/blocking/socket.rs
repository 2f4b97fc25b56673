//! The blocking client's reads and writes over its `TcpStream`: its read timeout follows
//! each call's deadline, and a latest-only receive drains what the socket holds.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use super::Client;
use crate::error::Error;
use crate::tcp::transport::{Got, flush};

/// The most non-blocking reads one latest-only receive makes.
const MAX_DRAIN_READS: usize = 64;

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
        let timeout = match deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(false);
                }
                Some(left)
            }
        };
        self.fill_within(timeout)
    }

    /// Reads more bytes into the session, waiting at most `timeout` (`None`: for good);
    /// `Ok(false)` when it passed first. A call's first wait takes its whole read timeout
    /// this way, with no clock to read.
    pub(super) fn fill_within(&mut self, timeout: Option<Duration>) -> Result<bool, Error> {
        let mid_frame = self.session.mid_frame();
        // Whole milliseconds: a wait that starts with the full timeout left needs no change.
        let timeout = timeout.map(ceil_to_millis);
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

/// `d` rounded up to whole milliseconds (without 128-bit division: this runs at every
/// package).
fn ceil_to_millis(d: Duration) -> Duration {
    let millis = d
        .as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(d.subsec_nanos().div_ceil(1_000_000)));
    Duration::from_millis(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_timeouts_round_up_to_whole_milliseconds() {
        let ms = Duration::from_millis;
        for (d, rounded) in [
            (Duration::ZERO, ms(0)),
            (Duration::from_nanos(1), ms(1)),
            (ms(1), ms(1)),
            (ms(1) + Duration::from_nanos(1), ms(2)),
            (Duration::from_nanos(1_999_999_999), ms(2000)),
            (Duration::from_secs(3600), ms(3_600_000)),
            (Duration::MAX, ms(u64::MAX)),
        ] {
            assert_eq!(ceil_to_millis(d), rounded, "{d:?}");
        }
    }
}
