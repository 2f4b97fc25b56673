//! Connecting again and replaying what the user negotiated.

use std::net::Shutdown;
use std::time::Instant;

use rtde_fields::Direction;

use super::events::{Event, Reconnection, State};
use super::gaps::GapCounter;
use super::options::ReconnectPolicy;
use super::{Client, ControllerText, Resume, decode_text, open, setup};
use crate::error::{Error, ErrorKind};
use crate::protocol::{ProtocolVersion, package_type as ty};

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
    /// The state goes [`State::Reconnecting`], [`State::Negotiating`], then back to what it
    /// was; after a failure it is [`State::Closed`], the recipes are kept, and a later call
    /// can try again. Packages lost while the link was down are counted when the first
    /// package after it arrives ([`Event::PackagesLost`], [`Stats::lost`](crate::Stats::lost)).
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
        let result = self.reconnect_round(policy);
        self.settle(result)
    }

    /// One round of attempts under `policy`.
    pub(super) fn reconnect_round(
        &mut self,
        policy: ReconnectPolicy,
    ) -> Result<Reconnection, Error> {
        let began = Instant::now();
        self.drop_link();
        let mut attempt = 1;
        loop {
            self.set_state(State::Reconnecting);
            match self.attempt() {
                Ok(()) => {
                    if let Some(resume) = &mut self.resume {
                        resume.resumed_at = Some(Instant::now());
                    }
                    self.stats.reconnects += 1;
                    let reconnection = Reconnection {
                        attempts: attempt,
                        took: began.elapsed(),
                        controller: self.controller,
                        protocol: self.protocol,
                    };
                    self.events.push(Event::Reconnected(reconnection));
                    self.set_state(self.settled_state());
                    return Ok(reconnection);
                }
                Err(error) => {
                    self.drop_link();
                    if attempt >= policy.get_attempts() || !worth_retrying(&error) {
                        return Err(error);
                    }
                    attempt += 1;
                    let wait = policy.backoff_before(attempt);
                    self.events.push(Event::AttemptFailed {
                        attempt: attempt - 1,
                        error,
                        retry_in: wait,
                    });
                    std::thread::sleep(wait);
                }
            }
        }
    }

    /// Shuts the connection down and remembers where streaming stood.
    fn drop_link(&mut self) {
        if self.running && self.resume.is_none() {
            // Kept from an earlier failed round: the last package received is older.
            self.resume = Some(Resume {
                timestamp: self.gaps.last(),
                at: self.last_data_at,
                controller: self.controller,
                resumed_at: None,
            });
        }
        self.keep_buffered_texts();
        let _ = self.stream.shutdown(Shutdown::Both);
        self.lost = true;
    }

    /// Queues the text messages among the whole packages still buffered: they were received,
    /// and the buffer is cleared for the next connection. (The data packages among them are
    /// counted in [`Stats::lost`](crate::Stats::lost), from the gap they leave.)
    fn keep_buffered_texts(&mut self) {
        let protocol = self.protocol;
        while let Ok(Some(frame)) = self.frames.next_frame() {
            if frame.kind == ty::TEXT_MESSAGE
                && let Ok(text) = decode_text(frame, protocol)
            {
                self.texts.push(ControllerText::from_message(&text));
            }
        }
    }

    /// One attempt: connect, handshake, check and replay.
    fn attempt(&mut self) -> Result<(), Error> {
        let (stream, peer) = open(&self.addrs, &self.options)?;
        self.stream = stream;
        self.peer = peer;
        self.socket_timeout = self.options.get_read_timeout();
        self.frames.clear();
        self.protocol = ProtocolVersion::V1;
        self.lost = false;
        self.set_state(State::Negotiating);
        self.handshake()?;
        self.replay()
    }

    /// Sets every recipe up again, and starts if the outputs were streaming.
    fn replay(&mut self) -> Result<(), Error> {
        // Every check first: nothing is sent for a controller that cannot take it all.
        let outputs = self
            .outputs
            .as_ref()
            .map(|o| (o.recipe.clone(), o.frequency));
        let mut frequency_field = None;
        if let Some((recipe, frequency)) = &outputs {
            let fields = setup::check_spec(&recipe.spec(Direction::Output))?;
            setup::check_available(Direction::Output, &fields, self.controller)?;
            frequency_field = self.frequency_field(*frequency)?;
        }
        let inputs: Vec<setup::SetUp> = self.inputs.iter().map(|i| i.recipe.clone()).collect();
        for recipe in &inputs {
            let fields = setup::check_spec(&recipe.spec(Direction::Input))?;
            setup::check_available(Direction::Input, &fields, self.controller)?;
        }

        if let Some((recipe, frequency)) = &outputs {
            let spec = recipe.spec(Direction::Output);
            let recipe_id = self.exchange_setup_outputs(&spec, frequency_field)?;
            if let Some(o) = &mut self.outputs {
                o.recipe_id = recipe_id;
            }
            // The loop rate may have changed; the last timestamp before the gap is in
            // `self.resume`, for the first package after it.
            self.gaps = GapCounter::new(&spec, *frequency, self.max_frequency());
        }
        for (i, recipe) in inputs.iter().enumerate() {
            let recipe_id = self.exchange_setup_inputs(&recipe.spec(Direction::Input))?;
            if let Some(set_up) = self.inputs.get_mut(i) {
                set_up.recipe_id = recipe_id;
            }
        }
        if self.running {
            self.exchange_start()?;
        }
        Ok(())
    }
}

/// Whether another attempt may succeed where this one failed.
fn worth_retrying(error: &Error) -> bool {
    match error {
        Error::StartRefused => true,
        // Inputs the controller still holds for the connection that was lost.
        Error::SetupRefused(refused) => refused.not_found().is_empty(),
        e => matches!(e.kind(), ErrorKind::Link | ErrorKind::Protocol),
    }
}
