//! A queue that keeps the newest `capacity` items and counts the ones it had to drop, so
//! that text messages and events are never lost silently.

use std::collections::VecDeque;

/// At most `capacity` items; when full, the oldest goes and is counted.
#[derive(Debug)]
pub(crate) struct BoundedQueue<T> {
    queue: VecDeque<T>,
    capacity: usize,
    dropped: u64,
    /// Every item ever pushed, kept or dropped: tells which arrived during a request.
    pushed: u64,
}

impl<T> BoundedQueue<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        BoundedQueue {
            // Allocated on the first item, not before.
            queue: VecDeque::new(),
            capacity,
            dropped: 0,
            pushed: 0,
        }
    }

    pub(crate) fn push(&mut self, item: T) {
        self.pushed += 1;
        if self.capacity == 0 {
            self.dropped += 1;
            return;
        }
        if self.queue.len() == self.capacity {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(item);
    }

    /// How many items have been pushed so far.
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The newest item, if it was pushed after `pushed()` returned `since`.
    pub(crate) fn newest_since(&self, since: u64) -> Option<&T> {
        if self.pushed > since {
            self.queue.back()
        } else {
            None
        }
    }

    pub(crate) fn queue_mut(&mut self) -> &mut VecDeque<T> {
        &mut self.queue
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_it() {
        let mut q = BoundedQueue::new(2);
        for item in ["a", "b", "c"] {
            q.push(item);
        }
        assert_eq!(q.newest_since(2), Some(&"c"));
        assert_eq!(q.newest_since(3), None);
        assert_eq!(q.queue_mut().drain(..).collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!((q.dropped(), q.pushed()), (1, 3));
        let mut none = BoundedQueue::new(0);
        none.push("x");
        assert_eq!((none.queue_mut().len(), none.dropped()), (0, 1));
    }
}
