//! An MCAP recording written from a program's receive loop.

use std::collections::BTreeMap;
use std::io::{Seek, Write};

use mcap::records::{MessageHeader, Metadata};
use mcap::{Compression, WriteOptions};
use rtde_core::Client;
use rtde_core::fields::Field;
use rtde_kinematics::Arm;
use rtde_record::capture::Header;
use rtde_record::stop::StopAfter;

use crate::encode::{Derived, Layout, Placed, Timeline};
use crate::error::Error;
use crate::protobuf::{foxglove, messages, outputs};
use crate::{GAPS_TOPIC, METADATA_NAME, MODES_TOPIC, OUTPUTS_TOPIC, TCP_POSE_TOPIC, TF_TOPIC};

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

/// How a [`Recorder`] or an [`McapRecording`](crate::McapRecording) records: the robot's
/// name, the arm its link frames are computed with, whether they are recorded, and when
/// the recording ends by itself.
///
/// ```
/// use std::time::Duration;
/// use rtde_kinematics::Arm;
/// use rtde_record::stop::StopAfter;
/// use rtde_view::RecorderOptions;
///
/// let options = RecorderOptions::new()
///     .robot("arm-1")
///     .arm(Arm::UR10E)
///     .stop_after(StopAfter::duration(Duration::from_secs(600)));
/// let without_frames = RecorderOptions::new().frames(false);
/// # let _ = (options, without_frames);
/// ```
#[derive(Clone, Debug)]
pub struct RecorderOptions {
    robot: String,
    arm: Arm,
    frames: bool,
    stop: StopAfter,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            robot: String::from("robot"),
            arm: Arm::UR5E,
            frames: true,
            stop: StopAfter::default(),
        }
    }
}

impl RecorderOptions {
    /// A robot named `robot`, a UR5e's link frames recorded, no end but the program's.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The robot's name (any label; the metadata keeps it).
    #[must_use]
    pub fn robot(mut self, robot: impl Into<String>) -> Self {
        self.robot = robot.into();
        self
    }

    /// The arm whose kinematics give the link frames (the simulator's is the UR5e; a real
    /// robot's calibrated arm is [`rtde_kinematics`]' to read off its primary interface).
    #[must_use]
    pub fn arm(mut self, arm: Arm) -> Self {
        self.arm = arm;
        self
    }

    /// Whether to record the arm: `/tf` from `actual_q` and `/tcp_pose` from
    /// `actual_TCP_pose`, when the recipe has them (on by default).
    #[must_use]
    pub fn frames(mut self, frames: bool) -> Self {
        self.frames = frames;
        self
    }

    /// When the recording ends by itself: after a number of packages or a span of
    /// controller time (never, by default).
    #[must_use]
    pub fn stop_after(mut self, stop: StopAfter) -> Self {
        self.stop = stop;
        self
    }
}

/// A channel of the file, and the sequence number of its next message.
#[derive(Debug, Clone, Copy)]
struct Channel {
    id: u16,
    sequence: u32,
}

/// The channels derived from the packages, each when the recipe has its fields.
#[derive(Debug, Clone, Copy, Default)]
struct DerivedChannels {
    frames: Option<Channel>,
    pose: Option<Channel>,
    modes: Option<Channel>,
}

/// Writes an MCAP recording of one output recipe, every channel protobuf: a message per
/// data package on `/rtde/outputs` (`rtde.Outputs`, its descriptor made from the recipe),
/// the arm's link frames on `/tf` and the TCP pose on `/tcp_pose` (Foxglove's
/// `FrameTransforms` and `PoseInFrame`) unless turned off, the modes on `/rtde/modes`, a
/// message per hole in the controller's `timestamp` on `/rtde/gaps`, and a metadata record
/// describing the stream. Give it every package in order, as
/// [`Client::recv`] returns them, with the host time it arrived at;
/// [`Recorder::finish`] writes the summary (a file whose writer was killed still reads
/// back up to its last whole chunk).
///
/// ```
/// use std::io::Cursor;
/// use rtde_record::capture::Header;
/// use rtde_core::fields::{ControllerVersion, Direction, lookup};
/// use rtde_core::protocol::ProtocolVersion;
/// use rtde_view::{Recorder, RecorderOptions};
///
/// let header = Header {
///     protocol: ProtocolVersion::V2,
///     controller: ControllerVersion::new(5, 21, 0, 0),
///     frequency: 500.0,
///     recipe_id: Some(1),
///     started_unix_micros: 1_764_576_000_000_000,
///     fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
/// };
/// let options = RecorderOptions::new().robot("arm-1");
/// let mut recorder = Recorder::new(Cursor::new(Vec::new()), &header, &options).unwrap();
/// recorder.package(&10.0f64.to_be_bytes(), 1_764_576_000_000_000).unwrap();
/// // Two packages skipped: 10.002 and 10.004 never came.
/// recorder.package(&10.006f64.to_be_bytes(), 1_764_576_000_006_100).unwrap();
/// assert_eq!(recorder.counts().skipped, 2);
/// assert_eq!(recorder.last_timestamp(), Some(10.006));
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
    derived: Derived,
    outputs: Channel,
    gaps: Channel,
    channels: DerivedChannels,
    chunk_since: Option<f64>,
    fields: Vec<&'static Field>,
    message: Vec<u8>,
    stop: StopAfter,
    first_timestamp: Option<f64>,
    last_timestamp: Option<f64>,
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

/// The metadata record of a recording, which its `/rtde/outputs` channel partly repeats.
fn metadata(header: &Header, options: &RecorderOptions) -> BTreeMap<String, String> {
    let names: Vec<&str> = header.fields.iter().map(|f| f.name()).collect();
    let types: Vec<&str> = header
        .fields
        .iter()
        .map(|f| f.wire_type().as_str())
        .collect();
    BTreeMap::from([
        ("robot".to_owned(), options.robot.clone()),
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
        ("arm".to_owned(), options.arm.name.to_owned()),
    ])
}

/// Adds a protobuf channel of schema `name` (its descriptor `descriptor`) on `topic`.
fn protobuf_channel<W: Write + Seek>(
    mcap: &mut mcap::Writer<W>,
    topic: &str,
    name: &str,
    descriptor: &[u8],
    metadata: &BTreeMap<String, String>,
) -> Result<Channel, Error> {
    let schema = mcap.add_schema(name, "protobuf", descriptor)?;
    let id = mcap.add_channel(schema, topic, "protobuf", metadata)?;
    Ok(Channel { id, sequence: 0 })
}

impl<W: Write + Seek> Recorder<W> {
    /// Starts a recording of the stream `header` describes (the raw capture's header: its
    /// `started_unix_micros` is not used; the host time of each package is), as `options`
    /// say.
    ///
    /// # Errors
    /// [`Error::Mcap`] or [`Error::Io`] when the start of the file cannot be written.
    pub fn new(out: W, header: &Header, options: &RecorderOptions) -> Result<Self, Error> {
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
        let metadata = metadata(header, options);
        mcap.write_metadata(&Metadata {
            name: METADATA_NAME.to_owned(),
            metadata: metadata.clone(),
        })?;
        // The channel carries the recipe too, so a reader of the messages alone has it.
        let recipe = metadata
            .into_iter()
            .filter(|(k, _)| k == "fields" || k == "types")
            .collect();
        let outputs = protobuf_channel(
            &mut mcap,
            OUTPUTS_TOPIC,
            outputs::SCHEMA_NAME,
            &outputs::descriptor(&header.fields),
            &recipe,
        )?;
        let none = BTreeMap::new();
        let gaps = protobuf_channel(
            &mut mcap,
            GAPS_TOPIC,
            messages::GAP,
            &messages::gap_descriptor(),
            &none,
        )?;
        let derived = Derived::new(&layout, options.arm);
        let frames = options.frames;
        let mut channel = |on: bool, topic: &str, name: &str, descriptor: fn() -> Vec<u8>| {
            on.then(|| protobuf_channel(&mut mcap, topic, name, &descriptor(), &none))
                .transpose()
        };
        let channels = DerivedChannels {
            frames: channel(
                frames && derived.has_frames(),
                TF_TOPIC,
                foxglove::FRAME_TRANSFORMS,
                foxglove::frame_transforms_descriptor,
            )?,
            pose: channel(
                frames && derived.has_pose(),
                TCP_POSE_TOPIC,
                foxglove::POSE_IN_FRAME,
                foxglove::pose_in_frame_descriptor,
            )?,
            modes: channel(
                derived.has_modes(),
                MODES_TOPIC,
                messages::MODES,
                messages::modes_descriptor,
            )?,
        };
        Ok(Recorder {
            mcap,
            timeline: Timeline::new(header, &layout),
            layout,
            derived,
            outputs,
            gaps,
            channels,
            chunk_since: None,
            fields: header.fields.clone(),
            message: Vec::with_capacity(1024),
            stop: options.stop,
            first_timestamp: None,
            last_timestamp: None,
            counts: RecorderCounts::default(),
        })
    }

    /// Starts a recording of what `client` receives, `recipe` being the output recipe set
    /// up on it: the one call that reads the stream's header off the client
    /// ([`Header::of_client`]).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
    /// use rtde_record::host_time::now_unix_us;
    /// use rtde_record::stop::StopAfter;
    /// use rtde_sim::Sim;
    /// use rtde_view::{Recorder, RecorderOptions};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let sim = Sim::builder().start()?; // a robot's address in real use
    /// let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "actual_TCP_pose"])?;
    /// let mut client = Client::connect(sim.addr(), ConnectOptions::new())?;
    /// client.setup_outputs(recipe.spec(), 500.0)?;
    /// let options = RecorderOptions::new().robot("arm-1").stop_after(StopAfter::packages(100));
    /// // A `BufWriter<File>` in real use.
    /// let mut recorder = Recorder::for_client(Cursor::new(Vec::new()), &client, &recipe, &options)?;
    /// client.start()?;
    /// while !recorder.is_complete() {
    ///     let payload = client.recv()?;
    ///     recorder.package(payload, now_unix_us())?;
    /// }
    /// assert_eq!(recorder.counts().packages, 100);
    /// let file = recorder.finish()?.into_inner();
    /// # let _ = file;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Setup`] when `client` has no output recipe set up, or `recipe` is not it;
    /// what [`Recorder::new`] returns.
    pub fn for_client<R: rtde_core::OutputRecipe + ?Sized>(
        out: W,
        client: &Client,
        recipe: &R,
        options: &RecorderOptions,
    ) -> Result<Self, Error> {
        let header = Header::of_client(client, recipe).map_err(Error::Setup)?;
        Self::new(out, &header, options)
    }

    /// Writes one data package (its values, as [`Client::recv`] returns them), which
    /// arrived at host time `arrived_unix_us` (µs since the Unix epoch), and says whether
    /// it was written: a package past the options' stop is not (and
    /// [`Recorder::is_complete`] says so before it comes). The first package of each
    /// connection fixes the robot-to-host time mapping; the others are placed by their
    /// `timestamp`.
    ///
    /// # Errors
    /// [`Error::WrongSize`] for a payload that is not the recipe's size (nothing is
    /// written); [`Error::Mcap`] or [`Error::Io`] when writing fails.
    pub fn package(&mut self, payload: &[u8], arrived_unix_us: i64) -> Result<bool, Error> {
        if payload.len() != self.layout.size() {
            return Err(Error::WrongSize {
                index: self.counts.packages,
                got: payload.len(),
                expected: self.layout.size(),
            });
        }
        let timestamp = self.timeline.timestamp(payload);
        let offset = match (timestamp, self.first_timestamp) {
            (Some(t), Some(t0)) => t - t0,
            _ => 0.0,
        };
        if !self
            .stop
            .admits(self.counts.packages, offset, self.timeline.period())
        {
            return Ok(false);
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
            self.first_timestamp.get_or_insert(t);
            self.last_timestamp = Some(t);
        }
        if let Some(gap) = placed.gap {
            if gap.reconnection {
                self.counts.lost += gap.packages;
            } else {
                self.counts.skipped += gap.packages;
            }
            self.message.clear();
            gap.protobuf(&mut self.message);
            let mut channel = self.gaps;
            self.write(&mut channel, &placed)?;
            self.gaps = channel;
            self.counts.gaps += 1;
        }
        self.message.clear();
        outputs::encode(&self.fields, payload, &mut self.message);
        let mut channel = self.outputs;
        self.write(&mut channel, &placed)?;
        self.outputs = channel;
        self.derived_messages(payload, &placed)?;
        self.counts.packages += 1;
        Ok(true)
    }

    /// The link frames, the TCP pose and the modes of a package, on their channels.
    fn derived_messages(&mut self, payload: &[u8], placed: &Placed) -> Result<(), Error> {
        let mut channels = self.channels;
        if let Some(channel) = &mut channels.frames {
            self.message.clear();
            if self
                .derived
                .frames_protobuf(payload, placed.log_time, &mut self.message)
            {
                self.write(channel, placed)?;
            }
        }
        if let Some(channel) = &mut channels.pose {
            self.message.clear();
            if self
                .derived
                .pose_protobuf(payload, placed.log_time, &mut self.message)
            {
                self.write(channel, placed)?;
            }
        }
        if let Some(channel) = &mut channels.modes {
            self.message.clear();
            if self.derived.modes_protobuf(payload, &mut self.message) {
                self.write(channel, placed)?;
            }
        }
        self.channels = channels;
        Ok(())
    }

    /// Writes the message in `self.message` on `channel`, at the package's times.
    fn write(&mut self, channel: &mut Channel, placed: &Placed) -> Result<(), Error> {
        let header = MessageHeader {
            channel_id: channel.id,
            sequence: channel.sequence,
            log_time: placed.log_time,
            publish_time: placed.publish_time,
        };
        self.mcap.write_to_known_channel(&header, &self.message)?;
        channel.sequence = channel.sequence.wrapping_add(1);
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

    /// The controller's `timestamp` of the first package written, decoded (`None` before
    /// it, or for a recipe without `timestamp`).
    #[must_use]
    pub fn first_timestamp(&self) -> Option<f64> {
        self.first_timestamp
    }

    /// The controller's `timestamp` of the last package written, decoded.
    #[must_use]
    pub fn last_timestamp(&self) -> Option<f64> {
        self.last_timestamp
    }

    /// Whether the options' stop is reached: the next package would not be written.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        let offset = match (self.first_timestamp, self.last_timestamp) {
            (Some(t0), Some(t)) => t - t0,
            _ => 0.0,
        };
        let period = self.timeline.period();
        if self.counts.packages == 0 {
            return !self.stop.admits(0, 0.0, period);
        }
        self.stop.is_complete(self.counts.packages, offset, period)
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
