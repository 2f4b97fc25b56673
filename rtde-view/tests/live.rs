//! The live view over the Foxglove WebSocket protocol, watched by a client that speaks it
//! (`rtde_testkit::foxglove`): every channel decoded with its advertised schema, the
//! values against the simulator's motion law, the link frames and the TCP pose against the
//! forward kinematics; a client without the subprotocol refused; a slow client's frames
//! dropped and counted while a fast one gets every package.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::fields::{ControllerVersion, Direction, lookup};
use rtde_core::protocol::ProtocolVersion;
use rtde_core::rotation::{self, Quaternion};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use rtde_kinematics::Arm;
use rtde_record::capture::Header;
use rtde_sim::{Motion, Sim};
use rtde_testkit::foxglove;
use rtde_view::{
    MODES_TOPIC, OUTPUTS_TOPIC, SUBPROTOCOLS, TCP_POSE_TOPIC, TF_TOPIC, ViewOptions, ViewServer,
};
use serde_json::Value as Json;

const LOOPBACK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
/// Packages whose every channel the viewer checks.
const CHECKED: usize = 150;

fn now_us() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(d.as_micros()).unwrap()
}

fn f64s(j: &Json) -> Vec<f64> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn xyz(j: &Json) -> [f64; 3] {
    ["x", "y", "z"].map(|k| j[k].as_f64().unwrap())
}

fn xyzw(j: &Json) -> [f64; 4] {
    ["x", "y", "z", "w"].map(|k| j[k].as_f64().unwrap())
}

#[test]
fn a_viewer_sees_the_simulator_move_by_its_motion_law_and_kinematics() {
    let sim = Sim::builder()
        .controller_version("5.21.0")
        .deterministic()
        .start()
        .unwrap();
    let recipe = DynamicRecipe::outputs([
        "timestamp",
        "actual_q",
        "actual_TCP_pose",
        "robot_mode",
        "safety_mode",
    ])
    .unwrap();
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    let header = Header::of_client(&client, &recipe).unwrap();
    let view = Arc::new(ViewServer::start(&header, ViewOptions::new().addr(LOOPBACK)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    client.start().unwrap();
    let publisher = {
        let (view, stop) = (Arc::clone(&view), Arc::clone(&stop));
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let payload = client.recv().unwrap();
                view.publish(payload, Instant::now(), now_us());
            }
        })
    };

    let mut viewer = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).unwrap();
    assert_eq!(viewer.subprotocol, "foxglove.sdk.v1");
    assert_eq!(viewer.server_info["op"], "serverInfo");
    let advertised: BTreeMap<&str, (&str, &str, &str)> = viewer
        .channels
        .iter()
        .map(|c| {
            (
                c.topic.as_str(),
                (
                    c.encoding.as_str(),
                    c.schema_name.as_str(),
                    c.schema_encoding.as_str(),
                ),
            )
        })
        .collect();
    assert_eq!(
        advertised[TF_TOPIC],
        ("json", "foxglove.FrameTransforms", "jsonschema")
    );
    assert_eq!(
        advertised[TCP_POSE_TOPIC],
        ("json", "foxglove.PoseInFrame", "jsonschema")
    );
    assert_eq!(
        advertised[OUTPUTS_TOPIC],
        ("json", "rtde.Outputs", "jsonschema")
    );
    assert_eq!(
        advertised[MODES_TOPIC],
        ("json", "rtde.Modes", "jsonschema")
    );
    viewer
        .subscribe(&[OUTPUTS_TOPIC, TF_TOPIC, TCP_POSE_TOPIC, MODES_TOPIC])
        .unwrap();

    // Every message of a package carries its log time: group them by it.
    let mut packages: BTreeMap<u64, BTreeMap<String, Json>> = BTreeMap::new();
    let complete = |p: &BTreeMap<String, Json>| p.len() == 4;
    for _ in 0..CHECKED * 8 {
        let data = viewer.message().unwrap();
        packages
            .entry(data.log_time)
            .or_default()
            .insert(data.topic, data.json);
        if packages.values().filter(|p| complete(p)).count() >= CHECKED {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    publisher.join().unwrap();

    let arm = Arm::UR5E;
    let motion = Motion::DEFAULT;
    let mut first: Option<(u64, f64)> = None;
    let mut checked = 0;
    for (&log_time, p) in packages.iter().filter(|(_, p)| complete(p)) {
        let outputs = &p[OUTPUTS_TOPIC];
        let t = outputs["timestamp"].as_f64().unwrap();
        // The values follow the motion law, bit for bit.
        let q: [f64; 6] = f64s(&outputs["actual_q"]).try_into().unwrap();
        assert_eq!(q, motion.position(t), "actual_q at {t}");
        // Log times are spaced by the controller's clock.
        let (l0, t0) = *first.get_or_insert((log_time, t));
        #[allow(clippy::cast_possible_truncation)]
        let spaced = ((t - t0) * 1e6).round() as i64 * 1000;
        assert_eq!(i64::try_from(log_time - l0).unwrap(), spaced);

        // The link frames are the kinematics' for these joints, and chain to the flange.
        let transforms = p[TF_TOPIC]["transforms"].as_array().unwrap();
        let frames = arm.link_frames(&q);
        assert_eq!(transforms.len(), 6);
        let (mut r, mut at) = (rotation::IDENTITY, [0.0; 3]);
        let mut parent = "base";
        for (tf, frame) in transforms.iter().zip(&frames) {
            assert_eq!(tf["parent_frame_id"], parent);
            parent = tf["child_frame_id"].as_str().unwrap();
            assert_eq!(xyz(&tf["translation"]), frame.translation);
            assert_eq!(xyzw(&tf["rotation"]), frame.rotation.to_xyzw());
            let moved = rtde_kinematics::mul3v(&r, &frame.translation);
            at = std::array::from_fn(|i| at[i] + moved[i]);
            r = mul(&r, &frame.rotation.to_matrix());
        }
        assert_eq!(parent, "flange");
        let pose = arm.tcp_pose(&q);
        let sent = f64s(&outputs["actual_TCP_pose"]);
        for i in 0..3 {
            assert!(
                (at[i] - pose[i]).abs() < 1e-12,
                "chained flange {at:?} vs {pose:?}"
            );
            assert!(
                (sent[i] - pose[i]).abs() < 1e-9,
                "actual_TCP_pose {sent:?} vs {pose:?}"
            );
        }

        // The TCP pose: the package's, its orientation the flange's rotation.
        let tcp = &p[TCP_POSE_TOPIC];
        assert_eq!(tcp["frame_id"], "base");
        assert_eq!(xyz(&tcp["pose"]["position"]).to_vec(), sent[..3].to_vec());
        let want = Quaternion::from_matrix(&arm.tcp_rotation(&q)).to_xyzw();
        let got = xyzw(&tcp["pose"]["orientation"]);
        for i in 0..4 {
            assert!((got[i] - want[i]).abs() < 1e-9, "{got:?} vs {want:?}");
        }

        // The modes, by name.
        let mode = outputs["robot_mode"].as_i64().unwrap();
        let names = rtde_core::code_names("robot_mode").unwrap();
        let name = names.iter().find(|(c, _)| *c == mode).unwrap().1;
        assert_eq!(p[MODES_TOPIC]["robot_mode"], name);
        assert!(
            p[MODES_TOPIC]["safety_mode"]
                .as_str()
                .unwrap()
                .starts_with("SAFETY_MODE_")
        );
        checked += 1;
    }
    assert!(checked >= CHECKED, "{checked} packages with every channel");
    sim.shutdown().unwrap();
}

fn mul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn synthetic_header(vectors: &[&str]) -> Header {
    let mut fields = vec![lookup(Direction::Output, "timestamp").unwrap()];
    fields.extend(
        vectors
            .iter()
            .map(|n| lookup(Direction::Output, n).unwrap()),
    );
    Header {
        protocol: ProtocolVersion::V2,
        controller: ControllerVersion::new(5, 21, 0, 0),
        frequency: 500.0,
        recipe_id: Some(1),
        started_unix_micros: 0,
        fields,
    }
}

#[test]
fn a_client_without_the_subprotocol_is_refused() {
    let view = ViewServer::start(
        &synthetic_header(&["actual_q"]),
        ViewOptions::new().addr(LOOPBACK),
    )
    .unwrap();
    let refused = foxglove::Client::connect(view.addr(), &["some.other.v1"]).unwrap_err();
    assert!(refused.contains("400"), "{refused}");
    // The protocol's first name is served too.
    let viewer = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[1]]).unwrap();
    assert_eq!(viewer.subprotocol, "foxglove.websocket.v1");
}

#[test]
fn clients_are_closed_as_the_websocket_rfc_says() {
    let view = ViewServer::start(
        &synthetic_header(&["actual_q"]),
        ViewOptions::new().addr(LOOPBACK),
    )
    .unwrap();
    // A viewer that closes gets the server's Close back (RFC 6455 §5.5.1), and a ping
    // its pong, over and over: nothing is left behind by the ones before.
    for round in 0..20u8 {
        let mut viewer = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).unwrap();
        viewer.ping(&[round]).unwrap();
        assert_eq!(viewer.close(), Ok(Some(1000)), "round {round}");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while view.stats().clients > 0 {
        assert!(Instant::now() < deadline, "{:?}", view.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    // A server that shuts down says so to each viewer (1001, going away) before it hangs up,
    // also to the ones its thread has not yet taken in after their handshake.
    let mut viewers: Vec<_> = (0..3)
        .map(|_| foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).unwrap())
        .collect();
    view.shutdown();
    for viewer in &mut viewers {
        assert_eq!(viewer.closed_by_server(), Ok(Some(1001)));
    }
}

#[test]
fn a_slow_client_loses_frames_counted_and_holds_up_no_one() {
    const PACKAGES: u64 = 20_000;
    // Twelve vectors: 1.5 kB a message, 30 MB in all, more than loopback sockets buffer.
    const VECTORS: [&str; 12] = [
        "actual_q",
        "target_q",
        "actual_qd",
        "target_qd",
        "target_qdd",
        "actual_current",
        "target_current",
        "target_moment",
        "actual_TCP_pose",
        "actual_TCP_speed",
        "actual_TCP_force",
        "target_TCP_pose",
    ];
    let view = ViewServer::start(
        &synthetic_header(&VECTORS),
        ViewOptions::new()
            .addr(LOOPBACK)
            .client_buffer(128 << 10)
            .queue(usize::try_from(PACKAGES).unwrap()),
    )
    .unwrap();
    let mut fast = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).unwrap();
    let mut slow = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).unwrap();
    fast.subscribe(&[OUTPUTS_TOPIC]).unwrap();
    slow.subscribe(&[OUTPUTS_TOPIC]).unwrap();
    // The server thread reads requests at least every 10 ms.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(view.stats().clients, 2);

    let reader = std::thread::spawn(move || {
        // Every package, in order: their log times step by the 2 ms of their timestamps.
        let mut seen = 0u64;
        while seen < PACKAGES {
            let (_, log_time, _, _) = fast.frame().unwrap();
            assert_eq!(
                log_time,
                (1_000_000 + 2_000 * seen) * 1000,
                "package {seen}"
            );
            seen += 1;
        }
        seen
    });
    let mut payload = vec![0u8; 8 + 48 * VECTORS.len()];
    // Ten times a robot's rate: more than the slow client's socket takes, less than the
    // fast one reads.
    let started = Instant::now();
    for i in 0..PACKAGES {
        if i % 100 == 0 {
            let due = Duration::from_micros(i * 200);
            std::thread::sleep(due.saturating_sub(started.elapsed()));
        }
        #[allow(clippy::cast_precision_loss)]
        let t = i as f64 * 0.002;
        payload[..8].copy_from_slice(&t.to_be_bytes());
        for (j, chunk) in payload[8..].chunks_exact_mut(8).enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let x = (t + j as f64).sin();
            chunk.copy_from_slice(&x.to_be_bytes());
        }
        view.publish(
            &payload,
            Instant::now(),
            1_000_000 + 2_000 * i64::try_from(i).unwrap(),
        );
    }
    assert_eq!(reader.join().unwrap(), PACKAGES);
    // The counts follow the last frames by a moment.
    let mut stats = view.stats();
    for _ in 0..100 {
        if stats.frames + stats.dropped_slow >= 2 * PACKAGES {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        stats = view.stats();
    }
    assert_eq!(stats.dropped_queue, 0);
    assert!(stats.dropped_slow > 0, "{stats:?}");
    // Every frame for either client is written or counted as dropped.
    assert_eq!(stats.frames + stats.dropped_slow, 2 * PACKAGES, "{stats:?}");
    drop(slow);
}
