//! `rtde replay`: a capture served to rtde-core's client gives back the recorded values in
//! the recorded order, refuses what it lacks, loops, and rejects a corrupt file.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Csv, Spawned, rtde, run_in, scratch};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Recipe, Value};
use rtde_sim::{Fault, Sim};

const FIELDS: &str = "actual_q,actual_TCP_pose,robot_mode";

/// Records 300 packages of a deterministic simulator with one skipped package into
/// `name.csv` and `name.rtde`.
fn record(name: &str) -> (PathBuf, Csv) {
    let sim = Sim::builder()
        .deterministic()
        .unpaced()
        .fault(Fault::SkipTicks(vec![400]))
        .start()
        .unwrap();
    let dir = scratch(name);
    let (csv, raw) = (format!("{name}.csv"), format!("{name}.rtde"));
    run_in(
        &dir,
        &[
            "record",
            "--robot",
            &sim.addr().to_string(),
            "--fields",
            FIELDS,
            "--samples",
            "300",
            "-o",
            &csv,
            "--raw",
            &raw,
        ],
    )
    .ok();
    (dir.join(raw), Csv::read(&dir.join(csv)))
}

/// Starts `rtde replay CAPTURE --port 0 ARGS`; returns it and its address.
fn replay(capture: &Path, args: &[&str]) -> (Spawned, std::net::SocketAddr) {
    let mut cmd = rtde();
    cmd.arg("replay")
        .arg(capture)
        .args(["--port", "0"])
        .args(args);
    let mut child = Spawned::new(cmd);
    let addr = child.listening_on();
    (child, addr)
}

fn connect(addr: std::net::SocketAddr) -> Client {
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    Client::connect(addr, options).unwrap()
}

/// The values of a package as the CSV writes them: vectors flattened, integers as f64.
fn flatten(values: &[Value]) -> Vec<f64> {
    values
        .iter()
        .flat_map(|v| match *v {
            Value::Double(x) => vec![x],
            Value::Vector6d(xs) => xs.to_vec(),
            Value::Int32(x) => vec![f64::from(x)],
            ref other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn a_replay_feeds_a_client_the_recorded_values_in_the_recorded_order() {
    let (capture, csv) = record("replay-values");
    let (_replay, addr) = replay(&capture, &["--speed", "max"]);

    let mut client = connect(addr);
    assert_eq!(client.controller_version().to_string(), "5.21.0");
    let mut names = vec!["timestamp"];
    names.extend(FIELDS.split(','));
    let mut recipe = DynamicRecipe::outputs(&names).unwrap();
    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    client.start().unwrap();
    let mut got = Vec::new();
    loop {
        match client.recv_into(&mut recipe) {
            Ok(()) => got.push(flatten(recipe.values())),
            // At the end of the capture the replay says so and closes the connection.
            Err(Error::Closed { mid_frame: false }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got.len(), 300);
    assert_eq!(got, csv.rows, "the same values in the same order");
    // The recorded gap is replayed as a gap.
    assert_eq!(client.stats().skipped, 1);

    // Recorded again from the replay, the CSV is the same, byte for byte.
    let dir = capture.parent().unwrap();
    let run = run_in(
        dir,
        &[
            "record",
            "--robot",
            &addr.to_string(),
            "--fields",
            FIELDS,
            "--samples",
            "300",
            "-o",
            "again.csv",
        ],
    );
    let stderr = run.ok();
    assert!(
        stderr.contains("the controller skipped 1 package in 1 gap: 1 before timestamp 0.808"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.join("again.csv")).unwrap(),
        std::fs::read(dir.join("replay-values.csv")).unwrap()
    );

    // Another client, at real time ten times over and half the frequency, starts at the
    // beginning too and gets every other package.
    let (_replay, addr) = replay(&capture, &["--speed", "10"]);
    let mut client = connect(addr);
    let mut recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), 62.5).unwrap();
    client.start().unwrap();
    for row in csv.rows.iter().step_by(2).take(20) {
        client.recv_into(&mut recipe).unwrap();
        assert_eq!(flatten(recipe.values()), row[..7]);
    }
}

/// Starts `rtde replay CAPTURE --port 0 ARGS`; returns it, its address, and the length
/// its banner announces: `(packages, "S.SSS")`.
fn replay_announced(
    capture: &Path,
    args: &[&str],
) -> (Spawned, std::net::SocketAddr, (u64, String)) {
    let (mut child, addr) = replay(capture, args);
    let banner = child.line(Duration::from_secs(10));
    // `…: 300 packages (2.408 s) of timestamp,… at up to 125 Hz; Ctrl-C stops`
    let (before, rest) = banner
        .split_once(" packages (")
        .unwrap_or_else(|| panic!("no length in {banner:?}"));
    let count = before.rsplit(' ').next().unwrap();
    let seconds = rest.split_once(" s)").unwrap().0.to_owned();
    (child, addr, (count.parse().unwrap(), seconds))
}

#[test]
fn a_recording_of_a_whole_replay_ends_with_the_source_and_complete_files() {
    let (capture, csv) = record("replay-to-end");
    let dir = capture.parent().unwrap();
    let (_replay, addr, (packages, _)) = replay_announced(&capture, &["--speed", "max"]);
    assert_eq!(packages, 300);
    let run = run_in(
        dir,
        &[
            "record",
            "--robot",
            &addr.to_string(),
            "--fields",
            FIELDS,
            "-o",
            "whole.csv",
            "--raw",
            "whole.rtde",
        ],
    );
    let stderr = run.ok();
    assert!(
        stderr.contains("the source ended its stream: recorded 300 packages at 125 Hz, 2.408 s of controller time"),
        "{stderr}"
    );
    assert!(!dir.join("whole.csv.partial").exists() && !dir.join("whole.rtde.partial").exists());
    assert_eq!(Csv::read(&dir.join("whole.csv")).rows, csv.rows);
    assert_eq!(common::capture_counts(&dir.join("whole.rtde")), (300, 1));
}

#[test]
fn the_duration_a_replay_announces_records_all_of_it() {
    let (capture, csv) = record("replay-duration");
    let dir = capture.parent().unwrap();
    let (_replay, addr, (packages, seconds)) = replay_announced(&capture, &["--speed", "max"]);
    // 300 packages, one skipped among them: 301 periods of 8 ms.
    assert_eq!((packages, seconds.as_str()), (300, "2.408"));
    let duration = format!("{seconds}s");
    let run = run_in(
        dir,
        &[
            "record",
            "--robot",
            &addr.to_string(),
            "--fields",
            FIELDS,
            "--duration",
            &duration,
            "-o",
            "timed.csv",
        ],
    );
    let stderr = run.ok();
    // Ended by the duration, with the last package of the window, not by the replay.
    assert!(
        stderr.contains(&format!(
            "recorded 300 packages at 125 Hz, {seconds} s of controller time"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("source ended"), "{stderr}");
    assert!(!dir.join("timed.csv.partial").exists());
    assert_eq!(Csv::read(&dir.join("timed.csv")).rows, csv.rows);
}

#[test]
fn a_replay_refuses_what_the_capture_cannot_give() {
    let (capture, _) = record("replay-refusals");
    let (_replay, addr) = replay(&capture, &[]);
    let mut client = connect(addr);

    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "actual_qd"]).unwrap();
    let Err(Error::SetupRefused(refused)) = client.setup_outputs(recipe.spec(), 125.0) else {
        panic!("actual_qd is not in the capture")
    };
    assert_eq!(refused.not_found(), ["actual_qd"]);
    let why = format!(
        "output setup refused: `actual_qd` is not provided by the capture `{}`",
        capture.display()
    );
    let texts: Vec<String> = client.text_messages().map(|t| t.message).collect();
    assert_eq!(texts, std::slice::from_ref(&why));
    // The error a user reads quotes the replay's reason, not only the controller's hint.
    assert!(
        refused
            .to_string()
            .ends_with(&format!("; the controller said: \"{why}\"")),
        "{refused}"
    );

    // A whole-request refusal: recipe id 0 and no types, and a text message that says why,
    // which the refusal quotes.
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    let Err(Error::SetupRefused(refused)) = client.setup_outputs(recipe.spec(), 250.0) else {
        panic!("250 Hz is above the capture's 125 Hz")
    };
    let why = format!(
        "output setup refused: output frequency 250 Hz is above the 125 Hz the capture `{}` has data for",
        capture.display()
    );
    assert!(refused.not_found().is_empty());
    assert_eq!(refused.reason(), Some(why.as_str()));
    let texts: Vec<String> = client.text_messages().map(|t| t.message).collect();
    assert_eq!(texts, [why]);
}

#[test]
fn a_looping_replay_keeps_timestamps_increasing() {
    let (capture, csv) = record("replay-loop");
    let (_replay, addr) = replay(&capture, &["--speed", "max", "--loop"]);
    let mut client = connect(addr);
    let mut recipe = DynamicRecipe::outputs(["timestamp", "robot_mode"]).unwrap();
    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    client.start().unwrap();
    let mut last = f64::NEG_INFINITY;
    for k in 0..700 {
        client.recv_into(&mut recipe).unwrap();
        let Some(&Value::Double(t)) = recipe.get("timestamp") else {
            panic!()
        };
        assert!(t > last, "package {k}: {t} after {last}");
        last = t;
    }
    // Past two passes: 600 packages, each pass 301 periods (one was skipped) long.
    let first = csv.rows[0][0];
    assert!(last > first + 2.0 * 300.0 * 0.008, "{last}");
}

#[test]
fn a_corrupt_capture_is_one_line() {
    let dir = scratch("replay-corrupt");
    std::fs::write(dir.join("text.rtde"), "timestamp,actual_q_0\n0.0,1.0\n").unwrap();
    let run = run_in(&dir, &["replay", "text.rtde", "--port", "0"]);
    assert_eq!(
        run.one_line_error(),
        "error: `text.rtde` is no valid capture: it does not start with the capture magic bytes \
         (was it written by `rtde record --raw`?) (at byte 0)"
    );

    let (capture, _) = record("replay-truncated");
    let mut bytes = std::fs::read(&capture).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(dir.join("cut.rtde"), bytes).unwrap();
    let run = run_in(&dir, &["replay", "cut.rtde", "--port", "0"]);
    let line = run.one_line_error();
    assert!(
        line.starts_with("error: `cut.rtde` is no valid capture: the file ends inside package 300 (10 bytes short)"),
        "{line}"
    );

    let run = run_in(&dir, &["replay", "missing.rtde", "--port", "0"]);
    assert!(
        run.one_line_error()
            .starts_with("error: cannot read `missing.rtde`: "),
        "{}",
        run.stderr
    );
}
