//! The MCAP files as the viewers' own readers load them: the `mcap` Python package with
//! its protobuf decoder (what PlotJuggler and Rerun do: build the message classes from the
//! descriptor in the file) reads every recipe value back bit for bit, the metadata and the
//! gaps.
//!
//! `.ci/run` installs `mcap` and `mcap-protobuf-support` into a virtual environment
//! (`tests/interop/setup.sh mcap`) and runs this test with `RTDE_MCAP_PYTHON` pointing at
//! its Python. In a plain `cargo test` it is ignored: run `tests/interop/setup.sh mcap`
//! once, then
//! `RTDE_MCAP_PYTHON=target/interop-venv/bin/python cargo test -p rtde-view --test python_mcap -- --ignored`.

mod common;

use std::process::Command;

use rtde_core::fields::{Direction, lookup};
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
    let mut meta = Vec::new();
    for line in stdout.lines() {
        let (kind, rest) = line.split_once(' ').unwrap();
        match kind {
            "meta" => meta.push(rest.to_owned()),
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
    assert_eq!(gaps, recording.counts.gaps);
    assert!(meta.contains(&"controller 5.21.0".to_owned()), "{meta:?}");
    assert!(
        meta.contains(&format!("fields {}", FIELDS.join(","))),
        "{meta:?}"
    );
}
