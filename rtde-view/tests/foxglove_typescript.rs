//! The live view and the MCAP files as Foxglove's own TypeScript libraries read them:
//! `@foxglove/ws-protocol`'s client decodes every channel of the live view with its
//! advertised schema, checks the link frames against the TCP pose the controller sent,
//! and closes cleanly both ways; `@mcap/core` with `@mcap/support`'s protobuf descriptors
//! decodes every channel of a recording with the file's own schemas and checks the values
//! the test wrote.
//!
//! `.ci/run` installs the packages (`tests/interop/foxglove/setup.sh`, which prints a
//! `node` that finds them) and runs these tests with `RTDE_FOXGLOVE_NODE` naming it. In a
//! plain `cargo test` they are ignored: run the setup once, then
//! `RTDE_FOXGLOVE_NODE=$(tests/interop/foxglove/setup.sh) cargo test -p rtde-view --test foxglove_typescript -- --ignored`.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::fields::{Direction, lookup};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_record::capture::Header;
use rtde_sim::{Fault, Motion, Sim};
use rtde_testkit::foxglove_js::Script;
use rtde_view::{ViewOptions, ViewServer};
use serde_json::Value as Json;

use common::FIELDS;

const LOOPBACK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
/// Packages with every channel that the viewer checks.
const CHECKED: usize = 150;
/// The live simulator leaves out every so many packages, so that the gap channel speaks.
const SKIP_EVERY: u64 = 50;
const WAIT: Duration = Duration::from_secs(40);

fn now_us() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(d.as_micros()).unwrap()
}

#[test]
#[ignore = "needs node and Foxglove's packages; .ci/run installs them and runs this test"]
fn foxgloves_client_decodes_every_channel_and_closes_cleanly_both_ways() {
    let sim = Sim::builder()
        .controller_version("5.21.0")
        .deterministic()
        .fault(Fault::SkipEvery(SKIP_EVERY))
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
    let header = Header {
        protocol: client.protocol_version(),
        controller: client.controller_version(),
        frequency: 500.0,
        recipe_id: client.output_recipe_id(),
        started_unix_micros: now_us(),
        fields: recipe.fields().to_vec(),
    };
    let view = Arc::new(ViewServer::start(&header, ViewOptions::new().addr(LOOPBACK)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    client.start().unwrap();
    let publisher = {
        let (view, stop) = (Arc::clone(&view), Arc::clone(&stop));
        std::thread::spawn(move || {
            let deadline = Instant::now() + WAIT;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let payload = client.recv().unwrap();
                view.publish(payload, Instant::now(), now_us());
            }
        })
    };

    let mut viewer = Script::start("live_view.js", &[&view.url(), &CHECKED.to_string()]);
    let summary = viewer.event(WAIT);
    assert_eq!(summary["event"], "summary", "{summary}");
    // Foxglove's client offers the protocol's first name.
    assert_eq!(summary["subprotocol"], "foxglove.websocket.v1");
    for topic in ["/rtde/outputs", "/tf", "/tcp_pose", "/rtde/modes"] {
        let n = summary["counts"][topic].as_u64().unwrap();
        assert!(n >= CHECKED as u64, "{topic}: {n} messages: {summary}");
    }
    assert!(summary["counts"]["/rtde/gaps"].as_u64().unwrap() >= 1);
    assert!(summary["frames_checked"].as_u64().unwrap() >= CHECKED as u64);
    // The script's chained frames met the controller's TCP pose.
    println!("largest differences: {}", summary["largest_difference"]);

    // What Foxglove decoded is what the simulator sent: the motion law, bit for bit.
    let motion = Motion::DEFAULT;
    for sample in summary["samples"].as_array().unwrap() {
        let t = sample[0].as_f64().unwrap();
        let q: Vec<f64> = sample[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(q, motion.position(t), "actual_q at {t}");
    }
    // The modes by the names UR gives their codes.
    for mode in summary["modes"].as_array().unwrap() {
        let field = mode[0].as_str().unwrap();
        let names = rtde_core::code_names(field).unwrap();
        let code = mode[1].as_i64().unwrap();
        let name = names.iter().find(|(c, _)| *c == code).unwrap().1;
        assert_eq!(mode[2], name, "{field} {code}");
    }
    let client_close = summary["client_close"].as_u64().unwrap();
    assert!([1000, 1005].contains(&client_close), "{client_close}");

    assert_eq!(viewer.event(WAIT)["event"], "holding");
    stop.store(true, Ordering::Relaxed);
    publisher.join().unwrap();
    Arc::into_inner(view).unwrap().shutdown();
    let closed = viewer.event(WAIT);
    assert_eq!(closed["event"], "server closed");
    assert_eq!(closed["code"], 1001);
    let (status, stderr) = viewer.finish(WAIT);
    assert!(status.success(), "{status}: {stderr}");
    sim.shutdown().unwrap();
}

/// One package's values by field name, as `rtde_json` writes them; a 64-bit integer as
/// a string, which JavaScript reads without rounding.
fn package_json(payload: &[u8]) -> String {
    let mut out = String::from("{");
    let mut at = 0;
    let mut value = Value::Bool(false);
    for (i, name) in FIELDS.iter().enumerate() {
        let field = lookup(Direction::Output, name).unwrap();
        assert!(value.read_be(field.wire_type(), &payload[at..]));
        at += field.wire_type().size();
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"{name}\":"));
        let mut text = String::new();
        rtde_json::write_value(&mut text, &value);
        if matches!(value, Value::Uint64(_)) {
            text = format!("\"{text}\"");
        }
        out.push_str(&text);
    }
    out.push('}');
    out
}

#[test]
#[ignore = "needs node and Foxglove's packages; .ci/run installs them and runs this test"]
fn mcap_core_decodes_every_channel_with_the_files_own_schemas() {
    let recording = common::record(true);
    let dir = std::env::temp_dir().join(format!("rtde-foxglove-mcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.mcap");
    let expected = dir.join("outputs.jsonl");
    std::fs::write(&file, &recording.mcap).unwrap();
    let lines: Vec<String> = (0..recording.raw.len())
        .map(|i| package_json(recording.raw.payload(i)))
        .collect();
    std::fs::write(&expected, lines.join("\n")).unwrap();

    let mut reader = Script::start(
        "read_mcap.js",
        &[file.to_str().unwrap(), expected.to_str().unwrap()],
    );
    let summary = reader.event(WAIT);
    let (status, stderr) = reader.finish(WAIT);
    println!("{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(summary["event"], "summary", "{summary}");
    let counts = &summary["counts"];
    assert_eq!(counts["/rtde/outputs"], recording.raw.len() as u64);
    assert_eq!(counts["/rtde/outputs"], summary["outputs_compared"]);
    assert_eq!(counts["/rtde/gaps"], recording.counts.gaps);
    // Every channel is protobuf, Foxglove's own types for the arm.
    for (topic, schema) in [
        ("/rtde/outputs", "rtde.Outputs"),
        ("/rtde/gaps", "rtde.Gap"),
        ("/rtde/modes", "rtde.Modes"),
        ("/tf", "foxglove.FrameTransforms"),
        ("/tcp_pose", "foxglove.PoseInFrame"),
    ] {
        let described = &summary["schemas"][topic];
        assert_eq!(
            *described,
            Json::from(format!("protobuf {schema}")),
            "{topic}"
        );
    }
    // The arm's frames, one message per package, each checked against the recorded TCP
    // pose.
    assert_eq!(counts["/tf"], counts["/rtde/outputs"]);
    assert_eq!(summary["frames_checked"], counts["/tf"]);
}
