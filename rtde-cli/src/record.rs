//! `rtde record`: every output package a controller sends, to CSV and, on request, to a
//! raw capture ([`rtde_core::capture`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::fields::{ControllerVersion, Field};
use rtde_core::protocol::timing::effective_frequency;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, OutputRecipe, Recipe, Value};
use rtde_sim::Sim;

use crate::args;
use crate::outfile::PendingFile;
use crate::progress::{Progress, clock};
use rtde_core::capture::{self, Header};
use rtde_core::csv::CsvWriter;

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
RTDE client; the format is described in the documentation of rtde_core::capture.",
    after_help = "Examples:
  rtde record --fields actual_q,actual_TCP_pose --duration 10s -o run.csv
      ten seconds of the simulator at 125 Hz
  rtde record --robot 192.168.1.10 --fields actual_q,actual_qd --frequency 500 -o run.csv --raw run.rtde
      a real e-Series robot at its full 500 Hz, until Ctrl-C, with a raw capture
  rtde record --robot ur5e.local:30004 --fields timestamp,robot_mode --samples 1000 -o modes.csv
      the first 1000 packages of a robot on an explicit port
  rtde fields tcp
      find the field names to record"
)]
pub(crate) struct RecordArgs {
    /// The robot's address: HOST or HOST:PORT (port 30004 unless given; IPv6 in brackets).
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with_all = ["sim", "sim_version", "deterministic"])]
    robot: Option<String>,
    /// Record the built-in simulator (the default without --robot).
    #[arg(long)]
    sim: bool,
    /// The controller version the simulator plays (3.x CB3, 5.x e-Series, 10.x PolyScope X).
    #[arg(long, value_name = "VERSION", default_value = "5.21.0")]
    sim_version: ControllerVersion,
    /// Simulator without measurement noise: every value follows the documented motion law.
    #[arg(long)]
    deterministic: bool,
    /// Output fields to record, comma-separated (`rtde fields` lists them; any case).
    #[arg(
        long,
        short = 'f',
        value_name = "FIELD,…",
        value_delimiter = ',',
        required = true
    )]
    fields: Vec<String>,
    /// Packages per second [default: 125, or the control-loop rate in protocol v1].
    #[arg(long, value_name = "HZ")]
    frequency: Option<f64>,
    /// Stop after this much controller time: 10s, 500ms, 2m, 1h; 5s at 125 Hz is 625
    /// packages [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = args::duration, conflicts_with = "samples")]
    duration: Option<Duration>,
    /// Stop after this many packages [default: until Ctrl-C].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    samples: Option<u64>,
    /// The CSV file to write.
    #[arg(long, short = 'o', value_name = "FILE.csv")]
    output: PathBuf,
    /// Also write a raw capture, for `rtde replay`.
    #[arg(long, value_name = "FILE.rtde")]
    raw: Option<PathBuf>,
    /// Print nothing but errors (no simulator notice, progress or summary).
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Set by Ctrl-C (and SIGTERM, SIGHUP): the recording ends after the current package.
static STOP: AtomicBool = AtomicBool::new(false);

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
    let say = |text: &str| {
        if !args.quiet {
            eprintln!("rtde: {text}");
        }
    };
    let mut names: Vec<&str> = args.fields.iter().map(|s| s.trim()).collect();
    if !names.iter().any(|n| n.eq_ignore_ascii_case("timestamp")) {
        names.insert(0, "timestamp");
    }
    let mut recipe = DynamicRecipe::outputs(&names).map_err(|e| e.to_string())?;
    if args.frequency.is_some_and(|f| !(f.is_finite() && f > 0.0)) {
        return Err("--frequency must be a positive number of hertz".into());
    }
    if args.raw.as_ref() == Some(&args.output) {
        return Err("--raw and --output name the same file".into());
    }
    // Created before connecting: an unwritable path fails before anything else happens.
    let csv = PendingFile::create(&args.output)?;
    let raw = args.raw.as_deref().map(PendingFile::create).transpose()?;

    ctrlc::set_handler(|| {
        // A second Ctrl-C does not wait for the clean stop.
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;

    let sim = match &args.robot {
        Some(_) => None,
        None => {
            let builder = Sim::builder().controller_version(&args.sim_version.to_string());
            let builder = if args.deterministic {
                builder.deterministic()
            } else {
                builder
            };
            let sim = builder
                .start()
                .map_err(|e| format!("cannot start the simulator: {e}"))?;
            say(&format!(
                "no --robot given: recording the built-in simulator (a UR5e on controller {}, in-process on {})",
                sim.controller_version(),
                sim.addr()
            ));
            Some(sim)
        }
    };
    let (host, port) = match (&args.robot, &sim) {
        (Some(robot), _) => args::robot(robot)?,
        (None, Some(sim)) => (sim.addr().ip().to_string(), sim.addr().port()),
        (None, None) => unreachable!("a simulator runs when no robot is given"),
    };

    let options = ConnectOptions::new()
        .connect_timeout(Duration::from_secs(5))
        .read_timeout(Some(REPLY_WAIT));
    let mut client = Client::connect((host.as_str(), port), options).map_err(|e| e.to_string())?;
    let frequency = match (client.protocol_version(), args.frequency) {
        (rtde_core::protocol::ProtocolVersion::V1, None) => client.max_frequency(),
        (_, Some(f)) => f,
        (_, None) => DEFAULT_FREQUENCY.min(client.max_frequency()),
    };
    if let Err(e) = client.setup_outputs(recipe.spec(), frequency) {
        return Err(with_texts(&e, &mut client));
    }
    let fields: Vec<&'static Field> = recipe.fields().to_vec();
    let timestamp_at = recipe
        .index_of("timestamp")
        .expect("timestamp is in every recorded recipe");
    let started_unix_micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let header = Header {
        protocol: client.protocol_version(),
        controller: client.controller_version(),
        frequency,
        recipe_id: client.output_recipe_id(),
        started_unix_micros,
        fields: fields.clone(),
    };
    let csv_name = csv.temp_path().display().to_string();
    let mut csv =
        CsvWriter::new(csv, &fields).map_err(|e| format!("cannot write `{csv_name}`: {e}"))?;
    let mut raw = match raw {
        Some(file) => {
            let name = file.temp_path().display().to_string();
            let writer = capture::Writer::new(file, &header)
                .map_err(|e| format!("cannot write `{name}`: {e}"))?;
            Some((writer, name))
        }
        None => None,
    };
    client.start().map_err(|e| with_texts(&e, &mut client))?;
    // Short waits from here on, so that the loop looks at the Ctrl-C flag often.
    client
        .set_read_timeout(Some(RECV_WAIT))
        .map_err(|e| e.to_string())?;

    // The period packages actually come at: a frequency that does not divide the loop
    // rate streams faster than asked.
    let period = 1.0 / effective_frequency(client.max_frequency(), frequency);
    // Saturating: five periods of a tiny frequency (1e-300 Hz) are no `Duration`.
    let silence =
        MIN_SILENCE.max(Duration::try_from_secs_f64(5.0 * period).unwrap_or(Duration::MAX));
    let mut progress = Progress::new(args.quiet);
    let started = Instant::now();
    let mut last_package = started;
    let mut last_flush = started;
    let mut first_timestamp = None;
    let mut last_timestamp = None;
    let mut skipped_so_far = 0u64;
    let mut gaps: Vec<(f64, u64)> = Vec::new();
    let mut gap_count = 0u64;
    let end = loop {
        if STOP.load(Ordering::SeqCst) {
            break End::Interrupted;
        }
        if args.samples.is_some_and(|n| csv.rows() >= n) {
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
            Err(e @ Error::Closed { mid_frame: false }) => {
                let mut ended = false;
                for text in client.text_messages() {
                    if text.is_end_of_stream() {
                        ended = true;
                    } else {
                        progress.clear();
                        eprintln!("rtde: the controller says: {text}");
                    }
                }
                break if ended {
                    End::SourceEnded
                } else {
                    End::Failed(e.to_string())
                };
            }
            Err(e) => break End::Failed(e.to_string()),
        };
        last_package = Instant::now();
        if let Err(e) = recipe.decode_into(payload) {
            break End::Failed(e.to_string());
        }
        let Some(&Value::Double(t)) = recipe.value(timestamp_at) else {
            unreachable!("`timestamp` is a DOUBLE")
        };
        let t0 = *first_timestamp.get_or_insert(t);
        if args.duration.is_some_and(|d| !within(d, period, t - t0)) {
            // After a gap: the window closed while the controller skipped packages.
            break End::Done;
        }
        if let Some((writer, name)) = &mut raw
            && let Err(e) = writer.package(payload)
        {
            break End::Failed(format!("cannot write `{name}`: {e}"));
        }
        if let Err(e) = csv.row(recipe.values()) {
            break End::Failed(format!("cannot write `{csv_name}`: {e}"));
        }
        last_timestamp = Some(t);
        let skipped = client.stats().skipped;
        if skipped > skipped_so_far {
            gap_count += 1;
            if gaps.len() < GAPS_LISTED {
                gaps.push((t, skipped - skipped_so_far));
            }
            skipped_so_far = skipped;
        }
        for text in client.text_messages() {
            progress.clear();
            eprintln!("rtde: the controller says: {text}");
        }
        progress.update(csv.rows(), skipped_so_far);
        if last_package - last_flush >= FLUSH_EVERY {
            last_flush = last_package;
            let flushed = csv
                .flush()
                .map_err(|e| format!("cannot write `{csv_name}`: {e}"));
            let flushed = flushed.and_then(|()| match &mut raw {
                Some((writer, name)) => writer
                    .flush()
                    .map_err(|e| format!("cannot write `{name}`: {e}")),
                None => Ok(()),
            });
            if let Err(e) = flushed {
                break End::Failed(e);
            }
        }
        if args
            .duration
            .is_some_and(|d| !within(d, period, t - t0 + period))
        {
            // The next package would be outside the window: no need to wait for it (a
            // replay may have none to send).
            break End::Done;
        }
    };
    progress.clear();
    let written = csv.rows();
    let csv = csv.into_inner();
    let stats = client.stats();
    // Pausing may fail on a broken link; the recording is what matters now.
    let _ = client.set_read_timeout(Some(REPLY_WAIT));
    let _ = client.close();
    drop(sim);

    let elapsed = started.elapsed();
    let finished_raw = raw.map(|(writer, name)| {
        writer
            .finish(stats.skipped)
            .map_err(|e| format!("cannot write `{name}`: {e}"))
    });
    let how = match end {
        End::Interrupted => "stopped by Ctrl-C: ",
        End::SourceEnded => "the source ended its stream: ",
        End::Done | End::Failed(_) => "",
    };
    let failure = match end {
        End::Failed(why) => Some(why),
        End::Done | End::Interrupted | End::SourceEnded => None,
    };
    let failure = failure.or_else(|| match &finished_raw {
        Some(Err(e)) => Some(e.clone()),
        _ => None,
    });
    if let Some(why) = failure {
        if written == 0 {
            return Err(why);
        }
        let mut kept = vec![format!("`{}`", csv.keep_partial().display())];
        if let Some(Ok(raw)) = finished_raw {
            kept.push(format!("`{}`", raw.keep_partial().display()));
        }
        return Err(format!(
            "{why}; the {written} packages recorded until then are in {}",
            kept.join(" and ")
        ));
    }
    let raw = match finished_raw {
        Some(Ok(raw)) => Some(raw),
        _ => None,
    };
    let outputs = commit(csv, raw)?;

    // A package stands for the period from its timestamp to the next: N packages at
    // f Hz are N/f seconds, as `--duration` and `rtde replay` count them.
    let span = match (first_timestamp, last_timestamp) {
        (Some(a), Some(b)) => format!(", {:.3} s of controller time", b - a + period),
        _ => String::new(),
    };
    say(&format!(
        "{how}recorded {written} packages at {frequency} Hz{span} in {} to {}",
        clock(elapsed),
        outputs.join(" and ")
    ));
    if stats.skipped == 0 {
        say("the controller skipped no package");
    } else {
        let listed: Vec<String> = gaps
            .iter()
            .map(|(t, n)| format!("{n} before timestamp {t}"))
            .collect();
        let more = if gap_count > gaps.len() as u64 {
            ", …"
        } else {
            ""
        };
        say(&format!(
            "the controller skipped {} {} in {gap_count} {}: {}{more}",
            stats.skipped,
            if stats.skipped == 1 {
                "package"
            } else {
                "packages"
            },
            if gap_count == 1 { "gap" } else { "gaps" },
            listed.join(", ")
        ));
    }
    Ok(())
}

/// Whether a package `offset` seconds after the first lies in the window of `--duration d`:
/// the packages whose timestamps fall in `[t0, t0 + d)`, so `d` at f Hz is d·f packages when
/// the controller skips none (the definition `rtde replay` announces its length by). Half a
/// period of slack absorbs the rounding of timestamps, at most half the duration so that
/// the first package is always in it (a duration shorter than a period is that package).
fn within(d: Duration, period: f64, offset: f64) -> bool {
    let d = d.as_secs_f64();
    offset <= d - (period / 2.0).min(d / 2.0)
}

/// Renames the finished files to their names; returns the names, quoted. When the CSV
/// cannot be renamed, the capture keeps its `.partial` name too, and the error says where
/// it is (dropping it would delete it).
fn commit(csv: PendingFile, raw: Option<PendingFile>) -> Result<Vec<String>, String> {
    let mut outputs = vec![format!("`{}`", csv.path().display())];
    if let Err(e) = csv.commit() {
        return Err(match raw {
            Some(raw) => format!(
                "{e}; the raw capture is in `{}`",
                raw.keep_partial().display()
            ),
            None => e,
        });
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
        let err = commit(csv, Some(raw)).unwrap_err();
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
