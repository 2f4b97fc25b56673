//! The MCAP recordings a program makes (`rtde_view::McapRecording`, `Recorder::for_client`),
//! against the simulator: every package taken, in order, with the simulator's exact values,
//! a file that reads back whole; the arm's frames are the forward kinematics of `actual_q`,
//! and leave when turned off; a conversion adds them to an older file; the stops.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::time::{Duration, Instant};

use rtde_core::background::SpawnOptions;
use rtde_core::rotation::Quaternion;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_kinematics::Arm;
use rtde_record::host_time::now_unix_us;
use rtde_record::stop::StopAfter;
use rtde_sim::{Motion, Sim};
use rtde_view::convert::{self, Message};
use rtde_view::{McapRecording, Recorder, RecorderOptions};

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

    let recording = McapRecording::start(
        &background,
        &recipe,
        &path,
        &RecorderOptions::new().robot("arm-3"),
    )
    .unwrap();
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
    let read = convert::read_packages(&bytes, |_, p| {
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
    assert_eq!(convert::metadata(&bytes).unwrap()["robot"], "arm-3");
}

/// A recording of the simulator's arm, `n` packages, read off a client in one call and
/// stopped by its count.
fn record_arm(options: RecorderOptions, n: u64) -> Vec<u8> {
    let sim = Sim::builder().deterministic().start().unwrap();
    let recipe = DynamicRecipe::outputs(FRAME_FIELDS).unwrap();
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    let options = options.stop_after(StopAfter::packages(n));
    let mut recorder =
        Recorder::for_client(Cursor::new(Vec::new()), &client, &recipe, &options).unwrap();
    client.start().unwrap();
    while !recorder.is_complete() {
        let payload = client.recv().unwrap();
        assert!(recorder.package(payload, now_unix_us()).unwrap());
    }
    // Past the stop, nothing more is written.
    let payload = client.recv().unwrap();
    assert!(!recorder.package(payload, now_unix_us()).unwrap());
    assert_eq!(recorder.counts().packages, n);
    recorder.finish().unwrap().into_inner()
}

const FRAME_FIELDS: [&str; 4] = ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode"];

/// Every message of each topic, decoded by the descriptor in the file.
fn by_topic(bytes: &[u8]) -> BTreeMap<String, Vec<Message>> {
    let mut topics: BTreeMap<String, Vec<Message>> = BTreeMap::new();
    convert::read_numbers(bytes, |m| {
        topics.entry(m.topic.clone()).or_default().push(m);
    })
    .unwrap();
    topics
}

/// Checks each `/tf` message against the forward kinematics of the package's `actual_q`,
/// and each `/tcp_pose` against its `actual_TCP_pose`.
fn assert_frames_follow_the_joints(bytes: &[u8], arm: Arm) {
    let topics = by_topic(bytes);
    let outputs = &topics["/rtde/outputs"];
    let (tf, pose) = (&topics["/tf"], &topics["/tcp_pose"]);
    assert_eq!((tf.len(), pose.len()), (outputs.len(), outputs.len()));
    for ((package, frames), pose) in outputs.iter().zip(tf).zip(pose) {
        assert_eq!(frames.publish_time, package.publish_time);
        let q: [f64; 6] =
            std::array::from_fn(|i| package.number(&format!("actual_q[{i}]")).unwrap());
        for (i, link) in arm.link_frames(&q).iter().enumerate() {
            let at = |p: &str| frames.number(&format!("transforms[{i}].{p}")).unwrap();
            assert_eq!(
                [
                    at("translation.x"),
                    at("translation.y"),
                    at("translation.z")
                ],
                link.translation
            );
            assert_eq!(
                [
                    at("rotation.x"),
                    at("rotation.y"),
                    at("rotation.z"),
                    at("rotation.w")
                ],
                link.rotation.to_xyzw()
            );
            #[allow(clippy::cast_precision_loss)]
            let seconds = (frames.log_time / 1_000_000_000) as f64;
            assert_eq!(at("timestamp.seconds"), seconds);
        }
        let tcp: [f64; 6] =
            std::array::from_fn(|i| package.number(&format!("actual_TCP_pose[{i}]")).unwrap());
        let position = ["x", "y", "z"].map(|c| pose.number(&format!("pose.position.{c}")).unwrap());
        assert_eq!(position, [tcp[0], tcp[1], tcp[2]]);
        let q =
            ["x", "y", "z", "w"].map(|c| pose.number(&format!("pose.orientation.{c}")).unwrap());
        assert_eq!(
            q,
            Quaternion::from_rotation_vector([tcp[3], tcp[4], tcp[5]]).to_xyzw()
        );
    }
}

#[test]
fn the_link_frames_in_a_recording_are_the_forward_kinematics_of_actual_q() {
    let bytes = record_arm(RecorderOptions::new().arm(Arm::UR5E), 50);
    assert_frames_follow_the_joints(&bytes, Arm::UR5E);
    let topics = by_topic(&bytes);
    assert_eq!(topics["/rtde/modes"].len(), 50);
    assert_eq!(
        topics["/rtde/modes"][0].text("robot_mode"),
        Some("ROBOT_MODE_RUNNING")
    );
    // The simulator's arm moves: the frames are not all the same.
    let rotations = |m: &Message| {
        m.numbers
            .iter()
            .filter(|(p, _)| p.contains("rotation"))
            .map(|&(_, v)| v)
            .collect::<Vec<f64>>()
    };
    let first = rotations(&topics["/tf"][0]);
    assert!(topics["/tf"].iter().any(|m| rotations(m) != first));
    // Foxglove's schema names, each channel protobuf.
    let schemas: BTreeMap<String, (String, String)> = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .map(|m| {
            let s = m.channel.schema.as_ref().unwrap();
            (
                m.channel.topic.clone(),
                (s.name.clone(), m.channel.message_encoding.clone()),
            )
        })
        .collect();
    for (topic, name) in [
        ("/tf", "foxglove.FrameTransforms"),
        ("/tcp_pose", "foxglove.PoseInFrame"),
        ("/rtde/modes", "rtde.Modes"),
    ] {
        assert_eq!(
            schemas[topic],
            (name.to_owned(), "protobuf".to_owned()),
            "{topic}"
        );
    }
}

#[test]
fn turning_the_frames_off_leaves_out_tf_and_tcp_pose() {
    let bytes = record_arm(RecorderOptions::new().frames(false), 20);
    let topics: Vec<String> = by_topic(&bytes).into_keys().collect();
    assert_eq!(topics, ["/rtde/modes", "/rtde/outputs"]);
}

#[test]
fn converting_an_older_recording_adds_the_frames_at_the_same_times() {
    let old = record_arm(RecorderOptions::new().frames(false), 30);
    let (new, read) = convert::mcap_to_mcap(
        &old,
        Cursor::new(Vec::new()),
        &RecorderOptions::new().arm(Arm::UR10E),
    )
    .unwrap();
    let new = new.into_inner();
    assert_eq!((read.packages, read.cut_short), (30, None));
    assert_frames_follow_the_joints(&new, Arm::UR10E);
    let times = |bytes: &[u8]| {
        by_topic(bytes)["/rtde/outputs"]
            .iter()
            .map(|m| (m.log_time, m.publish_time, m.numbers.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(times(&new), times(&old));
}

#[test]
fn a_recording_with_a_duration_ends_by_itself() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let path = std::env::temp_dir().join(format!("rtde-mcap-duration-{}.mcap", std::process::id()));
    let options =
        RecorderOptions::new().stop_after(StopAfter::duration(Duration::from_millis(200)));
    let recording = McapRecording::start(&background, &recipe, &path, &options).unwrap();
    let summary = recording.wait().unwrap();
    background.close().unwrap();
    std::fs::remove_file(&path).unwrap();
    // 200 ms at 500 Hz: 100 packages, the first and last timestamps 198 ms apart.
    assert_eq!(summary.counts.packages, 100, "{summary:?}");
    let (first, last) = (
        summary.first_timestamp.unwrap(),
        summary.last_timestamp.unwrap(),
    );
    assert_eq!(((last - first) * 500.0).round(), 99.0);
}

#[test]
fn recording_a_client_without_outputs_says_so() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    let client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    let err = Recorder::for_client(
        Cursor::new(Vec::new()),
        &client,
        &recipe,
        &RecorderOptions::new(),
    )
    .unwrap_err();
    let said = rtde_core::Report(&err).to_string();
    assert!(said.contains("setup_outputs"), "{said}");
}
