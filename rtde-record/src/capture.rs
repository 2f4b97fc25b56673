//! The raw capture format (`.rtde`): what `rtde record --raw` and `rtde subscribe` write
//! and `rtde replay` serves.
//!
//! A capture keeps every output data package exactly as the controller sent it, behind a
//! small header that says how to read them: nothing is decoded, rounded or dropped on the
//! way to disk. Integers and doubles are big-endian, as on the RTDE wire.
//!
//! ```text
//! offset   size  field
//!      0      8  magic: 89 52 54 44 45 43 41 50 ("\x89RTDECAP")
//!      8      2  format version: 1
//!     10      4  header length H: the bytes before the first package
//!     14      2  RTDE protocol version of the connection (1 or 2)
//!     16     16  controller version: major, minor, bugfix, build (u32 each)
//!     32      8  output frequency set up, in hertz (f64; protocol v1: the control-loop rate)
//!     40      1  output recipe id (protocol v2; 0 in v1, whose packages carry none)
//!     41      8  when streaming started: microseconds since the Unix epoch (i64)
//!     49      8  packages: the number of data packages that follow (u64)
//!     57      8  skipped: packages the controller skipped, counted from `timestamp` (u64)
//!     65      2  N, then N bytes: the field names, comma-separated, as sent in SETUP_OUTPUTS
//!   67+N      2  M, then M bytes: their wire types, comma-separated, as the controller's
//!                SETUP_OUTPUTS reply gave them (`DOUBLE,VECTOR6D`)
//! 69+N+M      …  bytes a later revision of format 1 may add: readers skip up to H
//!      H      …  the data packages, each an RTDE package as it arrived on the wire, header
//!                included: u16 size, u8 type `U` (85), u8 recipe id (v2 only), the values
//! ```
//!
//! While a recording runs, `packages` and `skipped` hold `u64::MAX`; they are written when
//! the recording ends, so a capture whose writer was killed says so, and a reader of a
//! finished capture can tell a truncated file from a whole one. A package is the bytes
//! [`Client::recv`](rtde_core::Client::recv) checked (type, recipe id, length) encoded
//! again by [`rtde_core::protocol`], which yields the bytes received: an RTDE data package
//! has one encoding. The body is a valid RTDE stream, so any RTDE frame parser reads it;
//! readers skip packages of types other than `U` (a later writer may keep the
//! controller's text messages). The format version changes only when a reader of the
//! old one could no longer read a capture.
//!
//! ```
//! use std::io::Cursor;
//! use rtde_record::capture::{self, Header};
//! use rtde_core::fields::{ControllerVersion, Direction, lookup};
//! use rtde_core::protocol::ProtocolVersion;
//!
//! let header = Header {
//!     protocol: ProtocolVersion::V2,
//!     controller: ControllerVersion::new(5, 21, 0, 0),
//!     frequency: 125.0,
//!     recipe_id: Some(1),
//!     started_unix_micros: 0,
//!     fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
//! };
//! let mut writer = capture::Writer::new(Cursor::new(Vec::new()), &header).unwrap();
//! writer.package(&0.008f64.to_be_bytes()).unwrap();
//! let bytes = writer.finish(0).unwrap().into_inner();
//! let read = capture::parse(&bytes).unwrap();
//! assert_eq!((read.len(), read.payload(0)), (1, &0.008f64.to_be_bytes()[..]));
//! ```

use std::fmt;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;

use rtde_core::fields::{ControllerVersion, Direction, Field, WireType, lookup};
use rtde_core::protocol::{ControllerMessage, Frame, HEADER_LEN, ProtocolVersion, package_type};

/// The first eight bytes of every capture. The high first byte catches transfers that
/// strip the eighth bit; no text file starts with it.
pub const MAGIC: [u8; 8] = *b"\x89RTDECAP";
/// The format version this module writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// Where the `packages` and `skipped` counts sit; they are written last.
const COUNTS_AT: u64 = 49;
/// The size of the fixed part of the header, up to the names' length.
const FIXED_LEN: usize = 65;
/// The counts' value while recording.
const UNFINISHED: u64 = u64::MAX;

/// What a capture's header says about its packages.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The RTDE protocol version of the recorded connection.
    pub protocol: ProtocolVersion,
    /// The recorded controller's software version.
    pub controller: ControllerVersion,
    /// The output frequency set up, in hertz.
    pub frequency: f64,
    /// The output recipe id (protocol v2); `None` in v1.
    pub recipe_id: Option<u8>,
    /// When streaming started, in microseconds since the Unix epoch.
    pub started_unix_micros: i64,
    /// The recipe's fields, in order.
    pub fields: Vec<&'static Field>,
}

impl Header {
    /// The size of one data package's values.
    pub fn payload_size(&self) -> usize {
        self.fields.iter().map(|f| f.wire_type().size()).sum()
    }

    /// The header's bytes, with the counts given (or the marks of an unfinished capture).
    pub fn encode(&self, counts: Option<Counts>) -> io::Result<Vec<u8>> {
        let names = join(self.fields.iter().map(|f| f.name()));
        let types = join(self.fields.iter().map(|f| f.wire_type().as_str()));
        let too_long = |what| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the recipe's {what} are too long for a capture header"),
            )
        };
        let names_len = u16::try_from(names.len()).map_err(|_| too_long("names"))?;
        let types_len = u16::try_from(types.len()).map_err(|_| too_long("types"))?;
        let header_len = FIXED_LEN + 2 + names.len() + 2 + types.len();
        let mut h = Vec::with_capacity(header_len);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
        h.extend_from_slice(
            &u32::try_from(header_len)
                .map_err(|_| too_long("names"))?
                .to_be_bytes(),
        );
        h.extend_from_slice(&self.protocol.number().to_be_bytes());
        let v = self.controller;
        for part in [v.major, v.minor, v.bugfix, v.build] {
            h.extend_from_slice(&part.to_be_bytes());
        }
        h.extend_from_slice(&self.frequency.to_be_bytes());
        h.push(self.recipe_id.unwrap_or(0));
        h.extend_from_slice(&self.started_unix_micros.to_be_bytes());
        let (packages, skipped) =
            counts.map_or((UNFINISHED, UNFINISHED), |c| (c.packages, c.skipped));
        h.extend_from_slice(&packages.to_be_bytes());
        h.extend_from_slice(&skipped.to_be_bytes());
        debug_assert_eq!(h.len(), FIXED_LEN);
        h.extend_from_slice(&names_len.to_be_bytes());
        h.extend_from_slice(names.as_bytes());
        h.extend_from_slice(&types_len.to_be_bytes());
        h.extend_from_slice(types.as_bytes());
        Ok(h)
    }
}

fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(",")
}

/// The counts written when a recording ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Data packages in the capture.
    pub packages: u64,
    /// Packages the controller skipped while recording.
    pub skipped: u64,
}

/// Writes a capture: the header, then each package as it comes, then the counts.
#[derive(Debug)]
pub struct Writer<W: Write + Seek> {
    out: W,
    protocol: ProtocolVersion,
    recipe_id: Option<u8>,
    frame: Vec<u8>,
    packages: u64,
}

impl<W: Write + Seek> Writer<W> {
    /// Writes the header of an unfinished capture.
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        out.write_all(&header.encode(None)?)?;
        Ok(Writer {
            out,
            protocol: header.protocol,
            recipe_id: header.recipe_id,
            frame: vec![0; rtde_core::protocol::MAX_PACKAGE_LEN],
            packages: 0,
        })
    }

    /// Appends one data package, given its values as [`Client::recv`](rtde_core::Client::recv)
    /// returned them.
    pub fn package(&mut self, payload: &[u8]) -> io::Result<()> {
        let msg = ControllerMessage::DataPackage {
            recipe_id: self.recipe_id,
            payload,
        };
        let n = msg
            .encode(self.protocol, &mut self.frame)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        self.out.write_all(&self.frame[..n])?;
        self.packages += 1;
        Ok(())
    }

    /// Writes buffered packages through (the capture stays unfinished).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes the counts into the header and returns the output, flushed.
    pub fn finish(mut self, skipped: u64) -> io::Result<W> {
        self.out.flush()?;
        let end = self.out.stream_position()?;
        self.out.seek(SeekFrom::Start(COUNTS_AT))?;
        self.out.write_all(&self.packages.to_be_bytes())?;
        self.out.write_all(&skipped.to_be_bytes())?;
        self.out.seek(SeekFrom::Start(end))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A capture read into memory.
#[derive(Debug)]
pub struct Capture {
    /// What the header says.
    pub header: Header,
    /// The counts from the header; `None` for a capture whose writer never finished it.
    pub counts: Option<Counts>,
    /// Every package's values, one after the other, [`Header::payload_size`] bytes each.
    pub payloads: Vec<u8>,
    /// Bytes of an incomplete last package of an unfinished capture, left out.
    pub truncated_tail: usize,
}

impl Capture {
    /// Whether the capture holds no data package.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of data packages.
    pub fn len(&self) -> usize {
        self.payloads
            .len()
            .checked_div(self.header.payload_size())
            .unwrap_or(0)
    }

    /// The values of package `i`.
    pub fn payload(&self, i: usize) -> &[u8] {
        let size = self.header.payload_size();
        &self.payloads[i * size..(i + 1) * size]
    }
}

/// Why a file is no capture this reader can use, and where.
#[derive(Debug, PartialEq, Eq)]
pub struct CorruptCapture {
    /// The byte offset of the problem.
    pub offset: usize,
    /// What is wrong.
    pub why: String,
}

impl fmt::Display for CorruptCapture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.why, self.offset)
    }
}

/// Reads a capture file.
pub fn read_file(path: &Path) -> Result<Capture, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    parse(&bytes).map_err(|e| format!("`{}` is no valid capture: {e}", path.display()))
}

/// Parses a whole capture.
pub fn parse(bytes: &[u8]) -> Result<Capture, CorruptCapture> {
    let start = parse_header(bytes)?;
    let Packages {
        payloads,
        read,
        truncated_tail,
    } = parse_packages(bytes, &start)?;
    if let Some(c) = start.counts
        && c.packages != read
    {
        return Err(CorruptCapture {
            offset: bytes.len(),
            why: format!(
                "the header says {} packages, the file holds {read}",
                c.packages
            ),
        });
    }
    Ok(Capture {
        header: start.header,
        counts: start.counts,
        payloads,
        truncated_tail,
    })
}

/// What a capture's header says.
struct Start {
    header: Header,
    /// Where the packages start.
    header_len: usize,
    /// `None` while the capture is unfinished.
    counts: Option<Counts>,
    /// The package count as written, [`UNFINISHED`] included.
    packages: u64,
}

/// Reads the header of the capture in `bytes`.
fn parse_header(bytes: &[u8]) -> Result<Start, CorruptCapture> {
    let mut r = Reader { bytes, at: 0 };
    check_format(&mut r)?;
    let header_len = r.u32("the header length")? as usize;
    let (protocol, controller, frequency) = parse_stream(&mut r)?;
    let recipe_id = match (protocol, r.take::<1>("the recipe id")?[0]) {
        (ProtocolVersion::V1, _) => None,
        (ProtocolVersion::V2, id) => Some(id),
    };
    let started_unix_micros = i64::from_be_bytes(r.take::<8>("the start time")?);
    let packages = u64::from_be_bytes(r.take::<8>("the package count")?);
    let skipped = u64::from_be_bytes(r.take::<8>("the skipped count")?);
    let counts = (packages != UNFINISHED).then_some(Counts { packages, skipped });
    let names_at = r.at + 2;
    let names = r.text("the field names")?;
    let types = r.text("the wire types")?;
    if header_len < r.at || header_len > bytes.len() {
        return Err(CorruptCapture {
            offset: 10,
            why: format!(
                "the header length {header_len} is not between {} and the file's {} bytes",
                r.at,
                bytes.len()
            ),
        });
    }
    let fields = recipe(names, types).map_err(|why| CorruptCapture {
        offset: names_at,
        why,
    })?;
    Ok(Start {
        header: Header {
            protocol,
            controller,
            frequency,
            recipe_id,
            started_unix_micros,
            fields,
        },
        header_len,
        counts,
        packages,
    })
}

/// Checks the magic bytes and the format version, leaving `r` after them.
fn check_format(r: &mut Reader<'_>) -> Result<(), CorruptCapture> {
    if r.bytes.len() < MAGIC.len() || r.bytes[..MAGIC.len()] != MAGIC {
        return Err(r.corrupt(
            "it does not start with the capture magic bytes (was it written by `rtde record --raw`?)",
        ));
    }
    r.at = MAGIC.len();
    let version = r.u16("the format version")?;
    if version != FORMAT_VERSION {
        return Err(CorruptCapture {
            offset: 8,
            why: format!("format version {version}; this rtde reads version {FORMAT_VERSION}"),
        });
    }
    Ok(())
}

/// Reads the stream's protocol and controller versions and its frequency, which must be
/// one the controller can send.
fn parse_stream(
    r: &mut Reader<'_>,
) -> Result<(ProtocolVersion, ControllerVersion, f64), CorruptCapture> {
    let protocol_at = r.at;
    let protocol =
        ProtocolVersion::from_number(r.u16("the protocol version")?).ok_or_else(|| {
            CorruptCapture {
                offset: protocol_at,
                why: "the protocol version is neither 1 nor 2".into(),
            }
        })?;
    let controller_at = r.at;
    let controller = ControllerVersion::new(
        r.u32("the controller version")?,
        r.u32("the controller version")?,
        r.u32("the controller version")?,
        r.u32("the controller version")?,
    );
    let generation = controller.generation().ok_or_else(|| CorruptCapture {
        offset: controller_at,
        why: format!("controller version {controller} belongs to no known generation"),
    })?;
    let frequency_at = r.at;
    let frequency = f64::from_be_bytes(r.take::<8>("the frequency")?);
    if !(frequency.is_finite() && frequency > 0.0 && frequency <= generation.max_frequency()) {
        return Err(CorruptCapture {
            offset: frequency_at,
            why: format!(
                "output frequency {frequency} Hz is impossible on controller {controller}"
            ),
        });
    }
    Ok((protocol, controller, frequency))
}

/// The packages of a capture, read after its header.
struct Packages {
    /// Their payloads, one after the other.
    payloads: Vec<u8>,
    /// How many.
    read: u64,
    /// The bytes of a package an unfinished capture ends inside.
    truncated_tail: usize,
}

/// Reads the packages after the header `start` describes.
fn parse_packages(bytes: &[u8], start: &Start) -> Result<Packages, CorruptCapture> {
    let payload_size = start.header.payload_size();
    let mut payloads = Vec::with_capacity(
        usize::try_from(start.packages)
            .unwrap_or(0)
            .min(bytes.len() / payload_size.max(1))
            * payload_size,
    );
    let mut at = start.header_len;
    let mut read = 0u64;
    let mut truncated_tail = 0;
    while at < bytes.len() {
        let corrupt = |why: String| CorruptCapture { offset: at, why };
        let frame = match Frame::parse(&bytes[at..]) {
            Ok(Some((frame, used))) => {
                let f = frame;
                at += used;
                f
            }
            Ok(None) if start.counts.is_none() => {
                // The writer was killed in the middle of a package.
                truncated_tail = bytes.len() - at;
                break;
            }
            Ok(None) => {
                return Err(corrupt(format!(
                    "the file ends inside package {} ({} bytes short)",
                    read + 1,
                    declared_len(&bytes[at..]).saturating_sub(bytes.len() - at)
                )));
            }
            Err(e) => return Err(corrupt(format!("package {}: {e}", read + 1))),
        };
        if frame.kind != package_type::DATA_PACKAGE {
            continue;
        }
        let frame_at = at - HEADER_LEN - frame.payload.len();
        let payload =
            data_payload(frame, &start.header, payload_size, read + 1).map_err(|why| {
                CorruptCapture {
                    offset: frame_at,
                    why,
                }
            })?;
        payloads.extend_from_slice(payload);
        read += 1;
    }
    Ok(Packages {
        payloads,
        read,
        truncated_tail,
    })
}

/// The values of data package number `n`, which must be of the recipe `header` describes
/// (`payload_size` bytes).
fn data_payload<'a>(
    frame: Frame<'a>,
    header: &Header,
    payload_size: usize,
    n: u64,
) -> Result<&'a [u8], String> {
    let (id, payload) = match ControllerMessage::decode(frame, header.protocol) {
        Ok(ControllerMessage::DataPackage { recipe_id, payload }) => (recipe_id, payload),
        Ok(_) => unreachable!("a `U` package decodes as a data package"),
        Err(e) => return Err(format!("package {n}: {e}")),
    };
    if id != header.recipe_id {
        return Err(format!(
            "package {n} carries recipe id {}, the header says {}",
            id.unwrap_or(0),
            header.recipe_id.unwrap_or(0)
        ));
    }
    if payload.len() != payload_size {
        return Err(format!(
            "package {n} holds {} bytes of values; the recipe's are {payload_size}",
            payload.len()
        ));
    }
    Ok(payload)
}

/// The size a package's header declares, from its first two bytes (0 if not there).
fn declared_len(bytes: &[u8]) -> usize {
    bytes
        .first_chunk::<2>()
        .map_or(0, |b| usize::from(u16::from_be_bytes(*b)))
}

/// The recipe a header's names and types describe, checked against the registry.
fn recipe(names: &str, types: &str) -> Result<Vec<&'static Field>, String> {
    let names: Vec<&str> = names.split(',').collect();
    let types: Vec<&str> = types.split(',').collect();
    if names.len() != types.len() {
        return Err(format!(
            "{} field names but {} wire types",
            names.len(),
            types.len()
        ));
    }
    names
        .iter()
        .zip(&types)
        .map(|(name, ty)| {
            let field = lookup(Direction::Output, name).ok_or_else(|| {
                format!("the recipe has `{name}`, which is no RTDE output field this rtde knows")
            })?;
            let wire = WireType::from_wire_name(ty)
                .ok_or_else(|| format!("type `{ty}` of `{name}` is no RTDE wire type"))?;
            if wire != field.wire_type() {
                return Err(format!(
                    "type `{ty}` of `{name}` is not its registry type `{}`",
                    field.wire_type()
                ));
            }
            Ok(field)
        })
        .collect()
}

/// A cursor over the header's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, why: &str) -> CorruptCapture {
        CorruptCapture {
            offset: self.at,
            why: why.to_owned(),
        }
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], CorruptCapture> {
        let Some(chunk) = self
            .bytes
            .get(self.at..)
            .and_then(|rest| rest.first_chunk::<N>())
        else {
            return Err(self.corrupt(&format!("the file ends inside the header, in {what}")));
        };
        self.at += N;
        Ok(*chunk)
    }

    fn u16(&mut self, what: &str) -> Result<u16, CorruptCapture> {
        self.take::<2>(what).map(u16::from_be_bytes)
    }

    fn u32(&mut self, what: &str) -> Result<u32, CorruptCapture> {
        self.take::<4>(what).map(u32::from_be_bytes)
    }

    fn text(&mut self, what: &str) -> Result<&'a str, CorruptCapture> {
        let len = usize::from(self.u16(what)?);
        let start = self.at;
        let Some(raw) = self.bytes.get(start..start + len) else {
            return Err(self.corrupt(&format!("the file ends inside the header, in {what}")));
        };
        self.at += len;
        std::str::from_utf8(raw).map_err(|_| CorruptCapture {
            offset: start,
            why: format!("{what} are not UTF-8"),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn header(protocol: ProtocolVersion) -> Header {
        Header {
            protocol,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 125.0,
            recipe_id: (protocol == ProtocolVersion::V2).then_some(1),
            started_unix_micros: 1_700_000_000_000_000,
            fields: vec![
                lookup(Direction::Output, "timestamp").unwrap(),
                lookup(Direction::Output, "robot_mode").unwrap(),
            ],
        }
    }

    fn payload(t: f64, mode: i32) -> Vec<u8> {
        let mut p = t.to_be_bytes().to_vec();
        p.extend_from_slice(&mode.to_be_bytes());
        p
    }

    fn write(protocol: ProtocolVersion, n: u32, finish: bool) -> Vec<u8> {
        let mut w = Writer::new(Cursor::new(Vec::new()), &header(protocol)).unwrap();
        for k in 0..n {
            w.package(&payload(f64::from(k) * 0.008, 7)).unwrap();
        }
        if finish {
            w.finish(3).unwrap().into_inner()
        } else {
            w.flush().unwrap();
            w.out.into_inner()
        }
    }

    #[test]
    fn the_header_is_laid_out_as_documented() {
        let bytes = write(ProtocolVersion::V2, 0, true);
        let names = b"timestamp,robot_mode";
        let types = b"DOUBLE,INT32";
        let mut expected = Vec::new();
        expected.extend_from_slice(b"\x89RTDECAP"); // magic
        expected.extend_from_slice(&[0, 1]); // format version 1
        let h = 65 + 2 + names.len() + 2 + types.len();
        expected.extend_from_slice(&u32::try_from(h).unwrap().to_be_bytes()); // header length
        expected.extend_from_slice(&[0, 2]); // protocol v2
        expected.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0]); // 5.21.0.0
        expected.extend_from_slice(&125.0f64.to_be_bytes()); // frequency
        expected.push(1); // recipe id
        expected.extend_from_slice(&1_700_000_000_000_000i64.to_be_bytes()); // started
        expected.extend_from_slice(&0u64.to_be_bytes()); // packages
        expected.extend_from_slice(&3u64.to_be_bytes()); // skipped
        expected.extend_from_slice(&[0, 20]);
        expected.extend_from_slice(names);
        expected.extend_from_slice(&[0, 12]);
        expected.extend_from_slice(types);
        assert_eq!(bytes, expected);
    }

    #[test]
    fn packages_are_rtde_packages_as_on_the_wire() {
        let bytes = write(ProtocolVersion::V2, 1, true);
        let h = bytes.len() - (3 + 1 + 12);
        // size 16, type `U`, recipe id 1, then the values.
        assert_eq!(&bytes[h..h + 4], [0, 16, b'U', 1]);
        assert_eq!(&bytes[h + 4..], payload(0.0, 7));
        // Protocol v1 packages carry no recipe id.
        let bytes = write(ProtocolVersion::V1, 1, true);
        let h = bytes.len() - (3 + 12);
        assert_eq!(&bytes[h..h + 3], [0, 15, b'U']);
    }

    #[test]
    fn round_trips_in_both_protocol_versions() {
        for protocol in [ProtocolVersion::V1, ProtocolVersion::V2] {
            let c = parse(&write(protocol, 50, true)).unwrap();
            let mut expected = header(protocol);
            if protocol == ProtocolVersion::V1 {
                expected.recipe_id = None;
            }
            assert_eq!(c.header, expected);
            assert_eq!(
                c.counts,
                Some(Counts {
                    packages: 50,
                    skipped: 3
                })
            );
            assert_eq!(c.len(), 50);
            assert_eq!(c.payload(49), payload(49.0 * 0.008, 7));
            assert_eq!(c.truncated_tail, 0);
        }
    }

    #[test]
    fn an_unfinished_capture_reads_up_to_its_last_whole_package() {
        let mut bytes = write(ProtocolVersion::V2, 10, false);
        bytes.truncate(bytes.len() - 5);
        let c = parse(&bytes).unwrap();
        assert_eq!(c.counts, None);
        assert_eq!(c.len(), 9);
        assert_eq!(c.truncated_tail, 16 - 5);
    }

    #[test]
    fn corruption_is_found_and_located() {
        let good = write(ProtocolVersion::V2, 10, true);
        let body = good.len() - 10 * 16;
        let err = |bytes: &[u8]| parse(bytes).unwrap_err().to_string();

        assert!(err(b"timestamp,actual_q_0\n1,2\n").starts_with("it does not start with"));
        assert_eq!(
            err(&good[..36]),
            "the file ends inside the header, in the frequency (at byte 32)"
        );
        let mut v = good.clone();
        v[9] = 2;
        assert_eq!(
            err(&v),
            "format version 2; this rtde reads version 1 (at byte 8)"
        );
        assert_eq!(
            err(&good[..good.len() - 3]),
            format!(
                "the file ends inside package 10 (3 bytes short) (at byte {})",
                body + 9 * 16
            )
        );
        let mut v = good.clone();
        v.extend_from_slice(&good[body..body + 16]);
        assert_eq!(
            err(&v),
            format!(
                "the header says 10 packages, the file holds 11 (at byte {})",
                v.len()
            )
        );
        let mut v = good.clone();
        v[body + 3] = 9;
        assert_eq!(
            err(&v),
            format!("package 1 carries recipe id 9, the header says 1 (at byte {body})")
        );
        let mut v = good.clone();
        v[body + 2] = 0;
        assert!(err(&v).starts_with("package 1: "), "{}", err(&v));
        let mut v = good.clone();
        let types_at = body - 12;
        v[types_at..types_at + 6].copy_from_slice(b"UINT64");
        assert!(
            err(&v).starts_with("type `UINT64` of `timestamp` is not its registry type `DOUBLE`"),
            "{}",
            err(&v)
        );
    }
}
