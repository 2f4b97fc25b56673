//! The reconnection round over a `TcpStream`: the transport of each attempt and the
//! backoff's wait; which attempts to make, and what to replay, is the session's. The
//! blocking client and the background driver's reader thread make the same round
//! ([`round`]); they differ only in how they hold the session through it ([`Hold`]).

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::transport;
use crate::error::Error;
use crate::session::{ConnectOptions, Done, ReconnectPolicy, Reconnection, Session};

/// How a driver holds its session and link through a round of attempts. The blocking
/// client has them for the whole call (`&mut self`); the background driver's reader thread
/// locks the session for each step only, so that the handles can ask how the round goes
/// while it connects, backs off, or waits for the handshake's replies.
pub(crate) trait Hold {
    /// Runs `step` on the session.
    fn with<T>(&mut self, step: impl FnOnce(&mut Session) -> T) -> T;

    /// Shuts the link in use down: the round begins, or an attempt failed.
    fn drop_link(&mut self);

    /// The attempt's transport is up: the session begins the handshake (and the replay)
    /// on it, driven until the session is done with them.
    ///
    /// # Errors
    /// The attempt's.
    fn handshake(&mut self, stream: TcpStream, peer: SocketAddr) -> Result<Done, Error>;

    /// Waits `wait` before the next attempt.
    ///
    /// # Errors
    /// [`Error::ConnectionLost`] when the driver was closed meanwhile: the round ends.
    fn back_off(&mut self, wait: Duration) -> Result<(), Error>;
}

/// One round of attempts under `policy` to connect again to `addrs`, whoever holds the
/// session: the session's steps (which attempts to make, what to replay, how long to back
/// off) and the transport of each attempt, opened without the session.
pub(crate) fn round(
    hold: &mut impl Hold,
    addrs: &[SocketAddr],
    options: &ConnectOptions,
    policy: ReconnectPolicy,
    cause: Option<Error>,
) -> Result<Reconnection, Error> {
    hold.with(|session| session.begin_reconnect(policy, cause, Instant::now()));
    hold.drop_link();
    loop {
        hold.with(Session::reconnect_attempt);
        let attempt =
            transport::open(addrs, options).and_then(|(stream, peer)| hold.handshake(stream, peer));
        let error = match attempt {
            Ok(Done::Reconnected(reconnection)) => return Ok(reconnection),
            Ok(_) => Error::Misuse("a reconnection finished as something else"),
            Err(error) => error,
        };
        hold.drop_link();
        let wait = hold.with(|session| session.attempt_failed(error, Instant::now()))?;
        hold.back_off(wait)?;
    }
}
