//! Lines out of a byte stream, without I/O: the one framing rule the drivers and the
//! simulator's server use.

use super::error::DashboardError;

/// The longest line accepted: Dashboard replies are short; anything longer is no reply.
pub const MAX_LINE: usize = 4096;

/// Bytes received and not yet returned as lines.
///
/// ```
/// use rtde_robot_proto::dashboard::LineBuffer;
///
/// let mut lines = LineBuffer::default();
/// lines.extend(b"Robotmode: RUN");
/// assert_eq!(lines.next_line()?, None);
/// lines.extend(b"NING\r\n");
/// assert_eq!(lines.next_line()?.as_deref(), Some("Robotmode: RUNNING"));
/// # Ok::<(), rtde_robot_proto::dashboard::DashboardError>(())
/// ```
#[derive(Debug, Default)]
pub struct LineBuffer {
    bytes: Vec<u8>,
}

impl LineBuffer {
    /// Appends bytes as they arrived.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// The next whole line without its line ending (`\n` or `\r\n`), `Ok(None)` if none has
    /// arrived yet.
    pub fn next_line(&mut self) -> Result<Option<String>, DashboardError> {
        // Said at once, not at the next line break: the controller's binary ports send
        // packages that may hold none for a while.
        if self.holds_binary() {
            return Err(DashboardError::BadLine {
                why: "binary, not text",
            });
        }
        let Some(end) = self.bytes.iter().position(|&b| b == b'\n') else {
            if self.bytes.len() > MAX_LINE {
                return Err(DashboardError::BadLine {
                    why: "over 4096 bytes without a line break",
                });
            }
            return Ok(None);
        };
        let line: Vec<u8> = self.bytes.drain(..=end).collect();
        let text = String::from_utf8(line).map_err(|_| DashboardError::BadLine {
            why: "not UTF-8 text",
        })?;
        Ok(Some(text.trim_end_matches(['\n', '\r']).to_owned()))
    }

    /// Whether the bytes waiting hold one no Dashboard line has: what
    /// [`LineBuffer::next_line`] refuses as `binary, not text`.
    #[must_use]
    pub fn holds_binary(&self) -> bool {
        self.bytes.iter().any(|&b| is_binary(b))
    }

    /// Forgets everything: a new connection starts clean.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }
}

/// A byte no Dashboard line holds: a control character other than tab, CR and LF.
fn is_binary(byte: u8) -> bool {
    (byte < 0x20 && !matches!(byte, b'\t' | b'\r' | b'\n')) || byte == 0x7f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_pieces_and_together() {
        let mut b = LineBuffer::default();
        b.extend(b"Robotmode: RU");
        assert_eq!(b.next_line().unwrap(), None);
        b.extend(b"NNING\r\nStarting program\nSto");
        assert_eq!(
            b.next_line().unwrap().as_deref(),
            Some("Robotmode: RUNNING")
        );
        assert_eq!(b.next_line().unwrap().as_deref(), Some("Starting program"));
        assert_eq!(b.next_line().unwrap(), None);
        b.extend(b"pped\n");
        assert_eq!(b.next_line().unwrap().as_deref(), Some("Stopped"));
    }

    #[test]
    fn an_endless_line_or_binary_is_an_error() {
        let mut b = LineBuffer::default();
        b.extend(&[b'x'; MAX_LINE + 1]);
        assert!(b.next_line().is_err());
        let mut b = LineBuffer::default();
        b.extend(&[0xff, 0xfe, b'\n']);
        assert!(b.next_line().is_err());
        // A primary interface's first package, before any line break.
        let mut b = LineBuffer::default();
        b.extend(&[0, 0, 0, 55, 20]);
        assert!(b.next_line().is_err());
        // Non-ASCII text is text.
        let mut b = LineBuffer::default();
        b.extend("Loading program: /programs/grüße.urp\n".as_bytes());
        assert!(b.next_line().unwrap().is_some());
    }
}
