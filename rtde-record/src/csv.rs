//! CSV recording: one row per output data package, the format `rtde record` writes.
//!
//! A header row, then one row per data package, in the order the controller sent them.
//! The columns are the recipe's fields in order; a vector field takes one column per
//! element, `actual_q_0` … `actual_q_5`. Doubles are written in the shortest form that
//! reads back as the same `f64` (`0.1`, `-1.5707963267948966`, `1e-7`, `NaN`, `inf`),
//! booleans as `0` and `1`, integers in decimal. Nothing is quoted: no value needs it.
//!
//! Two layers, one format:
//!
//! - [`CsvWriter`] writes it to any [`Write`]: a program with a receive loop of its own
//!   (as `rtde record` has) writes a row per package;
//! - [`CsvRecording`] is a recording a program starts and stops while it goes on with its
//!   work: a thread takes every package from a [background driver](rtde_core::background)'s
//!   in-order queue and writes it to a file, and the program reads the newest values with
//!   [`Receiver::latest`] meanwhile.
//!
//! ```
//! use rtde_record::csv::CsvWriter;
//! use rtde_core::fields::{Direction, lookup};
//! use rtde_core::Value;
//!
//! let fields = [lookup(Direction::Output, "timestamp").unwrap(), lookup(Direction::Output, "actual_q").unwrap()];
//! let mut csv = CsvWriter::new(Vec::new(), &fields).unwrap();
//! csv.row(&[Value::Double(0.008), Value::Vector6d([0.0, -1.5, 1.5, 0.0, 1.5, 0.0])]).unwrap();
//! assert_eq!(csv.rows(), 1);
//! let text = String::from_utf8(csv.finish().unwrap()).unwrap();
//! assert_eq!(
//!     text,
//!     "timestamp,actual_q_0,actual_q_1,actual_q_2,actual_q_3,actual_q_4,actual_q_5\n\
//!      0.008,0.0,-1.5,1.5,0.0,1.5,0.0\n"
//! );
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use rtde_core::background::Receiver;
use rtde_core::error::Error;
use rtde_core::fields::{Direction, Field, WireType};
use rtde_core::{DynamicRecipe, Value};
use rtde_core::{OutputRecipe, Recipe};

/// How many values a wire type holds, hence how many columns a field takes: 1, 3 or 6.
///
/// ```
/// use rtde_core::fields::WireType;
///
/// assert_eq!(rtde_record::csv::width(WireType::Vector6d), 6);
/// assert_eq!(rtde_record::csv::width(WireType::Int32), 1);
/// ```
#[must_use]
pub fn width(t: WireType) -> usize {
    match t {
        WireType::Vector3d => 3,
        WireType::Vector6d | WireType::Vector6Int32 | WireType::Vector6Uint32 => 6,
        _ => 1,
    }
}

/// The column names of a field: its name, or `name_0` … for a vector.
///
/// ```
/// use rtde_core::fields::{Direction, lookup};
///
/// let pose = lookup(Direction::Output, "actual_TCP_pose").unwrap();
/// assert_eq!(rtde_record::csv::columns(pose)[5], "actual_TCP_pose_5");
/// ```
#[must_use]
pub fn columns(field: &Field) -> Vec<String> {
    match width(field.wire_type()) {
        1 => vec![field.name().to_owned()],
        n => (0..n).map(|i| format!("{}_{i}", field.name())).collect(),
    }
}

/// Writes the header row of `fields`.
///
/// # Errors
/// What writing to `out` returns.
pub fn write_header(out: &mut impl Write, fields: &[&Field]) -> io::Result<()> {
    let columns: Vec<String> = fields.iter().flat_map(|f| columns(f)).collect();
    writeln!(out, "{}", columns.join(","))
}

/// Writes one row of values.
///
/// # Errors
/// What writing to `out` returns.
pub fn write_row(out: &mut impl Write, values: &[Value]) -> io::Result<()> {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write_value(out, v)?;
    }
    out.write_all(b"\n")
}

fn write_value(out: &mut impl Write, v: &Value) -> io::Result<()> {
    fn all<T>(
        out: &mut impl Write,
        xs: &[T],
        f: impl Fn(&mut dyn Write, &T) -> io::Result<()>,
    ) -> io::Result<()> {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            f(out, x)?;
        }
        Ok(())
    }
    // `{:?}` of an f64 is the shortest text that parses back to the same bits, with an
    // exponent for very large and small magnitudes (`{}` would print 1e-300 in full).
    match v {
        Value::Bool(b) => write!(out, "{}", u8::from(*b)),
        Value::Uint8(x) => write!(out, "{x}"),
        Value::Uint32(x) => write!(out, "{x}"),
        Value::Uint64(x) => write!(out, "{x}"),
        Value::Int32(x) => write!(out, "{x}"),
        Value::Double(x) => write!(out, "{x:?}"),
        Value::Vector3d(xs) => all(out, xs, |o, x| write!(o, "{x:?}")),
        Value::Vector6d(xs) => all(out, xs, |o, x| write!(o, "{x:?}")),
        Value::Vector6Int32(xs) => all(out, xs, |o, x| write!(o, "{x}")),
        Value::Vector6Uint32(xs) => all(out, xs, |o, x| write!(o, "{x}")),
    }
}

/// Writes the CSV of one recipe to `W`: the header when made, then a row per package.
///
/// It adds no buffer of its own: give it a [`BufWriter`] (or a file type that buffers),
/// and [`CsvWriter::finish`] to flush it.
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    out: W,
    rows: u64,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header row of `fields`, the recipe's fields in order.
    ///
    /// # Errors
    /// What writing to `out` returns.
    pub fn new(mut out: W, fields: &[&Field]) -> io::Result<Self> {
        write_header(&mut out, fields)?;
        Ok(CsvWriter { out, rows: 0 })
    }

    /// Writes one package's values, as a recipe decoded them (for instance
    /// [`DynamicRecipe::values`]).
    ///
    /// # Errors
    /// What writing to the output returns.
    pub fn row(&mut self, values: &[Value]) -> io::Result<()> {
        write_row(&mut self.out, values)?;
        self.rows += 1;
        Ok(())
    }

    /// The rows written so far.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes the output (the file stays open for more rows).
    ///
    /// # Errors
    /// What flushing the output returns.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The output, for what the writer does not do (syncing, renaming).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// The output, as it is (unflushed).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Flushes and returns the output.
    ///
    /// # Errors
    /// What flushing the output returns.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Why a [`CsvRecording`] could not start, or what ended it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The file could not be created (a missing directory, no permission).
    #[error("cannot create `{}`", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// Writing the file failed (a full disk); the rows written before are in it.
    #[error("cannot write `{}` after {rows} rows", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The rows written before.
        rows: u64,
        /// The operating system's error.
        source: io::Error,
    },
    /// The recipe is an input recipe: record the output recipe that was set up.
    #[error("a CSV recording needs the output recipe the connection set up, not an input recipe")]
    NotOutputs,
    /// The background driver ended (the link is lost and was not brought back) or sent a
    /// package the recipe does not fit; the rows before are in the file, flushed.
    #[error("the recording to `{}` ended after {rows} rows", path.display())]
    Stream {
        /// The file.
        path: PathBuf,
        /// The rows written.
        rows: u64,
        /// The driver's error.
        source: Error,
    },
    /// The recording thread could not be started.
    #[error("cannot start the recording thread: {0}")]
    Thread(io::Error),
}

/// What a stopped [`CsvRecording`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CsvSummary {
    /// The rows written: one per package taken from the queue.
    pub rows: u64,
    /// Packages the in-order queue dropped before the recording took them (its capacity,
    /// [`SpawnOptions::queue_capacity`](rtde_core::background::SpawnOptions::queue_capacity), was
    /// too small for how long the file took to write), counted from the receiver's
    /// sequence numbers. The packages the controller skipped are not among them: they
    /// show as steps of more than one period in `timestamp`.
    pub missed: u64,
}

/// A CSV file being recorded by a thread of its own, from a background driver's
/// in-order queue, until [`CsvRecording::stop`]: what ur_rtde's `startFileRecording` and
/// `stopFileRecording` do.
///
/// The recording takes every package from the queue the [`Receiver`] reads (the queue is
/// shared by all receivers of a driver: another receiver's `recv` would take packages
/// from it), so the program reads the newest values with [`Receiver::latest`], which every
/// receiver has at once. Stopping writes the packages that had arrived by then, flushes
/// and closes the file. The file is created at once (an existing one is replaced); a
/// recording dropped without [`CsvRecording::stop`] stops the same way and drops its
/// result.
///
/// `cargo run --example csv_recording` runs this against the simulator.
///
/// ```no_run
/// use std::time::Duration;
/// use rtde_core::background::SpawnOptions;
/// use rtde_record::csv::CsvRecording;
/// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RTDE_PORT};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut client = Client::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new())?;
/// let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "actual_TCP_pose"])?;
/// client.setup_outputs(recipe.spec(), 500.0)?;
/// client.start()?;
/// let background = client.spawn(SpawnOptions::new())?;
///
/// let recording = CsvRecording::start(background.receiver(), &recipe, "run.csv")?;
/// let mut latest = background.receiver();
/// // … the program's work, with the newest values at hand:
/// if let Some(values) = latest.latest()? {
///     let _ = values;
/// }
/// std::thread::sleep(Duration::from_secs(2));
/// let summary = recording.stop()?;
/// println!("{} rows in run.csv", summary.rows);
/// background.close()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct CsvRecording {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    rows: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<CsvSummary, CsvError>>>,
}

impl CsvRecording {
    /// Creates the file at `path`, writes the header of `recipe`'s fields, and starts
    /// writing a row for every package `receiver` takes from the queue.
    ///
    /// # Errors
    /// [`CsvError::Create`] when the file cannot be created, [`CsvError::Write`] when its
    /// header cannot be written, [`CsvError::NotOutputs`] for an input recipe,
    /// [`CsvError::Thread`] when no thread can be started.
    pub fn start(
        receiver: Receiver,
        recipe: &DynamicRecipe,
        path: impl AsRef<Path>,
    ) -> Result<CsvRecording, CsvError> {
        let path = path.as_ref().to_owned();
        if recipe.spec().direction() != Direction::Output {
            return Err(CsvError::NotOutputs);
        }
        let file = File::create(&path).map_err(|source| CsvError::Create {
            path: path.clone(),
            source,
        })?;
        let writer = CsvWriter::new(BufWriter::new(file), recipe.fields()).map_err(|source| {
            CsvError::Write {
                path: path.clone(),
                rows: 0,
                source,
            }
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let rows = Arc::new(AtomicU64::new(0));
        let thread = {
            let mut job = Job {
                receiver,
                recipe: recipe.clone(),
                writer,
                path: path.clone(),
                stop: Arc::clone(&stop),
                rows: Arc::clone(&rows),
            };
            std::thread::Builder::new()
                .name("rtde-csv".into())
                .spawn(move || job.run())
                .map_err(CsvError::Thread)?
        };
        Ok(CsvRecording {
            path,
            stop,
            rows,
            thread: Some(thread),
        })
    }

    /// The file being written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rows written so far.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Whether the recording still runs: false once the driver ended or a write failed
    /// ([`CsvRecording::stop`] says which).
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Writes the packages that had arrived, flushes and closes the file, and says what
    /// was written.
    ///
    /// # Errors
    /// What ended the recording before, if anything did: [`CsvError::Stream`] or
    /// [`CsvError::Write`]; the rows before it are in the file either way.
    pub fn stop(mut self) -> Result<CsvSummary, CsvError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<CsvSummary, CsvError> {
        self.stop.store(true, Ordering::Release);
        let thread = self.thread.take().ok_or_else(|| {
            CsvError::Thread(io::Error::other("the recording was already stopped"))
        })?;
        match thread.join() {
            Ok(result) => result,
            // The thread holds no lock and touches only the file and the queue: a panic
            // there is a bug, and the caller's to see.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for CsvRecording {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.finish();
        }
    }
}

/// What the recording thread owns.
struct Job {
    receiver: Receiver,
    recipe: DynamicRecipe,
    writer: CsvWriter<BufWriter<File>>,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    rows: Arc<AtomicU64>,
}

impl Job {
    fn run(&mut self) -> Result<CsvSummary, CsvError> {
        /// What ended a package: its values do not fit the recipe, or writing failed.
        enum Failed {
            Decode(rtde_core::PayloadError),
            Write(io::Error),
        }
        let (recipe, writer, rows) = (&mut self.recipe, &mut self.writer, &self.rows);
        let taken = self.receiver.take_until(&self.stop, |values| {
            recipe.decode_into(values).map_err(Failed::Decode)?;
            writer.row(recipe.values()).map_err(Failed::Write)?;
            rows.store(writer.rows(), Ordering::Relaxed);
            Ok(())
        });
        let (missed, ended) = match taken {
            Ok(taken) => (taken.missed, taken.ended),
            Err(Failed::Decode(e)) => (0, Some(Error::Payload(e))),
            Err(Failed::Write(e)) => return Err(self.write_error(e)),
        };
        self.writer.flush().map_err(|e| self.write_error(e))?;
        self.writer
            .get_mut()
            .get_ref()
            .sync_all()
            .map_err(|e| self.write_error(e))?;
        match ended {
            None => Ok(CsvSummary {
                rows: self.writer.rows(),
                missed,
            }),
            Some(source) => Err(CsvError::Stream {
                path: self.path.clone(),
                rows: self.writer.rows(),
                source,
            }),
        }
    }

    fn write_error(&self, source: io::Error) -> CsvError {
        CsvError::Write {
            path: self.path.clone(),
            rows: self.writer.rows(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use rtde_core::fields::lookup;

    use super::*;

    fn field(name: &str) -> &'static Field {
        lookup(Direction::Output, name).unwrap()
    }

    #[test]
    fn vectors_take_a_column_per_element() {
        let fields = [
            field("timestamp"),
            field("actual_q"),
            field("actual_tool_accelerometer"),
            field("robot_mode"),
        ];
        let csv = CsvWriter::new(Vec::new(), &fields).unwrap();
        assert_eq!(
            String::from_utf8(csv.finish().unwrap()).unwrap(),
            "timestamp,actual_q_0,actual_q_1,actual_q_2,actual_q_3,actual_q_4,actual_q_5,\
             actual_tool_accelerometer_0,actual_tool_accelerometer_1,actual_tool_accelerometer_2,\
             robot_mode\n"
        );
    }
}
