//! The in-order package queue between the connection task and [`Packages`](super::Packages):
//! bounded, its buffers recycled, its overflow counted.

use std::collections::VecDeque;
use std::task::Waker;

use crate::error::Error;

/// What the consumer takes, in the order it happened.
#[derive(Debug)]
pub(super) enum Entry {
    /// An output package's values.
    Data(Box<[u8]>),
    /// A package that did not fit, or the link's end.
    Failed(Error),
}

/// A bounded queue of packages whose buffers go round: the task fills a free one, the
/// consumer swaps it for the one it held, and that one is free again. Every buffer takes
/// the recipe's size at the first package after a setup (the consumer's own at its first
/// receive); from then on pushing and popping allocate nothing.
#[derive(Debug)]
pub(super) struct PackageQueue {
    entries: VecDeque<Entry>,
    free: Vec<Box<[u8]>>,
    capacity: usize,
    /// A consumer exists: without one, nothing is queued (and nothing overflows).
    pub(super) open: bool,
    /// The connection task has ended: nothing more will come.
    pub(super) finished: bool,
    /// Entries dropped (the oldest first) because the queue was full.
    pub(super) overflowed: u64,
    /// The consumer waiting for an entry.
    pub(super) consumer: Option<Waker>,
}

impl PackageQueue {
    pub(super) fn new() -> PackageQueue {
        PackageQueue {
            entries: VecDeque::new(),
            free: Vec::new(),
            capacity: 0,
            open: false,
            finished: false,
            overflowed: 0,
            consumer: None,
        }
    }

    /// A consumer starts reading: room for `capacity` entries (at least 1), and the buffers
    /// to go round (empty until the first package sizes them).
    pub(super) fn open(&mut self, capacity: usize) {
        let capacity = capacity.max(1);
        self.entries = VecDeque::with_capacity(capacity);
        // The consumer holds one more buffer.
        self.free = Vec::with_capacity(capacity + 1);
        self.free.resize_with(capacity, Box::default);
        self.capacity = capacity;
        self.open = true;
    }

    /// The consumer went away.
    pub(super) fn close(&mut self) {
        self.open = false;
        self.consumer = None;
        self.entries = VecDeque::new();
        self.free = Vec::new();
    }

    /// Queues a copy of `values`; a full queue drops its oldest entry first, counted.
    pub(super) fn push_data(&mut self, values: &[u8]) {
        if !self.open {
            return;
        }
        let mut buf = match self.make_room() {
            Some(Entry::Data(buf)) => buf,
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
        self.entries.push_back(Entry::Data(buf));
    }

    /// Queues an error, in order with the packages.
    pub(super) fn push_error(&mut self, error: Error) {
        if !self.open {
            return;
        }
        if let Some(Entry::Data(buf)) = self.make_room() {
            self.free.push(buf);
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

    /// The oldest entry.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        self.entries.pop_front()
    }

    /// A buffer the consumer no longer needs.
    pub(super) fn recycle(&mut self, buf: Box<[u8]>) {
        if self.open && self.free.len() < self.free.capacity() {
            self.free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(entry: Option<Entry>) -> Vec<u8> {
        match entry {
            Some(Entry::Data(buf)) => buf.to_vec(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_it() {
        let mut q = PackageQueue::new();
        q.push_data(&[9]);
        assert!(q.pop().is_none(), "nothing is queued without a consumer");
        q.open(2);
        for i in 0..5u8 {
            q.push_data(&[i, i]);
        }
        assert_eq!(q.overflowed, 3);
        assert_eq!(data(q.pop()), [3, 3]);
        q.push_error(Error::ConnectionLost);
        q.push_data(&[5, 5]);
        assert_eq!(q.overflowed, 4);
        assert!(matches!(
            q.pop(),
            Some(Entry::Failed(Error::ConnectionLost))
        ));
        assert_eq!(data(q.pop()), [5, 5]);
        assert!(q.pop().is_none());
    }

    #[test]
    fn buffers_go_round_without_growing() {
        let mut q = PackageQueue::new();
        q.open(3);
        let mut held: Box<[u8]> = Box::default();
        for i in 0..100u8 {
            q.push_data(&[i; 4]);
            let Some(Entry::Data(buf)) = q.pop() else {
                panic!("a package")
            };
            q.recycle(std::mem::replace(&mut held, buf));
            assert_eq!(*held, [i; 4]);
        }
        assert!(q.free.len() <= 4, "{}", q.free.len());
        assert_eq!(q.overflowed, 0);
    }
}
