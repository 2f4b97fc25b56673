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
    layout: Layout,
    state: RobotState,
    stats: DecoderStats,
}

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
            layout: Layout::NEWEST,
            state: RobotState::default(),
            stats: DecoderStats::default(),
        }
    }

    /// The layout robot states are decoded in.
    #[must_use]
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The robot state so far.
    #[must_use]
    pub fn state(&self) -> &RobotState {
        &self.state
    }

    /// What was decoded and passed over so far.
    #[must_use]
    pub fn stats(&self) -> DecoderStats {
        self.stats
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
        if package[4] == ROBOT_STATE {
            let update = self.state.update(&package[HEADER_LEN..], self.layout);
            self.stats.states += 1;
            self.stats.skipped_sub_packages += u64::from(update.skipped);
            self.stats.cut_sub_packages += u64::from(update.cut);
            let state = &self.state;
            return Ok(Some((Decoded::State { state, update }, used)));
        }
        let Ok(message) = message_of(package) else {
            self.stats.cut_messages += 1;
            let message = PrimaryMessage::Other {
                package_type: ROBOT_MESSAGE,
                message_kind: package.get(HEADER_LEN + 9).copied(),
            };
            return Ok(Some((Decoded::Message(message), used)));
        };
        match &message {
            PrimaryMessage::Version { version, .. } => {
                self.layout = Layout::of(*version);
                self.stats.messages += 1;
            }
            PrimaryMessage::Other { .. } => self.stats.skipped_packages += 1,
            _ => self.stats.messages += 1,
        }
        Ok(Some((Decoded::Message(message), used)))
    }
}
