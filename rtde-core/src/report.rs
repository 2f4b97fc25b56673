//! An error and its causes on one line, each said once: [`Report`].

use std::error::Error as StdError;
use std::fmt;

/// Displays an error followed by each of its causes, `error: cause: cause`.
///
/// Every error of the rtde crates says what failed in its own message and returns what
/// caused it from [`source`](std::error::Error::source), as the standard library's errors
/// do: `could not connect to 127.0.0.1:30004` whose source is the operating system's
/// `Connection refused`. So `{err}` prints the first alone, and a reporter that walks the
/// chain (`Report`, anyhow's `{:#}`, eyre, tracing) prints each cause once, never twice.
/// `Report` is what the `rtde` command and the Python exceptions print.
///
/// ```
/// use std::io;
/// use rtde_core::{Error, Report};
///
/// let err = Error::Io {
///     source: io::Error::new(io::ErrorKind::BrokenPipe, "broken pipe"),
///     mid_frame: false,
/// };
/// assert_eq!(err.to_string(), "connection failed");
/// assert_eq!(Report(&err).to_string(), "connection failed: broken pipe");
///
/// let err = std::fs::read("/no/such/recording.mcap").unwrap_err();
/// println!("cannot read the recording: {}", Report(&err));
/// ```
///
/// A cause whose message the text already ends with is left out: an error from outside
/// these crates may print its source and also return it.
#[derive(Clone, Copy)]
pub struct Report<'a>(pub &'a (dyn StdError + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut said = self.0.to_string();
        let mut cause = self.0.source();
        while let Some(error) = cause {
            let text = error.to_string();
            if !text.is_empty() && !said.ends_with(&text) {
                said.push_str(": ");
                said.push_str(&text);
            }
            cause = error.source();
        }
        f.write_str(&said)
    }
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Layer {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    fn layers(texts: &[&'static str]) -> Layer {
        let mut layer = None;
        for text in texts.iter().rev() {
            layer = Some(Box::new(Layer(text, layer)));
        }
        *layer.expect("at least one layer")
    }

    #[test]
    fn each_cause_follows_its_error_once() {
        let err = layers(&["recording failed", "cannot write", "disk full"]);
        assert_eq!(
            Report(&err).to_string(),
            "recording failed: cannot write: disk full"
        );
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let err = layers(&["MCAP: I/O: disk full", "I/O: disk full", "disk full"]);
        assert_eq!(Report(&err).to_string(), "MCAP: I/O: disk full");
        let err = layers(&["stopped", "", "disk full"]);
        assert_eq!(Report(&err).to_string(), "stopped: disk full");
    }
}
