//! The in-order queue between a driver's reader and its receiver: bounded, its buffers
//! recycled, its overflow counted, and the error that ended the stream told once.

use std::collections::VecDeque;
use std::time::Instant;

use crate::error::Error;

/// One entry, in the order it happened.
#[derive(Debug)]
enum Entry {
    /// An output package's values, its number and when the reader read it.
    Data {
        values: Box<[u8]>,
        seq: u64,
        at: Instant,
    },
    /// A package that did not fit.
    // The background driver records it as an event instead.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    Failed(Error),
}

/// What [`PackageQueue::pop_into`] took.
#[derive(Debug)]
pub(crate) enum Popped {
    /// A package, now in the caller's buffer: its number and when it was read.
    Data { seq: u64, at: Instant },
    /// A package that did not fit.
    Failed(Error),
}

/// A bounded queue of packages whose buffers go round: the reader fills a free one, the
/// receiver swaps it for the one it held, and that one is free again. Every buffer takes
/// the recipe's size when the queue opens with it, or else at the first package after a
/// setup; from then on pushing and popping allocate nothing.
///
/// `P` is who is parked waiting for an entry: the driver's own (a count of threads on a
/// condition variable, or a task's waker), kept under the same lock as the entries.
#[derive(Debug)]
pub(crate) struct PackageQueue<P> {
    entries: VecDeque<Entry>,
    free: Vec<Box<[u8]>>,
    capacity: usize,
    /// A receiver exists: without one, nothing is queued (and nothing overflows), and
    /// nobody is told how the stream ended.
    open: bool,
    /// The stream has ended: nothing more will come.
    finished: bool,
    /// The error that ended it, for [`PackageQueue::ended`].
    ended_by: Option<Error>,
    /// A receive was told `ended_by`; later ones say [`Error::ConnectionLost`].
    told: bool,
    /// Entries dropped (the oldest first) because the queue was full.
    overflowed: u64,
    /// Who waits for an entry.
    pub(crate) parked: P,
}

impl<P: Default> PackageQueue<P> {
    pub(crate) fn new() -> Self {
        PackageQueue {
            entries: VecDeque::new(),
            free: Vec::new(),
            capacity: 0,
            open: false,
            finished: false,
            ended_by: None,
            told: false,
            overflowed: 0,
            parked: P::default(),
        }
    }

    /// A receiver starts reading: room for `capacity` entries (0 queues nothing, and the
    /// receiver learns only how the stream ended), with buffers of `size` bytes (0: sized
    /// by the first package).
    pub(crate) fn open(&mut self, capacity: usize, size: usize) {
        self.entries = VecDeque::with_capacity(capacity);
        // The receiver holds one more buffer.
        self.free = Vec::with_capacity(capacity + 1);
        self.free
            .resize_with(capacity, || vec![0; size].into_boxed_slice());
        self.capacity = capacity;
        self.open = true;
    }

    /// The receiver went away: what was queued for it goes too.
    // The background driver's queue lives as long as the driver.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn close(&mut self) {
        self.open = false;
        self.parked = P::default();
        self.entries = VecDeque::new();
        self.free = Vec::new();
        self.ended_by = None;
    }
}

impl<P> PackageQueue<P> {
    /// Whether a receiver reads it.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// How many entries it holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the stream has ended.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The entries dropped because the queue was full.
    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed
    }

    /// Queues a copy of `values`; a full queue drops its oldest entry first, counted.
    pub(crate) fn push_data(&mut self, values: &[u8], seq: u64, at: Instant) {
        if !self.open || self.capacity == 0 {
            return;
        }
        let mut buf = match self.make_room() {
            Some(Entry::Data { values, .. }) => values,
            _ => self.free.pop().unwrap_or_default(),
        };
        if buf.len() != values.len() {
            // The first package after a setup: every buffer takes the recipe's size now,
            // so no burst later meets one that has not.
            for free in &mut self.free {
                if free.len() != values.len() {
                    *free = vec![0; values.len()].into_boxed_slice();
                }
            }
            buf = values.into();
        } else {
            buf.copy_from_slice(values);
        }
        self.entries.push_back(Entry::Data {
            values: buf,
            seq,
            at,
        });
    }

    /// Queues the error of a package that did not fit, in order with the packages.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn push_error(&mut self, error: Error) {
        if !self.open || self.capacity == 0 {
            return;
        }
        if let Some(Entry::Data { values, .. }) = self.make_room() {
            self.free.push(values);
        }
        self.entries.push_back(Entry::Failed(error));
    }

    /// Drops the oldest entry when the queue is full, and hands it back.
    fn make_room(&mut self) -> Option<Entry> {
        if self.entries.len() < self.capacity {
            return None;
        }
        self.overflowed += 1;
        self.entries.pop_front()
    }

    /// The oldest entry: a package's values are swapped into `held`, whose old buffer
    /// goes round again.
    pub(crate) fn pop_into(&mut self, held: &mut Box<[u8]>) -> Option<Popped> {
        match self.entries.pop_front()? {
            Entry::Data { values, seq, at } => {
                let old = std::mem::replace(held, values);
                if self.open && self.free.len() < self.free.capacity() {
                    self.free.push(old);
                }
                Some(Popped::Data { seq, at })
            }
            Entry::Failed(e) => Some(Popped::Failed(e)),
        }
    }

    /// The stream ended, by `error` if one ended it: the receiver (if any) is told after
    /// every entry before it, and no entry is dropped to make room for it.
    pub(crate) fn end(&mut self, error: Option<Error>) {
        self.finished = true;
        if self.open {
            self.ended_by = error;
        }
    }

    /// Why the receives cannot go on, once the stream has ended and the queue is empty:
    /// the error that ended it, told once, then [`Error::ConnectionLost`].
    pub(crate) fn ended(&mut self) -> Error {
        match &self.ended_by {
            Some(e) if !self.told => {
                self.told = true;
                e.duplicate()
            }
            _ => Error::ConnectionLost,
        }
    }

    /// The error that ended the stream, told or not.
    pub(crate) fn ended_by(&self) -> Option<&Error> {
        self.ended_by.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Queue = PackageQueue<()>;

    fn data(q: &mut Queue, held: &mut Box<[u8]>) -> Vec<u8> {
        match q.pop_into(held) {
            Some(Popped::Data { .. }) => held.to_vec(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_it() {
        let at = Instant::now();
        let mut held = Box::default();
        let mut q = Queue::new();
        q.push_data(&[9], 1, at);
        assert!(
            q.pop_into(&mut held).is_none(),
            "nothing is queued without a receiver"
        );
        q.open(2, 0);
        for i in 0..5u8 {
            q.push_data(&[i, i], u64::from(i), at);
        }
        assert_eq!(q.overflowed(), 3);
        assert_eq!(data(&mut q, &mut held), [3, 3]);
        q.push_error(Error::ConnectionLost);
        q.push_data(&[5, 5], 5, at);
        assert_eq!(q.overflowed(), 4);
        assert!(matches!(
            q.pop_into(&mut held),
            Some(Popped::Failed(Error::ConnectionLost))
        ));
        assert_eq!(data(&mut q, &mut held), [5, 5]);
        assert!(q.pop_into(&mut held).is_none());
    }

    #[test]
    fn no_capacity_queues_and_counts_nothing() {
        let mut q = Queue::new();
        q.open(0, 4);
        q.push_data(&[1; 4], 1, Instant::now());
        q.push_error(Error::ConnectionLost);
        assert!(q.is_empty());
        assert_eq!(q.overflowed(), 0);
    }

    #[test]
    fn each_package_keeps_its_number_and_time() {
        let (t0, t1) = (
            Instant::now(),
            Instant::now() + std::time::Duration::from_secs(1),
        );
        let mut q = Queue::new();
        q.open(4, 1);
        q.push_data(&[1], 7, t0);
        q.push_data(&[2], 8, t1);
        let mut held = Box::default();
        assert!(matches!(q.pop_into(&mut held), Some(Popped::Data { seq: 7, at }) if at == t0));
        assert!(matches!(q.pop_into(&mut held), Some(Popped::Data { seq: 8, at }) if at == t1));
    }

    #[test]
    fn buffers_go_round_without_growing() {
        let mut q = Queue::new();
        q.open(3, 0);
        let mut held: Box<[u8]> = Box::default();
        for i in 0..100u8 {
            q.push_data(&[i; 4], u64::from(i), Instant::now());
            assert_eq!(data(&mut q, &mut held), [i; 4]);
        }
        assert!(q.free.len() <= 4, "{}", q.free.len());
        assert_eq!(q.overflowed(), 0);
    }

    #[test]
    fn buffers_sized_at_opening_are_reused_as_they_are() {
        let mut q = Queue::new();
        q.open(2, 4);
        let sized: Vec<*const u8> = q.free.iter().map(|b| b.as_ptr()).collect();
        let mut held: Box<[u8]> = vec![0; 4].into_boxed_slice();
        q.push_data(&[1; 4], 1, Instant::now());
        data(&mut q, &mut held);
        assert!(
            sized.contains(&held.as_ptr()),
            "a buffer of the opening, not a new one"
        );
    }

    #[test]
    fn the_end_is_told_once_after_every_entry_and_evicts_none() {
        let mut q = Queue::new();
        q.open(1, 0);
        q.push_data(&[1], 1, Instant::now());
        q.end(Some(Error::Closed { mid_frame: false }));
        assert!(q.is_finished());
        assert_eq!(q.overflowed(), 0, "the end takes no package's place");
        let mut held = Box::default();
        assert_eq!(data(&mut q, &mut held), [1]);
        assert!(q.pop_into(&mut held).is_none());
        assert!(matches!(q.ended(), Error::Closed { .. }));
        assert!(matches!(q.ended(), Error::ConnectionLost), "told once");
        assert!(
            matches!(q.ended_by(), Some(Error::Closed { .. })),
            "kept for the driver"
        );
    }

    #[test]
    fn nobody_is_told_an_end_without_a_receiver() {
        let mut q = Queue::new();
        q.end(Some(Error::Closed { mid_frame: false }));
        q.open(1, 0);
        assert!(matches!(q.ended(), Error::ConnectionLost));
        let mut q = Queue::new();
        q.open(1, 0);
        q.end(Some(Error::Closed { mid_frame: false }));
        q.close();
        q.open(1, 0);
        assert!(
            matches!(q.ended(), Error::ConnectionLost),
            "went with its receiver"
        );
    }
}
