//! The blocking driver's reconnection: the transport of each attempt and the backoff's
//! sleep; which attempts to make, and what to replay, is the session's.

use std::net::Shutdown;
use std::time::Instant;

use super::{Client, transport};
use crate::error::Error;
use crate::session::{Done, ReconnectPolicy, Reconnection};

impl Client {
    /// Drops the connection (whether it still works or not), connects again to the same
    /// address and replays what was negotiated on it:
    ///
    /// 1. the handshake: protocol version (v2, else v1) and the controller's version, which
    ///    may differ from before (the controller was updated, or replaced);
    /// 2. the checks of [`Client::setup_outputs`] and [`Client::setup_inputs`] for every
    ///    recipe against that version, before anything is sent: a field the controller no
    ///    longer has fails with [`Error::Unavailable`] naming it (or, when the registry
    ///    cannot tell, the controller's `NOT_FOUND` in [`Error::SetupRefused`]);
    /// 3. SETUP_OUTPUTS with the same names and frequency, then every SETUP_INPUTS in the
    ///    order first sent; [`InputHandle`](crate::InputHandle)s stay valid, with the ids the
    ///    controller assigns now;
    /// 4. START, when outputs were streaming; a paused client stays paused.
    ///
    /// It makes the attempts of [`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)'s
    /// policy, or a single one without a policy. A failed attempt is retried when the
    /// cause may pass (a link or protocol error, an input `IN_USE` — the controller may not
    /// have released the old connection's inputs yet — or a refused START); a controller
    /// that lacks a field, or cannot stream at the frequency, ends the round at once.
    ///
    /// The state goes [`State::Reconnecting`](crate::State::Reconnecting),
    /// [`State::Negotiating`](crate::State::Negotiating), then back to what it was; after a
    /// failure it is [`State::Closed`](crate::State::Closed), the recipes are kept, and a
    /// later call can try again. Packages lost while the link was down are counted when the
    /// first package after it arrives ([`Event::PackagesLost`](crate::client::Event::PackagesLost),
    /// [`Stats::lost`](crate::Stats::lost)).
    ///
    /// # Errors
    /// The last attempt's error: a link error, [`Error::ProtocolRefused`],
    /// [`Error::Unavailable`], [`Error::FrequencyTooHigh`], [`Error::FrequencyNotInV1`],
    /// [`Error::SetupRefused`], [`Error::SetupReply`], [`Error::StartRefused`].
    pub fn reconnect(&mut self) -> Result<Reconnection, Error> {
        let policy = self
            .options
            .get_reconnect()
            .unwrap_or_else(ReconnectPolicy::once);
        let result = self.reconnect_round(policy, None);
        self.session.settle(result)
    }

    /// One round of attempts under `policy`; `cause` is the error that lost the link.
    pub(super) fn reconnect_round(
        &mut self,
        policy: ReconnectPolicy,
        cause: Option<Error>,
    ) -> Result<Reconnection, Error> {
        self.session.begin_reconnect(policy, cause, Instant::now());
        let _ = self.stream.shutdown(Shutdown::Both);
        loop {
            self.session.reconnect_attempt();
            let error = match self.attempt() {
                Ok(Done::Reconnected(reconnection)) => return Ok(reconnection),
                Ok(_) => Error::Misuse("a reconnection finished as something else"),
                Err(error) => error,
            };
            let _ = self.stream.shutdown(Shutdown::Both);
            let wait = self.session.attempt_failed(error, Instant::now())?;
            std::thread::sleep(wait);
        }
    }

    /// One attempt: connect, then the session's handshake and replay.
    fn attempt(&mut self) -> Result<Done, Error> {
        let (stream, peer) = transport::open(&self.addrs, &self.options)?;
        self.stream = stream;
        self.peer = peer;
        self.socket_timeout = self.options.get_read_timeout();
        self.session.handle_connected(Instant::now());
        self.drive()
    }
}
