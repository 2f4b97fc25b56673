//! The application's handles on a background driver: [`Receiver`] (the latest package, or
//! every package in order) and [`Sender`] (inputs from any thread).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::{Shared, lock};
use crate::delivery::Popped;
use crate::delivery::silences::Heard;
use crate::error::Error;
use crate::protocol::package_type as ty;
use crate::recipe::{FromPayload, InputRecipe, OutputRecipe};
use crate::session::InputHandle;
#[cfg(doc)]
use crate::{
    Client, Stats,
    background::{Background, SpawnOptions},
};

/// How long [`Receiver::take_until`] waits for a package before it looks for a stop.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What [`Receiver::take_until`] took.
#[derive(Debug)]
#[non_exhaustive]
pub struct Taken {
    /// Packages the in-order queue dropped before they were taken (its capacity,
    /// [`SpawnOptions::queue_capacity`], was too small for how long `each` took), counted
    /// from the sequence numbers. The packages the controller skipped are not among them.
    pub missed: u64,
    /// Why taking ended before the stop: the driver ended (the link is lost and was not
    /// brought back); `None` when it ended at the stop.
    pub ended: Option<Error>,
}

/// Reads output packages a background driver received; see the [module](crate::background)
/// documentation. `Clone` gives another receiver with a buffer of its own (one allocation,
/// at the clone); the in-order queue is shared, so each package goes to one `recv` caller.
#[derive(Debug)]
pub struct Receiver {
    pub(super) shared: Arc<Shared>,
    /// The package last returned: swapped with a queued one's buffer by `recv`, a copy of
    /// the latest by `latest`.
    values: Box<[u8]>,
    seq: u64,
    at: Option<Instant>,
    /// The silences this receiver reported.
    heard: Heard,
}

/// Sends input packages on a background driver's connection, from any thread:
/// `Send + Sync + Clone`.
#[derive(Clone, Debug)]
pub struct Sender {
    pub(super) shared: Arc<Shared>,
}

/// What [`Receiver::recv`] does while the queue is empty, when it busy-waits near arrivals.
enum Spin {
    /// Spin until then.
    Now(Instant),
    /// Sleep this long (or until woken), then spin.
    After(Duration),
}

impl Receiver {
    /// The values of the newest package received, at once (`None` before the first). Never
    /// waits for a package and never allocates; the lock is held for the copy into this
    /// receiver's buffer only, so decoding the returned slice holds none.
    ///
    /// # Errors
    /// [`Error::ConnectionLost`] once the reader thread has ended.
    pub fn latest(&mut self) -> Result<Option<&[u8]>, Error> {
        let delivery = &self.shared.delivery;
        if delivery.is_ended() {
            return Err(delivery.queue().ended());
        }
        let copied = delivery.latest().copy_unless(0, &mut self.values);
        let Some((seq, at)) = copied else {
            return Ok(None);
        };
        self.seq = seq;
        self.at = at;
        Ok(Some(&self.values))
    }

    /// The sequence number of the newest package received (0 before the first), without
    /// taking a lock or copying: a loop that polls [`Receiver::latest`] asks this first, and
    /// copies only when it is past [`Receiver::seq`].
    ///
    /// ```no_run
    /// # fn poll(receiver: &mut rtde_core::background::Receiver) -> Result<(), rtde_core::Error> {
    /// if receiver.newest_seq() > receiver.seq() {
    ///     let values = receiver.latest()?; // a package this receiver has not seen
    /// }
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn newest_seq(&self) -> u64 {
        self.shared.delivery.newest()
    }

    /// The newest package as a `T` (see [`Receiver::latest`]).
    ///
    /// # Errors
    /// As [`Receiver::latest`]; [`Error::Payload`] when `T` does not fit.
    pub fn latest_as<T: FromPayload>(&mut self) -> Result<Option<T>, Error> {
        match self.latest()? {
            Some(values) => Ok(Some(T::from_payload_as::<Error>(values)?)),
            None => Ok(None),
        }
    }

    /// The next package in order, waiting up to `timeout` (`None`: forever). Packages the
    /// queue had no room for are counted in [`Stats::overflowed`]; [`Receiver::seq`] tells
    /// which package this was (they count from 1 without holes).
    ///
    /// **When the controller stops sending.** With a staleness deadline
    /// ([`SpawnOptions::staleness`]), a silence longer than the limit ends the wait with
    /// [`Error::Stale`], once per silence and per receiver, as the async driver's
    /// in-order receive and `Latest::changed` do: every package queued before the silence
    /// is returned first, and the next call waits again, for the package that ends the
    /// silence. A silence a package has already ended is not reported (that package is
    /// next); a receiver that begins waiting on a stale stream learns it at once. Stale is
    /// not a lost package: nothing is counted, and [`Receiver::seq`] stays. With a
    /// `timeout`, a silence that began during the wait (or before it, untold to this
    /// receiver) is reported as Stale rather than as the timeout: it says why nothing
    /// came, and a loop with a timeout learns it as one without does; the calls after it
    /// time out as before. Without a deadline, nothing changes.
    ///
    /// ```no_run
    /// # fn f(receiver: &mut rtde_core::background::Receiver) -> Result<(), rtde_core::Error> {
    /// use rtde_core::Error;
    ///
    /// loop {
    ///     match receiver.recv(None) {
    ///         Ok(values) => { /* every package, in order */ let _ = values; }
    ///         Err(Error::Stale { silent_for }) => {
    ///             // nothing for `silent_for`: the robot went silent; wait on
    ///             let _ = silent_for;
    ///         }
    ///         Err(e) => return Err(e), // the reader thread ended
    ///     }
    /// }
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Stale`] when the stream went stale (the next call goes on);
    /// [`Error::Timeout`]; [`Error::ConnectionLost`] once the reader thread has ended and
    /// the queue is empty; [`Error::Misuse`] when the queue has no capacity.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Result<&[u8], Error> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let delivery = &self.shared.delivery;
        let mut queue = delivery.queue();
        if queue.capacity() == 0 {
            return Err(Error::Misuse(
                "this background driver keeps no in-order queue (queue capacity 0, or no output recipe); use `latest`",
            ));
        }
        loop {
            match queue.pop_into(&mut self.values) {
                Some(Popped::Data { seq, at }) => {
                    self.seq = seq;
                    self.at = Some(at);
                    return Ok(&self.values);
                }
                // This driver records a package that did not fit as an event instead.
                Some(Popped::Failed(e)) => return Err(e),
                None => {}
            }
            if queue.is_finished() {
                return Err(queue.ended());
            }
            // The reader queues each package before the silence after it is recorded, and
            // records the silence before it takes this lock to wake: an empty queue here and
            // a silence still going on mean every package before it was returned.
            if let Some(silent_for) = delivery.untold(&mut self.heard) {
                return Err(Error::Stale { silent_for });
            }
            let left = match deadline {
                None => None,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        // The reader takes the queue's lock under the link's: let go of
                        // it before asking the session whether half a package is in.
                        drop(queue);
                        return Err(Error::Timeout {
                            after: timeout.unwrap_or_default(),
                            waiting_for: ty::DATA_PACKAGE,
                            mid_frame: self.shared.link().session.mid_frame(),
                        });
                    }
                    Some(left)
                }
            };
            let left = match self.spin_plan(Instant::now()) {
                Some(Spin::Now(until)) => {
                    drop(queue);
                    self.spin_until(deadline.map_or(until, |d| d.min(until)));
                    queue = delivery.queue();
                    continue;
                }
                Some(Spin::After(wait)) => Some(left.map_or(wait, |l| l.min(wait))),
                None => left,
            };
            queue.parked += 1;
            let arrived = &delivery.wake.arrived;
            queue = match left {
                None => arrived.wait(queue).unwrap_or_else(PoisonError::into_inner),
                Some(left) => {
                    arrived
                        .wait_timeout(queue, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            // Back under the lock (even from a poisoned wait), so the count stays exact.
            queue.parked -= 1;
        }
    }

    /// With [`SpawnOptions::spin_before_arrival`]: whether to spin now, or to sleep until
    /// the window before the next package is due; `None` to sleep until woken (no window,
    /// no package returned yet, or the window has passed).
    fn spin_plan(&self, now: Instant) -> Option<Spin> {
        let (window, period) = self.shared.spin?;
        let due = self.at?.checked_add(period)?;
        // Arrivals jitter by the reader's own wake-up: spin on past `due` for a while.
        let end = due.checked_add(window.max(period / 4))?;
        let start = due.checked_sub(window).unwrap_or(due);
        if now >= end {
            None
        } else if now >= start {
            Some(Spin::Now(end))
        } else {
            Some(Spin::After(start - now))
        }
    }

    /// Busy-waits, without the queue's lock, until a package newer than the last one
    /// returned is published, or `until`.
    fn spin_until(&self, until: Instant) {
        while self.shared.delivery.newest() <= self.seq
            && !self.shared.delivery.is_ended()
            && Instant::now() < until
        {
            std::hint::spin_loop();
        }
    }

    /// The next package in order, decoded into `recipe` (see [`Receiver::recv`]).
    ///
    /// # Errors
    /// As [`Receiver::recv`]; [`Error::Payload`] when `recipe` does not fit.
    pub fn recv_into<R: OutputRecipe + ?Sized>(
        &mut self,
        recipe: &mut R,
        timeout: Option<Duration>,
    ) -> Result<(), Error> {
        let values = self.recv(timeout)?;
        recipe.decode_into(values).map_err(Error::Payload)
    }

    /// The next package in order as a `T` (see [`Receiver::recv`]).
    ///
    /// # Errors
    /// As [`Receiver::recv_into`].
    pub fn recv_as<T: FromPayload>(&mut self, timeout: Option<Duration>) -> Result<T, Error> {
        let values = self.recv(timeout)?;
        T::from_payload_as(values)
    }

    /// Up to `max` packages already in the in-order queue, in order, each handed to `f`,
    /// without waiting; returns how many. The queue's lock is taken once for the batch
    /// (the reader thread queues the packages arriving meanwhile after it), so that a
    /// consumer that reads a backlog (a bulk read into arrays, say) pays for a lock per
    /// batch rather than per package; keep `max` modest (a few hundred) so the reader is
    /// never held up long. [`Receiver::seq`] and [`Receiver::received_at`] tell the last
    /// package handed out.
    ///
    /// ```no_run
    /// # fn f(receiver: &mut rtde_core::background::Receiver) -> Result<(), rtde_core::Error> {
    /// let mut sizes = Vec::new();
    /// while receiver.recv_queued(256, |values| sizes.push(values.len()))? > 0 {}
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Receiver::recv`] once the queue is empty and the reader thread has ended (a
    /// batch that handed out packages returns their count, and the next call the error);
    /// [`Error::Misuse`] when the queue has no capacity.
    pub fn recv_queued(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> Result<usize, Error> {
        let mut queue = self.shared.delivery.queue();
        if queue.capacity() == 0 {
            return Err(Error::Misuse(
                "this background driver keeps no in-order queue (queue capacity 0, or no output recipe); use `latest`",
            ));
        }
        let mut taken = 0;
        while taken < max {
            match queue.pop_into(&mut self.values) {
                Some(Popped::Data { seq, at }) => {
                    self.seq = seq;
                    self.at = Some(at);
                    f(&self.values);
                    taken += 1;
                }
                // This driver records a package that did not fit as an event instead; were
                // one queued, the packages before it have reached `f` already.
                Some(Popped::Failed(e)) => return Err(e),
                None if taken == 0 && queue.is_finished() => return Err(queue.ended()),
                None => break,
            }
        }
        Ok(taken)
    }

    /// Whether another package already waits in the in-order queue: what a control loop
    /// asks right after sending its command, to count a command that went out after the
    /// next package had arrived.
    #[must_use]
    pub fn pending(&self) -> bool {
        !self.shared.delivery.queue().is_empty()
    }

    /// Takes every package from the in-order queue and hands it to `each`, in order, until
    /// `stop` is set; then the packages that had arrived by then, and returns: what a
    /// recording thread does (rtde-record's `CsvRecording`, and the MCAP
    /// recordings of `rtde-view`). It returns early with `each`'s error, or when the
    /// driver ends ([`Taken::ended`]). It looks at `stop` at least every 50 ms.
    ///
    /// ```no_run
    /// # fn f(mut receiver: rtde_core::background::Receiver) {
    /// use std::sync::atomic::AtomicBool;
    ///
    /// let stop = AtomicBool::new(false); // set by another thread
    /// let mut packages = 0u64;
    /// let taken = receiver.take_until(&stop, |_values| {
    ///     packages += 1;
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// # let _ = taken;
    /// # }
    /// ```
    ///
    /// # Errors
    /// The first error `each` returns.
    pub fn take_until<E>(
        &mut self,
        stop: &AtomicBool,
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<Taken, E> {
        let mut missed = 0;
        // The newest package when the stop came: the ones up to it are taken.
        let mut until: Option<u64> = None;
        let ended = loop {
            if until.is_none() && stop.load(Ordering::Acquire) {
                until = Some(self.newest_seq());
            }
            if until.is_some_and(|last| self.seq() >= last) {
                break None;
            }
            let wait = if until.is_some() {
                Duration::ZERO
            } else {
                STOP_POLL
            };
            let before = self.seq();
            match self.recv(Some(wait)) {
                Ok(values) => each(values)?,
                // Nothing more had arrived by the stop.
                Err(Error::Timeout { .. }) if until.is_some() => break None,
                Err(Error::Timeout { .. } | Error::Stale { .. }) => continue,
                Err(e) => break Some(e),
            }
            // From the second package on: the first is wherever the queue was at the start.
            if before > 0 {
                missed += self.seq().saturating_sub(before + 1);
            }
        };
        Ok(Taken { missed, ended })
    }

    /// The sequence number of the package last returned (from 1; 0 before the first): a
    /// hole between two `recv`s is an overflow.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// When the reader thread took the package last returned from the socket: its age is
    /// `received_at().elapsed()`, and the hand-off to this thread costs the rest.
    #[must_use]
    pub fn received_at(&self) -> Option<Instant> {
        self.at
    }
}

impl Receiver {
    /// A receiver with a buffer of its own, the package's size: the one allocation.
    pub(super) fn new(shared: &Arc<Shared>) -> Receiver {
        Receiver {
            shared: Arc::clone(shared),
            values: vec![0; shared.payload_size].into_boxed_slice(),
            seq: 0,
            at: None,
            heard: Heard::default(),
        }
    }
}

impl Clone for Receiver {
    fn clone(&self) -> Self {
        Receiver::new(&self.shared)
    }
}

impl Sender {
    /// Sends `recipe` as a data package of the input recipe `input` was set up with. Holds
    /// the connection's lock for the encoding and the write only (the write is the
    /// sender's, on this thread). While the reader thread
    /// reconnects, it waits for the reconnection (bounded by the policy; a close ends it)
    /// without that lock, so the other handles answer meanwhile, and then sends on the new
    /// link; inputs are never kept for a later link.
    ///
    /// # Errors
    /// As [`Client::send`], except that a lost link is not reconnected here (the reader
    /// thread does that): the write's error, or [`Error::ConnectionLost`] once the link is
    /// gone (the reconnection it waited for failed, or the reader thread ended). Why the
    /// link ended is told by the [`Receiver`] (its first receive after the end) and by
    /// [`Background::close`], as the async driver tells it by its in-order receiver and
    /// its connection task.
    pub fn send<R: InputRecipe + ?Sized>(
        &self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        loop {
            {
                // The round is bounded by the policy, and a close ends it.
                let mut round = lock(&self.shared.round);
                while *round && !self.shared.delivery.is_ended() {
                    round = self
                        .shared
                        .round_changed
                        .wait(round)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            if self.shared.delivery.is_ended() {
                return Err(Error::ConnectionLost);
            }
            let mut link = self.shared.link();
            if *lock(&self.shared.round) {
                // A round began in between.
                continue;
            }
            let result = link.send(input, recipe);
            return link.session.settle(result);
        }
    }
}
