//! `rtde record`: every output package a controller sends, to CSV and, on request, to a
//! raw capture ([`rtde_record::capture`]).

use crate::said;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::timing::effective_frequency;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, OutputRecipe, Recipe, Value};
use rtde_robot::motion::Kinematics;
use rtde_robot::script::ScriptPort;
use rtde_sim::{Arm, Sim};
use rtde_view::{Recorder, RecorderOptions, ViewOptions, ViewServer};

use crate::args;
use crate::outfile::PendingFile;
use crate::progress::{Progress, clock};
use rtde_record::capture::{self, Header};
use rtde_record::csv::CsvWriter;
use rtde_record::stop::StopAfter;

/// The frequency recorded at unless `--frequency` says otherwise: every package of a CB3,
/// every fourth of an e-Series controller.
const DEFAULT_FREQUENCY: f64 = 125.0;
/// How long one wait for a package may last: the longest a Ctrl-C waits to be noticed.
const RECV_WAIT: Duration = Duration::from_millis(250);
/// How long the controller may take to answer a request (a busy controller is slow).
const REPLY_WAIT: Duration = Duration::from_secs(2);
/// How long without any package before the recording fails, at the least.
const MIN_SILENCE: Duration = Duration::from_secs(2);
/// How often buffered rows are written through to disk.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// How many gaps the summary lists.
const GAPS_LISTED: usize = 5;

/// Record a controller's outputs: one CSV row per data package, none lost.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Record a controller's outputs: one CSV row per data package, none lost.

Every package the controller sends becomes one row, in order. `timestamp` is always \
recorded (first, unless --fields places it): the packages the controller skipped are counted \
from it, shown while recording, and listed in the summary. Vectors take one column per \
element (actual_q_0 … actual_q_5).

Without --robot the built-in simulator is recorded (a UR5e on an e-Series controller, \
in-process), which is handy for trying things out.

--duration counts controller time as packages: a package stands for the period up to the \
next, so 5s at 125 Hz is the 625 packages from the first, and the recording ends with the \
last of them (`rtde replay` gives a capture's length the same way).

Files are written under NAME.partial and renamed when the recording ends, so a file with \
the name you gave is always complete. Ctrl-C ends a recording cleanly, and so does a server \
that announces the end of its stream before it closes the connection (`rtde replay` at the \
end of its capture; the end-of-stream text message of rtde_core::protocol). A recording \
that fails part-way, a connection closed without that announcement included, keeps what it \
got in the .partial files and says so.

--raw also writes a capture: the negotiated recipe, the controller version and frequency, \
then every data package byte for byte as it arrived. `rtde replay` serves a capture to any \
RTDE client; the format is described in the documentation of rtde_record::capture.",
    after_help = "Examples:
  rtde record --fields actual_q,actual_TCP_pose --duration 10s -o run.csv
      ten seconds of the simulator at 125 Hz
  rtde record --robot 192.168.1.10 --fields actual_q --frequency 500 -o run.csv --raw run.rtde
      a real e-Series robot at its full 500 Hz, until Ctrl-C, with a raw capture
  rtde record --robot ur5e.local:30004 --fields timestamp,robot_mode --samples 1000 -o modes.csv
      the first 1000 packages of a robot on an explicit port
  rtde fields tcp
      find the field names to record"
)]
pub(crate) struct RecordArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Output fields to record, comma-separated (`rtde fields` lists them; any case).
    #[arg(
        long,
        short = 'f',
        value_name = "FIELD,…",
        value_delimiter = ',',
        required = true
    )]
    fields: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
    /// The file to write: CSV, or MCAP with --format mcap or a `.mcap` name.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
    /// The format of --output [default: mcap for a `.mcap` file, else csv].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Also write a raw capture, for `rtde replay`.
    #[arg(long, value_name = "FILE.rtde")]
    raw: Option<PathBuf>,
    /// Also serve a live view for Foxglove or Lichtblick on ADDR, as `rtde view` does
    /// [default ADDR: 127.0.0.1:8765].
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8765")]
    view: Option<SocketAddr>,
    /// The arm the view draws and an MCAP file's `/tf` is computed with, when a robot's
    /// own cannot be read: any UR model (ur5e, ur10, ur20, ...).
    #[arg(long, value_name = "MODEL", default_value = "ur5e")]
    arm: Arm,
    /// MCAP: leave out the arm's link frames (`/tf`, from actual_q) and the TCP pose
    /// (`/tcp_pose`, from actual_TCP_pose), which are recorded by default.
    #[arg(long)]
    no_frames: bool,
    /// Print nothing but errors (no simulator notice, progress or summary).
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Where the packages come from: a robot, or the built-in simulator.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SourceArgs {
    /// The robot's address: HOST or HOST:PORT (port 30004 unless given; IPv6 in brackets).
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with_all = ["sim", "sim_version", "deterministic"])]
    robot: Option<String>,
    /// Use the built-in simulator (the default without --robot).
    #[arg(long)]
    sim: bool,
    /// The controller version the simulator plays (3.x CB3, 5.x e-Series, 10.x PolyScope X).
    #[arg(long, value_name = "VERSION", default_value = "5.21.0")]
    sim_version: ControllerVersion,
    /// Simulator without measurement noise: every value follows the documented motion law.
    #[arg(long)]
    deterministic: bool,
    /// Packages per second [default: 125, or the control-loop rate in protocol v1].
    #[arg(long, value_name = "HZ")]
    frequency: Option<f64>,
}

/// When to stop.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LimitArgs {
    /// Stop after this much controller time: 10s, 500ms, 2m, 1h; 5s at 125 Hz is 625
    /// packages [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = args::duration, conflicts_with = "samples")]
    duration: Option<Duration>,
    /// Stop after this many packages [default: until Ctrl-C].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    samples: Option<u64>,
}

/// The format of `rtde record --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// One row per package (`rtde_record::csv`).
    Csv,
    /// MCAP: the recipe's values, the arm's link frames and TCP pose (unless
    /// --no-frames), the modes and the gaps, each a channel of protobuf messages with their
    /// schema, zstd chunks (`rtde_view`).
    Mcap,
}

/// What one run of the receive loop does: `rtde record` and `rtde view` both are one.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) source: SourceArgs,
    pub(crate) fields: Vec<String>,
    pub(crate) limits: LimitArgs,
    /// The output file and its format; none for `rtde view`.
    pub(crate) output: Option<(PathBuf, Format)>,
    pub(crate) raw: Option<PathBuf>,
    pub(crate) view: Option<SocketAddr>,
    /// The arm the view draws and an MCAP file's frames follow, when the robot's own
    /// calibration cannot be read.
    pub(crate) arm: Arm,
    /// Whether an MCAP file records the arm's frames.
    pub(crate) frames: bool,
    pub(crate) quiet: bool,
}

impl RecordArgs {
    fn into_plan(self) -> Plan {
        let format = self.format.unwrap_or_else(|| {
            let mcap = self
                .output
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("mcap"));
            if mcap { Format::Mcap } else { Format::Csv }
        });
        Plan {
            source: self.source,
            fields: self.fields,
            limits: self.limits,
            output: Some((self.output, format)),
            raw: self.raw,
            view: self.view,
            arm: self.arm,
            frames: !self.no_frames,
            quiet: self.quiet,
        }
    }
}

/// Why the receive loop ended.
enum End {
    /// The duration or sample count was reached.
    Done,
    /// Ctrl-C.
    Interrupted,
    /// The server said its data had ended, then closed the connection (a replay at the
    /// end of its capture): everything it had is recorded.
    SourceEnded,
    /// Something failed; what was written is kept under the `.partial` names.
    Failed(String),
}

/// Runs `rtde record`.
pub(crate) fn run(args: RecordArgs) -> Result<(), String> {
    run_plan(args.into_plan())
}

/// The output file being written, in its format.
// One per run: its size is no matter, and boxing the recorder would only add an
// indirection per package.
#[allow(clippy::large_enum_variant)]
enum Output {
    Csv(CsvWriter<PendingFile>),
    Mcap(Recorder<PendingFile>),
}

impl Output {
    fn package(
        &mut self,
        values: &[Value],
        payload: &[u8],
        arrived_unix_us: i64,
    ) -> Result<(), String> {
        match self {
            Output::Csv(csv) => csv.row(values).map_err(said),
            // The recorder has no stop of its own here: the receive loop applies the limits.
            Output::Mcap(mcap) => mcap
                .package(payload, arrived_unix_us)
                .map(|_| ())
                .map_err(said),
        }
    }

    fn flush(&mut self) -> Result<(), String> {
        match self {
            Output::Csv(csv) => csv.flush().map_err(said),
            // The recorder cuts a chunk, and writes it through, every second of controller
            // time on its own.
            Output::Mcap(_) => Ok(()),
        }
    }

    /// The file, with an MCAP file's summary written. (A CSV file is flushed when it is
    /// committed or kept.)
    fn finish(self) -> Result<PendingFile, String> {
        match self {
            Output::Csv(csv) => Ok(csv.into_inner()),
            Output::Mcap(mcap) => mcap.finish().map_err(said),
        }
    }
}

/// Runs the receive loop a plan describes: `rtde record`, `rtde view`, or both at once.
pub(crate) fn run_plan(plan: Plan) -> Result<(), String> {
    let say = |text: &str| {
        if !plan.quiet {
            eprintln!("rtde: {text}");
        }
    };
    let mut recipe = recipe_of(&plan)?;
    // Created before connecting: an unwritable path fails before anything else happens.
    let file = match &plan.output {
        Some((path, format)) => Some((PendingFile::create(path)?, *format)),
        None => None,
    };
    let raw = plan.raw.as_deref().map(PendingFile::create).transpose()?;
    crate::interrupt::handle()?;

    let doing = if file.is_some() {
        "recording"
    } else {
        "viewing"
    };
    let (sim, mut client) = connect(&plan, doing, say)?;
    let frequency = match (client.protocol_version(), plan.source.frequency) {
        (rtde_core::protocol::ProtocolVersion::V1, None) => client.max_frequency(),
        (_, Some(f)) => f,
        (_, None) => DEFAULT_FREQUENCY.min(client.max_frequency()),
    };
    if let Err(e) = client.setup_outputs(recipe.spec(), frequency) {
        return Err(with_texts(&e, &mut client));
    }
    let header = Header::of_client(&client, &recipe).map_err(said)?;
    let robot_name = plan.source.robot.as_deref().unwrap_or("rtde-sim");
    let has_q = recipe.names().contains(&"actual_q");
    let mcap_frames =
        plan.frames && has_q && file.as_ref().is_some_and(|(_, f)| *f == Format::Mcap);
    // Read once: the view and the file's frames follow the same arm.
    let arm = (plan.view.is_some() || mcap_frames).then(|| {
        let kinematics = view_kinematics(&plan, sim.as_ref(), plan.arm);
        say(&format!("the arm's frames are computed with {kinematics}"));
        *kinematics.arm()
    });
    let options = RecorderOptions::new()
        .robot(robot_name)
        .arm(arm.unwrap_or(plan.arm))
        .frames(plan.frames);
    let mut sinks = Sinks::open(file, raw, &header, &options)?;
    if let Some(addr) = plan.view {
        sinks.view(addr, arm.unwrap_or(plan.arm), &header, robot_name)?;
        if !recipe.names().contains(&"actual_q") {
            say("no actual_q in the recipe: the view draws no arm (add it to --fields)");
        }
    }
    client.start().map_err(|e| with_texts(&e, &mut client))?;
    // Short waits from here on, so that the loop looks at the Ctrl-C flag often.
    client.set_read_timeout(Some(RECV_WAIT)).map_err(said)?;

    // The period packages actually come at: a frequency that does not divide the loop
    // rate streams faster than asked.
    let period = 1.0 / effective_frequency(client.max_frequency(), frequency);
    let mut progress = Progress::new(plan.quiet);
    let (end, tally) = receive(
        &mut client,
        &mut recipe,
        &mut sinks,
        &plan.limits,
        period,
        &mut progress,
    );
    progress.clear();
    let stats = client.stats();
    // Pausing may fail on a broken link; the recording is what matters now.
    let _ = client.set_read_timeout(Some(REPLY_WAIT));
    let _ = client.close();
    drop(sim);
    let (finished, finished_raw, view_stats) = sinks.finish(stats.skipped);
    let outputs = settle(&end, tally.written, finished, finished_raw)?;
    report(
        &say,
        &Summary {
            end: &end,
            tally: &tally,
            outputs: &outputs,
            frequency,
            period,
            skipped: stats.skipped,
            view: view_stats,
        },
    );
    Ok(())
}

/// The plan's recipe, with `timestamp` first when the plan leaves it out, after the checks
/// of the plan's own values.
fn recipe_of(plan: &Plan) -> Result<DynamicRecipe, String> {
    let mut names: Vec<&str> = plan.fields.iter().map(|s| s.trim()).collect();
    if !names.iter().any(|n| n.eq_ignore_ascii_case("timestamp")) {
        names.insert(0, "timestamp");
    }
    let recipe = DynamicRecipe::outputs(&names).map_err(said)?;
    if plan
        .source
        .frequency
        .is_some_and(|f| !(f.is_finite() && f > 0.0))
    {
        return Err("--frequency must be a positive number of hertz".into());
    }
    if let Some((output, _)) = &plan.output
        && plan.raw.as_ref() == Some(output)
    {
        return Err("--raw and --output name the same file".into());
    }
    Ok(recipe)
}

/// The primary interface's port, where a robot's calibration is read.
const PRIMARY_PORT: u16 = ScriptPort::Primary.default_port();

/// The arm the live view draws: the built-in simulator's own, or a robot's calibrated
/// arm read off its primary interface (port 30001), else the nominal table of `model`.
fn view_kinematics(plan: &Plan, sim: Option<&Sim>, model: Arm) -> Kinematics {
    if let Some(sim) = sim {
        return Kinematics::Nominal {
            arm: sim.arm(),
            why: "the built-in simulator's arm is uncalibrated".into(),
        };
    }
    let primary = plan
        .source
        .robot
        .as_deref()
        .and_then(|robot| args::robot_on(robot, PRIMARY_PORT).ok())
        .and_then(|(host, _)| (host.as_str(), PRIMARY_PORT).to_socket_addrs().ok()?.next());
    match primary {
        Some(addr) => Kinematics::read(addr, model),
        None => Kinematics::Nominal {
            arm: model,
            why: "the robot's primary interface has no address".into(),
        },
    }
}

/// The source of the plan: the robot, or the built-in simulator started for it (kept alive
/// by the returned handle), connected.
fn connect(plan: &Plan, doing: &str, say: impl Fn(&str)) -> Result<(Option<Sim>, Client), String> {
    let source = &plan.source;
    let (sim, host, port) = match &source.robot {
        Some(robot) => {
            let (host, port) = args::robot(robot)?;
            (None, host, port)
        }
        None => {
            let arm = plan.arm;
            let builder = Sim::builder()
                .controller_version(&source.sim_version.to_string())
                .arm(arm);
            let builder = if source.deterministic {
                builder.deterministic()
            } else {
                builder
            };
            let sim = builder
                .start()
                .map_err(|e| format!("cannot start the simulator: {e}", e = said(e)))?;
            say(&format!(
                "no --robot given: {doing} the built-in simulator (a {} on controller {}, in-process on {})",
                arm.name,
                sim.controller_version(),
                sim.addr()
            ));
            let (host, port) = (sim.addr().ip().to_string(), sim.addr().port());
            (Some(sim), host, port)
        }
    };
    let options = ConnectOptions::new()
        .connect_timeout(Duration::from_secs(5))
        .read_timeout(Some(REPLY_WAIT));
    let client = Client::connect((host.as_str(), port), options).map_err(said)?;
    Ok((sim, client))
}

/// Where each package goes: the output file (CSV or MCAP), the raw capture and the live
/// view, each where the plan asks for it, with the name its errors give.
struct Sinks {
    output: Option<(Output, String)>,
    raw: Option<(capture::Writer<PendingFile>, String)>,
    view: Option<ViewServer>,
}

/// What [`Sinks::finish`] leaves: the output file and the raw capture, each finished or
/// why not, and the view's counts.
type Finished = (
    Option<Result<PendingFile, String>>,
    Option<Result<PendingFile, String>>,
    Option<rtde_view::ViewStats>,
);

impl Sinks {
    fn open(
        file: Option<(PendingFile, Format)>,
        raw: Option<PendingFile>,
        header: &Header,
        options: &RecorderOptions,
    ) -> Result<Sinks, String> {
        let output = match file {
            Some((file, format)) => {
                let name = file.temp_path().display().to_string();
                let output = match format {
                    Format::Csv => CsvWriter::new(file, &header.fields)
                        .map(Output::Csv)
                        .map_err(said),
                    Format::Mcap => Recorder::new(file, header, options)
                        .map(Output::Mcap)
                        .map_err(said),
                };
                let output = output.map_err(|e| format!("cannot write `{name}`: {e}"))?;
                Some((output, name))
            }
            None => None,
        };
        let raw = match raw {
            Some(file) => {
                let name = file.temp_path().display().to_string();
                let writer = capture::Writer::new(file, header)
                    .map_err(|e| format!("cannot write `{name}`: {e}", e = said(e)))?;
                Some((writer, name))
            }
            None => None,
        };
        Ok(Sinks {
            output,
            raw,
            view: None,
        })
    }

    /// Starts the live view on `addr` and says where it is, on stdout, as `rtde sim` and
    /// `rtde replay` announce their addresses.
    fn view(
        &mut self,
        addr: SocketAddr,
        arm: Arm,
        header: &Header,
        robot: &str,
    ) -> Result<(), String> {
        let options = ViewOptions::new().addr(addr).arm(arm).robot(robot);
        let view = ViewServer::start(header, options).map_err(said)?;
        println!("rtde view: listening on {}", view.addr());
        println!(
            "rtde view: in Foxglove or Lichtblick, Open connection → Foxglove WebSocket → {}",
            view.url()
        );
        self.view = Some(view);
        Ok(())
    }

    /// One package, to every sink.
    fn package(
        &mut self,
        values: &[Value],
        payload: &[u8],
        arrived: Instant,
        arrived_unix_us: i64,
    ) -> Result<(), String> {
        if let Some((writer, name)) = &mut self.raw {
            writer
                .package(payload)
                .map_err(|e| format!("cannot write `{name}`: {e}", e = said(e)))?;
        }
        if let Some((output, name)) = &mut self.output {
            output
                .package(values, payload, arrived_unix_us)
                .map_err(|e| format!("cannot write `{name}`: {e}"))?;
        }
        if let Some(view) = &self.view {
            view.publish(payload, arrived, arrived_unix_us);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if let Some((output, name)) = &mut self.output {
            output
                .flush()
                .map_err(|e| format!("cannot write `{name}`: {e}"))?;
        }
        if let Some((writer, name)) = &mut self.raw {
            writer
                .flush()
                .map_err(|e| format!("cannot write `{name}`: {e}", e = said(e)))?;
        }
        Ok(())
    }

    /// The files finished (an MCAP file's summary, the capture's counts with `skipped`),
    /// and the view shut down.
    fn finish(self, skipped: u64) -> Finished {
        let view = self.view.map(|view| {
            let stats = view.stats();
            view.shutdown();
            stats
        });
        let output = self.output.map(|(output, name)| {
            output
                .finish()
                .map_err(|e| format!("cannot write `{name}`: {e}"))
        });
        let raw = self.raw.map(|(writer, name)| {
            writer
                .finish(skipped)
                .map_err(|e| format!("cannot write `{name}`: {e}", e = said(e)))
        });
        (output, raw, view)
    }
}

/// What the receive loop counted.
struct Tally {
    started: Instant,
    written: u64,
    first_timestamp: Option<f64>,
    last_timestamp: Option<f64>,
    /// The first gaps the controller's skips left: the timestamp after each, and how many
    /// packages it skipped there.
    gaps: Vec<(f64, u64)>,
    gap_count: u64,
}

/// Receives until the plan's limits, Ctrl-C, the source's end or a failure, and hands
/// every package to the sinks.
fn receive(
    client: &mut Client,
    recipe: &mut DynamicRecipe,
    sinks: &mut Sinks,
    limits: &LimitArgs,
    period: f64,
    progress: &mut Progress,
) -> (End, Tally) {
    let timestamp_at = recipe
        .index_of("timestamp")
        .expect("timestamp is in every recorded recipe");
    // Saturating: five periods of a tiny frequency (1e-300 Hz) are no `Duration`.
    let silence =
        MIN_SILENCE.max(Duration::try_from_secs_f64(5.0 * period).unwrap_or(Duration::MAX));
    let started = Instant::now();
    let mut tally = Tally {
        started,
        written: 0,
        first_timestamp: None,
        last_timestamp: None,
        gaps: Vec::new(),
        gap_count: 0,
    };
    let mut stop = StopAfter::default();
    (stop.packages, stop.duration) = (limits.samples, limits.duration);
    let mut last_package = started;
    let mut last_flush = started;
    let mut skipped_so_far = 0u64;
    let end = loop {
        if crate::interrupt::asked() {
            break End::Interrupted;
        }
        if !stop.admits(tally.written, 0.0, period) {
            break End::Done;
        }
        let payload = match client.recv() {
            Ok(payload) => payload,
            Err(e) if e.is_timeout() => {
                if last_package.elapsed() >= silence {
                    break End::Failed(format!(
                        "no data package for {:.1} s; is the controller still streaming?",
                        silence.as_secs_f64()
                    ));
                }
                continue;
            }
            Err(e @ Error::Closed { mid_frame: false }) => break closed(client, &e, progress),
            Err(e) => break End::Failed(said(e)),
        };
        last_package = Instant::now();
        let arrived_unix_us = rtde_record::host_time::now_unix_us();
        if let Err(e) = recipe.decode_into(payload) {
            break End::Failed(said(e));
        }
        let Some(&Value::Double(t)) = recipe.value(timestamp_at) else {
            unreachable!("`timestamp` is a DOUBLE")
        };
        let t0 = *tally.first_timestamp.get_or_insert(t);
        if !stop.admits(tally.written, t - t0, period) {
            // After a gap: the window closed while the controller skipped packages.
            break End::Done;
        }
        if let Err(e) = sinks.package(recipe.values(), payload, last_package, arrived_unix_us) {
            break End::Failed(e);
        }
        tally.written += 1;
        tally.last_timestamp = Some(t);
        let skipped = client.stats().skipped;
        if skipped > skipped_so_far {
            tally.gap_count += 1;
            if tally.gaps.len() < GAPS_LISTED {
                tally.gaps.push((t, skipped - skipped_so_far));
            }
            skipped_so_far = skipped;
        }
        for text in client.text_messages() {
            progress.clear();
            eprintln!("rtde: the controller says: {text}");
        }
        progress.update(tally.written, skipped_so_far);
        if last_package - last_flush >= FLUSH_EVERY {
            last_flush = last_package;
            if let Err(e) = sinks.flush() {
                break End::Failed(e);
            }
        }
        if stop.is_complete(tally.written, t - t0, period) {
            // The next package would be outside the window: no need to wait for it (a
            // replay may have none to send).
            break End::Done;
        }
    };
    (end, tally)
}

/// The connection closed between packages: the source's end when it said so first (a
/// replay at the end of its capture), a failure otherwise.
fn closed(client: &mut Client, e: &Error, progress: &mut Progress) -> End {
    let mut ended = false;
    for text in client.text_messages() {
        if text.is_end_of_stream() {
            ended = true;
        } else {
            progress.clear();
            eprintln!("rtde: the controller says: {text}");
        }
    }
    if ended {
        End::SourceEnded
    } else {
        End::Failed(rtde_core::Report(e).to_string())
    }
}

/// The files committed under their names, or the failure with what was kept: a failure
/// after some packages keeps them under the `.partial` names and says where.
fn settle(
    end: &End,
    written: u64,
    finished: Option<Result<PendingFile, String>>,
    finished_raw: Option<Result<PendingFile, String>>,
) -> Result<Vec<String>, String> {
    let failure = match end {
        End::Failed(why) => Some(why.clone()),
        End::Done | End::Interrupted | End::SourceEnded => None,
    };
    let failure = failure
        .or_else(|| match &finished {
            Some(Err(e)) => Some(e.clone()),
            _ => None,
        })
        .or_else(|| match &finished_raw {
            Some(Err(e)) => Some(e.clone()),
            _ => None,
        });
    if let Some(why) = failure {
        if written == 0 || (finished.is_none() && finished_raw.is_none()) {
            return Err(why);
        }
        let mut kept = Vec::new();
        for file in [finished, finished_raw].into_iter().flatten().flatten() {
            kept.push(format!("`{}`", file.keep_partial().display()));
        }
        return Err(format!(
            "{why}; the {written} packages recorded until then are in {}",
            kept.join(" and ")
        ));
    }
    commit(
        finished.and_then(Result::ok),
        finished_raw.and_then(Result::ok),
    )
}

/// What the summary says.
struct Summary<'a> {
    end: &'a End,
    tally: &'a Tally,
    outputs: &'a [String],
    frequency: f64,
    period: f64,
    skipped: u64,
    view: Option<rtde_view::ViewStats>,
}

/// The summary of a run that ended well: what was recorded or served, what the view
/// dropped, and every gap the controller left.
fn report(say: &impl Fn(&str), s: &Summary<'_>) {
    let how = match s.end {
        End::Interrupted => "stopped by Ctrl-C: ",
        End::SourceEnded => "the source ended its stream: ",
        End::Done | End::Failed(_) => "",
    };
    // A package stands for the period from its timestamp to the next: N packages at
    // f Hz are N/f seconds, as `--duration` and `rtde replay` count them.
    let span = match (s.tally.first_timestamp, s.tally.last_timestamp) {
        (Some(a), Some(b)) => format!(", {:.3} s of controller time", b - a + s.period),
        _ => String::new(),
    };
    let (verb, to) = if s.outputs.is_empty() {
        ("served", String::new())
    } else {
        ("recorded", format!(" to {}", s.outputs.join(" and ")))
    };
    say(&format!(
        "{how}{verb} {} packages at {} Hz{span} in {}{to}",
        s.tally.written,
        s.frequency,
        clock(s.tally.started.elapsed()),
    ));
    if let Some(v) = &s.view {
        say(&format!(
            "the view wrote {} frames; {} dropped for clients that read too slowly, {} packages it fell behind on",
            v.frames, v.dropped_slow, v.dropped_queue
        ));
    }
    if s.skipped == 0 {
        say("the controller skipped no package");
        return;
    }
    let listed: Vec<String> = s
        .tally
        .gaps
        .iter()
        .map(|(t, n)| format!("{n} before timestamp {t}"))
        .collect();
    let more = if s.tally.gap_count > s.tally.gaps.len() as u64 {
        ", …"
    } else {
        ""
    };
    let (packages, gaps) = (
        if s.skipped == 1 {
            "package"
        } else {
            "packages"
        },
        if s.tally.gap_count == 1 {
            "gap"
        } else {
            "gaps"
        },
    );
    say(&format!(
        "the controller skipped {} {packages} in {} {gaps}: {}{more}",
        s.skipped,
        s.tally.gap_count,
        listed.join(", ")
    ));
}

/// Renames the finished files to their names; returns the names, quoted. When the output
/// cannot be renamed, the capture keeps its `.partial` name too, and the error says where
/// it is (dropping it would delete it).
fn commit(output: Option<PendingFile>, raw: Option<PendingFile>) -> Result<Vec<String>, String> {
    let mut outputs = Vec::new();
    if let Some(output) = output {
        outputs.push(format!("`{}`", output.path().display()));
        if let Err(e) = output.commit() {
            return Err(match raw {
                Some(raw) => format!(
                    "{e}; the raw capture is in `{}`",
                    raw.keep_partial().display()
                ),
                None => e,
            });
        }
    }
    if let Some(raw) = raw {
        outputs.push(format!("`{}`", raw.path().display()));
        raw.commit()?;
    }
    Ok(outputs)
}

/// An error, with what the controller said about it in its text messages.
fn with_texts(e: &Error, client: &mut Client) -> String {
    // A refusal already quotes the text the controller sent with it.
    let quoted = match e {
        Error::SetupRefused(refused) => refused.reason().map(str::to_owned),
        _ => None,
    };
    let texts: Vec<String> = client
        .text_messages()
        .filter(|t| quoted.as_deref() != Some(t.message.as_str()))
        .map(|t| t.to_string())
        .collect();
    let e = rtde_core::Report(e);
    if texts.is_empty() {
        e.to_string()
    } else {
        format!("{e}; the controller said: {}", texts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_csv_that_cannot_be_renamed_keeps_the_capture_too() {
        let dir = std::env::temp_dir().join(format!("rtde-record-commit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut csv = PendingFile::create(&dir.join("x.csv")).unwrap();
        let mut raw = PendingFile::create(&dir.join("x.rtde")).unwrap();
        csv.write_all(b"timestamp\n0\n").unwrap();
        raw.write_all(b"capture").unwrap();
        // Something takes the CSV's name while recording: the rename fails.
        std::fs::create_dir(dir.join("x.csv")).unwrap();
        let err = commit(Some(csv), Some(raw)).unwrap_err();
        let kept = format!(
            "; the raw capture is in `{}`",
            dir.join("x.rtde.partial").display()
        );
        assert!(err.ends_with(&kept), "{err}");
        assert_eq!(
            std::fs::read(dir.join("x.rtde.partial")).unwrap(),
            b"capture"
        );
        assert_eq!(
            std::fs::read(dir.join("x.csv.partial")).unwrap(),
            b"timestamp\n0\n"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
