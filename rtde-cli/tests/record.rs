//! `rtde record` against the built-in simulator and against a simulator of the test's own:
//! every package, the exact values, the exact gaps, a clean Ctrl-C, and one-line errors
//! that leave no file that looks complete.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{Csv, Spawned, capture_counts, files, rtde, run_in, scratch};
use rtde_sim::{Fault, Motion, Sim, Trigger};

/// The tick (2 ms on e-Series) a timestamp stands for, checking that it is a whole tick.
fn tick_of(t: f64) -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let tick = (t * 500.0).round() as u64;
    #[allow(clippy::cast_precision_loss)]
    let exact = tick as f64 / 500.0;
    assert_eq!(t, exact, "timestamp {t} is not a whole tick");
    tick
}

#[test]
fn two_seconds_of_the_simulator_at_125_hz_are_250_rows_of_its_exact_values() {
    let dir = scratch("two-seconds");
    let run = run_in(
        &dir,
        &[
            "record",
            "--sim",
            "--deterministic",
            "--fields",
            "actual_q",
            "--frequency",
            "125",
            "--duration",
            "2s",
            "-o",
            "run.csv",
            "--raw",
            "run.rtde",
        ],
    );
    let stderr = run.ok();
    assert!(
        stderr.contains("recording the built-in simulator"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the controller skipped no package"),
        "{stderr}"
    );
    assert_eq!(files(&dir), ["run.csv", "run.rtde"]);

    let csv = Csv::read(&dir.join("run.csv"));
    let mut expected_columns = vec!["timestamp".to_owned()];
    expected_columns.extend((0..6).map(|j| format!("actual_q_{j}")));
    assert_eq!(csv.columns, expected_columns);
    // 2 s at 125 Hz: the 250 packages from the first, each standing for its 8 ms.
    assert_eq!(csv.rows.len(), 250);
    assert!(
        stderr.contains("recorded 250 packages at 125 Hz, 2.000 s of controller time"),
        "{stderr}"
    );
    let ticks: Vec<u64> = csv.column("timestamp").into_iter().map(tick_of).collect();
    // Strictly increasing, one 125 Hz period (4 ticks of 2 ms) apart: no gap.
    assert!(ticks.windows(2).all(|w| w[1] == w[0] + 4), "{ticks:?}");
    for row in &csv.rows {
        let q = Motion::DEFAULT.position(row[0]);
        assert_eq!(row[1..], q, "at timestamp {}", row[0]);
    }
    assert!(stderr.contains(&format!("recorded {} packages", csv.rows.len())));
    assert_eq!(
        capture_counts(&dir.join("run.rtde")),
        (csv.rows.len() as u64, 0)
    );
}

#[test]
fn the_packages_the_controller_skipped_are_reported_exactly() {
    // 125 Hz on a 500 Hz controller: packages at ticks 0, 4, 8, …; 40, 80 and 84 are left
    // out: one package skipped before tick 44, two before tick 88.
    let sim = Sim::builder()
        .deterministic()
        .unpaced()
        .fault(Fault::SkipTicks(vec![40, 80, 84]))
        .start()
        .unwrap();
    let dir = scratch("gaps");
    let robot = sim.addr().to_string();
    let run = run_in(
        &dir,
        &[
            "record",
            "--robot",
            &robot,
            "--fields",
            "actual_q,robot_mode",
            "--samples",
            "100",
            "-o",
            "gaps.csv",
            "--raw",
            "gaps.rtde",
        ],
    );
    let stderr = run.ok();
    assert!(
        stderr.contains(
            "the controller skipped 3 packages in 2 gaps: 1 before timestamp 0.088, 2 before timestamp 0.176"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("simulator"), "{stderr}");
    let csv = Csv::read(&dir.join("gaps.csv"));
    assert_eq!(csv.rows.len(), 100);
    assert_eq!(csv.columns[0], "timestamp", "timestamp is added first");
    let ticks: Vec<u64> = csv.column("timestamp").into_iter().map(tick_of).collect();
    let expected: Vec<u64> = (0..)
        .map(|k| 4 * k)
        .filter(|t| ![40, 80, 84].contains(t))
        .take(100)
        .collect();
    assert_eq!(ticks, expected);
    assert_eq!(capture_counts(&dir.join("gaps.rtde")), (100, 3));
}

/// `rtde record` of `sim`'s `actual_q` into `NAME.csv` and `NAME.rtde` in `dir`, once rows
/// have reached the CSV (it is flushed every second): a recording under way.
fn recording_under_way(sim: &Sim, dir: &std::path::Path, name: &str) -> Spawned {
    let (csv, raw) = (format!("{name}.csv"), format!("{name}.rtde"));
    let mut cmd = rtde();
    cmd.current_dir(dir).args([
        "record",
        "--robot",
        &sim.addr().to_string(),
        "--fields",
        "actual_q",
        "-o",
        &csv,
        "--raw",
        &raw,
    ]);
    let child = Spawned::new(cmd);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(dir.join(format!("{csv}.partial")))
        .map_or(true, |t| t.lines().count() < 2)
    {
        assert!(Instant::now() < deadline, "no rows after 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn ctrl_c_stops_cleanly_with_valid_files_and_a_summary() {
    let sim = Sim::builder().start().unwrap();
    let dir = scratch("ctrl-c");
    let child = recording_under_way(&sim, &dir, "run");
    assert!(!dir.join("run.csv").exists(), "complete before the end");
    child.interrupt();
    let run = common::finish(child, Duration::from_secs(10));
    let stderr = run.ok();
    assert_eq!(files(&dir), ["run.csv", "run.rtde"]);
    let csv = Csv::read(&dir.join("run.csv"));
    let n = csv.rows.len();
    assert!(
        stderr.contains(&format!("stopped by Ctrl-C: recorded {n} packages")),
        "{stderr}"
    );
    assert!(stderr.contains("skipped"), "{stderr}");
    let (packages, _) = capture_counts(&dir.join("run.rtde"));
    assert_eq!(packages, n as u64, "the capture holds the rows' packages");
}

#[test]
fn an_unknown_field_is_one_line_before_anything_is_written() {
    let dir = scratch("unknown-field");
    let run = run_in(&dir, &["record", "--fields", "actual_qq", "-o", "x.csv"]);
    assert_eq!(
        run.one_line_error(),
        "error: invalid output recipe: unknown output field `actual_qq` (did you mean `actual_q`?)"
    );
    assert!(files(&dir).is_empty());
}

#[test]
fn an_unreachable_robot_is_one_line_and_leaves_no_file() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = scratch("unreachable");
    let robot = format!("127.0.0.1:{port}");
    let run = run_in(
        &dir,
        &[
            "record", "--robot", &robot, "--fields", "actual_q", "-o", "x.csv", "--raw", "x.rtde",
        ],
    );
    let line = run.one_line_error();
    assert!(
        line.starts_with(&format!("error: could not connect to {robot} ")),
        "{line}"
    );
    // The operating system's reason, once.
    assert_eq!(line.matches("Connection refused").count(), 1, "{line}");
    assert!(files(&dir).is_empty(), "{:?}", files(&dir));
}

#[test]
fn an_unwritable_output_is_one_line_and_leaves_no_file() {
    let dir = scratch("unwritable");
    let run = run_in(
        &dir,
        &["record", "--fields", "actual_q", "-o", "missing/x.csv"],
    );
    let line = run.one_line_error();
    assert!(
        line.starts_with("error: cannot create `missing/x.csv.partial`: "),
        "{line}"
    );
    // The CSV is fine, the capture is not: the CSV's temporary file goes too.
    let run = run_in(
        &dir,
        &[
            "record",
            "--fields",
            "actual_q",
            "-o",
            "x.csv",
            "--raw",
            "missing/x.rtde",
        ],
    );
    run.one_line_error();
    assert!(files(&dir).is_empty(), "{:?}", files(&dir));
}

#[test]
fn a_field_the_controller_lacks_is_one_line() {
    let dir = scratch("lacking");
    let run = run_in(
        &dir,
        &[
            "record",
            "-q",
            "--sim-version",
            "3.15.8",
            "--fields",
            "ft_raw_wrench",
            "-o",
            "x.csv",
        ],
    );
    assert_eq!(
        run.one_line_error(),
        "error: the controller cannot provide 1 of the requested output fields: `ft_raw_wrench` \
         requires e-Series 5.9.0 (controller is CB3 3.15.8); remove them from the recipe or \
         update the controller"
    );
    assert!(files(&dir).is_empty(), "{:?}", files(&dir));
}

#[test]
fn a_recording_cut_short_keeps_its_packages_under_partial_names() {
    let sim = Sim::builder()
        .unpaced()
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(50)))
        .start()
        .unwrap();
    let dir = scratch("cut-short");
    let run = run_in(
        &dir,
        &[
            "record",
            "--robot",
            &sim.addr().to_string(),
            "--fields",
            "actual_q",
            "--samples",
            "100",
            "-o",
            "x.csv",
            "--raw",
            "x.rtde",
        ],
    );
    let line = run.one_line_error();
    assert!(
        line.ends_with(
            "; the 50 packages recorded until then are in `x.csv.partial` and `x.rtde.partial`"
        ),
        "{line}"
    );
    assert_eq!(files(&dir), ["x.csv.partial", "x.rtde.partial"]);
    assert_eq!(Csv::read(&dir.join("x.csv.partial")).rows.len(), 50);
    assert_eq!(capture_counts(&dir.join("x.rtde.partial")).0, 50);
}

#[test]
fn a_connection_closed_without_an_end_of_stream_is_a_loss() {
    // A controller that goes away closes the connection cleanly, between two packages,
    // but says nothing first: unlike a replay at its end, that is a lost link.
    let sim = Sim::builder().start().unwrap();
    let dir = scratch("closed-cleanly");
    let child = recording_under_way(&sim, &dir, "x");
    drop(sim);
    let run = common::finish(child, Duration::from_secs(10));
    let line = run.one_line_error();
    assert!(
        line.starts_with("error: the controller closed the connection; the "),
        "{line}"
    );
    assert!(
        line.ends_with("recorded until then are in `x.csv.partial` and `x.rtde.partial`"),
        "{line}"
    );
    assert_eq!(files(&dir), ["x.csv.partial", "x.rtde.partial"]);
}

#[test]
fn a_tiny_frequency_records_without_a_panic() {
    // Five periods of silence at 1e-300 Hz are more seconds than a `Duration` holds.
    // At that frequency only tick 0 is ever due: a clock per connection makes it the
    // connection's first tick however late the recorder starts on a busy machine.
    let sim = Sim::builder().clock_per_connection().start().unwrap();
    let dir = scratch("tiny-frequency");
    let run = run_in(
        &dir,
        &[
            "record",
            "--robot",
            &sim.addr().to_string(),
            "-q",
            "--fields",
            "actual_q",
            "--frequency",
            "1e-300",
            "--samples",
            "1",
            "-o",
            "x.csv",
        ],
    );
    assert_eq!(run.ok(), "");
    assert_eq!(Csv::read(&dir.join("x.csv")).rows.len(), 1);
}

#[test]
fn a_duration_shorter_than_a_period_records_the_first_package() {
    // 1 ms at 125 Hz: the package at the start is in the window, the next (8 ms on) is not.
    let dir = scratch("short-duration");
    let run = run_in(
        &dir,
        &[
            "record",
            "-q",
            "--fields",
            "actual_q",
            "--duration",
            "1ms",
            "-o",
            "x.csv",
        ],
    );
    assert_eq!(run.ok(), "");
    assert_eq!(Csv::read(&dir.join("x.csv")).rows.len(), 1);
}

#[test]
fn an_output_that_is_a_directory_is_one_line_before_recording() {
    let dir = scratch("output-is-dir");
    std::fs::create_dir(dir.join("x.csv")).unwrap();
    let run = run_in(
        &dir,
        &[
            "record", "--fields", "actual_q", "-o", "x.csv", "--raw", "x.rtde",
        ],
    );
    assert_eq!(
        run.one_line_error(),
        "error: cannot write `x.csv`: it is a directory"
    );
    assert_eq!(files(&dir), ["x.csv"]);
}
