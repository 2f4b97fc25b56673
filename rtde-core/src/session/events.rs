//! What a connection is doing, and the changes a user can watch.

use std::time::Duration;

use rtde_fields::ControllerVersion;

use crate::error::Error;
use crate::protocol::ProtocolVersion;

/// What a [`Client`](crate::Client) is doing; from [`Client::state`](crate::Client::state).
///
/// ```text
///  connect ──► Negotiating ──► Connected ──start──► Running ◄──start/pause──► Paused
///                                  │                   │                        │
///                                  └───── link lost ───┴────────────────────────┘
///                                               │
///                          automatic reconnect? ├── no ──► Closed ──reconnect()──┐
///                                               ▼                                 │
///                                         Reconnecting ◄──────────────────────────┘
///                                               │ connected
///                                               ▼
///                          Negotiating (handshake, recipes replayed, START if running)
///                                               │
///                                               ▼
///                                 Connected, Running or Paused, as before
///                                 (or Closed when every attempt failed)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// The protocol version, the controller's version and (when reconnecting) the recipes
    /// are being negotiated.
    Negotiating,
    /// Connected; outputs have not been started yet.
    Connected,
    /// Outputs stream: started and not paused.
    Running,
    /// Outputs were started, then paused.
    Paused,
    /// The link was lost and the client is trying to connect again.
    Reconnecting,
    /// The link is lost and nothing is trying to bring it back: every call but
    /// [`Client::reconnect`](crate::Client::reconnect) fails with
    /// [`Error::ConnectionLost`] (with automatic reconnection, receiving and sending start a
    /// new round of attempts).
    Closed,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Negotiating => "negotiating",
            State::Connected => "connected",
            State::Running => "running",
            State::Paused => "paused",
            State::Reconnecting => "reconnecting",
            State::Closed => "closed",
        })
    }
}

/// Something that happened to a connection, from [`Client::events`](crate::Client::events).
///
/// Events come with state changes only, never with data packages. A lost link that is
/// reconnected automatically reads, in order: [`Event::LinkLost`],
/// `State(Reconnecting)`, then for each attempt `State(Negotiating)` and either
/// [`Event::AttemptFailed`] or [`Event::Reconnected`] followed by the state as before;
/// [`Event::PackagesLost`] comes with the first output package received afterwards.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The connection entered this state.
    State(State),
    /// The link failed while receiving or sending and automatic reconnection takes over;
    /// this is the error the call would have returned without it.
    LinkLost(Error),
    /// A reconnection attempt failed and another follows. (The last attempt's error is
    /// returned to the caller instead, and the state becomes [`State::Closed`].)
    AttemptFailed {
        /// The attempt, from 1.
        attempt: u32,
        /// Why it failed.
        error: Error,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
    /// The connection is back, with every recipe replayed.
    Reconnected(Reconnection),
    /// Output packages the controller sent (or would have) between the last one received
    /// before a reconnection and the first one after it; also added to
    /// [`Stats::lost`](crate::Stats::lost).
    PackagesLost {
        /// How many.
        count: u64,
        /// `false`: counted from the recipe's `timestamp`; `true`: estimated from the time
        /// between the two packages and the frequency, because the timestamps cannot tell:
        /// no `timestamp` in the recipe, or a controller whose clock restarted (another
        /// version, or a `timestamp` that advanced less than the link was down).
        estimated: bool,
    },
    /// No fresh output package for the staleness limit
    /// ([`Session::set_staleness`](crate::session::Session::set_staleness), or a background
    /// driver's [`SpawnOptions::staleness`](crate::background::SpawnOptions::staleness)); once per
    /// silence.
    Stale {
        /// Since the last package (or since START, within the grace period).
        silent_for: Duration,
    },
    /// The first output package after an [`Event::Stale`]: the stream is fresh again (and
    /// the drivers' `is_stale` false), once per silence. It comes with that package, after
    /// the [`Event::PackagesLost`] a reconnection meanwhile counted.
    Fresh {
        /// How long no package came: from the last package before the silence (or the
        /// START it began after) to this one.
        silent_for: Duration,
    },
    /// A package that did not fit the recipe, consumed by a background driver (a blocking
    /// call returns it as its error instead).
    Rejected(Error),
}

/// A successful reconnection: from [`Client::reconnect`](crate::Client::reconnect) or
/// [`Event::Reconnected`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reconnection {
    /// The attempts it took, from 1.
    pub attempts: u32,
    /// From the start of the first attempt to the end of the replay, backoffs included.
    pub took: Duration,
    /// The controller's version now (it may have changed).
    pub controller: ControllerVersion,
    /// The protocol version now.
    pub protocol: ProtocolVersion,
}
