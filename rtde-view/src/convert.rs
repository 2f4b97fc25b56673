//! Conversions: a raw capture into MCAP, an MCAP recording back into packages and CSV.
//!
//! A capture's packages are recorded as [`Recorder`] records live ones, their host times
//! placed from the capture's start (`started_unix_micros`, the host time of the first
//! package) by their `timestamp`. Reading an MCAP recording gives each package's values
//! as the controller sent them, bit for bit, so MCAP → CSV is the CSV `rtde record` writes
//! for the same packages. MCAP → MCAP records an older file's packages again, with every
//! channel this version writes (the arm's frames, protobuf gaps and modes), at the same
//! times. [`read_numbers`] reads every channel's numbers, by name, for plotting.
//!
//! ```
//! use std::io::Cursor;
//! use rtde_record::capture::{self, Header};
//! use rtde_core::fields::{ControllerVersion, Direction, lookup};
//! use rtde_core::protocol::ProtocolVersion;
//! use rtde_view::convert;
//!
//! let header = Header {
//!     protocol: ProtocolVersion::V2,
//!     controller: ControllerVersion::new(5, 21, 0, 0),
//!     frequency: 125.0,
//!     recipe_id: Some(1),
//!     started_unix_micros: 0,
//!     fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
//! };
//! let mut raw = capture::Writer::new(Cursor::new(Vec::new()), &header).unwrap();
//! raw.package(&0.008f64.to_be_bytes()).unwrap();
//! let raw = capture::parse(&raw.finish(0).unwrap().into_inner()).unwrap();
//!
//! let options = rtde_view::RecorderOptions::new().robot("arm-1");
//! let mcap = convert::capture_to_mcap(&raw, Cursor::new(Vec::new()), &options).unwrap().into_inner();
//! let mut csv = Vec::new();
//! let read = convert::mcap_to_csv(&mcap, &mut csv).unwrap();
//! assert_eq!((read.packages, read.cut_short), (1, None));
//! assert_eq!(csv, b"timestamp\n0.008\n");
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::{Seek, Write};

use mcap::read::Options;
use mcap::records::Record;
use rtde_core::Value;
use rtde_core::fields::{ControllerVersion, Direction, Field, lookup};
use rtde_core::protocol::ProtocolVersion;
use rtde_record::capture::{Capture, Header};
use rtde_record::csv::CsvWriter;

use crate::error::Error;
use crate::protobuf;
use crate::protobuf::dynamic::Descriptors;
use crate::recorder::{Recorder, RecorderOptions};
use crate::{GAPS_TOPIC, METADATA_NAME, OUTPUTS_TOPIC};

/// Writes a raw capture's packages as an MCAP recording, as `options` say.
///
/// # Errors
/// What [`Recorder`] returns.
pub fn capture_to_mcap<W: Write + Seek>(
    capture: &Capture,
    out: W,
    options: &RecorderOptions,
) -> Result<W, Error> {
    let mut recorder = Recorder::new(out, &capture.header, options)?;
    for i in 0..capture.len() {
        recorder.package(capture.payload(i), capture.header.started_unix_micros)?;
    }
    recorder.finish()
}

/// One package read back from an MCAP recording.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Package {
    /// Host time, ns since the Unix epoch.
    pub log_time: u64,
    /// Controller time (`timestamp`), ns.
    pub publish_time: u64,
    /// The values, one per field of the recipe, in its order.
    pub values: Vec<Value>,
}

/// What reading an MCAP recording found, besides its packages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadSummary {
    /// The recipe's data packages read.
    pub packages: u64,
    /// Why reading stopped before the end of the file, if it did: a recording whose writer
    /// was killed ends inside its last chunk; the packages of the chunks before are read.
    pub cut_short: Option<String>,
}

/// Reads the recipe's packages of an MCAP recording, in order, calling `each` with the
/// recipe's fields and each package; a file cut short (a killed recorder) is read up to
/// its last whole chunk, and the summary says so.
///
/// # Errors
/// [`Error::NotRtde`] for a file without the `/rtde/outputs` channel or with a message
/// that does not fit its recipe; [`Error::Mcap`] for a file that does not start as an
/// MCAP file; what `each` returns.
pub fn read_packages(
    bytes: &[u8],
    mut each: impl FnMut(&[&'static Field], Package) -> Result<(), Error>,
) -> Result<ReadSummary, Error> {
    let mut fields: Option<(u16, Vec<&'static Field>)> = None;
    let summary = whole_messages(bytes, |message, read| {
        if message.channel.topic != OUTPUTS_TOPIC {
            return Ok(false);
        }
        let recipe = match &fields {
            Some((id, f)) if *id == message.channel.id => f,
            _ => {
                let f = channel_fields(&message.channel.metadata)?;
                &fields.insert((message.channel.id, f)).1
            }
        };
        if message.channel.message_encoding != "protobuf" {
            return Err(Error::NotRtde(format!(
                "the `{OUTPUTS_TOPIC}` messages are `{}`, not protobuf",
                message.channel.message_encoding
            )));
        }
        let values = protobuf::outputs::decode(recipe, &message.data)
            .map_err(|why| Error::NotRtde(format!("message {read}: {why}")))?;
        each(
            recipe,
            Package {
                log_time: message.log_time,
                publish_time: message.publish_time,
                values,
            },
        )?;
        Ok(true)
    })?;
    if fields.is_none() && summary.cut_short.is_none() {
        return Err(Error::NotRtde(format!(
            "it has no `{OUTPUTS_TOPIC}` messages"
        )));
    }
    Ok(summary)
}

/// The recipe a channel's metadata names (`fields`).
fn channel_fields(metadata: &BTreeMap<String, String>) -> Result<Vec<&'static Field>, Error> {
    let names = metadata.get("fields").ok_or_else(|| {
        Error::NotRtde(format!("the `{OUTPUTS_TOPIC}` channel names no `fields`"))
    })?;
    names
        .split(',')
        .map(|n| {
            lookup(Direction::Output, n)
                .ok_or_else(|| Error::NotRtde(format!("unknown output field `{n}`")))
        })
        .collect()
}

/// An MCAP recording's packages as the CSV `rtde record` writes.
///
/// # Errors
/// What [`read_packages`] returns; [`Error::Io`] when writing fails.
pub fn mcap_to_csv(bytes: &[u8], out: impl Write) -> Result<ReadSummary, Error> {
    let mut csv: Option<CsvWriter<_>> = None;
    let mut out = Some(out);
    let summary = read_packages(bytes, |fields, package| {
        let writer = match &mut csv {
            Some(w) => w,
            None => {
                let out = out
                    .take()
                    .ok_or_else(|| Error::NotRtde("two recipes".into()))?;
                csv.insert(CsvWriter::new(out, fields)?)
            }
        };
        writer.row(&package.values)?;
        Ok(())
    })?;
    if let Some(csv) = csv {
        csv.finish()?;
    }
    Ok(summary)
}

/// The metadata record `rtde` of an MCAP recording: robot, controller, protocol,
/// recipe_id, frequency, fields, types, started_unix_us.
///
/// # Errors
/// [`Error::NotRtde`] when there is none; [`Error::Mcap`] when the file does not start as
/// MCAP.
pub fn metadata(bytes: &[u8]) -> Result<BTreeMap<String, String>, Error> {
    let reader = mcap::read::LinearReader::new_with_options(bytes, Options::IgnoreEndMagic.into())?;
    for record in reader {
        // Written first: a file cut short still has it, or has nothing to read.
        match record {
            Ok(Record::Metadata(m)) if m.name == METADATA_NAME => return Ok(m.metadata),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Err(Error::NotRtde(format!(
        "it has no `{METADATA_NAME}` metadata record"
    )))
}

/// The stream an MCAP recording's metadata record describes, as a capture's header.
///
/// # Errors
/// [`Error::NotRtde`] for metadata without a key a header needs, or with a value that is
/// none.
pub fn header(metadata: &BTreeMap<String, String>) -> Result<Header, Error> {
    let get = |key: &str| {
        metadata
            .get(key)
            .ok_or_else(|| Error::NotRtde(format!("its metadata has no `{key}`")))
    };
    let bad = |key: &str| Error::NotRtde(format!("its metadata's `{key}` is no value"));
    let protocol = get("protocol")?
        .parse()
        .ok()
        .and_then(ProtocolVersion::from_number)
        .ok_or_else(|| bad("protocol"))?;
    let controller: ControllerVersion =
        get("controller")?.parse().map_err(|_| bad("controller"))?;
    let recipe_id = match get("recipe_id")?.as_str() {
        "" => None,
        id => Some(id.parse().map_err(|_| bad("recipe_id"))?),
    };
    Ok(Header {
        protocol,
        controller,
        frequency: get("frequency")?.parse().map_err(|_| bad("frequency"))?,
        recipe_id,
        started_unix_micros: get("started_unix_us")?
            .parse()
            .map_err(|_| bad("started_unix_us"))?,
        fields: channel_fields(metadata)?,
    })
}

/// Records an MCAP recording's packages again, as `options` say: an older recording
/// gains the arm's link frames and TCP pose, and protobuf gaps and modes. Each package
/// keeps its log and publish times, and a reconnection stays one.
///
/// ```
/// use std::io::Cursor;
/// use rtde_view::{RecorderOptions, convert};
/// # use rtde_record::capture::Header;
/// # use rtde_core::fields::{ControllerVersion, Direction, lookup};
/// # use rtde_core::protocol::ProtocolVersion;
/// # let header = Header {
/// #     protocol: ProtocolVersion::V2,
/// #     controller: ControllerVersion::new(5, 21, 0, 0),
/// #     frequency: 500.0,
/// #     recipe_id: Some(1),
/// #     started_unix_micros: 0,
/// #     fields: vec![lookup(Direction::Output, "timestamp").unwrap(), lookup(Direction::Output, "actual_q").unwrap()],
/// # };
/// # let mut old = rtde_view::Recorder::new(Cursor::new(Vec::new()), &header, &RecorderOptions::new().frames(false)).unwrap();
/// # old.package(&[0u8; 56], 0).unwrap();
/// # let old = old.finish().unwrap().into_inner();
/// // `old`: a recording without `/tf`.
/// let (new, read) = convert::mcap_to_mcap(&old, Cursor::new(Vec::new()), &RecorderOptions::new()).unwrap();
/// let new = new.into_inner();
/// let topics: Vec<String> = mcap::MessageStream::new(&new).unwrap().map(|m| m.unwrap().channel.topic.clone()).collect();
/// assert_eq!((read.packages, topics), (1, vec!["/rtde/outputs".to_owned(), "/tf".to_owned()]));
/// ```
///
/// # Errors
/// What [`metadata`], [`header`] and [`read_packages`] return; what [`Recorder`] returns.
pub fn mcap_to_mcap<W: Write + Seek>(
    bytes: &[u8],
    out: W,
    options: &RecorderOptions,
) -> Result<(W, ReadSummary), Error> {
    let header = header(&metadata(bytes)?)?;
    let reconnections = reconnections(bytes)?;
    let mut recorder = Recorder::new(out, &header, options)?;
    let mut payload = vec![0u8; header.payload_size()];
    let summary = read_packages(bytes, |_, package| {
        let mut at = 0;
        for v in &package.values {
            at += v
                .write_be(&mut payload[at..])
                .ok_or_else(|| Error::NotRtde("a package larger than its recipe".into()))?;
        }
        if reconnections.contains_key(&package.log_time) {
            recorder.reconnected();
        }
        let arrived = i64::try_from(package.log_time / 1000).unwrap_or(i64::MAX);
        recorder.package(&payload, arrived)?;
        Ok(())
    })?;
    Ok((recorder.finish()?, summary))
}

/// The log times of the packages after a reconnection, from the gap messages (JSON in
/// older recordings, protobuf now).
fn reconnections(bytes: &[u8]) -> Result<HashMap<u64, ()>, Error> {
    let mut after = HashMap::new();
    read_numbers(bytes, |message| {
        if message.topic == GAPS_TOPIC && message.text("kind") == Some("reconnection") {
            after.insert(message.log_time, ());
        }
    })?;
    Ok(after)
}

/// A message of an MCAP recording, decoded: its numbers and texts by path.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Message {
    /// Its channel's topic (`/tf`).
    pub topic: String,
    /// Host time, ns since the Unix epoch.
    pub log_time: u64,
    /// Controller time (`timestamp`), ns.
    pub publish_time: u64,
    /// Its numbers, each with its path as Foxglove's message paths name it without the
    /// topic: `actual_q[0]`, `pose.position.x`, `transforms[5].translation.z`. Booleans
    /// are 0 or 1.
    pub numbers: Vec<(String, f64)>,
    /// Its top-level texts (`kind` of a gap).
    pub texts: Vec<(String, String)>,
}

impl Message {
    /// The number at `path`.
    #[must_use]
    pub fn number(&self, path: &str) -> Option<f64> {
        self.numbers
            .iter()
            .find(|(p, _)| p == path)
            .map(|&(_, v)| v)
    }

    /// The top-level text named `key`.
    #[must_use]
    pub fn text(&self, key: &str) -> Option<&str> {
        self.texts
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads every message of an MCAP recording, of any channel whose schema is protobuf
/// (decoded by the descriptor in the file) or JSON, in order, calling `each` with its
/// numbers; a file cut short is read up to its last whole chunk, and the summary says
/// so (its `packages` are the messages read).
///
/// # Errors
/// [`Error::Mcap`] for a file that does not start as an MCAP file; [`Error::NotRtde`]
/// for a message its own schema does not decode.
pub fn read_numbers(bytes: &[u8], mut each: impl FnMut(Message)) -> Result<ReadSummary, Error> {
    let mut descriptors: HashMap<u16, Option<Descriptors>> = HashMap::new();
    whole_messages(bytes, |message, _| {
        let channel = &message.channel;
        let schema = channel.schema.as_deref();
        let decoded = descriptors.entry(channel.id).or_insert_with(|| {
            schema
                .filter(|s| s.encoding == "protobuf")
                .and_then(|s| Descriptors::parse(&s.data).ok())
        });
        let mut numbers = Vec::new();
        let mut texts = Vec::new();
        let fail = |why: String| {
            Error::NotRtde(format!(
                "message {} on `{}`: {why}",
                message.sequence, channel.topic
            ))
        };
        match (channel.message_encoding.as_str(), decoded, schema) {
            ("protobuf", Some(d), Some(s)) => d
                .numbers(&s.name, &message.data, &mut numbers, &mut texts)
                .map_err(fail)?,
            ("json", _, _) => {
                let value: serde_json::Value =
                    serde_json::from_slice(&message.data).map_err(|e| fail(e.to_string()))?;
                json_numbers(&value, "", &mut numbers, &mut texts);
            }
            _ => return Ok(false),
        }
        each(Message {
            topic: channel.topic.clone(),
            log_time: message.log_time,
            publish_time: message.publish_time,
            numbers,
            texts,
        });
        Ok(true)
    })
}

/// Hands `each` every whole message of an MCAP file in order, with the number of those
/// it counted before; it says whether it counts this one. A file cut short (a recorder
/// killed inside a chunk) ends at its last whole chunk, and the summary says why.
fn whole_messages(
    bytes: &[u8],
    mut each: impl FnMut(mcap::Message<'_>, u64) -> Result<bool, Error>,
) -> Result<ReadSummary, Error> {
    let stream = mcap::MessageStream::new_with_options(bytes, Options::IgnoreEndMagic.into())?;
    let mut summary = ReadSummary {
        packages: 0,
        cut_short: None,
    };
    for message in stream {
        match message {
            Ok(message) => {
                if each(message, summary.packages)? {
                    summary.packages += 1;
                }
            }
            Err(e) => {
                summary.cut_short = Some(rtde_core::Report(&e).to_string());
                break;
            }
        }
    }
    Ok(summary)
}

/// The numbers of a JSON message by path, and its top-level texts.
#[allow(clippy::cast_precision_loss)] // numbers for a plot
fn json_numbers(
    value: &serde_json::Value,
    path: &str,
    numbers: &mut Vec<(String, f64)>,
    texts: &mut Vec<(String, String)>,
) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match value {
        serde_json::Value::Number(n) => numbers.extend(n.as_f64().map(|v| (path.to_owned(), v))),
        serde_json::Value::Bool(b) => numbers.push((path.to_owned(), f64::from(u8::from(*b)))),
        serde_json::Value::String(s) if !path.contains(['.', '[']) => {
            texts.push((path.to_owned(), s.clone()));
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                json_numbers(item, &format!("{path}[{i}]"), numbers, texts);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                json_numbers(v, &join(k), numbers, texts);
            }
        }
        _ => {}
    }
}
