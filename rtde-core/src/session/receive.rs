//! The receive path: bytes in, each package parsed once and given its meaning (a reply to
//! the request in flight, a data package to deliver or count, a text message to keep).

use std::ops::Range;
use std::time::Instant;

use rtde_fields::{ControllerVersion, Direction};

use super::replay::Replay;
use super::setup::{self, SetUp};
use super::{
    ControllerText, Conversation, Done, Error, GapCounter, InputHandle, Inputs, Outputs, Pending,
    Purpose, Ready, Request, Session, State,
};
use crate::protocol::{
    ControllerMessage, DecodeError, DecodeErrorKind, Frame, MessageLevel, ProtocolVersion,
    TextMessage, package_type as ty,
};

/// What one package led to.
enum Next {
    /// Nothing for the driver; take the next package.
    Continue,
    Ready(Ready),
    /// A data package proved a START whose reply is still to come: the START is done, and
    /// the package goes back to the front, to be delivered by the next poll.
    PutBack,
}

/// What a reply does to the chain of requests it answers.
enum Step {
    /// The chain goes on: the next request of a negotiation or of a replay.
    Next(Next),
    /// The chain ends with this.
    Finish(Result<Done, Error>),
}

impl Session {
    /// Space to read the transport's bytes into; report how many arrived with
    /// [`Session::handle_received`]. Never empty while the buffered bytes hold no whole
    /// package. Ends the validity of [`Session::data`].
    pub fn receive_buffer(&mut self) -> &mut [u8] {
        self.c.delivered = None;
        self.rx.spare()
    }

    /// `n` bytes were read into [`Session::receive_buffer`] at `now`.
    pub fn handle_received(&mut self, n: usize, now: Instant) {
        self.c.now = now;
        self.rx.commit(n);
    }

    /// Copies received bytes into the session, as many as fit, and returns how many: all of
    /// them unless whole packages fill the buffer (poll them, then hand in the rest). For
    /// tests and drivers that read into buffers of their own.
    pub fn handle_bytes(&mut self, mut bytes: &[u8], now: Instant) -> usize {
        self.c.now = now;
        let mut taken = 0;
        while !bytes.is_empty() {
            let spare = self.receive_buffer();
            let n = spare.len().min(bytes.len());
            if n == 0 {
                break;
            }
            spare[..n].copy_from_slice(&bytes[..n]);
            self.rx.commit(n);
            bytes = &bytes[n..];
            taken += n;
        }
        taken
    }

    /// Time passed: a reply overdue fails the request (and loses the link: requests and
    /// replies are out of step), and the staleness deadline may report.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.c.now = now;
        let overdue = self
            .c
            .pending
            .as_ref()
            .and_then(|p| p.deadline)
            .is_some_and(|d| now >= d);
        if overdue && let Some(pending) = self.c.abandon() {
            self.c.lost = true;
            self.c.completed = Some(Err(Error::Timeout {
                after: self.c.reply_timeout.unwrap_or_default(),
                waiting_for: pending.request.reply_kind(),
                mid_frame: !self.rx.buffered().is_empty(),
            }));
        }
        let active = self.c.running && !self.c.lost;
        if let Some(silent_for) = self.c.staleness.check(now, active) {
            self.c.events.push(super::Event::Stale { silent_for });
        }
    }

    /// The next thing the driver or the application must know, or `None` when more bytes
    /// (or time) are needed. Every output package comes as [`Ready::Data`], in order.
    pub fn poll_event(&mut self) -> Option<Ready> {
        let ready = self.next_ready();
        if matches!(ready, Some(Ready::Data)) {
            self.c.stats.received += 1;
        }
        ready
    }

    /// As [`Session::poll_event`], but of the data packages buffered only the newest comes
    /// as [`Ready::Data`]; the ones it replaced are counted in
    /// [`Stats::superseded`](super::Stats::superseded). Anything else behind the newest
    /// (a package that does not fit, say) comes at the next poll.
    pub fn poll_latest(&mut self) -> Option<Ready> {
        let mut have = false;
        loop {
            match self.next_ready() {
                Some(Ready::Data) => {
                    if have {
                        self.c.stats.superseded += 1;
                    }
                    have = true;
                }
                Some(other) => {
                    if have {
                        self.c.deferred = Some(other);
                        break;
                    }
                    return Some(other);
                }
                None => break,
            }
        }
        if have {
            self.c.stats.received += 1;
            Some(Ready::Data)
        } else {
            None
        }
    }

    /// The values of the last [`Ready::Data`], in recipe order, big-endian, borrowed from the
    /// receive buffer: valid until the next [`Session::receive_buffer`] or `handle_*` call
    /// (empty after it).
    #[must_use]
    pub fn data(&self) -> &[u8] {
        match &self.c.delivered {
            Some(range) => self.rx.bytes_at(range.clone()),
            None => &[],
        }
    }

    fn next_ready(&mut self) -> Option<Ready> {
        // Looked at before they are taken: taking moves the whole (large) value even when
        // there is none, at every package.
        if self.c.completed.is_some() {
            return self.c.completed.take().map(Ready::Done);
        }
        if self.c.deferred.is_some() {
            return self.c.deferred.take();
        }
        if let Some(silent_for) = self.c.staleness.take_report() {
            return Some(Ready::Stale { silent_for });
        }
        if self.c.lost {
            return None;
        }
        loop {
            if let Some(ready) = self.take_data_of_the_recipe() {
                return Some(ready);
            }
            let (kind, range) = match self.rx.take_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return None,
                // A bad header: where the next package starts is unknowable.
                Err(e) => return Some(self.c.broken(e.into())),
            };
            let payload = self.rx.bytes_at(range.clone());
            match self.c.on_frame(kind, payload, &range) {
                Next::Continue => {}
                Next::Ready(ready) => return Some(ready),
                Next::PutBack => {
                    self.rx.put_back(&range);
                    return self.c.completed.take().map(Ready::Done);
                }
            }
        }
    }

    /// A data package of the output recipe at the front of the buffer, while the stream
    /// runs and no reply is due, taken by its header alone: the general way below (frame
    /// parse, message decode, recipe id and length checks) would take it the same way, and
    /// nearly every package of a connection is one.
    #[inline]
    fn take_data_of_the_recipe(&mut self) -> Option<Ready> {
        let c = &self.c;
        if !c.running || c.pending.is_some() {
            return None;
        }
        let outputs = c.outputs.as_ref()?;
        let (header, frequency) = (outputs.header?, outputs.frequency);
        let range = self.rx.take_data(&header)?;
        self.c.observe(self.rx.bytes_at(range.clone()), frequency);
        self.c.delivered = Some(range);
        Some(Ready::Data)
    }

    /// Queues the text messages among the whole packages still buffered: they were
    /// received, and the buffer is cleared for the next link. (The data packages among them
    /// are counted in [`Stats::lost`](super::Stats::lost), from the gap they leave.)
    pub(super) fn keep_buffered_texts(&mut self) {
        while let Ok(Some((kind, range))) = self.rx.take_frame() {
            if kind == ty::TEXT_MESSAGE
                && let Ok(text) =
                    decode_text(self.rx.bytes_at(range), self.c.protocol, self.c.negotiated)
            {
                self.c.texts.push(ControllerText::from_message(&text));
            }
        }
    }
}

impl Request {
    /// The package type of the reply.
    pub(super) fn reply_kind(&self) -> u8 {
        match self {
            Request::Negotiate(_) => ty::REQUEST_PROTOCOL_VERSION,
            Request::QueryVersion => ty::GET_URCONTROL_VERSION,
            Request::SetupOutputs { .. } => ty::SETUP_OUTPUTS,
            Request::SetupInputs { .. } => ty::SETUP_INPUTS,
            Request::Start => ty::START,
            Request::Pause => ty::PAUSE,
        }
    }
}

impl Conversation {
    /// The stream cannot go on: the link is lost, and the request in flight with it.
    fn broken(&mut self, error: Error) -> Ready {
        self.lost = true;
        if self.abandon().is_some() {
            Ready::Done(Err(error))
        } else {
            Ready::Broken(error)
        }
    }

    /// A package that makes no sense here: while a reply is due, requests and replies are
    /// out of step (the link is lost); otherwise it is reported and skipped.
    fn fail(&mut self, error: Error) -> Ready {
        if self.pending.is_some() {
            self.broken(error)
        } else {
            Ready::Rejected(error)
        }
    }

    fn on_frame(&mut self, kind: u8, payload: &[u8], range: &Range<usize>) -> Next {
        match kind {
            ty::TEXT_MESSAGE => match decode_text(payload, self.protocol, self.negotiated) {
                Ok(text) => {
                    self.texts.push(ControllerText::from_message(&text));
                    Next::Continue
                }
                Err(e) => Next::Ready(self.fail(e.into())),
            },
            ty::DATA_PACKAGE => self.on_data(payload, range),
            // The RTDE guide says nothing of package types it does not define: one a newer
            // controller sends is skipped and counted, not a reason to drop the link.
            other if !ty::is_known(other) => {
                self.stats.unknown_packages += 1;
                Next::Continue
            }
            _ => {
                let expected = self.pending.as_ref().map(|p| p.request.reply_kind());
                if expected == Some(kind) {
                    let Some(pending) = self.pending.take() else {
                        return Next::Continue;
                    };
                    let frame = Frame { kind, payload };
                    match ControllerMessage::decode(frame, self.protocol) {
                        Ok(msg) => self.on_reply(pending, msg),
                        Err(e) => {
                            // The reply is gone: whatever the request did is unknown.
                            self.pending = Some(pending);
                            self.abandon();
                            self.lost = true;
                            Next::Ready(Ready::Done(Err(e.into())))
                        }
                    }
                } else if expected.is_none() && kind == ty::START && self.late_start_reply {
                    // The reply to a START that a data package already proved.
                    self.late_start_reply = false;
                    match ControllerMessage::decode(Frame { kind, payload }, self.protocol) {
                        Ok(ControllerMessage::StartReply { accepted: true }) => Next::Continue,
                        _ => Next::Ready(Ready::Rejected(Error::Unexpected {
                            package_type: kind,
                            waiting_for: ty::DATA_PACKAGE,
                        })),
                    }
                } else {
                    Next::Ready(self.fail(Error::Unexpected {
                        package_type: kind,
                        waiting_for: expected.unwrap_or(ty::DATA_PACKAGE),
                    }))
                }
            }
        }
    }

    fn on_data(&mut self, payload: &[u8], range: &Range<usize>) -> Next {
        if let Some(Pending {
            request: Request::Start,
            ..
        }) = &self.pending
            && let Some(pending) = self.pending.take()
        {
            // Real controllers on loaded hosts send the first package before the START
            // reply: it proves the START, and it is the user's first package.
            self.late_start_reply = true;
            self.completed = Some(self.started(pending.purpose));
            return Next::PutBack;
        }
        let Some(outputs) = self.outputs.as_ref().filter(|_| self.running) else {
            self.stats.discarded += 1;
            return Next::Continue;
        };
        if self.pending.is_some() {
            self.stats.discarded += 1;
            return Next::Continue;
        }
        let frame = Frame {
            kind: ty::DATA_PACKAGE,
            payload,
        };
        let (recipe_id, values) = match ControllerMessage::decode(frame, self.protocol) {
            Ok(ControllerMessage::DataPackage { recipe_id, payload }) => (recipe_id, payload),
            Ok(other) => {
                return Next::Ready(Ready::Rejected(Error::Unexpected {
                    package_type: other.package_type(),
                    waiting_for: ty::DATA_PACKAGE,
                }));
            }
            Err(e) => return Next::Ready(Ready::Rejected(e.into())),
        };
        if recipe_id != outputs.recipe_id {
            return Next::Ready(Ready::Rejected(Error::WrongRecipeId {
                expected: outputs.recipe_id,
                found: recipe_id,
            }));
        }
        if values.len() != outputs.recipe.payload_size {
            return Next::Ready(Ready::Rejected(Error::WrongLength {
                expected: outputs.recipe.payload_size,
                found: values.len(),
            }));
        }
        self.observe(values, outputs.frequency);
        self.delivered = Some(range.end - values.len()..range.end);
        Next::Ready(Ready::Data)
    }

    /// Counts what a package that fits tells: packages skipped before it, or lost across a
    /// reconnection.
    fn observe(&mut self, values: &[u8], frequency: f64) {
        let now = self.now;
        let controller = self.controller;
        let lost = self.resume.take().map(|resume| {
            let counted = resume
                .timestamp
                .filter(|_| resume.controller == controller)
                .and_then(|t| self.gaps.lost_since(t, values, resume.min_clock_advance()));
            match counted {
                Some(count) => (count, false),
                None => (
                    super::replay::estimate_lost(resume.at, now, self.output_frequency(frequency)),
                    true,
                ),
            }
        });
        match lost {
            Some((count, estimated)) => {
                self.stats.lost += count;
                self.events
                    .push(super::Event::PackagesLost { count, estimated });
            }
            None => self.stats.skipped += self.gaps.observe(values),
        }
        self.last_data_at = Some(now);
        if let Some(silent_for) = self.staleness.fed(now) {
            self.events.push(super::Event::Fresh { silent_for });
        }
    }

    fn on_reply(&mut self, pending: Pending, msg: ControllerMessage<'_>) -> Next {
        let purpose = pending.purpose;
        let step = match (pending.request, msg) {
            (Request::Negotiate(version), ControllerMessage::ProtocolVersionReply { accepted }) => {
                self.on_negotiated(version, accepted, purpose)
            }
            (Request::QueryVersion, ControllerMessage::UrcontrolVersion(version)) => {
                self.on_controller_version(version, purpose)
            }
            (
                Request::SetupOutputs {
                    recipe,
                    frequency,
                    replay,
                    texts_before,
                },
                ControllerMessage::SetupOutputsReply { recipe_id, types },
            ) => self.on_outputs_reply(recipe, frequency, replay, texts_before, recipe_id, types),
            (
                Request::SetupInputs {
                    recipe,
                    replay,
                    texts_before,
                },
                ControllerMessage::SetupInputsReply { recipe_id, types },
            ) => self.on_inputs_reply(recipe, replay, texts_before, recipe_id, types),
            (Request::Start, ControllerMessage::StartReply { accepted }) => {
                Step::Finish(if accepted {
                    self.started(purpose)
                } else {
                    Err(Error::StartRefused)
                })
            }
            (Request::Pause, ControllerMessage::PauseReply { accepted }) => {
                Step::Finish(self.on_pause_reply(accepted))
            }
            (request, other) => {
                self.lost = true;
                Step::Finish(Err(Error::Unexpected {
                    package_type: other.package_type(),
                    waiting_for: request.reply_kind(),
                }))
            }
        };
        match step {
            Step::Next(next) => next,
            Step::Finish(result) => self.finish(purpose, result),
        }
    }

    /// The controller took or refused protocol `version`: V2 refused, V1 is asked next.
    fn on_negotiated(
        &mut self,
        version: ProtocolVersion,
        accepted: bool,
        purpose: Purpose,
    ) -> Step {
        if accepted {
            // Everything the controller sends from here on is in this version.
            self.protocol = version;
            self.negotiated = true;
            self.request(Request::QueryVersion, purpose);
            return Step::Next(Next::Continue);
        }
        if version == ProtocolVersion::V2 {
            self.request(Request::Negotiate(ProtocolVersion::V1), purpose);
            return Step::Next(Next::Continue);
        }
        Step::Finish(Err(Error::ProtocolRefused))
    }

    /// The handshake's last reply; on a reconnection, the replay of the setup begins.
    fn on_controller_version(&mut self, version: ControllerVersion, purpose: Purpose) -> Step {
        self.controller = version;
        if purpose == Purpose::Reconnect {
            return match self.begin_replay() {
                Ok(()) => Step::Next(self.next_replay_step()),
                Err(e) => Step::Finish(Err(e)),
            };
        }
        self.connected_once = true;
        self.set_state(State::Connected);
        Step::Finish(Ok(Done::Connected))
    }

    /// The output recipe is set up, or refused; a replayed one keeps its place.
    fn on_outputs_reply(
        &mut self,
        recipe: SetUp,
        frequency: f64,
        replay: bool,
        texts_before: u64,
        recipe_id: Option<u8>,
        types: &str,
    ) -> Step {
        let spec = recipe.spec(Direction::Output);
        if let Err(e) = setup::check_reply(&spec, recipe_id, types) {
            return Step::Finish(Err(self.with_refusal_reason(e, texts_before)));
        }
        // The loop rate may have changed on a reconnection; the last
        // timestamp before the gap is in `resume`.
        self.gaps = GapCounter::new(&spec, frequency, self.max_frequency());
        if replay {
            if let Some(o) = &mut self.outputs {
                o.reassigned(recipe_id, self.protocol);
            }
            return Step::Next(self.next_replay_step());
        }
        self.outputs = Some(Outputs::new(recipe_id, recipe, frequency, self.protocol));
        Step::Finish(Ok(Done::OutputsSetUp))
    }

    /// An input recipe is set up, or refused; a replayed one keeps its handle.
    fn on_inputs_reply(
        &mut self,
        recipe: SetUp,
        replay: Option<usize>,
        texts_before: u64,
        recipe_id: u8,
        types: &str,
    ) -> Step {
        let spec = recipe.spec(Direction::Input);
        if let Err(e) = setup::check_reply(&spec, Some(recipe_id), types) {
            return Step::Finish(Err(self.with_refusal_reason(e, texts_before)));
        }
        if let Some(index) = replay {
            if let Some(set_up) = self.inputs.get_mut(index) {
                set_up.recipe_id = recipe_id;
            }
            return Step::Next(self.next_replay_step());
        }
        self.inputs.push(Inputs { recipe_id, recipe });
        Step::Finish(Ok(Done::InputsSetUp(InputHandle {
            session: self.serial,
            index: self.inputs.len() - 1,
        })))
    }

    fn on_pause_reply(&mut self, accepted: bool) -> Result<Done, Error> {
        if !accepted {
            return Err(Error::PauseRefused);
        }
        self.running = false;
        self.resume = None;
        self.set_state(State::Paused);
        Ok(Done::Paused)
    }

    /// A chain of requests ended. A handshake or a replay that failed leaves the link to be
    /// dropped; a command the controller refused leaves it usable.
    fn finish(&mut self, purpose: Purpose, result: Result<Done, Error>) -> Next {
        if result.is_err() && purpose != Purpose::Command {
            self.lost = true;
        }
        self.replay.clear();
        Next::Ready(Ready::Done(result))
    }

    /// START was accepted (by its reply, or by a data package that came first).
    fn started(&mut self, purpose: Purpose) -> Result<Done, Error> {
        self.running = true;
        self.started = true;
        self.staleness.started(self.now);
        if purpose == Purpose::Reconnect {
            return Ok(self.reconnected());
        }
        // Gap counting restarts: the time spent paused is no gap.
        self.gaps.restart();
        self.resume = None;
        self.set_state(State::Running);
        Ok(Done::Started)
    }

    /// Sets up the next recipe of a reconnection's replay, or ends it.
    fn next_replay_step(&mut self) -> Next {
        let texts_before = self.texts.pushed();
        let request = match self.replay.pop_front() {
            Some(Replay::Outputs) => match &self.outputs {
                Some(o) => Request::SetupOutputs {
                    recipe: o.recipe.clone(),
                    frequency: o.frequency,
                    replay: true,
                    texts_before,
                },
                None => return self.next_replay_step(),
            },
            Some(Replay::Inputs(index)) => match self.inputs.get(index) {
                Some(i) => Request::SetupInputs {
                    recipe: i.recipe.clone(),
                    replay: Some(index),
                    texts_before,
                },
                None => return self.next_replay_step(),
            },
            Some(Replay::Start) => Request::Start,
            None => {
                let done = self.reconnected();
                return Next::Ready(Ready::Done(Ok(done)));
            }
        };
        self.request(request, Purpose::Reconnect);
        Next::Continue
    }

    /// A refusal carries the controller's own words when it sent a text message while the
    /// request was pending (controllers explain whole-request refusals that way).
    fn with_refusal_reason(&self, error: Error, texts_before: u64) -> Error {
        match error {
            Error::SetupRefused(mut refused) => {
                refused.reason = self
                    .texts
                    .newest_since(texts_before)
                    .map(|t| t.message.clone());
                Error::SetupRefused(refused)
            }
            other => other,
        }
    }
}

/// Decodes a text message. Before the protocol version is settled, a controller may send
/// either layout: a message that reads exactly as v2 (lengths that add up, a known level)
/// is taken as v2, because read as v1 its length byte becomes the level and the text is
/// garbled. After that, the connection's version, else the other: a message is never worth
/// losing a connection.
pub(super) fn decode_text(
    payload: &[u8],
    protocol: ProtocolVersion,
    negotiated: bool,
) -> Result<TextMessage<'_>, DecodeError> {
    let frame = Frame {
        kind: ty::TEXT_MESSAGE,
        payload,
    };
    let as_text = |version| match ControllerMessage::decode(frame, version) {
        Ok(ControllerMessage::TextMessage(t)) => Ok(t),
        Ok(_) => Err(DecodeError::new(
            ty::TEXT_MESSAGE,
            0,
            DecodeErrorKind::Unexpected("a TEXT_MESSAGE that is no text message"),
        )),
        Err(e) => Err(e),
    };
    if !negotiated
        && let Ok(t) = as_text(ProtocolVersion::V2)
        && !matches!(t.level, MessageLevel::Unknown(_))
    {
        return Ok(t);
    }
    let other = match protocol {
        ProtocolVersion::V1 => ProtocolVersion::V2,
        ProtocolVersion::V2 => ProtocolVersion::V1,
    };
    as_text(protocol).or_else(|e| as_text(other).map_err(|_| e))
}
