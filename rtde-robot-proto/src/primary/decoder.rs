//! A connection's decoder: the layout its version message announces, the robot state its
//! state messages build up, and counts of what it passed over.

use super::message::{HEADER_LEN, message_of, split};
use super::{DecodeError, Layout, PrimaryMessage, ROBOT_MESSAGE, ROBOT_STATE, RobotState, Update};

/// What the next package was.
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum Decoded<'a> {
    /// A robot state message: the state it updated, and what it carried.
    State {
        /// The state so far, this message's sub-packages applied.
        state: &'a RobotState,
        /// What this message carried.
        update: Update,
    },
    /// A robot message, or a package of another type ([`PrimaryMessage::Other`]).
    Message(PrimaryMessage),
}

/// What a [`Decoder`] has decoded and passed over so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecoderStats {
    /// Robot state messages.
    pub states: u64,
    /// Robot messages decoded.
    pub messages: u64,
    /// Packages of types this crate does not decode, and robot messages of unknown kinds.
    pub skipped_packages: u64,
    /// Robot messages cut inside their fields.
    pub cut_messages: u64,
    /// Sub-packages of types this crate does not decode.
    pub skipped_sub_packages: u64,
    /// Sub-packages cut inside their fields, or whose size did not fit.
    pub cut_sub_packages: u64,
}

/// Decodes a primary interface stream, package by package, without allocating for robot
/// state messages.
///
/// The version message, first on every connection, sets the [`Layout`]; before it the
/// decoder assumes [`Layout::NEWEST`].
///
/// ```
/// use rtde_core::fields::ControllerVersion;
/// use rtde_robot_proto::primary::{
///     Decoded, Decoder, Layout, PrimaryMessage, RobotModeData, RobotState,
/// };
///
/// let version = ControllerVersion::new(3, 15, 8, 0);
/// let mut stream = Vec::new();
/// PrimaryMessage::Version { project: "URControl".into(), version, build_date: String::new() }
///     .encode(0, &mut stream);
/// let mut state = RobotState::default();
/// state.robot_mode = Some(RobotModeData { robot_mode: 5, ..Default::default() });
/// state.encode(Layout::of(version), &mut stream);
///
/// let mut decoder = Decoder::new();
/// let (_, used) = decoder.decode(&stream).unwrap().unwrap();
/// assert_eq!(decoder.layout(), Layout::of(version));
/// let Some((Decoded::State { state: seen, .. }, _)) = decoder.decode(&stream[used..]).unwrap()
/// else {
///     panic!("a robot state")
/// };
/// assert_eq!(seen.robot_mode.unwrap().mode(), rtde_core::RobotMode::Idle);
/// ```
#[derive(Clone, Debug)]
pub struct Decoder {
    meaning: Meaning,
    /// Bytes read and not yet decoded: `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// What the packages so far mean: the layout, the state, the counts.
#[derive(Clone, Debug)]
struct Meaning {
    layout: Layout,
    state: RobotState,
    stats: DecoderStats,
}

/// Room a read is offered at least: a robot state message fits twice.
const READ_CHUNK: usize = 4096;

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder for a new connection.
    #[must_use]
    pub fn new() -> Self {
        Decoder {
            meaning: Meaning {
                layout: Layout::NEWEST,
                state: RobotState::default(),
                stats: DecoderStats::default(),
            },
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    /// The layout robot states are decoded in.
    #[must_use]
    pub fn layout(&self) -> Layout {
        self.meaning.layout
    }

    /// The robot state so far.
    #[must_use]
    pub fn state(&self) -> &RobotState {
        &self.meaning.state
    }

    /// What was decoded and passed over so far.
    #[must_use]
    pub fn stats(&self) -> DecoderStats {
        self.meaning.stats
    }

    /// Decodes the next package at the start of `buf`: what it was and the bytes it
    /// used, `Ok(None)` when it has not all arrived (nothing is consumed).
    ///
    /// # Errors
    /// [`DecodeError::BadSize`] for a size no package has: the stream cannot be followed.
    /// Anything else in a package of a plausible size is passed over and counted.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Option<(Decoded<'_>, usize)>, DecodeError> {
        let Some(package) = split(buf)? else {
            return Ok(None);
        };
        let used = package.len();
        Ok(Some((self.meaning.decode(package), used)))
    }

    /// Where to read the connection's next bytes into (then say how many with
    /// [`filled`](Self::filled)): the decoder keeps them until a package is whole. The
    /// buffer grows to the largest package seen, then is reused.
    ///
    /// ```
    /// use rtde_robot_proto::primary::{Decoded, Decoder, PrimaryMessage};
    ///
    /// let mut bytes = Vec::new();
    /// PrimaryMessage::Text("hello".into()).encode(0, &mut bytes);
    /// let mut decoder = Decoder::new();
    /// // The package arrives in two reads.
    /// for piece in [&bytes[..7], &bytes[7..]] {
    ///     assert!(decoder.poll().unwrap().is_none());
    ///     decoder.read_buf()[..piece.len()].copy_from_slice(piece);
    ///     decoder.filled(piece.len());
    /// }
    /// assert_eq!(
    ///     decoder.poll().unwrap(),
    ///     Some(Decoded::Message(PrimaryMessage::Text("hello".into())))
    /// );
    /// ```
    pub fn read_buf(&mut self) -> &mut [u8] {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        // A package whose size has arrived needs room for all of it.
        let whole = self.buf[..self.end]
            .first_chunk::<4>()
            .and_then(|size| usize::try_from(i32::from_be_bytes(*size)).ok())
            .filter(|&n| n <= super::MAX_PACKAGE_LEN)
            .unwrap_or(0);
        let needed = whole.max(self.end + READ_CHUNK);
        if self.buf.len() < needed {
            self.buf.resize(needed, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Says that a read put `n` bytes at the start of [`read_buf`](Self::read_buf).
    pub fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }

    /// Whether a whole package has been read (so [`poll`](Self::poll) returns one).
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    pub fn ready(&self) -> Result<bool, DecodeError> {
        split(&self.buf[self.start..self.end]).map(|package| package.is_some())
    }

    /// The next package among the bytes read so far, `Ok(None)` until one is whole.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    pub fn poll(&mut self) -> Result<Option<Decoded<'_>>, DecodeError> {
        let Some(package) = split(&self.buf[self.start..self.end])? else {
            return Ok(None);
        };
        let range = self.start..self.start + package.len();
        self.start = range.end;
        Ok(Some(self.meaning.decode(&self.buf[range])))
    }
}

impl Meaning {
    /// What a whole package means.
    fn decode(&mut self, package: &[u8]) -> Decoded<'_> {
        if package[4] == ROBOT_STATE {
            let update = self.state.update(&package[HEADER_LEN..], self.layout);
            self.stats.states += 1;
            self.stats.skipped_sub_packages += u64::from(update.skipped);
            self.stats.cut_sub_packages += u64::from(update.cut);
            let state = &self.state;
            return Decoded::State { state, update };
        }
        let Ok(message) = message_of(package) else {
            self.stats.cut_messages += 1;
            let message = PrimaryMessage::Other {
                package_type: ROBOT_MESSAGE,
                message_kind: package.get(HEADER_LEN + 9).copied(),
            };
            return Decoded::Message(message);
        };
        match &message {
            PrimaryMessage::Version { version, .. } => {
                self.layout = Layout::of(*version);
                self.stats.messages += 1;
            }
            PrimaryMessage::Other { .. } => self.stats.skipped_packages += 1,
            _ => self.stats.messages += 1,
        }
        Decoded::Message(message)
    }
}
