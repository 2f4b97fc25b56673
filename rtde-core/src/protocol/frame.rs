//! Splitting a byte stream into packages.

use super::error::{DecodeError, DecodeErrorKind};
use super::package_type;

/// The header's length: a `u16` size and a type byte.
pub const HEADER_LEN: usize = 3;

/// The longest package the 16-bit size field can describe, header included.
pub const MAX_PACKAGE_LEN: usize = u16::MAX as usize;

/// One package off the wire: its type byte and its payload (everything after the header),
/// borrowed from the buffer it was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The package type byte: one of [`package_type::ALL`], or another ASCII letter for a
    /// package type this crate does not know ([`package_type::may_start_package`]).
    pub kind: u8,
    /// The bytes after the header.
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Parses the package at the front of `buf`.
    ///
    /// Returns `Ok(None)` when `buf` does not hold a whole package yet (nothing is consumed:
    /// call again with more bytes), or the frame and the number of bytes it took.
    ///
    /// ```
    /// use rtde_core::protocol::Frame;
    ///
    /// // A START reply (accepted), then the first two bytes of another package.
    /// let stream = [0x00, 0x04, b'S', 0x01, 0x00, 0x04];
    /// let (frame, used) = Frame::parse(&stream).unwrap().unwrap();
    /// assert_eq!((frame.kind, frame.payload, used), (b'S', &[0x01][..], 4));
    /// assert_eq!(Frame::parse(&stream[used..]).unwrap(), None);
    /// ```
    ///
    /// A package of a type this crate does not know, with an ASCII letter as its type byte,
    /// is framed like any other, so a reader can skip it; decoding it as a message then
    /// fails with [`DecodeErrorKind::UnknownPackageType`].
    ///
    /// # Errors
    /// A size field below 3, or a type byte that is no ASCII letter: the stream cannot be
    /// resynchronised and the connection should be dropped.
    #[inline]
    pub fn parse(buf: &'a [u8]) -> Result<Option<(Frame<'a>, usize)>, DecodeError> {
        let Some(&[hi, lo, kind]) = buf.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let size = u16::from_be_bytes([hi, lo]);
        if usize::from(size) < HEADER_LEN {
            return Err(DecodeError::new(
                kind,
                0,
                DecodeErrorKind::SizeTooSmall { size },
            ));
        }
        if !package_type::may_start_package(kind) {
            return Err(DecodeError::new(
                kind,
                2,
                DecodeErrorKind::UnknownPackageType { byte: kind },
            ));
        }
        let size = usize::from(size);
        match buf.get(HEADER_LEN..size) {
            Some(payload) => Ok(Some((Frame { kind, payload }, size))),
            None => Ok(None),
        }
    }
}

/// A reusable receive buffer: read bytes into [`FrameBuffer::spare`], [`FrameBuffer::commit`]
/// them, then take whole packages with [`FrameBuffer::next_frame`].
///
/// It allocates once, when created, and holds at least one package of the largest size, so
/// a stream of any chunking decodes without further allocation.
///
/// A read into a drained buffer lands where the values of a data package fall on an 8-byte
/// boundary (after the header and recipe id of the recipe last taken with `take_data`, or
/// of a protocol v2 package before any): the doubles of a package that arrives alone, as
/// nearly every package of a stream does, are then read without loads that straddle cache
/// lines, which some CPUs pay for.
///
/// ```
/// use rtde_core::protocol::FrameBuffer;
///
/// let mut frames = FrameBuffer::new();
/// // Two START replies arrive split across reads as 00 04 | 53 01 00 | 04 53 01.
/// for chunk in [&[0x00, 0x04][..], &[b'S', 0x01, 0x00], &[0x04, b'S', 0x01]] {
///     frames.spare()[..chunk.len()].copy_from_slice(chunk);
///     frames.commit(chunk.len());
/// }
/// assert_eq!(frames.next_frame().unwrap().unwrap().payload, [0x01]);
/// assert_eq!(frames.next_frame().unwrap().unwrap().payload, [0x01]);
/// assert!(frames.next_frame().unwrap().is_none());
/// ```
pub struct FrameBuffer {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Where the values of a data package start, counted from the package's first byte.
    values_at: usize,
}

impl std::fmt::Debug for FrameBuffer {
    // The derived form would print all 128 KiB of the buffer.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameBuffer")
            .field("capacity", &self.buf.len())
            .field("buffered", &(self.end - self.start))
            .finish()
    }
}

impl Default for FrameBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameBuffer {
    /// A buffer of twice the largest package, so compaction is rare.
    #[must_use]
    pub fn new() -> Self {
        FrameBuffer {
            buf: vec![0; 2 * (MAX_PACKAGE_LEN + 1)].into_boxed_slice(),
            start: 0,
            end: 0,
            // A protocol v2 data package: header, then the recipe id.
            values_at: HEADER_LEN + 1,
        }
    }

    /// Where a package starts in a drained buffer: its values 8-byte aligned.
    fn front(&self) -> usize {
        let values = self.buf.as_ptr().addr() + self.values_at;
        (8 - values % 8) % 8
    }

    /// Bytes received and not yet taken as packages.
    #[must_use]
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Space to read into; never empty while the buffered bytes cannot hold a whole package.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.start = self.front();
            self.end = self.start;
        } else if self.end == self.buf.len() || self.buf.len() - self.end < MAX_PACKAGE_LEN / 4 {
            // Move the partial package to the front so the rest of it fits.
            let front = self.front();
            self.buf.copy_within(self.start..self.end, front);
            self.end = self.end - self.start + front;
            self.start = front;
        }
        &mut self.buf[self.end..]
    }

    /// Marks `n` bytes of [`FrameBuffer::spare`] as received.
    ///
    /// `n` is clamped to the spare space: a reader never returns more than it was given.
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }

    /// Takes the next whole package, or `Ok(None)` when more bytes are needed.
    ///
    /// # Errors
    /// As [`Frame::parse`]; the bytes stay buffered.
    #[inline]
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, DecodeError> {
        let start = self.start;
        let Some((frame, used)) = Frame::parse(&self.buf[start..self.end])? else {
            return Ok(None);
        };
        let kind = frame.kind;
        self.start = start + used;
        Ok(Some(Frame {
            kind,
            payload: &self.buf[start + HEADER_LEN..start + used],
        }))
    }

    /// Takes the next whole package like [`FrameBuffer::next_frame`], but returns where its
    /// payload sits in the buffer instead of borrowing it, so the caller can go on mutating
    /// other state before it reads the payload with [`FrameBuffer::bytes_at`].
    pub(crate) fn take_frame(
        &mut self,
    ) -> Result<Option<(u8, std::ops::Range<usize>)>, DecodeError> {
        let start = self.start;
        let Some((frame, used)) = Frame::parse(&self.buf[start..self.end])? else {
            return Ok(None);
        };
        let kind = frame.kind;
        self.start = start + used;
        Ok(Some((kind, start + HEADER_LEN..start + used)))
    }

    /// Takes the package at the front if it is a whole data package of the recipe whose
    /// header is `header`, and returns where its values sit in the buffer; otherwise takes
    /// nothing (see [`DataHeader`](super::DataHeader)).
    #[inline]
    pub(crate) fn take_data(
        &mut self,
        header: &super::DataHeader,
    ) -> Option<std::ops::Range<usize>> {
        self.values_at = header.values_at();
        let start = self.start;
        header.payload(self.buf.get(start..self.end)?)?;
        self.start = start + header.package_len();
        Some(start + header.values_at()..self.start)
    }

    /// Bytes of a package taken with [`FrameBuffer::take_frame`]; valid until the next
    /// [`FrameBuffer::spare`], which may move or overwrite them.
    pub(crate) fn bytes_at(&self, range: std::ops::Range<usize>) -> &[u8] {
        self.buf.get(range).unwrap_or(&[])
    }

    /// Puts the package whose payload is at `payload` back at the front, to be taken again:
    /// only for the package taken last, before any [`FrameBuffer::spare`].
    pub(crate) fn put_back(&mut self, payload: &std::ops::Range<usize>) {
        self.start = payload.start.saturating_sub(HEADER_LEN).min(self.end);
    }

    /// Forgets everything buffered (after a reconnect, say).
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }
}

/// Writes the header and recipe id of an input DATA_PACKAGE in front of `payload_len` bytes
/// of values that already sit at `buf[4..]`, and returns the package's length; the client
/// encodes a recipe straight into its send buffer this way, without a second copy.
pub(crate) fn finish_input_data_package(
    buf: &mut [u8],
    recipe_id: u8,
    payload_len: usize,
) -> Result<usize, super::EncodeError> {
    let len = HEADER_LEN + 1 + payload_len;
    let size = u16::try_from(len).map_err(|_| super::EncodeError::PackageTooLong {
        kind: package_type::DATA_PACKAGE,
        len,
    })?;
    let Some(head) = buf.get_mut(..len) else {
        return Err(super::EncodeError::BufferTooSmall {
            needed: len,
            available: buf.len(),
        });
    };
    let [hi, lo] = size.to_be_bytes();
    head[..4].copy_from_slice(&[hi, lo, package_type::DATA_PACKAGE, recipe_id]);
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ClientMessage, DataHeader, ProtocolVersion};

    /// Reads `package` into the buffer as one read, and returns the address of its values.
    fn values_address(frames: &mut FrameBuffer, package: &[u8], values_at: usize) -> usize {
        frames.spare()[..package.len()].copy_from_slice(package);
        frames.commit(package.len());
        frames.buffered()[values_at..].as_ptr().addr()
    }

    #[test]
    fn a_package_read_into_a_drained_buffer_has_its_values_8_byte_aligned() {
        let v2 = DataHeader::new(ProtocolVersion::V2, Some(1), 8).unwrap();
        let v1 = DataHeader::new(ProtocolVersion::V1, None, 8).unwrap();
        let mut frames = FrameBuffer::new();
        // Before any recipe: a protocol v2 package.
        let package = [0, 12, b'U', 1, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(values_address(&mut frames, &package, 4) % 8, 0);
        assert!(frames.take_data(&v2).is_some());
        // Each read after a drain lands the same way, and a v1 recipe moves the front.
        assert_eq!(values_address(&mut frames, &package, 4) % 8, 0);
        assert!(
            frames.take_data(&v1).is_none(),
            "a v2 package is not a v1 one"
        );
        let _ = frames.next_frame();
        let v1_package = [0, 11, b'U', 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(values_address(&mut frames, &v1_package, 3) % 8, 0);
        assert_eq!(frames.take_data(&v1).map(|r| r.len()), Some(8));
    }

    #[test]
    fn a_partial_package_moved_to_the_front_keeps_its_values_aligned_and_whole() {
        let v2 = DataHeader::new(ProtocolVersion::V2, Some(1), 8).unwrap();
        let mut frames = FrameBuffer::new();
        let package = [0, 12, b'U', 1, 1, 2, 3, 4, 5, 6, 7, 8];
        // Whole packages up to the buffer's last quarter package, then half of one; once
        // the whole ones are taken, the next read moves the half to the front.
        for _ in 0..frames.buf.len() {
            if frames.buf.len() - frames.end < MAX_PACKAGE_LEN / 4 {
                break;
            }
            frames.spare()[..package.len()].copy_from_slice(&package);
            frames.commit(package.len());
        }
        frames.spare()[..5].copy_from_slice(&package[..5]);
        frames.commit(5);
        for _ in 0..frames.buf.len() {
            if frames.take_data(&v2).is_none() {
                break;
            }
        }
        assert_eq!(frames.buffered(), &package[..5]);
        let spare = frames.spare();
        spare[..7].copy_from_slice(&package[5..]);
        frames.commit(7);
        assert_eq!(frames.buffered()[4..].as_ptr().addr() % 8, 0);
        let values = frames.take_data(&v2).unwrap();
        assert_eq!(frames.bytes_at(values), &package[4..]);
    }

    #[test]
    fn in_place_input_package_matches_the_encoder() {
        let mut buf = [0u8; 16];
        buf[4..8].copy_from_slice(&[0, 0, 0, 7]);
        let n = finish_input_data_package(&mut buf, 3, 4).unwrap();
        let mut expected = [0u8; 16];
        let m = ClientMessage::DataPackage {
            recipe_id: 3,
            payload: &[0, 0, 0, 7],
        }
        .encode(ProtocolVersion::V2, &mut expected)
        .unwrap();
        assert_eq!(buf[..n], expected[..m]);
        assert!(finish_input_data_package(&mut buf, 3, 13).is_err());
        assert!(finish_input_data_package(&mut [0u8; 70_000], 3, 65_533).is_err());
    }

    #[test]
    fn debug_does_not_dump_the_buffer() {
        assert!(format!("{:?}", FrameBuffer::new()).len() < 80);
    }
}
