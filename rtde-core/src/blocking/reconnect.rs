//! The blocking client's reconnection: the round every driver over a `TcpStream` makes
//! ([`crate::tcp::reconnect`]), with the session held for the whole call.

use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::Client;
use crate::error::Error;
use crate::session::{Done, ReconnectPolicy, Reconnection, Session};
use crate::tcp::reconnect::{Hold, round};

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
    /// first package after it arrives ([`Event::PackagesLost`](crate::Event::PackagesLost),
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
        let (addrs, options) = (self.addrs.clone(), self.options.clone());
        round(self, &addrs, &options, policy, cause)
    }

    /// An attempt's transport is up: the session begins the handshake (and the replay) on
    /// it.
    fn connected(&mut self, stream: TcpStream, peer: SocketAddr) {
        self.stream = stream;
        self.peer = peer;
        self.socket_timeout = self.options.get_read_timeout();
        self.session.handle_connected(Instant::now());
    }
}

impl Hold for Client {
    fn with<T>(&mut self, step: impl FnOnce(&mut Session) -> T) -> T {
        step(&mut self.session)
    }

    fn drop_link(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    fn handshake(&mut self, stream: TcpStream, peer: SocketAddr) -> Result<Done, Error> {
        self.connected(stream, peer);
        self.drive()
    }

    fn back_off(&mut self, wait: Duration) -> Result<(), Error> {
        std::thread::sleep(wait);
        Ok(())
    }
}
