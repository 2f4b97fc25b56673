//! Conversions: a raw capture into MCAP, an MCAP recording back into packages and CSV.
//!
//! A capture's packages are recorded as [`Recorder`] records live ones, their host times
//! placed from the capture's start (`started_unix_micros`, the host time of the first
//! package) by their `timestamp`. Reading an MCAP recording gives each package's values
//! as the controller sent them, bit for bit, so MCAP → CSV is the CSV `rtde record` writes
//! for the same packages.
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
//! let mcap = convert::capture_to_mcap(&raw, Cursor::new(Vec::new()), "arm-1").unwrap().into_inner();
//! let mut csv = Vec::new();
//! let read = convert::mcap_to_csv(&mcap, &mut csv).unwrap();
//! assert_eq!((read.packages, read.cut_short), (1, None));
//! assert_eq!(csv, b"timestamp\n0.008\n");
//! ```

use std::collections::BTreeMap;
use std::io::{Seek, Write};

use mcap::read::Options;
use mcap::records::Record;
use rtde_core::Value;
use rtde_core::fields::{Direction, Field, lookup};
use rtde_record::capture::Capture;
use rtde_record::csv::CsvWriter;

use crate::error::Error;
use crate::protobuf;
use crate::recorder::Recorder;
use crate::{METADATA_NAME, OUTPUTS_TOPIC};

/// Writes a raw capture's packages as an MCAP recording of the robot named `robot`.
///
/// # Errors
/// What [`Recorder`] returns.
pub fn capture_to_mcap<W: Write + Seek>(
    capture: &Capture,
    out: W,
    robot: &str,
) -> Result<W, Error> {
    let mut recorder = Recorder::new(out, &capture.header, robot)?;
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
    let stream = mcap::MessageStream::new_with_options(bytes, Options::IgnoreEndMagic.into())?;
    let mut fields: Option<(u16, Vec<&'static Field>)> = None;
    let mut summary = ReadSummary {
        packages: 0,
        cut_short: None,
    };
    for message in stream {
        let message = match message {
            Ok(m) => m,
            Err(e) => {
                summary.cut_short = Some(rtde_core::Report(&e).to_string());
                break;
            }
        };
        if message.channel.topic != OUTPUTS_TOPIC {
            continue;
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
        let values = protobuf::decode(recipe, &message.data)
            .map_err(|why| Error::NotRtde(format!("message {}: {why}", summary.packages)))?;
        each(
            recipe,
            Package {
                log_time: message.log_time,
                publish_time: message.publish_time,
                values,
            },
        )?;
        summary.packages += 1;
    }
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
