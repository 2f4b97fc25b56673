//! An MCAP recording a program starts and stops while it goes on with its work: the MCAP
//! counterpart of [`rtde_record::csv::CsvRecording`].

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use rtde_core::OutputRecipe;
use rtde_core::background::Background;
use rtde_record::capture::Header;
use rtde_record::host_time::now_unix_us;

use crate::error::Error;
use crate::recorder::{Recorder, RecorderCounts, RecorderOptions};

/// What a stopped [`McapRecording`] wrote.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct McapSummary {
    /// What the recorder wrote: packages, skipped packages, gap messages.
    pub counts: RecorderCounts,
    /// Packages the background driver's in-order queue dropped before the recording took
    /// them (its capacity was too small for how long the file took to write).
    pub missed: u64,
    /// The controller's `timestamp` of the first package written, decoded.
    pub first_timestamp: Option<f64>,
    /// The controller's `timestamp` of the last package written, decoded.
    pub last_timestamp: Option<f64>,
}

/// An MCAP file being recorded by a thread of its own from a background driver's in-order
/// queue, until [`McapRecording::stop`], or until the stop its options give
/// ([`RecorderOptions::stop_after`]; [`McapRecording::wait`] waits for it).
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
/// use rtde_view::{McapRecording, RecorderOptions};
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
/// let options = RecorderOptions::new().robot("arm-1");
/// let recording = McapRecording::start(&background, &recipe, &path, &options)?;
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
    /// packages of `background`, whose output recipe is `recipe`, as `options` say.
    ///
    /// # Errors
    /// [`Error::Setup`] when `background` has no output recipe set up; [`Error::Io`] when
    /// the file cannot be created or no thread started; what [`Recorder::new`] returns.
    pub fn start<R: OutputRecipe + ?Sized>(
        background: &Background,
        recipe: &R,
        path: impl AsRef<Path>,
        options: &RecorderOptions,
    ) -> Result<McapRecording, Error> {
        let path = path.as_ref().to_owned();
        let header = Header::of_background(background, recipe).map_err(Error::Setup)?;
        let file = File::create(&path)?;
        let recorder = Recorder::new(BufWriter::with_capacity(256 << 10, file), &header, options)?;
        let stop = Arc::new(AtomicBool::new(false));
        let packages = Arc::new(AtomicU64::new(0));
        let receiver = background.receiver();
        let thread = {
            let (stop, packages) = (Arc::clone(&stop), Arc::clone(&packages));
            std::thread::Builder::new()
                .name("rtde-mcap".into())
                .spawn(move || record(receiver, recorder, &stop, &packages))?
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
        self.stop.store(true, Ordering::Release);
        self.join()
    }

    /// Whether the recording has ended by itself: its options' stop was reached, or the
    /// driver ended; [`McapRecording::wait`] then returns at once.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits until the recording ends by itself (its options' stop, or the driver's end:
    /// with neither, this waits as long as the driver streams), and says what was written.
    ///
    /// # Errors
    /// As [`McapRecording::stop`].
    pub fn wait(mut self) -> Result<McapSummary, Error> {
        self.join()
    }

    fn join(&mut self) -> Result<McapSummary, Error> {
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
            self.stop.store(true, Ordering::Release);
            let _ = self.join();
        }
    }
}

/// The recording thread: takes packages until stopped, the options' stop or the driver's
/// end, then finishes the file whatever ended it, so what was taken reads back.
fn record(
    mut receiver: rtde_core::background::Receiver,
    mut recorder: Recorder<BufWriter<File>>,
    stop: &AtomicBool,
    packages: &AtomicU64,
) -> Result<McapSummary, Error> {
    let taken = receiver.take_until(stop, |values| {
        // Past the options' stop, the packages that had arrived are taken and not written.
        recorder.package(values, now_unix_us())?;
        packages.store(recorder.counts().packages, Ordering::Relaxed);
        if recorder.is_complete() {
            stop.store(true, Ordering::Release);
        }
        Ok::<(), Error>(())
    });
    let counts = recorder.counts();
    let (first_timestamp, last_timestamp) = (recorder.first_timestamp(), recorder.last_timestamp());
    let out = recorder.finish()?;
    out.into_inner()
        .map_err(|e| Error::Io(e.into_error()))?
        .sync_all()?;
    let taken = taken?;
    match taken.ended {
        None => Ok(McapSummary {
            counts,
            missed: taken.missed,
            first_timestamp,
            last_timestamp,
        }),
        Some(source) => Err(Error::Stream {
            packages: counts.packages,
            source,
        }),
    }
}
