//! What the arm costs an MCAP recording: a 10-minute recording at 500 Hz (300,000
//! packages of the reference recipe, `actual_q` and `actual_TCP_pose` among its fields,
//! made in-process by the simulator's motion law) written by the MCAP recorder with the
//! link frames and TCP pose (`/tf`, `/tcp_pose`), by the MCAP recorder without them, and by
//! the raw capture writer, in one run:
//!
//! - recorder CPU per package: thread CPU time over all packages, `finish` included, the
//!   three writers in turn, three rounds in a rotating order (the median is printed, and
//!   the ratios of the medians);
//! - bytes per package of each file.
//!
//! `cargo bench -p rtde-bench --bench mcap_frames [-- --packages 300000 --rounds 3]`

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use rtde_bench::REFERENCE_NAMES;
use rtde_bench::interleave::median;
use rtde_bench::live::thread_cpu_time;
use rtde_bench::report::{arg, commit, cpu_model, per_us};
use rtde_core::fields::{ControllerVersion, Direction, lookup};
use rtde_core::protocol::ProtocolVersion;
use rtde_core::{DynamicRecipe, Value};

use rtde_record::capture::{self, Header};
use rtde_sim::{Arm, Motion};
use rtde_view::{Recorder, RecorderOptions};

const FREQUENCY: f64 = 500.0;
/// The host time of the first package, µs since the epoch.
const START_US: i64 = 1_764_576_000_000_000;

/// The writers measured, in the order of the figures.
const WRITERS: [&str; 3] = [
    "MCAP with /tf, /tcp_pose",
    "MCAP without frames",
    "raw capture",
];

/// `n` packages of the reference recipe, one every 2 ms of controller time, the joints
/// moving by the simulator's motion law and the TCP pose its forward kinematics.
fn packages(n: u64) -> (Vec<u8>, usize) {
    let recipe = DynamicRecipe::outputs(REFERENCE_NAMES).expect("the reference recipe");
    let size = recipe.payload_size();
    let mut all = Vec::with_capacity(size * usize::try_from(n).unwrap_or(0));
    let mut payload = vec![0u8; size];
    for i in 0..n {
        #[allow(clippy::cast_precision_loss)] // i < 2^53
        let t = i as f64 / FREQUENCY;
        let q = Motion::DEFAULT.position(t);
        let values = [
            Value::Double(t),
            Value::Vector6d(q),
            Value::Vector6d(Motion::DEFAULT.velocity(t)),
            Value::Vector6d(Arm::UR5E.tcp_pose(&q)),
            Value::Vector6d([0.01, -0.02, 0.0, 0.0, 0.0, 0.001]),
            Value::Vector6d([1.5, -2.0, 9.8, 0.01, 0.02, 0.0]),
            Value::Uint64(0b1010),
            Value::Uint64(0b0100),
            Value::Int32(7),
            Value::Int32(1),
        ];
        let mut at = 0;
        for v in &values {
            at += v.write_be(&mut payload[at..]).expect("the recipe's size");
        }
        all.extend_from_slice(&payload);
    }
    (all, size)
}

/// Writes every package with writer `w` into `path`; returns its CPU time per package, µs.
fn write(w: usize, header: &Header, payloads: &[u8], size: usize, path: &Path) -> f64 {
    let out = BufWriter::with_capacity(256 << 10, File::create(path).expect("create"));
    let n = (payloads.len() / size) as u64;
    let cpu0 = thread_cpu_time().unwrap_or_default();
    if w == 2 {
        let mut raw = capture::Writer::new(out, header).expect("raw");
        for p in payloads.chunks_exact(size) {
            raw.package(p).expect("raw");
        }
        drop(raw.finish(0).expect("finish"));
    } else {
        let options = RecorderOptions::new().robot("bench").frames(w == 0);
        let mut mcap = Recorder::new(out, header, &options).expect("mcap");
        for (i, p) in (0..).zip(payloads.chunks_exact(size)) {
            mcap.package(p, START_US + i * 2000).expect("mcap");
        }
        drop(mcap.finish().expect("finish"));
    }
    per_us(
        thread_cpu_time().unwrap_or_default().saturating_sub(cpu0),
        n,
    )
}

fn main() {
    let n = arg("--packages", 300_000);
    let rounds = usize::try_from(arg("--rounds", 3)).unwrap_or(3).max(1);
    let (payloads, size) = packages(n);
    let header = Header {
        protocol: ProtocolVersion::V2,
        controller: ControllerVersion::new(5, 21, 0, 0),
        frequency: FREQUENCY,
        recipe_id: Some(1),
        started_unix_micros: START_US,
        fields: REFERENCE_NAMES
            .iter()
            .map(|name| lookup(Direction::Output, name).expect("a field"))
            .collect(),
    };
    let dir = std::env::temp_dir().join(format!("rtde-bench-mcap-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let paths = [0, 1, 2].map(|w| dir.join(format!("run-{w}")));
    let mut cpu: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        eprintln!("round {} of {rounds}", round + 1);
        for k in 0..3 {
            let w = (round + k) % 3;
            cpu[w].push(write(w, &header, &payloads, size, &paths[w]));
        }
    }
    #[allow(clippy::cast_precision_loss)] // file sizes and counts far below 2^53
    let bytes = paths
        .clone()
        .map(|p| std::fs::metadata(&p).map_or(0.0, |m| m.len() as f64) / n as f64);
    std::fs::remove_dir_all(&dir).expect("remove the scratch directory");
    let cpu = cpu.map(median);

    println!("MCAP recorder with and without the arm's frames, against the raw capture writer");
    println!("CPU: {}; commit {}", cpu_model(), commit());
    println!(
        "{n} packages of the reference recipe ({size} bytes of values) at 500 Hz, {rounds} rounds"
    );
    println!();
    println!("| writer | CPU per package (median) | bytes per package |");
    println!("| --- | ---: | ---: |");
    for (w, name) in WRITERS.iter().enumerate() {
        println!("| {name} | {:.2} µs | {:.1} |", cpu[w], bytes[w]);
    }
    println!();
    println!(
        "CPU: with frames ÷ without {:.2}×, with frames ÷ raw {:.1}×, without ÷ raw {:.1}×",
        cpu[0] / cpu[1],
        cpu[0] / cpu[2],
        cpu[1] / cpu[2]
    );
    println!(
        "bytes: with frames ÷ without {:.2}×, with frames ÷ raw {:.2}×, without ÷ raw {:.2}×",
        bytes[0] / bytes[1],
        bytes[0] / bytes[2],
        bytes[1] / bytes[2]
    );
}
