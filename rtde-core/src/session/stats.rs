//! What a session received, skipped and dropped: one counter per cause.

/// Counters of what a connection received, skipped and dropped, over every link it made
/// (they carry on across reconnections).
///
/// While outputs stream, every package the controller was due to send ends up in exactly one
/// of `received`, `superseded`, `discarded`, `skipped` and `lost` (`skipped`, and `lost`
/// exactly, need a `timestamp` in the recipe).
///
/// ```
/// let stats = rtde_core::Stats::default();
/// assert_eq!(stats.received + stats.skipped + stats.lost, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Output data packages delivered by [`Client::recv`](crate::Client::recv),
    /// [`Client::recv_latest`](crate::Client::recv_latest) and their helpers (or, on a
    /// [`Session`](crate::session::Session), as [`Ready::Data`](crate::session::Ready::Data)).
    pub received: u64,
    /// Output packages the controller skipped, counted from the recipe's `timestamp`
    /// (see [`Client::counts_gaps`](crate::Client::counts_gaps)); the controller skips
    /// packages when it is overloaded. A package refused with
    /// [`Error::WrongRecipeId`](crate::Error::WrongRecipeId) or
    /// [`Error::WrongLength`](crate::Error::WrongLength) leaves the same hole in the
    /// timestamps and is counted here too.
    pub skipped: u64,
    /// Output data packages that arrived while the client waited for a reply (after a
    /// PAUSE request, say), or while nothing streamed, and were dropped.
    pub discarded: u64,
    /// Output data packages the latest-only mode dropped because a newer one had arrived:
    /// the caller's choice, not a loss on the link.
    pub superseded: u64,
    /// Output packages lost while the link was down, between the last package received
    /// before a reconnection and the first one after it: from the recipe's `timestamp`, or
    /// estimated from the clock without one (see
    /// [`Event::PackagesLost`](crate::Event::PackagesLost)).
    pub lost: u64,
    /// Successful reconnections.
    pub reconnects: u64,
    /// Text messages dropped because the queue was full
    /// ([`ConnectOptions::text_message_capacity`](crate::ConnectOptions::text_message_capacity)).
    pub texts_dropped: u64,
    /// Events dropped because the queue was full
    /// ([`ConnectOptions::event_capacity`](crate::ConnectOptions::event_capacity)).
    pub events_dropped: u64,
    /// Packages of a type the RTDE guide does not define (an ASCII letter this crate does
    /// not know), skipped whole: a newer controller may send them, and they are no reason to
    /// drop the link. Bytes that cannot start a package at all still lose the connection.
    pub unknown_packages: u64,
    /// Packages received by a background driver's reader thread that its in-order queue had
    /// no room for (the consumer was too slow); the oldest queued ones go first. Not a loss
    /// on the link: `received` counts them.
    pub overflowed: u64,
}
