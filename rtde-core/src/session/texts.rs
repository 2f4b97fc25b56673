//! The controller's text messages, as the client keeps them.

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
    /// Whether the server announced that its data has ended and it is about to close the
    /// connection ([`TextMessage::end_of_stream`]); a close after it is no lost link.
    ///
    /// ```
    /// use rtde_core::ControllerText;
    /// use rtde_core::protocol::{END_OF_STREAM, MessageLevel};
    ///
    /// let text = ControllerText {
    ///     level: MessageLevel::Info,
    ///     message: END_OF_STREAM.to_owned(),
    ///     source: String::new(),
    /// };
    /// assert!(text.is_end_of_stream());
    /// ```
    #[must_use]
    pub fn is_end_of_stream(&self) -> bool {
        TextMessage {
            level: self.level,
            message: self.message.as_bytes(),
            source: self.source.as_bytes(),
        }
        .is_end_of_stream()
    }

    pub(crate) fn from_message(t: &TextMessage<'_>) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_level_source_and_text() {
        let text = |source: &'static [u8]| {
            ControllerText::from_message(&TextMessage {
                level: MessageLevel::Warning,
                message: b"SafetySetup has not been confirmed yet",
                source,
            })
        };
        assert_eq!(
            text(b"").to_string(),
            "warning: SafetySetup has not been confirmed yet"
        );
        assert_eq!(
            text(b"Controller").to_string(),
            "warning from Controller: SafetySetup has not been confirmed yet"
        );
    }
}
