//! The progress line a recording shows on a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(200);

/// One line on stderr, redrawn in place; nothing at all when stderr is not a terminal.
#[derive(Debug)]
pub(crate) struct Progress {
    enabled: bool,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    /// A progress line, shown only when stderr is a terminal and `quiet` is off.
    pub(crate) fn new(quiet: bool) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            started: Instant::now(),
            last: None,
            drawn: false,
        }
    }

    /// Redraws the line if it is due.
    pub(crate) fn update(&mut self, packages: u64, skipped: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self.last.is_some_and(|l| now - l < EVERY) {
            return;
        }
        self.last = Some(now);
        let elapsed = now - self.started;
        // Too early, a rate says more about the start than about the stream.
        let rate = if elapsed >= Duration::from_millis(500) {
            #[allow(clippy::cast_precision_loss)] // a rate for people to read
            let rate = packages as f64 / elapsed.as_secs_f64();
            format!("{rate:.1}/s")
        } else {
            "…/s".to_owned()
        };
        let mut err = std::io::stderr().lock();
        // `\r` and clear-to-end-of-line: the line shrinks cleanly when numbers get shorter.
        let _ = write!(
            err,
            "\r\x1b[K{packages} {}  {rate}  {skipped} skipped by the controller  {}  (Ctrl-C stops)",
            if packages == 1 { "package" } else { "packages" },
            clock(elapsed)
        );
        let _ = err.flush();
        self.drawn = true;
    }

    /// Clears the line, so that what follows starts on a clean line.
    pub(crate) fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

/// `m:ss.t`, or `h:mm:ss` past an hour.
pub(crate) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}.{}", s / 60, s % 60, d.subsec_millis() / 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks() {
        assert_eq!(clock(Duration::from_millis(9_870)), "0:09.8");
        assert_eq!(clock(Duration::from_secs(61)), "1:01.0");
        assert_eq!(clock(Duration::from_secs(3_723)), "1:02:03");
    }
}
