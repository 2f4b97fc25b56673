//! "No fresh package for X": a deadline on the output stream, with a grace period after
//! START (and after a reconnection), when the first package may take longer.

use std::time::{Duration, Instant};

use super::Session;

#[derive(Debug, Default)]
pub(super) struct Staleness {
    limit: Option<Duration>,
    grace: Duration,
    /// START, or the last package.
    since: Option<Instant>,
    /// No package since START yet: the grace period applies.
    in_grace: bool,
    /// Reported for this silence already.
    reported: bool,
    report: Option<Duration>,
    /// The stream is stale: a silence that began then was reported, and no package has
    /// come since (a START or a reconnection does not end it; a package does).
    stale_since: Option<Instant>,
}

impl Staleness {
    /// When the stream goes stale, while `active` (streaming on a working link).
    pub(super) fn deadline(&self, active: bool) -> Option<Instant> {
        if !active || self.reported {
            return None;
        }
        let limit = self.limit?;
        let allowed = if self.in_grace {
            limit.max(self.grace)
        } else {
            limit
        };
        self.since?.checked_add(allowed)
    }

    pub(super) fn started(&mut self, now: Instant) {
        self.since = Some(now);
        self.in_grace = true;
        self.reported = false;
    }

    /// A package arrived. When it ends a silence reported as stale: how long that silence
    /// lasted (the stream is fresh again; reported once, as the silence was).
    pub(super) fn fed(&mut self, now: Instant) -> Option<Duration> {
        self.since = Some(now);
        self.in_grace = false;
        self.reported = false;
        self.stale_since
            .take()
            .map(|since| now.saturating_duration_since(since))
    }

    /// Whether the stream went stale by `now`, and for how long it has been silent.
    pub(super) fn check(&mut self, now: Instant, active: bool) -> Option<Duration> {
        let (deadline, since) = (self.deadline(active)?, self.since?);
        if now < deadline {
            return None;
        }
        self.reported = true;
        // A silence that goes on across a START or a reconnection began with the first.
        self.stale_since.get_or_insert(since);
        let silent_for = now.saturating_duration_since(since);
        self.report = Some(silent_for);
        Some(silent_for)
    }

    pub(super) fn take_report(&mut self) -> Option<Duration> {
        self.report.take()
    }
}

impl Session {
    /// Reports [`Ready::Stale`](super::Ready::Stale) when no output package arrives for
    /// `limit` while streaming; after START (and after a reconnection) the first package
    /// may take `grace` instead, when that is longer. `None` turns it off. The deadline is
    /// part of [`Session::poll_timeout`].
    pub fn set_staleness(&mut self, limit: Option<Duration>, grace: Duration, now: Instant) {
        self.c.staleness.limit = limit;
        self.c.staleness.grace = grace;
        if self.c.staleness.since.is_none() || self.c.staleness.in_grace {
            self.c.staleness.started(now);
        }
    }
}
