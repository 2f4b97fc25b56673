//! Robot messages (package type 20) and the package framing every primary interface
//! package shares.

use rtde_core::SafetyMode;
use rtde_core::fields::ControllerVersion;

/// Package type of robot state packages.
pub const ROBOT_STATE: u8 = 16;
/// Package type of robot messages.
pub const ROBOT_MESSAGE: u8 = 20;

/// Robot message kinds (the byte after the message header's source).
pub mod message_kind {
    /// A text message.
    pub const TEXT: u8 = 0;
    /// The version message, sent first on every connection.
    pub const VERSION: u8 = 3;
    /// A safety mode change.
    pub const SAFETY_MODE: u8 = 5;
    /// A key message (`PROGRAM_XXX_STARTED`, …).
    pub const KEY: u8 = 7;
    /// A runtime exception: a program failed at a line and column.
    pub const RUNTIME_EXCEPTION: u8 = 10;
}

/// The package header: size (i32) and type (u8).
pub(crate) const HEADER_LEN: usize = 5;
/// The robot message header after it: timestamp (u64), source (i8), kind (u8).
const MESSAGE_HEADER_LEN: usize = 10;
/// The largest package accepted: robot state packages are a few kilobytes.
pub const MAX_PACKAGE_LEN: usize = 1 << 20;

/// A primary interface package, decoded.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PrimaryMessage {
    /// The version message: the controller's software version.
    Version {
        /// The project's name (`URControl`).
        project: String,
        /// The version (major, minor, bugfix, build).
        version: ControllerVersion,
        /// The build date.
        build_date: String,
    },
    /// A runtime exception: the program failed here. Compile errors come this way too,
    /// their text starting `compile_error` or `syntax_error`.
    RuntimeException {
        /// The script line, from 1.
        line: i32,
        /// The column, from 1.
        column: i32,
        /// The controller's text.
        text: String,
    },
    /// The safety mode changed.
    SafetyMode {
        /// The message code.
        code: i32,
        /// The message argument.
        argument: i32,
        /// The new safety mode.
        mode: SafetyMode,
    },
    /// A key message.
    Key {
        /// The message code.
        code: i32,
        /// The message argument.
        argument: i32,
        /// The title (`PROGRAM_XXX_STARTED`).
        title: String,
        /// The text.
        text: String,
    },
    /// A text message.
    Text(String),
    /// A package or message this codec does not decode, skipped whole.
    Other {
        /// The package type.
        package_type: u8,
        /// The robot message kind, for a robot message.
        message_kind: Option<u8>,
    },
}

/// Why bytes are no primary interface stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A size below the header's or above [`MAX_PACKAGE_LEN`]: the stream cannot be followed.
    #[error("primary interface package of impossible size {0}")]
    BadSize(i64),
    /// A message shorter than its fields.
    #[error("primary interface message (kind {kind}) ends at byte {len}, inside its fields")]
    Truncated {
        /// The message kind.
        kind: u8,
        /// The package's length.
        len: usize,
    },
}

/// The next package in `buf`: the message and the bytes it used, `Ok(None)` when the
/// package has not all arrived (nothing is consumed).
///
/// # Errors
/// [`DecodeError`] for a size no package has or a message cut inside its fields.
pub fn parse(buf: &[u8]) -> Result<Option<(PrimaryMessage, usize)>, DecodeError> {
    let Some(package) = split(buf)? else {
        return Ok(None);
    };
    Ok(Some((message_of(package)?, package.len())))
}

/// The next whole package at the start of `buf` (its header included), `Ok(None)` when
/// it has not all arrived.
pub(crate) fn split(buf: &[u8]) -> Result<Option<&[u8]>, DecodeError> {
    let Some(size) = buf.first_chunk::<4>() else {
        return Ok(None);
    };
    let size = i32::from_be_bytes(*size);
    let len = usize::try_from(size)
        .ok()
        .filter(|&n| (HEADER_LEN..=MAX_PACKAGE_LEN).contains(&n))
        .ok_or(DecodeError::BadSize(i64::from(size)))?;
    Ok(buf.get(..len))
}

/// The message a whole package holds; any package but a robot message is `Other`.
pub(crate) fn message_of(package: &[u8]) -> Result<PrimaryMessage, DecodeError> {
    let package_type = package[4];
    if package_type == ROBOT_MESSAGE {
        robot_message(&package[HEADER_LEN..])
    } else {
        Ok(PrimaryMessage::Other {
            package_type,
            message_kind: None,
        })
    }
}

/// A cursor over a message body; every read checks the length.
struct Reader<'a> {
    bytes: &'a [u8],
    kind: u8,
    len: usize,
}

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or(DecodeError::Truncated {
                kind: self.kind,
                len: self.len,
            })?;
        self.bytes = rest;
        Ok(*head)
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        self.take::<4>().map(i32::from_be_bytes)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        self.take::<1>().map(|[b]| b)
    }
    fn text(&mut self, n: usize) -> Result<String, DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError::Truncated {
                kind: self.kind,
                len: self.len,
            });
        }
        let (text, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(String::from_utf8_lossy(text).into_owned())
    }
    fn rest(&mut self) -> String {
        let text = String::from_utf8_lossy(self.bytes).into_owned();
        self.bytes = &[];
        text
    }
}

fn robot_message(body: &[u8]) -> Result<PrimaryMessage, DecodeError> {
    let len = body.len() + HEADER_LEN;
    let Some(header) = body.get(..MESSAGE_HEADER_LEN) else {
        return Err(DecodeError::Truncated { kind: 0, len });
    };
    let kind = header[9];
    let mut r = Reader {
        bytes: &body[MESSAGE_HEADER_LEN..],
        kind,
        len,
    };
    Ok(match kind {
        message_kind::TEXT => PrimaryMessage::Text(r.rest()),
        message_kind::VERSION => {
            let name_len = usize::from(r.u8()?);
            let project = r.text(name_len)?;
            let major = r.u8()?;
            let minor = r.u8()?;
            let bugfix = r.i32()?;
            let build = r.i32()?;
            let part = |n: i32| u32::try_from(n).unwrap_or(0);
            PrimaryMessage::Version {
                project,
                version: ControllerVersion::new(
                    u32::from(major),
                    u32::from(minor),
                    part(bugfix),
                    part(build),
                ),
                build_date: r.rest(),
            }
        }
        message_kind::SAFETY_MODE => {
            let code = r.i32()?;
            let argument = r.i32()?;
            let mode = SafetyMode::from_code(i32::from(r.u8()?));
            PrimaryMessage::SafetyMode {
                code,
                argument,
                mode,
            }
        }
        message_kind::KEY => {
            let code = r.i32()?;
            let argument = r.i32()?;
            let title_len = usize::from(r.u8()?);
            let title = r.text(title_len)?;
            PrimaryMessage::Key {
                code,
                argument,
                title,
                text: r.rest(),
            }
        }
        message_kind::RUNTIME_EXCEPTION => PrimaryMessage::RuntimeException {
            line: r.i32()?,
            column: r.i32()?,
            text: r.rest(),
        },
        other => PrimaryMessage::Other {
            package_type: ROBOT_MESSAGE,
            message_kind: Some(other),
        },
    })
}

impl PrimaryMessage {
    /// Appends the message as a robot message package with this timestamp (the
    /// controller's, in milliseconds); [`PrimaryMessage::Other`] writes nothing.
    /// Texts longer than a length byte allows are cut at 255 bytes.
    pub fn encode(&self, timestamp: u64, out: &mut Vec<u8>) {
        let kind = match self {
            PrimaryMessage::Text(_) => message_kind::TEXT,
            PrimaryMessage::Version { .. } => message_kind::VERSION,
            PrimaryMessage::SafetyMode { .. } => message_kind::SAFETY_MODE,
            PrimaryMessage::Key { .. } => message_kind::KEY,
            PrimaryMessage::RuntimeException { .. } => message_kind::RUNTIME_EXCEPTION,
            PrimaryMessage::Other { .. } => return,
        };
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        out.push(ROBOT_MESSAGE);
        out.extend_from_slice(&timestamp.to_be_bytes());
        // Source: the controller (-2 in UR's tables).
        out.extend_from_slice(&(-2i8).to_be_bytes());
        out.push(kind);
        let short = |s: &str| -> Vec<u8> { s.as_bytes().iter().take(255).copied().collect() };
        let len_byte = |b: &[u8]| u8::try_from(b.len()).unwrap_or(u8::MAX);
        match self {
            PrimaryMessage::Text(text) => out.extend_from_slice(text.as_bytes()),
            PrimaryMessage::Version {
                project,
                version,
                build_date,
            } => {
                let name = short(project);
                out.push(len_byte(&name));
                out.extend_from_slice(&name);
                out.push(u8::try_from(version.major).unwrap_or(u8::MAX));
                out.push(u8::try_from(version.minor).unwrap_or(u8::MAX));
                out.extend_from_slice(
                    &i32::try_from(version.bugfix)
                        .unwrap_or(i32::MAX)
                        .to_be_bytes(),
                );
                out.extend_from_slice(
                    &i32::try_from(version.build)
                        .unwrap_or(i32::MAX)
                        .to_be_bytes(),
                );
                out.extend_from_slice(build_date.as_bytes());
            }
            PrimaryMessage::SafetyMode {
                code,
                argument,
                mode,
            } => {
                out.extend_from_slice(&code.to_be_bytes());
                out.extend_from_slice(&argument.to_be_bytes());
                out.push(u8::try_from(mode.code()).unwrap_or(0));
                // Report data type and data: none.
                out.extend_from_slice(&0u32.to_be_bytes());
                out.extend_from_slice(&0u32.to_be_bytes());
            }
            PrimaryMessage::Key {
                code,
                argument,
                title,
                text,
            } => {
                out.extend_from_slice(&code.to_be_bytes());
                out.extend_from_slice(&argument.to_be_bytes());
                let title = short(title);
                out.push(len_byte(&title));
                out.extend_from_slice(&title);
                out.extend_from_slice(text.as_bytes());
            }
            PrimaryMessage::RuntimeException { line, column, text } => {
                out.extend_from_slice(&line.to_be_bytes());
                out.extend_from_slice(&column.to_be_bytes());
                out.extend_from_slice(text.as_bytes());
            }
            PrimaryMessage::Other { .. } => {}
        }
        let size = i32::try_from(out.len() - start).unwrap_or(i32::MAX);
        out[start..start + 4].copy_from_slice(&size.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime exception at line 3, column 7, written byte by byte.
    const RUNTIME_EXCEPTION: &[u8] = &[
        0, 0, 0, 31, // size: 31 bytes, the header included
        20, // robot message
        0, 0, 0, 0, 0, 0, 0x03, 0xe8, // timestamp 1000 ms
        0xfe, // source -2: the controller
        10,   // runtime exception
        0, 0, 0, 3, // line 3
        0, 0, 0, 7, // column 7
        b'b', b'a', b'd', b' ', b'c', b'a', b'l', b'l', // text
    ];

    #[test]
    fn a_runtime_exception_at_the_byte() {
        let (m, used) = parse(RUNTIME_EXCEPTION).unwrap().unwrap();
        assert_eq!(used, 31);
        assert_eq!(
            m,
            PrimaryMessage::RuntimeException {
                line: 3,
                column: 7,
                text: "bad call".into()
            }
        );
        let mut out = Vec::new();
        m.encode(1000, &mut out);
        assert_eq!(out, RUNTIME_EXCEPTION);
    }

    #[test]
    fn a_version_message_at_the_byte() {
        let bytes: &[u8] = &[
            0, 0, 0, 39, // size
            20, // robot message
            0, 0, 0, 0, 0, 0, 0, 0,    // timestamp 0
            0xfe, // source
            3,    // version
            9, b'U', b'R', b'C', b'o', b'n', b't', b'r', b'o', b'l', // name
            5, 21, // major, minor
            0, 0, 0, 2, // bugfix 2
            0, 1, 0xe2, 0x40, // build 123456
            b'2', b'0', b'2', b'6', // build date
        ];
        let (m, used) = parse(bytes).unwrap().unwrap();
        assert_eq!(used, 39);
        assert_eq!(
            m,
            PrimaryMessage::Version {
                project: "URControl".into(),
                version: ControllerVersion::new(5, 21, 2, 123_456),
                build_date: "2026".into()
            }
        );
        let mut out = Vec::new();
        m.encode(0, &mut out);
        assert_eq!(out, bytes);
    }

    #[test]
    fn a_safety_mode_and_a_key_message_round_trip() {
        for m in [
            PrimaryMessage::SafetyMode {
                code: 0,
                argument: 0,
                mode: SafetyMode::ProtectiveStop,
            },
            PrimaryMessage::Key {
                code: 1,
                argument: 2,
                title: "PROGRAM_XXX_STARTED".into(),
                text: "pick".into(),
            },
            PrimaryMessage::Text("hello".into()),
        ] {
            let mut out = Vec::new();
            m.encode(5, &mut out);
            assert_eq!(parse(&out).unwrap(), Some((m, out.len())));
        }
    }

    #[test]
    fn partial_packages_consume_nothing_and_others_are_skipped() {
        for n in 0..RUNTIME_EXCEPTION.len() {
            assert_eq!(parse(&RUNTIME_EXCEPTION[..n]).unwrap(), None, "{n}");
        }
        // A robot state package: type 16, skipped whole.
        let state = [0, 0, 0, 9, 16, 1, 2, 3, 4];
        assert_eq!(
            parse(&state).unwrap(),
            Some((
                PrimaryMessage::Other {
                    package_type: 16,
                    message_kind: None
                },
                9
            ))
        );
    }

    #[test]
    fn impossible_sizes_and_cut_fields_are_errors() {
        assert_eq!(parse(&[0, 0, 0, 2, 20]), Err(DecodeError::BadSize(2)));
        assert!(matches!(
            parse(&[0xff, 0xff, 0xff, 0xff, 20]),
            Err(DecodeError::BadSize(-1))
        ));
        // A runtime exception whose column is cut off.
        let mut cut = RUNTIME_EXCEPTION[..21].to_vec();
        cut[3] = 21;
        assert!(matches!(
            parse(&cut),
            Err(DecodeError::Truncated { kind: 10, .. })
        ));
    }
}
