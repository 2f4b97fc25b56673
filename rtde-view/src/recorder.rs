//! An MCAP recording written from a program's receive loop.

use std::collections::BTreeMap;
use std::io::{Seek, Write};

use mcap::records::{MessageHeader, Metadata};
use mcap::{Compression, WriteOptions};
use rtde_record::capture::Header;

use rtde_core::fields::Field;

use crate::encode::{Layout, Timeline};
use crate::error::Error;
use crate::protobuf;
use crate::{GAPS_TOPIC, METADATA_NAME, OUTPUTS_TOPIC, schema};

/// How much controller time one chunk holds at most, in seconds: a recorder killed at any
/// moment loses at most this much (the chunk being written), and at 500 Hz that is 500
/// packages.
pub const CHUNK_SECONDS: f64 = 1.0;

/// A cap on a chunk's uncompressed size, for recipes whose second of data is large.
const CHUNK_BYTES: u64 = 4 << 20;

/// What a [`Recorder`] has written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecorderCounts {
    /// Data packages written.
    pub packages: u64,
    /// Packages the controller skipped, counted from `timestamp`.
    pub skipped: u64,
    /// Packages missing across reconnections, counted from `timestamp`.
    pub lost: u64,
    /// Messages on the gap channel.
    pub gaps: u64,
}

/// Writes an MCAP recording of one output recipe: a protobuf message per data package
/// (`rtde.Outputs`, its descriptor made from the recipe), a JSON gap
/// message per hole in the controller's `timestamp`, a metadata record describing the
/// stream. Give it every package in order, as [`Client::recv`](rtde_core::Client::recv)
/// returns them, with the host time it arrived at; [`Recorder::finish`] writes the
/// summary (a file whose writer was killed still reads back up to its last whole chunk).
///
/// ```
/// use std::io::Cursor;
/// use rtde_record::capture::Header;
/// use rtde_core::fields::{ControllerVersion, Direction, lookup};
/// use rtde_core::protocol::ProtocolVersion;
/// use rtde_view::Recorder;
///
/// let header = Header {
///     protocol: ProtocolVersion::V2,
///     controller: ControllerVersion::new(5, 21, 0, 0),
///     frequency: 500.0,
///     recipe_id: Some(1),
///     started_unix_micros: 1_764_576_000_000_000,
///     fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
/// };
/// let mut recorder = Recorder::new(Cursor::new(Vec::new()), &header, "arm-1").unwrap();
/// recorder.package(&10.0f64.to_be_bytes(), 1_764_576_000_000_000).unwrap();
/// // Two packages skipped: 10.002 and 10.004 never came.
/// recorder.package(&10.006f64.to_be_bytes(), 1_764_576_000_006_100).unwrap();
/// assert_eq!(recorder.counts().skipped, 2);
/// let bytes = recorder.finish().unwrap().into_inner();
/// let messages: Vec<_> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
/// assert_eq!(messages.len(), 3); // two packages, one gap
/// // The log time comes from the host clock at the first package, spaced by the controller's.
/// assert_eq!(messages[2].log_time, 1_764_576_000_006_000_000);
/// assert_eq!(messages[2].publish_time, 10_006_000_000);
/// ```
pub struct Recorder<W: Write + Seek> {
    mcap: mcap::Writer<W>,
    layout: Layout,
    timeline: Timeline,
    outputs: u16,
    gaps: u16,
    chunk_since: Option<f64>,
    sequence: u32,
    fields: Vec<&'static Field>,
    message: Vec<u8>,
    json: String,
    counts: RecorderCounts,
}

impl<W: Write + Seek> std::fmt::Debug for Recorder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The MCAP writer has no `Debug`.
        f.debug_struct("Recorder")
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Seek> Recorder<W> {
    /// Starts a recording of the stream `header` describes (the raw capture's header: its
    /// `started_unix_micros` is not used; the host time of each package is), from a robot
    /// named `robot` (any label; the metadata keeps it).
    ///
    /// # Errors
    /// [`Error::Mcap`] or [`Error::Io`] when the start of the file cannot be written.
    pub fn new(out: W, header: &Header, robot: &str) -> Result<Self, Error> {
        let mut mcap = WriteOptions::new()
            .compression(Some(Compression::Zstd))
            // zstd's fastest level: half the time of its default (3) per package, and still
            // smaller than the raw capture (`cargo bench -p rtde-bench --bench telemetry`).
            .compression_level(1)
            // Chunks are cut by controller time (`CHUNK_SECONDS`); this is a cap only.
            .chunk_size(Some(CHUNK_BYTES))
            // Compressed on the recording thread: no thread pool behind the caller's back.
            .compression_threads(0)
            .profile("")
            .library(concat!("rtde-view ", env!("CARGO_PKG_VERSION")))
            .create(out)?;
        let layout = Layout::new(&header.fields);
        let names: Vec<&str> = header.fields.iter().map(|f| f.name()).collect();
        let types: Vec<&str> = header
            .fields
            .iter()
            .map(|f| f.wire_type().as_str())
            .collect();
        let metadata = BTreeMap::from([
            ("robot".to_owned(), robot.to_owned()),
            ("controller".to_owned(), header.controller.to_string()),
            ("protocol".to_owned(), header.protocol.number().to_string()),
            (
                "recipe_id".to_owned(),
                header.recipe_id.map_or(String::new(), |id| id.to_string()),
            ),
            ("frequency".to_owned(), header.frequency.to_string()),
            ("fields".to_owned(), names.join(",")),
            ("types".to_owned(), types.join(",")),
            (
                "started_unix_us".to_owned(),
                header.started_unix_micros.to_string(),
            ),
        ]);
        mcap.write_metadata(&Metadata {
            name: METADATA_NAME.to_owned(),
            metadata: metadata.clone(),
        })?;
        let outputs_schema = mcap.add_schema(
            protobuf::SCHEMA_NAME,
            "protobuf",
            &protobuf::descriptor(&header.fields),
        )?;
        // The channel carries the recipe too, so a reader of the messages alone has it.
        let channel_metadata = metadata
            .into_iter()
            .filter(|(k, _)| k == "fields" || k == "types")
            .collect();
        let outputs =
            mcap.add_channel(outputs_schema, OUTPUTS_TOPIC, "protobuf", &channel_metadata)?;
        let gap_schema = mcap.add_schema(
            schema::GAP,
            schema::SCHEMA_ENCODING,
            schema::GAP_SCHEMA.as_bytes(),
        )?;
        let gaps = mcap.add_channel(
            gap_schema,
            GAPS_TOPIC,
            schema::MESSAGE_ENCODING,
            &BTreeMap::new(),
        )?;
        Ok(Recorder {
            mcap,
            timeline: Timeline::new(header, &layout),
            layout,
            outputs,
            gaps,
            chunk_since: None,
            sequence: 0,
            fields: header.fields.clone(),
            message: Vec::with_capacity(1024),
            json: String::with_capacity(256),
            counts: RecorderCounts::default(),
        })
    }

    /// Writes one data package (its values, as [`Client::recv`](rtde_core::Client::recv)
    /// returns them), which arrived at host time `arrived_unix_us` (µs since the Unix
    /// epoch). The first package of each connection fixes the robot-to-host time mapping;
    /// the others are placed by their `timestamp`.
    ///
    /// # Errors
    /// [`Error::WrongSize`] for a payload that is not the recipe's size (nothing is
    /// written); [`Error::Mcap`] or [`Error::Io`] when writing fails.
    pub fn package(&mut self, payload: &[u8], arrived_unix_us: i64) -> Result<(), Error> {
        if payload.len() != self.layout.size() {
            return Err(Error::WrongSize {
                index: self.counts.packages,
                got: payload.len(),
                expected: self.layout.size(),
            });
        }
        let placed = self.timeline.place(payload, arrived_unix_us);
        if let Some(t) = placed.timestamp {
            if self
                .chunk_since
                .is_some_and(|since| t - since >= CHUNK_SECONDS)
            {
                self.mcap.flush()?;
                self.chunk_since = None;
            }
            self.chunk_since.get_or_insert(t);
        }
        if let Some(gap) = placed.gap {
            if gap.reconnection {
                self.counts.lost += gap.packages;
            } else {
                self.counts.skipped += gap.packages;
            }
            self.json.clear();
            gap.json(&mut self.json);
            let header = MessageHeader {
                channel_id: self.gaps,
                sequence: u32::try_from(self.counts.gaps).unwrap_or(u32::MAX),
                log_time: placed.log_time,
                publish_time: placed.publish_time,
            };
            self.mcap
                .write_to_known_channel(&header, self.json.as_bytes())?;
            self.counts.gaps += 1;
        }
        self.message.clear();
        protobuf::encode(&self.fields, payload, &mut self.message);
        let header = MessageHeader {
            channel_id: self.outputs,
            sequence: self.sequence,
            log_time: placed.log_time,
            publish_time: placed.publish_time,
        };
        self.mcap.write_to_known_channel(&header, &self.message)?;
        self.sequence = self.sequence.wrapping_add(1);
        self.counts.packages += 1;
        Ok(())
    }

    /// The link to the controller was lost and is back: the next package starts a new
    /// robot-to-host time mapping, and the gap before it is recorded as a reconnection
    /// (even when no package is missing).
    pub fn reconnected(&mut self) {
        self.timeline.reconnected();
    }

    /// What was written so far.
    #[must_use]
    pub fn counts(&self) -> RecorderCounts {
        self.counts
    }

    /// Ends the current chunk and writes it through: everything so far reads back even
    /// if the process dies next.
    ///
    /// # Errors
    /// [`Error::Mcap`] or [`Error::Io`] when writing fails.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.mcap.flush()?;
        self.chunk_since = None;
        Ok(())
    }

    /// Writes the last chunk, the summary and the footer; returns the output.
    ///
    /// # Errors
    /// [`Error::Mcap`] or [`Error::Io`] when writing fails.
    pub fn finish(mut self) -> Result<W, Error> {
        self.mcap.finish()?;
        Ok(self.mcap.into_inner())
    }
}
