//! How to connect: timeouts, the text message and event queues, and reconnection.

use std::time::Duration;

use crate::error::Error;

/// Options for [`Client::connect`](crate::Client::connect) and the async driver's
/// `connect` and `attach`. Every driver refuses a zero timeout the same way, with
/// [`Error::Misuse`](crate::Error::Misuse), before it opens anything.
///
/// ```
/// use std::time::Duration;
/// use rtde_core::ConnectOptions;
///
/// let options = ConnectOptions::new()
///     .connect_timeout(Duration::from_secs(2))
///     .read_timeout(Some(Duration::from_millis(500)));
/// assert_eq!(options.get_read_timeout(), Some(Duration::from_millis(500)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    connect_timeout: Duration,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    text_message_capacity: usize,
    event_capacity: usize,
    reconnect: Option<ReconnectPolicy>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ConnectOptions {
    /// Connect within 5 s; wait at most 1 s for a reply or a data package and for a write;
    /// keep the last 64 text messages and the last 32 events; no automatic reconnection.
    #[must_use]
    pub const fn new() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Some(Duration::from_secs(1)),
            write_timeout: Some(Duration::from_secs(1)),
            text_message_capacity: 64,
            event_capacity: 32,
            reconnect: None,
        }
    }

    /// How long to try each resolved address. Must not be zero.
    #[must_use]
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest wait for a reply to a request, or for the next output package in
    /// [`Client::recv`](crate::Client::recv); `None` waits forever. Must not be zero.
    ///
    /// It bounds the whole wait, not each read: text messages trickling in do not extend it.
    /// Raise it for output frequencies below about 2 Hz.
    #[must_use]
    pub const fn read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// The longest a write may wait for room (the controller stopped reading); `None` waits
    /// forever. Must not be zero. Every driver keeps it, and reports it the same way: the
    /// link is lost (part of a package may have gone out), and the send fails with an
    /// [`Error::Io`](crate::Error::Io) whose source is
    /// [`std::io::ErrorKind::TimedOut`]. The blocking [`Client`](crate::Client) and the
    /// background driver's `Sender` set it on the socket; the async driver's connection
    /// task times the write itself.
    #[must_use]
    pub const fn write_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// How many text messages to keep until read; older ones are dropped and counted in
    /// [`Stats::texts_dropped`](crate::Stats::texts_dropped). Zero keeps none.
    #[must_use]
    pub const fn text_message_capacity(mut self, capacity: usize) -> Self {
        self.text_message_capacity = capacity;
        self
    }

    /// How many [`Event`](crate::Event)s to keep until
    /// [`Client::events`](crate::Client::events) drains them; older ones are dropped and
    /// counted in [`Stats::events_dropped`](crate::Stats::events_dropped). Zero keeps none
    /// ([`Client::state`](crate::Client::state) still tells the current state).
    ///
    /// Events come only with state changes (connect, start, pause, a lost link, a
    /// reconnection), never with data packages: the queue costs nothing on the receive path.
    #[must_use]
    pub const fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity;
        self
    }

    /// Reconnects automatically when a link fails while receiving or sending, as `policy`
    /// says; see [`Client::reconnect`](crate::Client::reconnect) for what a reconnection
    /// replays. Off by default: a lost link is then an error, and the way on is a call to
    /// [`Client::reconnect`](crate::Client::reconnect) (which also follows `policy` when it
    /// is set, and makes one attempt when it is not).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::{ConnectOptions, ReconnectPolicy};
    ///
    /// let options = ConnectOptions::new().reconnect(
    ///     ReconnectPolicy::new()
    ///         .attempts(10)
    ///         .initial_backoff(Duration::from_millis(100))
    ///         .max_backoff(Duration::from_secs(2)),
    /// );
    /// assert_eq!(options.get_reconnect().unwrap().get_attempts(), 10);
    /// ```
    #[must_use]
    pub const fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = Some(policy);
        self
    }

    /// The connect timeout.
    #[must_use]
    pub const fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The read timeout.
    #[must_use]
    pub const fn get_read_timeout(&self) -> Option<Duration> {
        self.read_timeout
    }

    /// The write timeout.
    #[must_use]
    pub const fn get_write_timeout(&self) -> Option<Duration> {
        self.write_timeout
    }

    /// The text message queue's capacity.
    #[must_use]
    pub const fn get_text_message_capacity(&self) -> usize {
        self.text_message_capacity
    }

    /// The event queue's capacity.
    #[must_use]
    pub const fn get_event_capacity(&self) -> usize {
        self.event_capacity
    }

    /// The automatic reconnection policy, if any.
    #[must_use]
    pub const fn get_reconnect(&self) -> Option<ReconnectPolicy> {
        self.reconnect
    }

    /// Refuses options no driver can honour: a zero timeout. Every driver checks them
    /// here before it opens anything, so that they all refuse the same options the same way.
    pub(crate) fn check(&self) -> Result<(), Error> {
        check_timeout(Some(self.connect_timeout))?;
        check_timeout(self.read_timeout)?;
        check_timeout(self.write_timeout)
    }
}

/// A zero timeout would fail every wait at once rather than bound it.
pub(crate) fn check_timeout(timeout: Option<Duration>) -> Result<(), Error> {
    if timeout.is_some_and(|t| t.is_zero()) {
        return Err(Error::Misuse(
            "a timeout of zero is not a timeout; use `None` to wait forever",
        ));
    }
    Ok(())
}

/// How many times to try to reconnect, and how long to wait between tries; for
/// [`ConnectOptions::reconnect`].
///
/// The first attempt starts at once; before each further attempt the client sleeps for the
/// backoff, which starts at the initial backoff and doubles after every failed attempt up
/// to the maximum. Each attempt is itself bounded by the connect timeout and, for each
/// reply of the handshake and the replay, the read timeout. So a round of attempts ends
/// within `attempts × (connect timeout + replies × read timeout) + the backoffs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconnectPolicy {
    attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl ReconnectPolicy {
    /// 5 attempts, backing off from 100 ms up to 2 s (at most 3.5 s of backoff in all).
    #[must_use]
    pub const fn new() -> Self {
        ReconnectPolicy {
            attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        }
    }

    /// One attempt, no backoff: what [`Client::reconnect`](crate::Client::reconnect) does
    /// when no policy is set.
    #[must_use]
    pub const fn once() -> Self {
        ReconnectPolicy {
            attempts: 1,
            initial_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
        }
    }

    /// How many attempts in a round, at least 1 (0 counts as 1).
    #[must_use]
    pub const fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = if attempts == 0 { 1 } else { attempts };
        self
    }

    /// The wait before the second attempt.
    #[must_use]
    pub const fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// The longest wait between two attempts; the backoff doubles up to it.
    #[must_use]
    pub const fn max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// The number of attempts in a round.
    #[must_use]
    pub const fn get_attempts(&self) -> u32 {
        self.attempts
    }

    /// The wait before the second attempt.
    #[must_use]
    pub const fn get_initial_backoff(&self) -> Duration {
        self.initial_backoff
    }

    /// The longest wait between two attempts.
    #[must_use]
    pub const fn get_max_backoff(&self) -> Duration {
        self.max_backoff
    }

    /// The wait before attempt `attempt` (1-based) of a round: none before the first,
    /// the initial backoff before the second, then twice the wait before, up to the
    /// maximum (or the initial backoff, when the maximum is below it).
    ///
    /// The drivers' rounds wait this long between attempts; a program that repeats
    /// rounds of its own (as the MQTT bridge does while a robot stays unreachable) can
    /// wait the same way.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::ReconnectPolicy;
    ///
    /// let policy = ReconnectPolicy::new()
    ///     .initial_backoff(Duration::from_millis(100))
    ///     .max_backoff(Duration::from_millis(300));
    /// let waits: Vec<_> = (1..=5).map(|n| policy.backoff_before(n).as_millis()).collect();
    /// assert_eq!(waits, [0, 100, 200, 300, 300]);
    /// ```
    #[must_use]
    pub fn backoff_before(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let doublings = (attempt - 2).min(31);
        self.initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff.max(self.initial_backoff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let p = ReconnectPolicy::new()
            .attempts(6)
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_millis(500));
        let waits: Vec<u128> = (1..=6).map(|a| p.backoff_before(a).as_millis()).collect();
        assert_eq!(waits, [0, 100, 200, 400, 500, 500]);
        assert_eq!(ReconnectPolicy::new().attempts(0).get_attempts(), 1);
        // A maximum below the initial backoff does not shorten it.
        let p = p.max_backoff(Duration::from_millis(10));
        assert_eq!(p.backoff_before(3), Duration::from_millis(100));
        assert_eq!(ReconnectPolicy::once().backoff_before(40), Duration::ZERO);
    }

    #[test]
    fn a_zero_timeout_is_refused_and_none_waits_forever() {
        let zero = Duration::ZERO;
        assert!(ConnectOptions::new().check().is_ok());
        let forever = ConnectOptions::new().read_timeout(None).write_timeout(None);
        assert!(forever.check().is_ok());
        for refused in [
            ConnectOptions::new().connect_timeout(zero),
            ConnectOptions::new().read_timeout(Some(zero)),
            ConnectOptions::new().write_timeout(Some(zero)),
        ] {
            assert!(
                matches!(refused.check(), Err(Error::Misuse(why)) if why.contains("`None`")),
                "{refused:?}"
            );
        }
    }
}
