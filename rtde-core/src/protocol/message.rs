//! The meaning of each package, in both protocol versions and both directions.

use std::borrow::Cow;

use rtde_fields::ControllerVersion;

use super::ProtocolVersion;
use super::bytes::{Reader, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::frame::{Frame, HEADER_LEN};
use super::package_type as ty;

/// How serious a text message is, as the level byte says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageLevel {
    /// 0: an exception (a script or controller failure).
    Exception,
    /// 1: an error.
    Error,
    /// 2: a warning.
    Warning,
    /// 3: information.
    Info,
    /// A level byte the guide does not define, kept as received.
    Unknown(u8),
}

impl MessageLevel {
    /// The level byte.
    #[must_use]
    pub const fn code(self) -> u8 {
        match self {
            MessageLevel::Exception => 0,
            MessageLevel::Error => 1,
            MessageLevel::Warning => 2,
            MessageLevel::Info => 3,
            MessageLevel::Unknown(code) => code,
        }
    }

    /// The level of a byte; never fails.
    #[must_use]
    pub const fn from_code(code: u8) -> Self {
        match code {
            0 => MessageLevel::Exception,
            1 => MessageLevel::Error,
            2 => MessageLevel::Warning,
            3 => MessageLevel::Info,
            other => MessageLevel::Unknown(other),
        }
    }
}

/// A TEXT_MESSAGE, in either direction.
///
/// Protocol v1 carries the level byte then the text; v2 carries the message and its source,
/// each behind a one-byte length, then the level byte. The texts are kept as bytes: the
/// controller does not promise UTF-8, and a message is never worth dropping a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextMessage<'a> {
    /// The level.
    pub level: MessageLevel,
    /// The message text.
    pub message: &'a [u8],
    /// Who sent it (v2 only; empty in v1).
    pub source: &'a [u8],
}

/// The text of the message that announces the end of a stream: see
/// [`TextMessage::end_of_stream`].
pub const END_OF_STREAM: &str = "end of stream: the source has no more data";

impl TextMessage<'static> {
    /// The message a server that is not a live robot (a replayed capture, a simulator whose
    /// source ran out) sends right after its last data package and right before it closes
    /// the connection: an [`Info`](MessageLevel::Info) text whose message is exactly
    /// [`END_OF_STREAM`], from `source` (protocol v2; v1 sends no source).
    ///
    /// The RTDE guide defines no end of stream: a controller streams until the client
    /// pauses or leaves, so a close without this message is a lost link. A recorder that
    /// received it before a clean close ([`Error::Closed`](crate::Error::Closed) with
    /// `mid_frame: false`) has everything the server had, and finishes normally. Clients
    /// that know nothing of it print one more informational message.
    ///
    /// ```
    /// use rtde_core::protocol::{MessageLevel, TextMessage};
    ///
    /// let end = TextMessage::end_of_stream(b"RTDE");
    /// assert!(end.is_end_of_stream());
    /// assert_eq!(end.level, MessageLevel::Info);
    /// let warning = TextMessage { level: MessageLevel::Warning, ..end };
    /// assert!(!warning.is_end_of_stream());
    /// ```
    #[must_use]
    pub const fn end_of_stream(source: &'static [u8]) -> Self {
        TextMessage {
            level: MessageLevel::Info,
            message: END_OF_STREAM.as_bytes(),
            source,
        }
    }
}

impl TextMessage<'_> {
    /// Whether this is the message [`TextMessage::end_of_stream`] builds (any source).
    #[must_use]
    pub fn is_end_of_stream(&self) -> bool {
        self.level == MessageLevel::Info && self.message == END_OF_STREAM.as_bytes()
    }

    /// The message as text, with invalid UTF-8 replaced.
    #[must_use]
    pub fn message_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.message)
    }

    /// The source as text, with invalid UTF-8 replaced.
    #[must_use]
    pub fn source_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.source)
    }

    fn payload_len(&self, version: ProtocolVersion) -> Result<usize, EncodeError> {
        Ok(match version {
            ProtocolVersion::V1 => 1 + self.message.len(),
            ProtocolVersion::V2 => {
                short_len(self.message, "message")?;
                short_len(self.source, "source")?;
                1 + self.message.len() + 1 + self.source.len() + 1
            }
        })
    }

    fn write(&self, version: ProtocolVersion, w: &mut Writer<'_>) {
        match version {
            ProtocolVersion::V1 => {
                w.put(&[self.level.code()]);
                w.put(self.message);
            }
            ProtocolVersion::V2 => {
                // Lengths were checked by `payload_len`.
                w.put(&[u8::try_from(self.message.len()).unwrap_or(u8::MAX)]);
                w.put(self.message);
                w.put(&[u8::try_from(self.source.len()).unwrap_or(u8::MAX)]);
                w.put(self.source);
                w.put(&[self.level.code()]);
            }
        }
    }

    fn read<'a>(
        version: ProtocolVersion,
        r: &mut Reader<'a>,
    ) -> Result<TextMessage<'a>, DecodeError> {
        Ok(match version {
            ProtocolVersion::V1 => {
                let level = MessageLevel::from_code(r.u8("message level")?);
                TextMessage {
                    level,
                    message: r.rest(),
                    source: &[],
                }
            }
            ProtocolVersion::V2 => {
                let n = r.u8("message length")?;
                let message = r.bytes(usize::from(n), "message text")?;
                let n = r.u8("source length")?;
                let source = r.bytes(usize::from(n), "source text")?;
                let level = MessageLevel::from_code(r.u8("message level")?);
                TextMessage {
                    level,
                    message,
                    source,
                }
            }
        })
    }
}

fn short_len(text: &[u8], what: &'static str) -> Result<(), EncodeError> {
    if text.len() > usize::from(u8::MAX) {
        return Err(EncodeError::TextTooLong {
            what,
            len: text.len(),
        });
    }
    Ok(())
}

/// A package a client sends to the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ClientMessage<'a> {
    /// `V`: the protocol version the client wants (u16).
    RequestProtocolVersion {
        /// The version number.
        version: u16,
    },
    /// `v`: ask for the controller's software version (no payload).
    GetUrcontrolVersion,
    /// `M`: a text message for the controller's log.
    TextMessage(TextMessage<'a>),
    /// `O`: the output recipe.
    SetupOutputs {
        /// The output frequency in Hz: present in v2, absent in v1.
        frequency: Option<f64>,
        /// Comma-separated variable names.
        names: &'a str,
    },
    /// `I`: an input recipe (comma-separated variable names).
    SetupInputs {
        /// Comma-separated variable names.
        names: &'a str,
    },
    /// `S`: start streaming outputs.
    Start,
    /// `P`: pause streaming outputs.
    Pause,
    /// `U`: input values for a set-up input recipe.
    DataPackage {
        /// The input recipe id the controller assigned.
        recipe_id: u8,
        /// The values, in recipe order, big-endian.
        payload: &'a [u8],
    },
}

impl<'a> ClientMessage<'a> {
    /// The package type byte.
    #[must_use]
    pub fn package_type(&self) -> u8 {
        match self {
            ClientMessage::RequestProtocolVersion { .. } => ty::REQUEST_PROTOCOL_VERSION,
            ClientMessage::GetUrcontrolVersion => ty::GET_URCONTROL_VERSION,
            ClientMessage::TextMessage(_) => ty::TEXT_MESSAGE,
            ClientMessage::SetupOutputs { .. } => ty::SETUP_OUTPUTS,
            ClientMessage::SetupInputs { .. } => ty::SETUP_INPUTS,
            ClientMessage::Start => ty::START,
            ClientMessage::Pause => ty::PAUSE,
            ClientMessage::DataPackage { .. } => ty::DATA_PACKAGE,
        }
    }

    /// The package's length on the wire, header included.
    ///
    /// # Errors
    /// As [`ClientMessage::encode`], except for the buffer size.
    pub fn encoded_len(&self, version: ProtocolVersion) -> Result<usize, EncodeError> {
        let payload = match self {
            ClientMessage::RequestProtocolVersion { .. } => 2,
            ClientMessage::GetUrcontrolVersion | ClientMessage::Start | ClientMessage::Pause => 0,
            ClientMessage::TextMessage(t) => t.payload_len(version)?,
            ClientMessage::SetupOutputs { frequency, names } => match (version, frequency) {
                (ProtocolVersion::V1, None) => names.len(),
                (ProtocolVersion::V2, Some(_)) => 8 + names.len(),
                (ProtocolVersion::V1, Some(_)) => {
                    return Err(EncodeError::NotInVersion(
                        "protocol v1 SETUP_OUTPUTS has no frequency: outputs come at the control-loop rate",
                    ));
                }
                (ProtocolVersion::V2, None) => {
                    return Err(EncodeError::NotInVersion(
                        "protocol v2 SETUP_OUTPUTS needs a frequency",
                    ));
                }
            },
            ClientMessage::SetupInputs { names } => names.len(),
            ClientMessage::DataPackage { payload, .. } => 1 + payload.len(),
        };
        Ok(HEADER_LEN + payload)
    }

    /// Encodes the package into the front of `buf` and returns its length.
    ///
    /// # Errors
    /// A buffer too small, a package over 65535 bytes, a v2 text over 255 bytes, or a
    /// SETUP_OUTPUTS whose frequency does not match the version (v2 needs one, v1 has none).
    #[inline]
    pub fn encode(&self, version: ProtocolVersion, buf: &mut [u8]) -> Result<usize, EncodeError> {
        // Input data packages are what a client sends every cycle: encode them where the
        // caller can inline them, and everything else (and every error) out of line.
        if let ClientMessage::DataPackage { recipe_id, payload } = *self {
            let len = HEADER_LEN + 1 + payload.len();
            if let (Ok(size), Some(out)) = (u16::try_from(len), buf.get_mut(..len)) {
                let [hi, lo] = size.to_be_bytes();
                let (head, body) = out.split_at_mut(HEADER_LEN + 1);
                head.copy_from_slice(&[hi, lo, ty::DATA_PACKAGE, recipe_id]);
                body.copy_from_slice(payload);
                return Ok(len);
            }
        }
        self.encode_any(version, buf)
    }

    /// [`ClientMessage::encode`] for every package type.
    fn encode_any(&self, version: ProtocolVersion, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let len = self.encoded_len(version)?;
        let mut w = Writer::package(buf, self.package_type(), len)?;
        match self {
            ClientMessage::RequestProtocolVersion { version } => w.put(&version.to_be_bytes()),
            ClientMessage::GetUrcontrolVersion | ClientMessage::Start | ClientMessage::Pause => {}
            ClientMessage::TextMessage(t) => t.write(version, &mut w),
            ClientMessage::SetupOutputs { frequency, names } => {
                if let Some(f) = frequency {
                    w.put(&f.to_be_bytes());
                }
                w.put(names.as_bytes());
            }
            ClientMessage::SetupInputs { names } => w.put(names.as_bytes()),
            ClientMessage::DataPackage { recipe_id, payload } => {
                w.put(&[*recipe_id]);
                w.put(payload);
            }
        }
        Ok(w.finish())
    }

    /// Reads a package a client sent (the controller's side of the connection).
    ///
    /// # Errors
    /// A payload that does not match the package type's layout exactly.
    pub fn decode(frame: Frame<'a>, version: ProtocolVersion) -> Result<Self, DecodeError> {
        let mut r = Reader::new(frame.kind, frame.payload);
        let msg = match frame.kind {
            ty::REQUEST_PROTOCOL_VERSION => ClientMessage::RequestProtocolVersion {
                version: r.u16("protocol version")?,
            },
            ty::GET_URCONTROL_VERSION => ClientMessage::GetUrcontrolVersion,
            ty::TEXT_MESSAGE => ClientMessage::TextMessage(TextMessage::read(version, &mut r)?),
            ty::SETUP_OUTPUTS => {
                let frequency = match version {
                    ProtocolVersion::V1 => None,
                    ProtocolVersion::V2 => Some(r.f64("output frequency")?),
                };
                let rest = r.rest();
                let names = r.text(rest, "variable names")?;
                ClientMessage::SetupOutputs { frequency, names }
            }
            ty::SETUP_INPUTS => {
                let rest = r.rest();
                ClientMessage::SetupInputs {
                    names: r.text(rest, "variable names")?,
                }
            }
            ty::START => ClientMessage::Start,
            ty::PAUSE => ClientMessage::Pause,
            ty::DATA_PACKAGE => ClientMessage::DataPackage {
                recipe_id: r.u8("input recipe id")?,
                payload: r.rest(),
            },
            other => {
                return Err(DecodeError::new(
                    other,
                    0,
                    DecodeErrorKind::UnknownPackageType { byte: other },
                ));
            }
        };
        r.finish()?;
        Ok(msg)
    }
}

/// A package a controller sends to a client.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ControllerMessage<'a> {
    /// `V`: whether the requested protocol version was accepted.
    ProtocolVersionReply {
        /// The controller speaks the version.
        accepted: bool,
    },
    /// `v`: the controller's software version (four u32).
    UrcontrolVersion(ControllerVersion),
    /// `M`: a text message (a refusal, a warning, a boot notice).
    TextMessage(TextMessage<'a>),
    /// `O`: the reply to SETUP_OUTPUTS.
    SetupOutputsReply {
        /// The output recipe id (v2); v1 has none.
        recipe_id: Option<u8>,
        /// Comma-separated wire types, or `NOT_FOUND` for unknown names.
        types: &'a str,
    },
    /// `I`: the reply to SETUP_INPUTS.
    SetupInputsReply {
        /// The input recipe id; 0 means the setup was rejected.
        recipe_id: u8,
        /// Comma-separated wire types, `NOT_FOUND` or `IN_USE`.
        types: &'a str,
    },
    /// `S`: whether START was accepted.
    StartReply {
        /// Streaming started.
        accepted: bool,
    },
    /// `P`: whether PAUSE was accepted.
    PauseReply {
        /// Streaming paused.
        accepted: bool,
    },
    /// `U`: output values.
    DataPackage {
        /// The output recipe id (v2); v1 output packages carry none.
        recipe_id: Option<u8>,
        /// The values, in recipe order, big-endian.
        payload: &'a [u8],
    },
}

impl<'a> ControllerMessage<'a> {
    /// The package type byte.
    #[must_use]
    pub fn package_type(&self) -> u8 {
        match self {
            ControllerMessage::ProtocolVersionReply { .. } => ty::REQUEST_PROTOCOL_VERSION,
            ControllerMessage::UrcontrolVersion(_) => ty::GET_URCONTROL_VERSION,
            ControllerMessage::TextMessage(_) => ty::TEXT_MESSAGE,
            ControllerMessage::SetupOutputsReply { .. } => ty::SETUP_OUTPUTS,
            ControllerMessage::SetupInputsReply { .. } => ty::SETUP_INPUTS,
            ControllerMessage::StartReply { .. } => ty::START,
            ControllerMessage::PauseReply { .. } => ty::PAUSE,
            ControllerMessage::DataPackage { .. } => ty::DATA_PACKAGE,
        }
    }

    /// The package's length on the wire, header included.
    ///
    /// # Errors
    /// As [`ControllerMessage::encode`], except for the buffer size.
    pub fn encoded_len(&self, version: ProtocolVersion) -> Result<usize, EncodeError> {
        let payload = match self {
            ControllerMessage::ProtocolVersionReply { .. }
            | ControllerMessage::StartReply { .. }
            | ControllerMessage::PauseReply { .. } => 1,
            ControllerMessage::UrcontrolVersion(_) => 16,
            ControllerMessage::TextMessage(t) => t.payload_len(version)?,
            ControllerMessage::SetupOutputsReply { recipe_id, types } => {
                check_recipe_id(
                    version,
                    *recipe_id,
                    (
                        "a protocol v2 SETUP_OUTPUTS reply carries the output recipe id",
                        "a protocol v1 SETUP_OUTPUTS reply carries no recipe id",
                    ),
                )? + types.len()
            }
            ControllerMessage::SetupInputsReply { types, .. } => 1 + types.len(),
            ControllerMessage::DataPackage { recipe_id, payload } => {
                check_recipe_id(
                    version,
                    *recipe_id,
                    (
                        "a protocol v2 output DATA_PACKAGE carries the output recipe id",
                        "a protocol v1 output DATA_PACKAGE carries no recipe id",
                    ),
                )? + payload.len()
            }
        };
        Ok(HEADER_LEN + payload)
    }

    /// Encodes the package into the front of `buf` and returns its length.
    ///
    /// # Errors
    /// A buffer too small, a package over 65535 bytes, a v2 text over 255 bytes, or an
    /// output recipe id that does not match the version (v2 needs one, v1 has none).
    pub fn encode(&self, version: ProtocolVersion, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let len = self.encoded_len(version)?;
        let mut w = Writer::package(buf, self.package_type(), len)?;
        match self {
            ControllerMessage::ProtocolVersionReply { accepted }
            | ControllerMessage::StartReply { accepted }
            | ControllerMessage::PauseReply { accepted } => w.put(&[u8::from(*accepted)]),
            ControllerMessage::UrcontrolVersion(v) => {
                for part in [v.major, v.minor, v.bugfix, v.build] {
                    w.put(&part.to_be_bytes());
                }
            }
            ControllerMessage::TextMessage(t) => t.write(version, &mut w),
            ControllerMessage::SetupOutputsReply { recipe_id, types } => {
                if let Some(id) = recipe_id {
                    w.put(&[*id]);
                }
                w.put(types.as_bytes());
            }
            ControllerMessage::SetupInputsReply { recipe_id, types } => {
                w.put(&[*recipe_id]);
                w.put(types.as_bytes());
            }
            ControllerMessage::DataPackage { recipe_id, payload } => {
                if let Some(id) = recipe_id {
                    w.put(&[*id]);
                }
                w.put(payload);
            }
        }
        Ok(w.finish())
    }

    /// Reads a package a controller sent (the client's side of the connection).
    ///
    /// # Errors
    /// A payload that does not match the package type's layout exactly.
    #[inline]
    pub fn decode(frame: Frame<'a>, version: ProtocolVersion) -> Result<Self, DecodeError> {
        // Nearly every package of a connection is an output data package: take those here,
        // where the caller can inline them, and everything else (and every error) out of line.
        if frame.kind == ty::DATA_PACKAGE {
            match version {
                ProtocolVersion::V2 => {
                    if let Some((&id, payload)) = frame.payload.split_first() {
                        return Ok(ControllerMessage::DataPackage {
                            recipe_id: Some(id),
                            payload,
                        });
                    }
                }
                ProtocolVersion::V1 => {
                    return Ok(ControllerMessage::DataPackage {
                        recipe_id: None,
                        payload: frame.payload,
                    });
                }
            }
        }
        Self::decode_any(frame, version)
    }

    /// [`ControllerMessage::decode`] for every package type.
    fn decode_any(frame: Frame<'a>, version: ProtocolVersion) -> Result<Self, DecodeError> {
        let mut r = Reader::new(frame.kind, frame.payload);
        let with_id = version == ProtocolVersion::V2;
        let msg = match frame.kind {
            ty::REQUEST_PROTOCOL_VERSION => ControllerMessage::ProtocolVersionReply {
                accepted: r.u8("accepted flag")? != 0,
            },
            ty::GET_URCONTROL_VERSION => {
                ControllerMessage::UrcontrolVersion(ControllerVersion::new(
                    r.u32("major version")?,
                    r.u32("minor version")?,
                    r.u32("bugfix version")?,
                    r.u32("build number")?,
                ))
            }
            ty::TEXT_MESSAGE => ControllerMessage::TextMessage(TextMessage::read(version, &mut r)?),
            ty::SETUP_OUTPUTS => {
                let recipe_id = if with_id {
                    Some(r.u8("output recipe id")?)
                } else {
                    None
                };
                let rest = r.rest();
                ControllerMessage::SetupOutputsReply {
                    recipe_id,
                    types: r.text(rest, "variable types")?,
                }
            }
            ty::SETUP_INPUTS => {
                let recipe_id = r.u8("input recipe id")?;
                let rest = r.rest();
                ControllerMessage::SetupInputsReply {
                    recipe_id,
                    types: r.text(rest, "variable types")?,
                }
            }
            ty::START => ControllerMessage::StartReply {
                accepted: r.u8("accepted flag")? != 0,
            },
            ty::PAUSE => ControllerMessage::PauseReply {
                accepted: r.u8("accepted flag")? != 0,
            },
            ty::DATA_PACKAGE => {
                let recipe_id = if with_id {
                    Some(r.u8("output recipe id")?)
                } else {
                    None
                };
                ControllerMessage::DataPackage {
                    recipe_id,
                    payload: r.rest(),
                }
            }
            other => {
                return Err(DecodeError::new(
                    other,
                    0,
                    DecodeErrorKind::UnknownPackageType { byte: other },
                ));
            }
        };
        r.finish()?;
        Ok(msg)
    }
}

/// The bytes an output recipe id takes: one in v2, none in v1; `messages` says what is
/// wrong when the id does not match the version, as (v2 without id, v1 with id).
fn check_recipe_id(
    version: ProtocolVersion,
    id: Option<u8>,
    messages: (&'static str, &'static str),
) -> Result<usize, EncodeError> {
    match (version, id) {
        (ProtocolVersion::V2, Some(_)) => Ok(1),
        (ProtocolVersion::V1, None) => Ok(0),
        (ProtocolVersion::V2, None) => Err(EncodeError::NotInVersion(messages.0)),
        (ProtocolVersion::V1, Some(_)) => Err(EncodeError::NotInVersion(messages.1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data packages take an inline path in `decode` and `encode`; it must agree with the
    /// general one, errors included.
    #[test]
    fn data_package_fast_paths_agree_with_the_general_ones() {
        for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
            for payload in [&[][..], &[7], &[1, 2, 3, 4, 5]] {
                let frame = Frame {
                    kind: ty::DATA_PACKAGE,
                    payload,
                };
                assert_eq!(
                    ControllerMessage::decode(frame, version),
                    ControllerMessage::decode_any(frame, version),
                    "{version} {payload:?}"
                );
            }
        }
        let short = [9u8; 70];
        let long = vec![9u8; 65_533]; // a package of 65 537 bytes: over the u16 size
        for payload in [&short[..], &long[..]] {
            for len in [0, 3, 73, 74, 200, 70_000] {
                let msg = ClientMessage::DataPackage {
                    recipe_id: 3,
                    payload,
                };
                let (mut fast, mut general) = (vec![0u8; len], vec![0u8; len]);
                assert_eq!(
                    msg.encode(ProtocolVersion::V2, &mut fast),
                    msg.encode_any(ProtocolVersion::V2, &mut general),
                    "{} bytes into {len}",
                    payload.len()
                );
                assert_eq!(fast, general);
            }
        }
    }
}
