//! The CSV recording a program starts and stops (`rtde_record::csv::CsvRecording`), against
//! the simulator through the background driver.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{WAIT, options};
use rtde_core::background::{Background, SpawnOptions};
use rtde_core::fields::Field;
use rtde_core::{Client, DynamicRecipe, Error, Recipe, Value};
use rtde_record::csv::{CsvError, CsvRecording};
use rtde_sim::{IoState, OutputSource, Sample, Sim, Tick};

/// Packages sent by [`Exactly`].
const N: u64 = 100;

/// Streams `timestamp` (the tick's time) for the first [`N`] ticks, then nothing: the
/// connection stays open and silent, so exactly N packages ever arrive.
#[derive(Debug)]
struct Exactly;

impl OutputSource for Exactly {
    fn sample(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        _: &IoState,
        out: &mut [Value],
    ) -> Sample {
        if tick.index() >= N {
            return Sample::Skip;
        }
        for (field, value) in fields.iter().zip(out.iter_mut()) {
            if field.name() == "timestamp" {
                *value = Value::Double(tick.seconds());
            }
        }
        Sample::Send
    }
}

fn scratch(name: &str) -> Scratch {
    let dir =
        std::env::temp_dir().join(format!("rtde-csv-recording-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's own folder, removed when the test ends, passed or not: each run used to leave
/// its folders in the temporary directory.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A background driver streaming `recipe` at 500 Hz from `sim`.
fn spawn(sim: &Sim, recipe: &DynamicRecipe) -> Background {
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    client.spawn(SpawnOptions::new()).unwrap()
}

fn recipe() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q", "robot_mode"]).unwrap()
}

#[test]
fn a_stopped_recording_holds_every_package_that_had_arrived() {
    let sim = Sim::builder()
        .clock_per_connection()
        .source(Exactly)
        .start()
        .unwrap();
    let recipe = recipe();
    let background = spawn(&sim, &recipe);
    let receiver = background.receiver();
    // All N packages wait in the queue before the recording starts, and it is stopped at
    // once: stopping writes what had arrived.
    let deadline = Instant::now() + WAIT;
    while receiver.newest_seq() < N {
        assert!(
            Instant::now() < deadline,
            "{} packages after {WAIT:?}",
            receiver.newest_seq()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let dir = scratch("every");
    let path = dir.join("run.csv");
    let recording = CsvRecording::start(receiver, &recipe, &path).unwrap();
    let summary = recording.stop().unwrap();
    assert_eq!((summary.rows, summary.missed), (N, 0));

    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let mut columns = vec!["timestamp".to_owned()];
    columns.extend((0..6).map(|j| format!("actual_q_{j}")));
    columns.push("robot_mode".into());
    assert_eq!(lines.next().unwrap(), columns.join(","));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len() as u64, N);
    for (k, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), columns.len(), "row {k}: {row}");
        let t: f64 = cells[0].parse().unwrap();
        assert_eq!(t, f64::from(u32::try_from(k).unwrap()) / 500.0, "row {k}");
    }
    background.close().unwrap();
}

#[test]
fn a_recording_runs_until_stopped_while_the_program_reads_the_latest() {
    let sim = Sim::builder().start().unwrap();
    let recipe = recipe();
    let background = spawn(&sim, &recipe);
    let dir = scratch("running");
    let path = dir.join("run.csv");
    let recording = CsvRecording::start(background.receiver(), &recipe, &path).unwrap();
    let mut latest = background.receiver();
    let deadline = Instant::now() + WAIT;
    while recording.rows() < 50 {
        assert!(recording.is_running());
        assert!(
            Instant::now() < deadline,
            "{} rows after {WAIT:?}",
            recording.rows()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(latest.latest().unwrap().is_some());
    let summary = recording.stop().unwrap();
    assert!(summary.rows >= 50);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.lines().count() as u64,
        summary.rows + 1,
        "stopping flushed every row"
    );
    background.close().unwrap();
}

#[test]
fn a_lost_link_ends_the_recording_with_its_rows_kept() {
    let sim = Sim::builder().start().unwrap();
    let recipe = recipe();
    let background = spawn(&sim, &recipe);
    let dir = scratch("lost");
    let path = dir.join("run.csv");
    let recording = CsvRecording::start(background.receiver(), &recipe, &path).unwrap();
    let deadline = Instant::now() + WAIT;
    while recording.rows() < 10 {
        assert!(
            Instant::now() < deadline,
            "{} rows after {WAIT:?}",
            recording.rows()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(sim);
    let Err(CsvError::Stream { rows, source, .. }) = recording.stop() else {
        panic!("the simulator is gone")
    };
    assert!(
        matches!(
            source,
            Error::Closed { .. } | Error::Io { .. } | Error::ConnectionLost
        ),
        "{source}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count() as u64, rows + 1);
}

#[test]
fn an_unwritable_path_or_an_input_recipe_is_a_typed_error() {
    let sim = Sim::builder().start().unwrap();
    let recipe = recipe();
    let background = spawn(&sim, &recipe);
    let dir = scratch("unwritable");
    let path = dir.join("missing").join("run.csv");
    let err = CsvRecording::start(background.receiver(), &recipe, &path).unwrap_err();
    let CsvError::Create { path: at, source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((at, source.kind()), (&path, std::io::ErrorKind::NotFound));
    assert!(err.to_string().starts_with("cannot create `"), "{err}");

    let inputs = DynamicRecipe::inputs(["speed_slider_mask", "speed_slider_fraction"]).unwrap();
    let dir = scratch("inputs");
    let path = dir.join("run.csv");
    let err = CsvRecording::start(background.receiver(), &inputs, &path).unwrap_err();
    assert!(matches!(err, CsvError::NotOutputs), "{err:?}");
    assert!(!path.exists());
    background.close().unwrap();
}
