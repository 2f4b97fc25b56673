//! The background driver's options: the reader thread's name, priority and CPU, the
//! in-order queue, staleness, reconnection, and how a receive waits.

use std::time::Duration;

use crate::session::ReconnectPolicy;
#[cfg(doc)]
use crate::{
    Client, Error, Event, Stats,
    background::{Background, Receiver},
};

/// Options for [`Client::spawn`].
///
/// ```
/// use std::time::Duration;
/// use rtde_core::background::SpawnOptions;
///
/// let options = SpawnOptions::new()
///     .name("rtde-reader")
///     .realtime_priority(80)              // SCHED_FIFO 80 (needs CAP_SYS_NICE)
///     .cpu_affinity(1)
///     .queue_capacity(1000)               // 2 s at 500 Hz for `Receiver::recv`
///     .staleness(Duration::from_millis(20), Duration::from_secs(2));
/// assert_eq!(options.get_queue_capacity(), 1000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnOptions {
    pub(super) name: String,
    pub(super) priority: Option<u8>,
    pub(super) cpu: Option<usize>,
    pub(super) queue_capacity: usize,
    pub(super) staleness: Option<(Duration, Duration)>,
    pub(super) reconnect: Option<ReconnectPolicy>,
    pub(super) spin: Option<Duration>,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SpawnOptions {
    /// A thread named `rtde-reader` at the default priority on any CPU, an in-order queue
    /// of 1024 packages, no staleness deadline, and the connection's own reconnection
    /// policy ([`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)).
    #[must_use]
    pub fn new() -> Self {
        SpawnOptions {
            name: "rtde-reader".into(),
            priority: None,
            cpu: None,
            queue_capacity: 1024,
            staleness: None,
            reconnect: None,
            spin: None,
        }
    }

    /// The reader thread's name (what `top -H` and debuggers show).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Runs the reader thread under SCHED_FIFO at `priority` (1 to 99). When the operating
    /// system refuses, [`Client::spawn`] fails with [`Error::Realtime`], which says why and
    /// what to grant (root, CAP_SYS_NICE, an `rtprio` limit).
    #[must_use]
    pub fn realtime_priority(mut self, priority: u8) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Pins the reader thread to `cpu`; a CPU the process may not use is an
    /// [`Error::Realtime`].
    #[must_use]
    pub fn cpu_affinity(mut self, cpu: usize) -> Self {
        self.cpu = Some(cpu);
        self
    }

    /// How many packages [`Receiver::recv`]'s queue holds; when full, the oldest goes and is
    /// counted in [`Stats::overflowed`]. 0 keeps none: only [`Receiver::latest`] is used.
    #[must_use]
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity;
        self
    }

    /// Reports [`Event::Stale`] (and [`Background::is_stale`]) when no package arrives for
    /// `limit`; after START and after a reconnection the first package may take `grace`.
    #[must_use]
    pub fn staleness(mut self, limit: Duration, grace: Duration) -> Self {
        self.staleness = Some((limit, grace));
        self
    }

    /// Reconnects automatically with `policy` when the link fails (instead of the policy of
    /// [`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)).
    #[must_use]
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = Some(policy);
        self
    }

    /// Makes [`Receiver::recv`] busy-wait from `window` before the next package is due
    /// (one output period after the reader thread read the last one it returned) until it
    /// arrives, instead of sleeping until the reader thread wakes it: the package then
    /// reaches the receiver without the operating system's wake-up (a futex and a context
    /// switch, or an interrupt across cores). A package later than a quarter of a period (or
    /// `window`, if longer) after it was due is waited for asleep. The price is the CPU of
    /// the spin, about `window` plus the arrival's jitter per package. For a control loop on
    /// a core of its own; by default `recv` sleeps.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::background::SpawnOptions;
    ///
    /// let options = SpawnOptions::new().spin_before_arrival(Duration::from_micros(30));
    /// ```
    #[must_use]
    pub fn spin_before_arrival(mut self, window: Duration) -> Self {
        self.spin = Some(window);
        self
    }

    /// The in-order queue's capacity.
    #[must_use]
    pub fn get_queue_capacity(&self) -> usize {
        self.queue_capacity
    }
}
