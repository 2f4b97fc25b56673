//! The MCAP recording a program starts and stops (`rtde_view::McapRecording`), against the
//! simulator through a background driver: every package taken, in order, with the
//! simulator's exact values, and a file that reads back whole.

use std::time::{Duration, Instant};

use rtde_core::background::SpawnOptions;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_sim::{Motion, Sim};
use rtde_view::McapRecording;

#[test]
fn a_stopped_recording_reads_back_every_package_in_order() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "robot_mode"]).unwrap();
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let path =
        std::env::temp_dir().join(format!("rtde-mcap-recording-{}.mcap", std::process::id()));

    let recording = McapRecording::start(&background, &recipe, 500.0, "arm-3", &path).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while recording.packages() < 300 {
        assert!(
            Instant::now() < deadline,
            "{} packages",
            recording.packages()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let summary = recording.stop().unwrap();
    background.close().unwrap();
    assert_eq!((summary.missed, summary.counts.skipped), (0, 0));
    assert!(summary.counts.packages >= 300, "{summary:?}");

    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut times = Vec::new();
    let read = rtde_view::convert::read_packages(&bytes, |_, p| {
        let (Value::Double(t), Value::Vector6d(q)) = (&p.values[0], &p.values[1]) else {
            panic!("{:?}", p.values)
        };
        assert_eq!(*q, Motion::DEFAULT.position(*t), "actual_q at {t}");
        times.push(*t);
        Ok(())
    })
    .unwrap();
    // A whole file: its summary was written.
    assert_eq!(
        (read.packages, read.cut_short),
        (summary.counts.packages, None)
    );
    assert!(
        times
            .windows(2)
            .all(|w| ((w[1] - w[0]) * 500.0).round() == 1.0),
        "a hole in {times:?}"
    );
    assert_eq!(
        rtde_view::convert::metadata(&bytes).unwrap()["robot"],
        "arm-3"
    );
}
