//! An MCAP recording a program starts and stops while it goes on with its work: the MCAP
//! counterpart of [`rtde_record::csv::CsvRecording`].

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use rtde_core::DynamicRecipe;
use rtde_core::background::Background;
use rtde_record::capture::Header;

use crate::error::Error;
use crate::recorder::{Recorder, RecorderCounts};

/// What a stopped [`McapRecording`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct McapSummary {
    /// What the recorder wrote: packages, skipped packages, gap messages.
    pub counts: RecorderCounts,
    /// Packages the background driver's in-order queue dropped before the recording took
    /// them (its capacity was too small for how long the file took to write).
    pub missed: u64,
}

/// An MCAP file being recorded by a thread of its own from a background driver's in-order
/// queue, until [`McapRecording::stop`].
///
/// It takes every package from the queue a receiver of the driver reads, as
/// [`CsvRecording`](rtde_record::csv::CsvRecording) does (so the program reads the newest
/// values with [`Receiver::latest`](rtde_core::background::Receiver::latest) meanwhile), and
/// stamps each with the host time it took it. Stopping writes the packages that had
/// arrived, the summary and the footer. A recording dropped without `stop` stops the same
/// way and drops its result.
///
/// ```
/// use std::time::Duration;
/// use rtde_core::background::SpawnOptions;
/// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
/// use rtde_sim::Sim;
/// use rtde_view::McapRecording;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sim = Sim::builder().start()?; // a robot's address in real use
/// let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"])?;
/// let mut client = Client::connect(sim.addr(), ConnectOptions::new())?;
/// client.setup_outputs(recipe.spec(), 500.0)?;
/// client.start()?;
/// let background = client.spawn(SpawnOptions::new())?;
///
/// let path = std::env::temp_dir().join(format!("doc-{}.mcap", std::process::id()));
/// let recording = McapRecording::start(&background, &recipe, 500.0, "arm-1", &path)?;
/// std::thread::sleep(Duration::from_millis(200));
/// let summary = recording.stop()?;
/// assert!(summary.counts.packages > 0);
/// # std::fs::remove_file(&path)?;
/// background.close()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct McapRecording {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    packages: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<McapSummary, Error>>>,
}

impl McapRecording {
    /// Creates the file at `path` (an existing one is replaced) and starts recording the
    /// packages of `background`, whose output recipe is `recipe`, set up at `frequency`,
    /// from a robot named `robot`.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be created or no thread started; what
    /// [`Recorder::new`] returns.
    pub fn start(
        background: &Background,
        recipe: &DynamicRecipe,
        frequency: f64,
        robot: &str,
        path: impl AsRef<Path>,
    ) -> Result<McapRecording, Error> {
        let path = path.as_ref().to_owned();
        let header = Header {
            protocol: background.protocol_version(),
            controller: background.controller_version(),
            frequency,
            recipe_id: background.output_recipe_id(),
            started_unix_micros: unix_us(),
            fields: recipe.fields().to_vec(),
        };
        let file = File::create(&path)?;
        let mut recorder =
            Recorder::new(BufWriter::with_capacity(256 << 10, file), &header, robot)?;
        let stop = Arc::new(AtomicBool::new(false));
        let packages = Arc::new(AtomicU64::new(0));
        let mut receiver = background.receiver();
        let thread = {
            let (stop, packages) = (Arc::clone(&stop), Arc::clone(&packages));
            std::thread::Builder::new()
                .name("rtde-mcap".into())
                .spawn(move || {
                    let taken = receiver.take_until(&stop, |values| {
                        recorder.package(values, unix_us())?;
                        packages.store(recorder.counts().packages, Ordering::Relaxed);
                        Ok::<(), Error>(())
                    });
                    // The file is finished whatever ended the recording: what was taken reads back.
                    let counts = recorder.counts();
                    let out = recorder.finish()?;
                    out.into_inner()
                        .map_err(|e| Error::Io(e.into_error()))?
                        .sync_all()?;
                    let taken = taken?;
                    match taken.ended {
                        None => Ok(McapSummary {
                            counts,
                            missed: taken.missed,
                        }),
                        Some(source) => Err(Error::Stream {
                            packages: counts.packages,
                            source,
                        }),
                    }
                })?
        };
        Ok(McapRecording {
            path,
            stop,
            packages,
            thread: Some(thread),
        })
    }

    /// The file being written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The packages written so far.
    #[must_use]
    pub fn packages(&self) -> u64 {
        self.packages.load(Ordering::Relaxed)
    }

    /// Writes the packages that had arrived, finishes and closes the file, and says what
    /// was written.
    ///
    /// # Errors
    /// What ended the recording before, if anything did: [`Error::Stream`] when the
    /// driver ended, [`Error::Mcap`] or [`Error::Io`] when writing failed; what was
    /// written before is in the file either way.
    pub fn stop(mut self) -> Result<McapSummary, Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<McapSummary, Error> {
        self.stop.store(true, Ordering::Release);
        let Some(thread) = self.thread.take() else {
            return Err(Error::Io(std::io::Error::other(
                "the recording was already stopped",
            )));
        };
        match thread.join() {
            Ok(result) => result,
            // The thread holds no lock and touches only the file and the queue: a panic
            // there is a bug, and the caller's to see.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for McapRecording {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.finish();
        }
    }
}

fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
