//! The RTDE wire protocol as pure functions over bytes: no sockets, no clocks.
//!
//! Every package starts with a three-byte header; the size counts the header itself, and
//! every multi-byte value is big-endian:
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+---------------+----- ... -----+
//! |  package size (u16, BE, >= 3) | package type  |   payload     |
//! +---------------+---------------+---------------+----- ... -----+
//! ```
//!
//! [`Frame`] splits a byte stream into packages; [`ClientMessage`] (what a client sends)
//! and [`ControllerMessage`] (what a controller sends) give them meaning, in both protocol
//! versions, and encode them back. The client in this crate and the simulator in `rtde-sim`
//! are both thin layers over this module.
//!
//! ```
//! use rtde_core::protocol::{ClientMessage, ProtocolVersion, Frame};
//!
//! let mut buf = [0u8; 16];
//! let n = ClientMessage::RequestProtocolVersion { version: 2 }.encode(ProtocolVersion::V2, &mut buf).unwrap();
//! assert_eq!(&buf[..n], [0x00, 0x05, b'V', 0x00, 0x02]);
//!
//! let (frame, used) = Frame::parse(&buf[..n]).unwrap().unwrap();
//! assert_eq!(used, 5);
//! let msg = ClientMessage::decode(frame, ProtocolVersion::V2).unwrap();
//! assert_eq!(msg, ClientMessage::RequestProtocolVersion { version: 2 });
//! ```

mod bytes;
mod data_header;
mod error;
mod frame;
mod message;
pub mod timing;

pub use data_header::DataHeader;
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub(crate) use frame::finish_input_data_package;
pub use frame::{Frame, FrameBuffer, HEADER_LEN, MAX_PACKAGE_LEN};
pub use message::{ClientMessage, ControllerMessage, END_OF_STREAM, MessageLevel, TextMessage};

/// The package type bytes, named as in the RTDE guide.
pub mod package_type {
    /// `V` (86): negotiate the protocol version.
    pub const REQUEST_PROTOCOL_VERSION: u8 = b'V';
    /// `v` (118): ask for the controller's software version.
    pub const GET_URCONTROL_VERSION: u8 = b'v';
    /// `M` (77): a text message, in either direction.
    pub const TEXT_MESSAGE: u8 = b'M';
    /// `U` (85): a data package of a set-up recipe.
    pub const DATA_PACKAGE: u8 = b'U';
    /// `O` (79): set up the output recipe.
    pub const SETUP_OUTPUTS: u8 = b'O';
    /// `I` (73): set up an input recipe.
    pub const SETUP_INPUTS: u8 = b'I';
    /// `S` (83): start streaming outputs.
    pub const START: u8 = b'S';
    /// `P` (80): pause streaming outputs.
    pub const PAUSE: u8 = b'P';

    /// Every package type this crate knows.
    pub const ALL: [u8; 8] = [
        REQUEST_PROTOCOL_VERSION,
        GET_URCONTROL_VERSION,
        TEXT_MESSAGE,
        DATA_PACKAGE,
        SETUP_OUTPUTS,
        SETUP_INPUTS,
        START,
        PAUSE,
    ];

    /// Whether `kind` is one of [`ALL`], the package types this crate knows.
    #[must_use]
    pub const fn is_known(kind: u8) -> bool {
        let mut i = 0;
        while i < ALL.len() {
            if ALL[i] == kind {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether a header with type byte `kind` can start a package at all: every RTDE
    /// package type is an ASCII letter, so a package of a type this crate does not know
    /// (one a newer controller added) has a letter too, and its size field can be trusted
    /// to skip it. Any other byte means the stream is out of step.
    ///
    /// ```
    /// use rtde_core::protocol::package_type;
    ///
    /// assert!(package_type::may_start_package(package_type::DATA_PACKAGE));
    /// assert!(package_type::may_start_package(b'X')); // unknown, but skippable
    /// assert!(!package_type::may_start_package(0xbe));
    /// ```
    #[must_use]
    pub const fn may_start_package(kind: u8) -> bool {
        kind.is_ascii_alphabetic()
    }

    /// The RTDE guide's name for a package type byte, or `"unknown"`.
    #[must_use]
    pub const fn name(kind: u8) -> &'static str {
        match kind {
            REQUEST_PROTOCOL_VERSION => "REQUEST_PROTOCOL_VERSION",
            GET_URCONTROL_VERSION => "GET_URCONTROL_VERSION",
            TEXT_MESSAGE => "TEXT_MESSAGE",
            DATA_PACKAGE => "DATA_PACKAGE",
            SETUP_OUTPUTS => "SETUP_OUTPUTS",
            SETUP_INPUTS => "SETUP_INPUTS",
            START => "START",
            PAUSE => "PAUSE",
            _ => "unknown",
        }
    }
}

/// The RTDE protocol version in use on a connection; it decides the layout of
/// SETUP_OUTPUTS, TEXT_MESSAGE and output DATA_PACKAGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// Version 1: no output frequency (outputs at the control-loop rate), no output recipe
    /// id in data packages, a single output recipe.
    V1,
    /// Version 2: output frequency in SETUP_OUTPUTS, recipe id in every data package.
    V2,
}

impl ProtocolVersion {
    /// The number sent in REQUEST_PROTOCOL_VERSION.
    #[must_use]
    pub const fn number(self) -> u16 {
        match self {
            ProtocolVersion::V1 => 1,
            ProtocolVersion::V2 => 2,
        }
    }

    /// The version for a number, if this crate speaks it.
    #[must_use]
    pub const fn from_number(n: u16) -> Option<Self> {
        match n {
            1 => Some(ProtocolVersion::V1),
            2 => Some(ProtocolVersion::V2),
            _ => None,
        }
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}", self.number())
    }
}
