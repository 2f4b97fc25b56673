//! `rtde record --format mcap`, `rtde convert` and `rtde view` from the command line: a
//! recorder killed with SIGKILL leaves its whole chunks readable, conversions round-trip
//! to the CSV recorder's own output, and the view serves a Foxglove client.

mod common;

use std::time::{Duration, Instant};

use common::{Spawned, rtde, run_in, scratch};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use rtde_sim::Sim;
use rtde_testkit::foxglove;

/// The reference recipe of the benchmarks.
const REFERENCE: &str = "actual_q,actual_qd,actual_TCP_pose,actual_TCP_speed,actual_TCP_force,actual_digital_input_bits,actual_digital_output_bits,robot_mode,safety_status";

/// The controller time of a simulator now: a client of its own reads the next package.
fn controller_time(sim: &Sim) -> f64 {
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    let payload = client.recv().unwrap();
    f64::from_be_bytes(payload[..8].try_into().unwrap())
}

#[test]
fn a_recorder_killed_with_sigkill_loses_at_most_its_open_chunk() {
    let dir = scratch("mcap-sigkill");
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let mut cmd = rtde();
    cmd.current_dir(&dir).args([
        "record",
        "--robot",
        &sim.addr().to_string(),
        "--fields",
        REFERENCE,
        "--frequency",
        "500",
        "--format",
        "mcap",
        "-o",
        "run.mcap",
        "-q",
    ]);
    let mut recorder = Spawned::new(cmd);
    assert!(
        sim.wait_for_connections(1, Duration::from_secs(20)),
        "the recorder never connected"
    );
    // Killed 3.4 s of controller time after it started: three whole chunks of a second,
    // and 0.4 s of a fourth, are behind it.
    let started = controller_time(&sim);
    let deadline = Instant::now() + Duration::from_secs(20);
    while controller_time(&sim) < started + 3.4 {
        assert!(
            Instant::now() < deadline,
            "the simulator's clock stands still"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    recorder.child.kill().unwrap(); // SIGKILL
    let killed_at = controller_time(&sim);
    assert!(!recorder.wait(Duration::from_secs(5)).success());

    let partial = dir.join("run.mcap.partial");
    let bytes = std::fs::read(&partial).unwrap();
    let mut timestamps = Vec::new();
    let summary = rtde_view::convert::read_packages(&bytes, |_, p| {
        let rtde_core::Value::Double(t) = p.values[0] else {
            panic!("{:?}", p.values[0])
        };
        timestamps.push(t);
        Ok(())
    })
    .unwrap();
    assert!(
        summary.cut_short.is_some(),
        "a killed recorder wrote a whole file"
    );
    assert!(summary.packages >= 1400, "{summary:?}");
    // Consecutive packages, none lost inside the chunks kept.
    assert!(
        timestamps
            .windows(2)
            .all(|w| ((w[1] - w[0]) * 500.0).round() == 1.0),
        "a gap in {timestamps:?}"
    );
    // What is lost is at most the chunk being written: one second of controller time, and
    // the moments between the kill and the reading of the simulator's clock.
    let last = *timestamps.last().unwrap();
    assert!(
        killed_at - last <= 1.0 + 0.5,
        "lost {:.3} s",
        killed_at - last
    );
    sim.shutdown().unwrap();
}

#[test]
fn captures_and_mcap_files_convert_into_the_csv_recorders_own_output() {
    let dir = scratch("mcap-convert");
    let record = |args: &[&str]| {
        let mut all = vec![
            "record",
            "--sim",
            "--deterministic",
            "--fields",
            REFERENCE,
            "--frequency",
            "500",
            "--samples",
            "1200",
        ];
        all.extend_from_slice(args);
        run_in(&dir, &all).ok().to_owned()
    };
    record(&["-o", "run.csv", "--raw", "run.rtde"]);
    // Raw → MCAP → CSV, and raw → CSV: the CSV recorder's own file, byte for byte.
    for args in [
        ["convert", "run.rtde", "run.mcap"],
        ["convert", "run.mcap", "back.csv"],
        ["convert", "run.rtde", "direct.csv"],
    ] {
        let out = run_in(&dir, &args);
        assert!(
            out.ok().contains("converted 1200 packages"),
            "{}",
            out.stderr
        );
    }
    let csv = std::fs::read(dir.join("run.csv")).unwrap();
    assert_eq!(std::fs::read(dir.join("back.csv")).unwrap(), csv);
    assert_eq!(std::fs::read(dir.join("direct.csv")).unwrap(), csv);

    // A live MCAP recording holds the packages its raw capture holds.
    record(&["-o", "live.mcap", "--raw", "live.rtde"]);
    run_in(&dir, &["convert", "live.mcap", "live-from-mcap.csv"]).ok();
    run_in(&dir, &["convert", "live.rtde", "live-from-raw.csv"]).ok();
    assert_eq!(
        std::fs::read(dir.join("live-from-mcap.csv")).unwrap(),
        std::fs::read(dir.join("live-from-raw.csv")).unwrap()
    );

    // `--no-frames` leaves out the arm; converting that file again puts it back.
    let topics = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let mut topics = Vec::new();
        rtde_view::convert::read_numbers(&bytes, |m| topics.push(m.topic)).unwrap();
        topics.sort();
        topics.dedup();
        topics
    };
    let all = ["/rtde/modes", "/rtde/outputs", "/tcp_pose", "/tf"];
    assert_eq!(topics("live.mcap"), all);
    record(&["-o", "bare.mcap", "--no-frames"]);
    assert_eq!(topics("bare.mcap"), ["/rtde/modes", "/rtde/outputs"]);
    let out = run_in(
        &dir,
        &["convert", "bare.mcap", "framed.mcap", "--arm", "ur10e"],
    );
    assert!(
        out.ok().contains("converted 1200 packages"),
        "{}",
        out.stderr
    );
    assert_eq!(topics("framed.mcap"), all);
    let meta = rtde_view::convert::metadata(&std::fs::read(dir.join("framed.mcap")).unwrap());
    assert_eq!(meta.unwrap()["arm"], "UR10e");

    let wrong = run_in(&dir, &["convert", "run.csv", "x.mcap"]);
    assert!(
        wrong
            .one_line_error()
            .contains("cannot convert .csv into .mcap"),
        "{}",
        wrong.stderr
    );
}

#[test]
fn rtde_view_serves_the_simulator_to_a_foxglove_client() {
    let mut view = common::view_on_any_port("60s");
    let addr = view.listening_on();
    assert!(
        view.line(Duration::from_secs(5))
            .contains(&format!("ws://{addr}"))
    );
    let mut client = foxglove::Client::connect(addr, &["foxglove.sdk.v1"]).unwrap();
    client.subscribe(&["/tf", "/rtde/outputs"]).unwrap();
    let mut topics = std::collections::BTreeSet::new();
    for _ in 0..50 {
        topics.insert(client.message().unwrap().topic);
    }
    assert_eq!(
        topics.into_iter().collect::<Vec<_>>(),
        ["/rtde/outputs", "/tf"]
    );
    view.interrupt();
    let run = common::finish(view, Duration::from_secs(10));
    assert!(
        run.stderr.contains("stopped by Ctrl-C: served"),
        "{}",
        run.stderr
    );
}

#[test]
fn rtde_record_view_records_and_serves_at_once() {
    let dir = scratch("mcap-record-view");
    let mut cmd = rtde();
    cmd.current_dir(&dir).args([
        "record",
        "--deterministic",
        "--fields",
        "actual_q",
        "--frequency",
        "500",
        "--samples",
        "2000",
        "-o",
        "run.mcap",
        "--view",
        "127.0.0.1:0",
    ]);
    let (recorder, mut client) = served(cmd, &["/tf"]);
    for _ in 0..20 {
        assert_eq!(client.message().unwrap().topic, "/tf");
    }
    let run = common::finish(recorder, Duration::from_secs(30));
    assert!(
        run.ok().contains("recorded 2000 packages"),
        "{}",
        run.stderr
    );
    let bytes = std::fs::read(dir.join("run.mcap")).unwrap();
    let read = rtde_view::convert::read_packages(&bytes, |_, _| Ok(())).unwrap();
    assert_eq!((read.packages, read.cut_short), (2000, None));
}

/// `rtde view --robot` draws the arm the robot computes with: its calibrated table, read
/// off its primary interface (30001 on the robot's host), and says so.
#[test]
fn rtde_view_draws_a_robots_calibrated_arm() {
    use rtde_robot::script::ScriptPort;
    use rtde_sim::{Arm, Calibration, Sim};
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};

    // The primary interface on its fixed port, on a loopback address of its own.
    let first = 2 + u8::try_from(std::process::id() % 200).unwrap();
    let sim = (first..=254)
        .chain(2..first)
        .find_map(|n| {
            let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
            let on = |port| SocketAddr::new(ip, port);
            Sim::builder()
                .deterministic()
                .calibration(Calibration::random(5))
                .bind(on(0))
                .script_ports_on(on(30001), on(30002), on(30003))
                .start()
                .ok()
        })
        .expect("a free 127.0.0.N:30001");
    assert_eq!(sim.script_addr(ScriptPort::Primary).unwrap().port(), 30001);
    let mut cmd = rtde();
    cmd.args([
        "view",
        "--robot",
        &sim.addr().to_string(),
        "--listen",
        "127.0.0.1:0",
        "--duration",
        "60s",
    ]);
    let (view, mut client) = served(cmd, &["/tf"]);
    let message = client.message().unwrap();
    // The shoulder sits the calibrated d1 above the base, not the nominal one.
    let shoulder = &message.json["transforms"][0]["translation"]["z"];
    assert_eq!(shoulder.as_f64(), Some(sim.arm().d[0]));
    assert_ne!(sim.arm().d[0], Arm::UR5E.d[0]);
    view.interrupt();
    let run = common::finish(view, Duration::from_secs(10));
    assert!(
        run.stderr
            .contains("the arm's frames are computed with the controller's calibrated UR5e table"),
        "{}",
        run.stderr
    );
}

/// Spawns a command that serves the live view, and a client subscribed to `topics`.
fn served(cmd: std::process::Command, topics: &[&str]) -> (Spawned, foxglove::Client) {
    let mut served = Spawned::new(cmd);
    let addr = served.listening_on();
    let mut client = foxglove::Client::connect(addr, &["foxglove.sdk.v1"]).unwrap();
    client.subscribe(topics).unwrap();
    (served, client)
}
