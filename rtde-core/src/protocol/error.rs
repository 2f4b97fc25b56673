//! What can be wrong with bytes on the wire, and with a package to encode.

use super::package_type;

/// Bytes that are not a valid RTDE package, with where and in what they went wrong.
///
/// ```
/// use rtde_core::protocol::{DecodeErrorKind, Frame};
///
/// let err = Frame::parse(&[0x00, 0x02, b'V']).unwrap_err();
/// assert!(matches!(err.kind(), DecodeErrorKind::SizeTooSmall { size: 2 }));
/// assert_eq!(err.to_string(), "invalid RTDE package (REQUEST_PROTOCOL_VERSION `V`) at byte 0: size field says 2 bytes, less than the 3-byte header");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid RTDE package ({} `{}`) at byte {offset}: {kind}", package_type::name(*.package_type), (*.package_type as char).escape_default())]
pub struct DecodeError {
    package_type: u8,
    offset: usize,
    kind: DecodeErrorKind,
}

impl DecodeError {
    pub(crate) fn new(package_type: u8, offset: usize, kind: DecodeErrorKind) -> Self {
        DecodeError {
            package_type,
            offset,
            kind,
        }
    }

    /// The package type byte of the offending package.
    #[must_use]
    pub fn package_type(&self) -> u8 {
        self.package_type
    }

    /// The offset of the problem: within the payload, or within the frame for header errors.
    #[must_use]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What was wrong.
    #[must_use]
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.kind
    }
}

/// The reason a package could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The size field is below the header's own 3 bytes.
    #[error("size field says {size} bytes, less than the 3-byte header")]
    SizeTooSmall {
        /// The size field.
        size: u16,
    },
    /// The type byte is not an RTDE package type.
    #[error("unknown package type byte 0x{byte:02x}")]
    UnknownPackageType {
        /// The type byte.
        byte: u8,
    },
    /// The payload ended before a value.
    #[error("payload ends before {what}: needs {needed} bytes, {available} left")]
    Truncated {
        /// The value being read.
        what: &'static str,
        /// Bytes the value needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// The payload is longer than its contents.
    #[error("{extra} bytes left over after the last value")]
    TrailingBytes {
        /// How many bytes were not consumed.
        extra: usize,
    },
    /// A text that must be UTF-8 is not.
    #[error("{what} is not valid UTF-8")]
    NotUtf8 {
        /// The text field.
        what: &'static str,
    },
    /// A package type that this side of the connection never receives (a client sending
    /// a GET_URCONTROL_VERSION reply, say) or that needs a recipe id the connection lacks.
    #[error("{0}")]
    Unexpected(&'static str),
}

/// A package that cannot be encoded as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The caller's buffer is shorter than the package.
    #[error("buffer of {available} bytes is too small for a package of {needed} bytes")]
    BufferTooSmall {
        /// The package's encoded length.
        needed: usize,
        /// The buffer's length.
        available: usize,
    },
    /// The package would not fit the 16-bit size field.
    #[error("{} package of {len} bytes exceeds the protocol's 65535-byte limit", package_type::name(*.kind))]
    PackageTooLong {
        /// The package type byte.
        kind: u8,
        /// The length it would have.
        len: usize,
    },
    /// A text longer than its one-byte length prefix allows (v2 text messages).
    #[error("{what} is {len} bytes; a v2 text message allows at most 255")]
    TextTooLong {
        /// The text field.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// The message does not exist in the protocol version asked for (e.g. an output data
    /// package without a recipe id in v2).
    #[error("{0}")]
    NotInVersion(&'static str),
}
