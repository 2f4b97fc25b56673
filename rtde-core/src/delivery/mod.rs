//! One delivery layer under the drivers whose reader is not the application: the
//! background driver's reader thread and the async driver's connection task hand each
//! package the session delivers to their receivers through a [`Delivery`], and only how a
//! waiting receiver is woken differs ([`Wake`]: a condition variable, a task's waker).
//!
//! Its rules, each kept once:
//!
//! - **the latest slot** ([`LatestSlot`]): each package replaces the one before; a reader
//!   copies it out under a lock held for the copy only, and its number is readable without
//!   the lock ([`Delivery::newest`]);
//! - **the bounded queue** ([`PackageQueue`]): every package in order, its buffers
//!   recycled; when full the oldest goes and is counted ([`Stats::overflowed`](crate::Stats::overflowed)),
//!   never silently;
//! - **the stale flag and the silences** ([`silences`]): a silence the session reports sets
//!   the flag until the next package, and ends each waiting receive once;
//! - **the end**: the error that ended the stream goes to the receiver after every
//!   package before it, once; later receives say [`Error::ConnectionLost`].
//!
//! A reader hands out what one read brought in one [`Pass`], which wakes the parked
//! receivers once at its end, not once per package.

mod latest;
mod queue;
pub(crate) mod silences;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::Error;

pub(crate) use latest::LatestSlot;
pub(crate) use queue::{PackageQueue, Popped};
use silences::Heard;

/// How a driver wakes the receivers parked on its queue.
pub(crate) trait Wake {
    /// Who is parked, kept under the queue's lock.
    type Parked: Default + std::fmt::Debug;

    /// Something was delivered (a package, an error, a silence) or the stream ended:
    /// wakes whoever is parked. Called with the queue locked, and the lock is the
    /// driver's to let go of, before or after the wake-up.
    fn wake(&self, queue: MutexGuard<'_, PackageQueue<Self::Parked>>);
}

/// What a driver's reader and its receivers share.
#[derive(Debug)]
pub(crate) struct Delivery<W: Wake> {
    latest: Mutex<LatestSlot>,
    /// The latest slot's number, readable without its lock: set once the copy is in place.
    newest: AtomicU64,
    queue: Mutex<PackageQueue<W::Parked>>,
    /// No package for the staleness limit; false again with the next package.
    stale: AtomicBool,
    /// The stream has ended, readable without the queue's lock.
    ended: AtomicBool,
    /// The driver's way to wake a receiver.
    pub(crate) wake: W,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A receiver's thread that panicked left consistent data behind: every critical section
    // is a copy or a counter update.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: Wake> Delivery<W> {
    /// Nothing delivered yet, with room in the latest slot for a package of `size` bytes.
    pub(crate) fn new(wake: W, size: usize) -> Self {
        Delivery {
            latest: Mutex::new(LatestSlot::with_capacity(size)),
            newest: AtomicU64::new(0),
            queue: Mutex::new(PackageQueue::new()),
            stale: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            wake,
        }
    }

    /// The latest slot, locked: lock it for a copy only. (The queue's lock, when both are
    /// wanted, is taken first.)
    pub(crate) fn latest(&self) -> MutexGuard<'_, LatestSlot> {
        lock(&self.latest)
    }

    /// The in-order queue, locked.
    pub(crate) fn queue(&self) -> MutexGuard<'_, PackageQueue<W::Parked>> {
        lock(&self.queue)
    }

    /// The newest package's number (0 before the first), without a lock.
    pub(crate) fn newest(&self) -> u64 {
        self.newest.load(Ordering::Acquire)
    }

    /// Whether no package arrived for the staleness limit.
    pub(crate) fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// Whether the stream has ended.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// The packages the queue had no room for.
    pub(crate) fn overflowed(&self) -> u64 {
        self.queue().overflowed()
    }

    /// A silence still going on that the receiver `heard` has not been told of. The flag
    /// is the steady path's one load; the latest slot decides. Asked with the queue locked
    /// and empty: a pass queues a package before it counts it in the slot, so a silence
    /// still going on means every package before it was returned.
    pub(crate) fn untold(&self, heard: &mut Heard) -> Option<Duration> {
        if !self.is_stale() {
            return None;
        }
        self.latest().untold(heard)
    }

    /// Hands out what one read brought.
    pub(crate) fn pass(&self) -> Pass<'_, W> {
        Pass {
            delivery: self,
            queue: None,
            delivered: false,
        }
    }

    /// The stream ended, by `error` if one ended it: the receiver learns it after every
    /// package before it, and every parked receive is woken.
    pub(crate) fn end(&self, error: Option<Error>) {
        let mut queue = self.queue();
        queue.end(error);
        self.ended.store(true, Ordering::Relaxed);
        self.wake.wake(queue);
    }
}

/// One pass of a reader over what the session has ready: the queue stays locked from the
/// first package to the end of the pass, and the parked receivers are woken once, when it
/// is dropped, if anything was delivered.
pub(crate) struct Pass<'a, W: Wake> {
    delivery: &'a Delivery<W>,
    queue: Option<MutexGuard<'a, PackageQueue<W::Parked>>>,
    delivered: bool,
}

impl<W: Wake> Pass<'_, W> {
    fn queue(&mut self) -> &mut PackageQueue<W::Parked> {
        self.queue.get_or_insert_with(|| self.delivery.queue())
    }

    /// A package read at `at`: into the queue, then the latest slot; the stream is fresh.
    pub(crate) fn data(&mut self, values: &[u8], at: Instant) {
        let d = self.delivery;
        let seq = d.newest.load(Ordering::Relaxed) + 1;
        self.queue().push_data(values, seq, at);
        d.latest().replace(values, at);
        d.newest.store(seq, Ordering::Release);
        d.stale.store(false, Ordering::Relaxed);
        self.delivered = true;
    }

    /// A package that did not fit, for the in-order receiver.
    // The background driver records it as an event instead.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn rejected(&mut self, error: Error) {
        self.queue().push_error(error);
        self.delivered = true;
    }

    /// The session reported a silence: the flag for the getters, and the receives
    /// waiting learn it.
    pub(crate) fn stale(&mut self, silent_for: Duration) {
        let d = self.delivery;
        d.stale.store(true, Ordering::Relaxed);
        d.latest().went_stale(silent_for);
        self.delivered = true;
    }
}

impl<W: Wake> Drop for Pass<'_, W> {
    fn drop(&mut self) {
        if self.delivered {
            // Under the queue's lock, also after a silence alone: no receiver parks
            // between its look at the queue and the wake-up.
            let queue = self.queue.take().unwrap_or_else(|| self.delivery.queue());
            self.delivery.wake.wake(queue);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Counts its wake-ups, and checks that each comes with the queue locked.
    #[derive(Debug, Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        type Parked = ();
        fn wake(&self, _queue: MutexGuard<'_, PackageQueue<()>>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn delivery(capacity: usize) -> Delivery<Count> {
        let d = Delivery::new(Count::default(), 2);
        d.queue().open(capacity, 2);
        d
    }

    fn wakes(d: &Delivery<Count>) -> usize {
        d.wake.0.load(Ordering::Relaxed)
    }

    #[test]
    fn one_wake_up_per_pass_that_delivered() {
        let d = delivery(8);
        let at = Instant::now();
        {
            let mut pass = d.pass();
            pass.data(&[1, 1], at);
            pass.data(&[2, 2], at);
            pass.data(&[3, 3], at);
        }
        assert_eq!(wakes(&d), 1, "once per pass, not per package");
        drop(d.pass());
        assert_eq!(wakes(&d), 1, "a pass that delivered nothing wakes nobody");
        d.pass().stale(Duration::from_millis(5));
        assert_eq!(wakes(&d), 2, "a silence wakes the receives waiting");
        d.end(None);
        assert_eq!(wakes(&d), 3, "the end wakes them too");
    }

    #[test]
    fn a_package_numbers_both_the_queue_and_the_latest_slot() {
        let d = delivery(8);
        let at = Instant::now();
        {
            let mut pass = d.pass();
            pass.data(&[1, 1], at);
            pass.data(&[2, 2], at);
        }
        assert_eq!(d.newest(), 2);
        let mut values = Box::default();
        assert_eq!(d.latest().copy_unless(0, &mut values), Some((2, Some(at))));
        assert_eq!(*values, [2, 2]);
        let mut held = Box::default();
        let mut queue = d.queue();
        assert!(matches!(
            queue.pop_into(&mut held),
            Some(Popped::Data { seq: 1, .. })
        ));
        assert_eq!(*held, [1, 1]);
        assert!(matches!(
            queue.pop_into(&mut held),
            Some(Popped::Data { seq: 2, .. })
        ));
    }

    #[test]
    fn stale_until_the_next_package_and_told_once_per_receiver() {
        let d = delivery(8);
        let (mut a, mut b) = (Heard::default(), Heard::default());
        d.pass().data(&[1, 1], Instant::now());
        assert!(!d.is_stale());
        assert_eq!(d.untold(&mut a), None);
        d.pass().stale(Duration::from_millis(20));
        assert!(d.is_stale());
        assert_eq!(d.untold(&mut a), Some(Duration::from_millis(20)));
        assert_eq!(d.untold(&mut a), None, "once");
        assert_eq!(
            d.untold(&mut b),
            Some(Duration::from_millis(20)),
            "per receiver"
        );
        d.pass().data(&[2, 2], Instant::now());
        assert!(!d.is_stale(), "a package ends it");
    }

    #[test]
    fn overflow_is_counted_and_the_end_told_once_after_the_packages() {
        let d = delivery(1);
        let at = Instant::now();
        {
            let mut pass = d.pass();
            pass.data(&[1, 1], at);
            pass.data(&[2, 2], at);
        }
        assert_eq!(d.overflowed(), 1);
        d.end(Some(Error::Closed { mid_frame: true }));
        assert!(d.is_ended());
        let mut queue = d.queue();
        let mut held = Box::default();
        assert!(matches!(
            queue.pop_into(&mut held),
            Some(Popped::Data { seq: 2, .. })
        ));
        assert!(queue.pop_into(&mut held).is_none());
        assert!(matches!(queue.ended(), Error::Closed { mid_frame: true }));
        assert!(matches!(queue.ended(), Error::ConnectionLost));
    }
}
