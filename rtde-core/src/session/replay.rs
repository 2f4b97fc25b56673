//! Reconnection: where streaming stood when the link was lost, the round of attempts, and
//! the replay of everything negotiated on the new link.

use std::time::{Duration, Instant};

use rtde_fields::{ControllerVersion, Direction};

use super::{
    Conversation, Error, Event, ReconnectPolicy, Reconnection, Session, State, gaps, setup,
};
use crate::error::ErrorKind;

/// One step of a reconnection's replay, in the order first set up.
#[derive(Clone, Copy, Debug)]
pub(super) enum Replay {
    Outputs,
    Inputs(usize),
    Start,
}

/// Where streaming stood when the link was lost: to count what the gap cost.
#[derive(Clone, Copy, Debug)]
pub(super) struct Resume {
    /// The `timestamp` of the last package received.
    pub(super) timestamp: Option<f64>,
    /// When the last package was received.
    pub(super) at: Option<Instant>,
    /// The controller's version then: another version means a restarted controller, whose
    /// clock (and `timestamp`) started again.
    pub(super) controller: ControllerVersion,
    /// When the link came back.
    pub(super) resumed_at: Option<Instant>,
}

impl Resume {
    /// How far the controller's `timestamp` must have advanced across the gap for it to be
    /// trusted: the time the link was down as this side's clock saw it, less a tolerance for
    /// the two clocks' jitter. A clock that advanced less restarted.
    pub(super) fn min_clock_advance(&self) -> f64 {
        const TOLERANCE: f64 = 0.25;
        match (self.at, self.resumed_at) {
            (Some(at), Some(resumed)) => {
                (resumed.saturating_duration_since(at).as_secs_f64() - TOLERANCE).max(0.0)
            }
            _ => 0.0,
        }
    }
}

/// A round of reconnection attempts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    began: Instant,
    attempts: u32,
    policy: ReconnectPolicy,
}

/// Whether another attempt may succeed where this one failed: a link or protocol error, an
/// input `IN_USE` (the controller may not have released the lost connection's inputs yet),
/// a refused START. A controller that lacks a field, or cannot stream at the frequency,
/// will not change its mind.
#[must_use]
pub fn worth_retrying(error: &Error) -> bool {
    match error {
        Error::StartRefused => true,
        Error::SetupRefused(refused) => refused.not_found().is_empty(),
        e => matches!(e.kind(), ErrorKind::Link | ErrorKind::Protocol),
    }
}

/// The packages a stream at `frequency` sent between the last one received before a
/// reconnection (at `last`) and the first one after it (at `now`), from the clock.
pub(super) fn estimate_lost(last: Option<Instant>, now: Instant, frequency: f64) -> u64 {
    let Some(last) = last else {
        return 0;
    };
    let periods = (now.saturating_duration_since(last).as_secs_f64() * frequency).round();
    gaps::whole_packages(periods - 1.0)
}

impl Session {
    /// Begins a round of reconnection attempts under `policy` (the options' policy, or
    /// [`ReconnectPolicy::once`] for a manual reconnection): the link is dropped, and
    /// `cause` (the error that lost it, when reconnecting automatically) becomes an
    /// [`Event::LinkLost`]. Then, per attempt: [`Session::reconnect_attempt`], the
    /// transport, [`Session::handle_connected`], and the driver's loop until
    /// [`Ready::Done`](super::Ready::Done); a failure goes to [`Session::attempt_failed`].
    pub fn begin_reconnect(&mut self, policy: ReconnectPolicy, cause: Option<Error>, now: Instant) {
        if let Some(e) = cause {
            self.c.events.push(Event::LinkLost(e));
        }
        self.handle_link_lost(now);
        self.c.round = Some(Round {
            began: now,
            attempts: 0,
            policy,
        });
    }

    /// The policy of automatic reconnection, if the options set one.
    #[must_use]
    pub fn reconnect_policy(&self) -> Option<ReconnectPolicy> {
        self.c.reconnect
    }

    /// An attempt of the round begins: the driver opens a transport next.
    pub fn reconnect_attempt(&mut self) {
        if let Some(round) = &mut self.c.round {
            round.attempts += 1;
        }
        self.c.set_state(State::Reconnecting);
    }

    /// The attempt failed with `error` (the driver dropped its transport): `Ok(wait)` when
    /// the round goes on after `wait` (an [`Event::AttemptFailed`] says so, and the state
    /// is [`State::Reconnecting`] while the driver backs off), or the error
    /// back when the round is over (the state becomes [`State::Closed`] once the driver
    /// settles the call).
    ///
    /// # Errors
    /// `error`, when no attempt is left or it is not worth retrying ([`worth_retrying`]).
    pub fn attempt_failed(&mut self, error: Error, now: Instant) -> Result<Duration, Error> {
        self.handle_link_lost(now);
        let Some(round) = self.c.round else {
            return Err(error);
        };
        if round.attempts >= round.policy.get_attempts() || !worth_retrying(&error) {
            self.c.round = None;
            return Err(error);
        }
        let retry_in = round.policy.backoff_before(round.attempts + 1);
        self.c.events.push(Event::AttemptFailed {
            attempt: round.attempts,
            error,
            retry_in,
        });
        // Backing off is part of reconnecting, whatever the attempt had got to.
        self.c.set_state(State::Reconnecting);
        Ok(retry_in)
    }
}

impl Conversation {
    /// Checks every recipe against the (possibly different) controller before anything is
    /// sent, and plans the replay.
    pub(super) fn begin_replay(&mut self) -> Result<(), Error> {
        if let Some(o) = &self.outputs {
            let fields = setup::check_spec(&o.recipe.spec(Direction::Output))?;
            setup::check_available(Direction::Output, &fields, self.controller)?;
            self.frequency_field(o.frequency)?;
        }
        for i in &self.inputs {
            let fields = setup::check_spec(&i.recipe.spec(Direction::Input))?;
            setup::check_available(Direction::Input, &fields, self.controller)?;
        }
        self.replay.clear();
        if self.outputs.is_some() {
            self.replay.push_back(Replay::Outputs);
        }
        for index in 0..self.inputs.len() {
            self.replay.push_back(Replay::Inputs(index));
        }
        if self.running {
            self.replay.push_back(Replay::Start);
        }
        Ok(())
    }

    /// The replay is complete.
    pub(super) fn reconnected(&mut self) -> super::Done {
        let now = self.now;
        if let Some(resume) = &mut self.resume {
            resume.resumed_at = Some(now);
        }
        self.stats.reconnects += 1;
        let (attempts, began) = self
            .round
            .take()
            .map_or((1, now), |r| (r.attempts.max(1), r.began));
        let reconnection = Reconnection {
            attempts,
            took: now.saturating_duration_since(began),
            controller: self.controller,
            protocol: self.protocol,
        };
        self.events.push(Event::Reconnected(reconnection));
        self.set_state(self.settled_state());
        super::Done::Reconnected(reconnection)
    }
}
