//! The one rule by which a driver's waiting receives learn that the stream went stale:
//! each silence the session reports ([`Ready::Stale`](crate::session::Ready::Stale)) ends
//! a wait once per receiver, and only while it lasts (a package that ended it is the news
//! instead). The latest slot keeps a [`Silences`] beside its newest package, and each
//! receiver a [`Heard`].

use std::time::Duration;

/// The silences a driver reported, next to the number of its newest package.
#[derive(Debug, Default)]
pub(crate) struct Silences {
    /// The silences reported so far.
    count: u64,
    /// The last silence's length, as reported.
    silent_for: Duration,
    /// The newest package's number when the last silence was reported: while it still
    /// is, the stream is stale.
    after: u64,
}

/// The silences one receiver has been told of.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Heard(u64);

impl Silences {
    /// A silence was reported while `newest` was the newest package's number.
    pub(crate) fn went_stale(&mut self, silent_for: Duration, newest: u64) {
        self.count += 1;
        self.silent_for = silent_for;
        self.after = newest;
    }

    /// The length of a silence this receiver has not been told of and that is still going
    /// on (`newest` is still the package it came after), marking it told; `None` otherwise.
    pub(crate) fn untold(&self, heard: &mut Heard, newest: u64) -> Option<Duration> {
        if self.count == heard.0 {
            return None;
        }
        heard.0 = self.count;
        (self.after == newest).then_some(self.silent_for)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_receiver_is_told_once_and_only_while_the_silence_lasts() {
        let ms = Duration::from_millis;
        let mut silences = Silences::default();
        let (mut a, mut b) = (Heard::default(), Heard::default());
        assert_eq!(silences.untold(&mut a, 3), None);
        silences.went_stale(ms(20), 3);
        assert_eq!(silences.untold(&mut a, 3), Some(ms(20)));
        assert_eq!(silences.untold(&mut a, 3), None, "once");
        assert_eq!(silences.untold(&mut b, 3), Some(ms(20)), "per receiver");
        silences.went_stale(ms(30), 5);
        // A package came after this silence: it is over, and nothing is told.
        assert_eq!(silences.untold(&mut a, 6), None);
        assert_eq!(silences.untold(&mut a, 6), None);
        silences.went_stale(ms(40), 6);
        assert_eq!(silences.untold(&mut a, 6), Some(ms(40)));
    }
}
