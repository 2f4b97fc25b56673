//! The MCAP files as the viewers' own readers load them: the `mcap` Python package with
//! its protobuf decoder (what PlotJuggler and Rerun do: build the message classes from the
//! descriptor in the file) reads every recipe value back bit for bit, the metadata, the
//! gaps, the modes, and the link frames and TCP pose by Foxglove's field names, which are
//! checked against the forward kinematics of each package's `actual_q`.
//!
//! `.ci/run` installs `mcap` and `mcap-protobuf-support` into a virtual environment
//! (`tests/interop/setup.sh mcap`) and runs this test with `RTDE_MCAP_PYTHON` pointing at
//! its Python. In a plain `cargo test` it is ignored: run `tests/interop/setup.sh mcap`
//! once, then
//! `RTDE_MCAP_PYTHON=target/interop-venv/bin/python cargo test -p rtde-view --test python_mcap -- --ignored`.

mod common;

use std::process::Command;

use rtde_core::fields::{Direction, lookup};
use rtde_core::rotation::Quaternion;
use rtde_kinematics::{Arm, BASE_FRAME, LINK_FRAMES};
use serde_json::Value as Json;

use common::{FIELDS, timestamp};

#[test]
#[ignore = "needs the mcap Python packages; .ci/run installs them and runs this test"]
fn the_mcap_python_package_decodes_every_value_with_the_files_own_descriptor() {
    let python = std::env::var("RTDE_MCAP_PYTHON").expect(
        "RTDE_MCAP_PYTHON must name a Python with mcap and mcap-protobuf-support (see tests/interop/setup.sh)",
    );
    let recording = common::record(true);
    let path = std::env::temp_dir().join(format!("rtde-python-mcap-{}.mcap", std::process::id()));
    std::fs::write(&path, &recording.mcap).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_mcap.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&path)
        .output()
        .expect("run python");
    std::fs::remove_file(&path).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Python reader failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let raw = &recording.raw;
    let mut packages = 0;
    let mut gaps = 0;
    let mut derived = [0usize; 3];
    let mut meta = Vec::new();
    let mut channels = Vec::new();
    for line in stdout.lines() {
        let (kind, rest) = line.split_once(' ').unwrap();
        match kind {
            "meta" => meta.push(rest.to_owned()),
            "channel" => channels.push(rest.to_owned()),
            "tf" | "pose" | "modes" => {
                let mut words = rest.splitn(3, ' ');
                let log_time: u64 = words.next().unwrap().parse().unwrap();
                let publish_time: u64 = words.next().unwrap().parse().unwrap();
                let json: Json = serde_json::from_str(words.next().unwrap()).unwrap();
                // It follows its package's message.
                let payload = raw.payload(packages - 1);
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let want = (timestamp(payload) * 1e9).round() as u64;
                assert_eq!(publish_time, want, "{line}");
                let i = ["tf", "pose", "modes"]
                    .iter()
                    .position(|k| *k == kind)
                    .unwrap();
                derived[i] += 1;
                check_derived(kind, &json, payload, log_time);
            }
            "out" => {
                let mut words = rest.splitn(3, ' ');
                let _log_time: u64 = words.next().unwrap().parse().unwrap();
                let publish_time: u64 = words.next().unwrap().parse().unwrap();
                let json: Json = serde_json::from_str(words.next().unwrap()).unwrap();
                let payload = raw.payload(packages);
                // Every field, by its RTDE name, to the bit.
                let mut bytes = vec![0u8; payload.len()];
                let mut at = 0;
                for name in FIELDS {
                    let field = lookup(Direction::Output, name).unwrap();
                    let value = rtde_json::read_value(field.wire_type(), &json[name])
                        .unwrap_or_else(|| {
                            panic!("package {packages}: `{name}` is {}", json[name])
                        });
                    at += value.write_be(&mut bytes[at..]).unwrap();
                }
                assert_eq!(bytes, payload, "package {packages}: {json}");
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let want = (timestamp(payload) * 1e9).round() as u64;
                assert_eq!(publish_time, want);
                packages += 1;
            }
            "gap" => {
                let json: Json = serde_json::from_str(rest.split_once(' ').unwrap().1).unwrap();
                assert!(
                    json["kind"] == "skipped" || json["kind"] == "reconnection",
                    "{json}"
                );
                gaps += 1;
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    assert_eq!(packages, raw.len());
    assert_eq!(derived, [packages; 3]);
    assert_eq!(gaps, recording.counts.gaps);
    assert_eq!(
        channels,
        [
            "/rtde/gaps rtde.Gap protobuf protobuf",
            "/rtde/modes rtde.Modes protobuf protobuf",
            "/rtde/outputs rtde.Outputs protobuf protobuf",
            "/tcp_pose foxglove.PoseInFrame protobuf protobuf",
            "/tf foxglove.FrameTransforms protobuf protobuf",
        ]
    );
    assert!(meta.contains(&"controller 5.21.0".to_owned()), "{meta:?}");
    assert!(
        meta.contains(&format!("fields {}", FIELDS.join(","))),
        "{meta:?}"
    );
}

/// Six doubles of a package at byte `at`.
fn vector6(payload: &[u8], at: usize) -> [f64; 6] {
    std::array::from_fn(|i| f64::from_be_bytes(payload[at + 8 * i..][..8].try_into().unwrap()))
}

fn numbers(json: &Json) -> Vec<f64> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// A derived message as Python decoded it, against the package it came from: the link
/// frames are the UR5e's forward kinematics of `actual_q`, the pose `actual_TCP_pose`.
fn check_derived(kind: &str, json: &Json, payload: &[u8], log_time: u64) {
    let stamp = [log_time / 1_000_000_000, log_time % 1_000_000_000];
    let stamp_of = |j: &Json| -> Vec<u64> {
        j.as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    // `timestamp`, then `actual_q`, `actual_qd`, `actual_TCP_pose` (FIELDS).
    let (q, tcp) = (vector6(payload, 8), vector6(payload, 8 + 48 + 48));
    match kind {
        "tf" => {
            let transforms = json.as_array().unwrap();
            let links = Arm::UR5E.link_frames(&q);
            assert_eq!(transforms.len(), links.len());
            let mut parent = BASE_FRAME;
            for ((t, link), child) in transforms.iter().zip(links).zip(LINK_FRAMES) {
                assert_eq!(
                    (t["parent"].as_str(), t["child"].as_str()),
                    (Some(parent), Some(child))
                );
                assert_eq!(numbers(&t["translation"]), link.translation);
                assert_eq!(numbers(&t["rotation"]), link.rotation.to_xyzw());
                assert_eq!(stamp_of(&t["timestamp"]), stamp);
                parent = child;
            }
        }
        "pose" => {
            assert_eq!(json["frame_id"], "base");
            assert_eq!(numbers(&json["position"]), tcp[..3]);
            let q = Quaternion::from_rotation_vector([tcp[3], tcp[4], tcp[5]]);
            assert_eq!(numbers(&json["orientation"]), q.to_xyzw());
            assert_eq!(stamp_of(&json["timestamp"]), stamp);
        }
        _ => {
            let at: usize = FIELDS
                .iter()
                .take_while(|n| **n != "robot_mode")
                .map(|n| lookup(Direction::Output, n).unwrap().wire_type().size())
                .sum();
            let code = i32::from_be_bytes(payload[at..at + 4].try_into().unwrap());
            let name = rtde_core::code_names("robot_mode")
                .and_then(|n| n.iter().find(|(c, _)| *c == i64::from(code)))
                .unwrap()
                .1;
            assert_eq!(json["robot_mode"], name);
            assert_eq!(json["safety_mode"], "", "the recipe has no safety_mode");
        }
    }
}
