//! `rtde convert`: raw captures into MCAP or CSV, MCAP recordings into CSV or MCAP.

use crate::said;
use std::path::{Path, PathBuf};

use rtde_core::{DynamicRecipe, OutputRecipe};
use rtde_record::capture;
use rtde_record::csv::CsvWriter;
use rtde_sim::Arm;

use crate::outfile::PendingFile;

/// Convert a recording: a raw capture into MCAP or CSV, an MCAP recording into CSV.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Convert a recording: a raw capture (.rtde) into MCAP or CSV, an MCAP recording (.mcap) into CSV or MCAP.

The formats go by the files' extensions. MCAP is what `rtde record --format mcap` writes: \
Foxglove, Lichtblick, PlotJuggler and Rerun open it. A capture's packages get host times \
from its start time, spaced by their timestamps, as a live recording's do. CSV is what \
`rtde record` writes; an MCAP recording converts into the same CSV as the packages it \
holds recorded live, value for value. MCAP into MCAP records an older recording again \
with what this version writes: the arm's link frames (/tf) and TCP pose (/tcp_pose), and \
the gaps and modes as protobuf, at the same times.

An MCAP file whose recorder was killed ends inside its last chunk: the packages of the \
chunks before it are converted, and the summary says so.",
    after_help = "Examples:
  rtde convert run.rtde run.mcap
      a capture for Foxglove, PlotJuggler or Rerun
  rtde convert run.mcap run.csv
      an MCAP recording back into CSV
  rtde convert old.mcap new.mcap --arm ur10e
      an older recording with the arm's frames added
  rtde convert run.rtde run.csv --quiet
      a capture into CSV"
)]
pub(crate) struct ConvertArgs {
    /// The recording to read: FILE.rtde or FILE.mcap.
    input: PathBuf,
    /// The file to write: FILE.mcap or FILE.csv.
    output: PathBuf,
    /// The robot's name in the MCAP metadata [default: an MCAP input's, else the input
    /// file's name].
    #[arg(long, value_name = "NAME")]
    robot_name: Option<String>,
    /// The arm whose kinematics give an MCAP output's link frames (`/tf`): any UR model
    /// (ur5e, ur10, ur20, ...) [default: an MCAP input's `arm`, else ur5e].
    #[arg(long, value_name = "MODEL")]
    arm: Option<Arm>,
    /// Leave the arm's link frames and TCP pose out of an MCAP output.
    #[arg(long)]
    no_frames: bool,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// The format a file name says, lower-case: `run.mcap` and the `run.mcap.partial` a
/// stopped recorder leaves are both `mcap`.
pub(crate) fn extension(path: &Path) -> String {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name.strip_suffix(".partial").unwrap_or(&name);
    Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs `rtde convert`.
pub(crate) fn run(args: &ConvertArgs) -> Result<(), String> {
    let (from, to) = (extension(&args.input), extension(&args.output));
    if args.input == args.output {
        return Err("the input and the output are the same file".into());
    }
    let mut out = PendingFile::create(&args.output)?;
    let name = out.temp_path().display().to_string();
    let write_error = |e: &(dyn std::error::Error + 'static)| {
        format!("cannot write `{name}`: {}", rtde_core::Report(e))
    };
    let (packages, note) = match (from.as_str(), to.as_str()) {
        ("rtde", "mcap") => {
            let capture = capture::read_file(&args.input)?;
            let stem = args
                .input
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let options = recorder_options(args, &stem, None);
            out = rtde_view::convert::capture_to_mcap(&capture, out, &options)
                .map_err(|e| write_error(&e))?;
            (capture.len() as u64, truncated(&capture))
        }
        ("mcap", "mcap") => {
            let bytes = read(&args.input)?;
            let metadata = rtde_view::convert::metadata(&bytes).map_err(|e| cannot(args, &e))?;
            let robot = metadata.get("robot").cloned().unwrap_or_default();
            let arm = metadata.get("arm").and_then(|a| Arm::named(a));
            let options = recorder_options(args, &robot, arm);
            let (written, summary) = rtde_view::convert::mcap_to_mcap(&bytes, out, &options)
                .map_err(|e| cannot(args, &e))?;
            out = written;
            (summary.packages, cut_short(args, summary.cut_short))
        }
        ("rtde", "csv") => {
            let capture = capture::read_file(&args.input)?;
            let names: Vec<&str> = capture.header.fields.iter().map(|f| f.name()).collect();
            let mut recipe = DynamicRecipe::outputs(&names).map_err(said)?;
            let mut csv = CsvWriter::new(out, recipe.fields()).map_err(|e| write_error(&e))?;
            for i in 0..capture.len() {
                recipe.decode_into(capture.payload(i)).map_err(|e| {
                    format!(
                        "package {i} of `{}`: {e}",
                        args.input.display(),
                        e = said(e)
                    )
                })?;
                csv.row(recipe.values()).map_err(|e| write_error(&e))?;
            }
            out = csv.into_inner();
            (capture.len() as u64, truncated(&capture))
        }
        ("mcap", "csv") => {
            let bytes = read(&args.input)?;
            let summary =
                rtde_view::convert::mcap_to_csv(&bytes, &mut out).map_err(|e| cannot(args, &e))?;
            (summary.packages, cut_short(args, summary.cut_short))
        }
        _ => {
            return Err(format!(
                "cannot convert .{from} into .{to}: use .rtde → .mcap, .rtde → .csv, .mcap → .csv \
                 or .mcap → .mcap (which adds the arm's frames to an older recording)"
            ));
        }
    };
    out.commit()?;
    if !args.quiet {
        if let Some(note) = note {
            eprintln!("rtde: {note}");
        }
        eprintln!(
            "rtde: converted {packages} packages from `{}` to `{}`",
            args.input.display(),
            args.output.display()
        );
    }
    Ok(())
}

/// What a capture whose writer never finished it lacks.
fn truncated(capture: &capture::Capture) -> Option<String> {
    capture.counts.is_none().then(|| {
        format!(
            "the capture was never finished (its recorder was stopped hard); its {} whole packages are converted",
            capture.len()
        )
    })
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display(), e = said(e)))
}

fn cannot(args: &ConvertArgs, e: &(dyn std::error::Error + 'static)) -> String {
    format!(
        "`{}` cannot be converted: {}",
        args.input.display(),
        rtde_core::Report(e)
    )
}

/// What an MCAP input cut short (its recorder killed) lacks.
fn cut_short(args: &ConvertArgs, why: Option<String>) -> Option<String> {
    why.map(|why| {
        format!(
            "`{}` ends before its summary ({why}): a recorder that was stopped hard; \
             the packages of its whole chunks are converted",
            args.input.display()
        )
    })
}

/// How an MCAP output is recorded: the flags, else what the input says (`robot`, `arm`).
fn recorder_options(
    args: &ConvertArgs,
    robot: &str,
    arm: Option<Arm>,
) -> rtde_view::RecorderOptions {
    rtde_view::RecorderOptions::new()
        .robot(args.robot_name.clone().unwrap_or_else(|| robot.to_owned()))
        .arm(args.arm.or(arm).unwrap_or(Arm::UR5E))
        .frames(!args.no_frames)
}
