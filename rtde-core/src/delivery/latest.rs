//! The latest slot: the newest package's values, replaced by each package, with its number
//! and the silences since.

use std::time::{Duration, Instant};

use super::silences::{Heard, Silences};

/// The newest package. Its buffer takes the recipe's size once; replacing it then copies
/// and allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct LatestSlot {
    /// The packages delivered so far: the newest one's number (from 1; 0 before the first).
    seq: u64,
    /// When the driver read it.
    at: Option<Instant>,
    values: Vec<u8>,
    /// The silences reported ([`Ready::Stale`](crate::session::Ready::Stale)), for every
    /// receive that waits.
    silences: Silences,
}

impl LatestSlot {
    /// An empty slot with room for a package of `size` bytes.
    pub(crate) fn with_capacity(size: usize) -> LatestSlot {
        LatestSlot {
            values: Vec::with_capacity(size),
            ..LatestSlot::default()
        }
    }

    /// A package read at `at` replaces the one before; its number.
    pub(crate) fn replace(&mut self, values: &[u8], at: Instant) -> u64 {
        self.seq += 1;
        self.at = Some(at);
        self.values.clear();
        self.values.extend_from_slice(values);
        self.seq
    }

    /// Copies the newest package into `into` when it is not package `seen` (nor none): its
    /// number and when it was read. Allocates only when `into` is not the package's size.
    pub(crate) fn copy_unless(
        &self,
        seen: u64,
        into: &mut Box<[u8]>,
    ) -> Option<(u64, Option<Instant>)> {
        if self.seq == seen || self.seq == 0 {
            return None;
        }
        if into.len() == self.values.len() {
            into.copy_from_slice(&self.values);
        } else {
            *into = self.values.as_slice().into();
        }
        Some((self.seq, self.at))
    }

    /// A silence was reported after the newest package.
    pub(crate) fn went_stale(&mut self, silent_for: Duration) {
        self.silences.went_stale(silent_for, self.seq);
    }

    /// A silence still going on that the receiver `heard` has not been told of.
    pub(crate) fn untold(&self, heard: &mut Heard) -> Option<Duration> {
        self.silences.untold(heard, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_package_replaces_the_last_and_is_copied_once_per_number() {
        let at = Instant::now();
        let mut slot = LatestSlot::with_capacity(2);
        let mut into = Box::default();
        assert_eq!(
            slot.copy_unless(0, &mut into),
            None,
            "nothing before the first"
        );
        assert_eq!(slot.replace(&[1, 1], at), 1);
        assert_eq!(slot.replace(&[2, 2], at), 2);
        assert_eq!(slot.copy_unless(0, &mut into), Some((2, Some(at))));
        assert_eq!(*into, [2, 2], "the newest, not the first");
        let buffer = into.as_ptr();
        into[0] = 0;
        assert_eq!(slot.copy_unless(2, &mut into), None, "already seen");
        assert_eq!(*into, [0, 2], "left as it was");
        slot.replace(&[3, 3], at);
        assert_eq!(slot.copy_unless(2, &mut into), Some((3, Some(at))));
        assert_eq!(*into, [3, 3]);
        assert_eq!(into.as_ptr(), buffer, "copied into the buffer it had");
    }

    #[test]
    fn a_silence_is_untold_until_the_next_package() {
        let at = Instant::now();
        let mut slot = LatestSlot::default();
        let mut heard = Heard::default();
        slot.replace(&[1], at);
        slot.went_stale(Duration::from_millis(20));
        slot.replace(&[2], at);
        assert_eq!(slot.untold(&mut heard), None, "a package ended it");
        slot.went_stale(Duration::from_millis(30));
        assert_eq!(slot.untold(&mut heard), Some(Duration::from_millis(30)));
    }
}
