//! The controller's text messages, kept in a bounded queue.

use std::collections::VecDeque;
use std::fmt;

use crate::protocol::{MessageLevel, TextMessage};

/// A TEXT_MESSAGE the controller sent, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerText {
    /// How serious it is.
    pub level: MessageLevel,
    /// The text (invalid UTF-8 replaced).
    pub message: String,
    /// Who sent it (protocol v2; empty in v1).
    pub source: String,
}

impl ControllerText {
    fn from_message(t: &TextMessage<'_>) -> Self {
        ControllerText {
            level: t.level,
            message: t.message_lossy().into_owned(),
            source: t.source_lossy().into_owned(),
        }
    }
}

impl fmt::Display for ControllerText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            MessageLevel::Exception => "exception",
            MessageLevel::Error => "error",
            MessageLevel::Warning => "warning",
            MessageLevel::Info => "info",
            MessageLevel::Unknown(_) => "message",
        };
        if self.source.is_empty() {
            write!(f, "{level}: {}", self.message)
        } else {
            write!(f, "{level} from {}: {}", self.source, self.message)
        }
    }
}

/// At most `capacity` messages; when full, the oldest goes and is counted.
#[derive(Debug)]
pub(crate) struct TextQueue {
    queue: VecDeque<ControllerText>,
    capacity: usize,
    dropped: u64,
    /// Every message ever pushed, kept or dropped: tells which arrived during a request.
    pushed: u64,
}

impl TextQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        TextQueue {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            dropped: 0,
            pushed: 0,
        }
    }

    pub(crate) fn push(&mut self, t: &TextMessage<'_>) {
        self.pushed += 1;
        if self.capacity == 0 {
            self.dropped += 1;
            return;
        }
        if self.queue.len() == self.capacity {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(ControllerText::from_message(t));
    }

    /// How many messages have arrived so far.
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The newest message, if it arrived after `pushed()` returned `since`.
    pub(crate) fn newest_since(&self, since: u64) -> Option<&ControllerText> {
        if self.pushed > since {
            self.queue.back()
        } else {
            None
        }
    }

    pub(crate) fn queue_mut(&mut self) -> &mut VecDeque<ControllerText> {
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
        let mut q = TextQueue::new(2);
        for text in ["a", "b", "c"] {
            q.push(&TextMessage {
                level: MessageLevel::Warning,
                message: text.as_bytes(),
                source: b"",
            });
        }
        let kept: Vec<String> = q.queue_mut().drain(..).map(|t| t.to_string()).collect();
        assert_eq!(kept, ["warning: b", "warning: c"]);
        assert_eq!(q.dropped(), 1);
        let mut none = TextQueue::new(0);
        none.push(&TextMessage {
            level: MessageLevel::Info,
            message: b"x",
            source: b"y",
        });
        assert_eq!(none.dropped(), 1);
    }
}
