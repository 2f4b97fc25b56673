//! Bounds-checked big-endian reading and writing over slices.

use super::error::{DecodeError, DecodeErrorKind, EncodeError};

/// Reads a payload front to back; every read is checked against the end.
pub(crate) struct Reader<'a> {
    kind: u8,
    payload: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(kind: u8, payload: &'a [u8]) -> Self {
        Reader {
            kind,
            payload,
            pos: 0,
        }
    }

    pub(crate) fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.kind, self.pos, kind)
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let rest = &self.payload[self.pos..];
        let Some(out) = rest.get(..n) else {
            return Err(self.error(DecodeErrorKind::Truncated {
                what,
                needed: n,
                available: rest.len(),
            }));
        };
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64, DecodeError> {
        Ok(f64::from_be_bytes(self.array(what)?))
    }

    /// Everything not read yet.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let rest = &self.payload[self.pos..];
        self.pos = self.payload.len();
        rest
    }

    /// A text field that must be UTF-8 (variable names, type names).
    pub(crate) fn text(
        &mut self,
        bytes: &'a [u8],
        what: &'static str,
    ) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(bytes).map_err(|e| {
            DecodeError::new(
                self.kind,
                self.pos - bytes.len() + e.valid_up_to(),
                DecodeErrorKind::NotUtf8 { what },
            )
        })
    }

    /// Fails unless the whole payload was read.
    pub(crate) fn finish(self) -> Result<(), DecodeError> {
        let extra = self.payload.len() - self.pos;
        if extra == 0 {
            Ok(())
        } else {
            Err(self.error(DecodeErrorKind::TrailingBytes { extra }))
        }
    }
}

/// Writes a package into the caller's buffer, then back-patches the size.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    needed: usize,
}

impl<'a> Writer<'a> {
    /// Starts a package of `kind` whose total encoded length is `needed`.
    pub(crate) fn package(buf: &'a mut [u8], kind: u8, needed: usize) -> Result<Self, EncodeError> {
        if needed > super::MAX_PACKAGE_LEN {
            return Err(EncodeError::PackageTooLong { kind, len: needed });
        }
        if buf.len() < needed {
            return Err(EncodeError::BufferTooSmall {
                needed,
                available: buf.len(),
            });
        }
        // `needed` fits in u16: checked against MAX_PACKAGE_LEN above.
        let size =
            u16::try_from(needed).map_err(|_| EncodeError::PackageTooLong { kind, len: needed })?;
        let mut w = Writer {
            buf,
            pos: 0,
            needed,
        };
        w.put(&size.to_be_bytes());
        w.put(&[kind]);
        Ok(w)
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) {
        // The constructor checked the buffer against the total length the caller computed;
        // `finish` checks that the pieces add up to it.
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }

    pub(crate) fn finish(self) -> usize {
        debug_assert_eq!(
            self.pos, self.needed,
            "encoded length disagrees with encoded_len"
        );
        self.pos
    }
}
