//! Criterion groups, each measured side by side in one run:
//!
//! - `decode`: the reference recipe (10 fields, 272 bytes) through every decoder rtde has,
//!   next to a hand-written decoder (the floor) and a plain copy of the payload;
//! - `frames`: parsing and decoding from a buffer of 100 data packages, per package;
//! - `encode`: a 10-field input recipe, derived and by hand, and as a whole package.
//!
//! `cargo bench -p rtde-bench --bench codec`; the targets as ratios: `--bench ratios`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rtde_bench::stream::{self, Frames};
use rtde_bench::{REFERENCE_NAMES, Reference, ReferenceTyped, floor, sample, servo_sample};
use rtde_core::protocol::{ClientMessage, ProtocolVersion};
use rtde_core::{DynamicRecipe, FromPayload, OutputRecipe, RecipeView, ToPayload};

fn decode(c: &mut Criterion) {
    let payload = floor::encode(&sample(1234.5));
    // The recipe id and the payload, as they sit in a data package.
    let mut package = [0u8; 273];
    package[0] = 1;
    package[1..].copy_from_slice(&payload);

    let mut g = c.benchmark_group("decode");
    g.bench_function("memcpy 273 B", |b| {
        let mut out = [0u8; 273];
        b.iter(|| {
            out.copy_from_slice(black_box(&package));
            black_box(&mut out);
        });
    });
    g.bench_function("floor: from_be_bytes by hand", |b| {
        b.iter(|| floor::decode(black_box(&payload)));
    });
    g.bench_function("derived: from_payload", |b| {
        b.iter(|| Reference::from_payload(black_box(&payload)));
    });
    g.bench_function("derived, typed values: from_payload", |b| {
        b.iter(|| ReferenceTyped::from_payload(black_box(&payload)));
    });
    g.bench_function("derived: decode_into", |b| {
        let mut r = sample(0.0);
        b.iter(|| {
            let _ = black_box(&mut r).decode_into(black_box(&payload));
        });
    });
    g.bench_function("view: one field (timestamp)", |b| {
        b.iter(|| Reference::view(black_box(&payload)).map(|v| v.timestamp()));
    });
    g.bench_function("view: one vector (actual_TCP_pose)", |b| {
        b.iter(|| Reference::view(black_box(&payload)).map(|v| v.actual_tcp_pose()));
    });
    g.bench_function("view: all fields", |b| {
        b.iter(|| {
            Reference::view(black_box(&payload)).map(|v| Reference {
                timestamp: v.timestamp(),
                actual_q: v.actual_q(),
                actual_qd: v.actual_qd(),
                actual_tcp_pose: v.actual_tcp_pose(),
                actual_tcp_speed: v.actual_tcp_speed(),
                actual_tcp_force: v.actual_tcp_force(),
                actual_digital_input_bits: v.actual_digital_input_bits(),
                actual_digital_output_bits: v.actual_digital_output_bits(),
                robot_mode: v.robot_mode(),
                safety_status: v.safety_status(),
            })
        });
    });
    g.bench_function("dynamic: decode_into", |b| {
        let mut recipe = DynamicRecipe::outputs(REFERENCE_NAMES).expect("known fields");
        b.iter(|| {
            let _ = recipe.decode_into(black_box(&payload));
            black_box(recipe.values());
        });
    });
    g.finish();
}

fn frames(c: &mut Criterion) {
    let frames = Frames::new(100);
    let bytes = frames.bytes();
    let mut g = c.benchmark_group("frames");
    // One iteration is one package: walk the buffer, wrapping at its end.
    g.bench_function("parse + decode, per package", |b| {
        let mut pos = 0;
        b.iter(|| {
            let (r, used) = stream::parse_and_decode(black_box(&bytes[pos..])).expect("a package");
            pos += used;
            if pos == bytes.len() {
                pos = 0;
            }
            r
        });
    });
    g.bench_function("floor: decode at the package's offset, per package", |b| {
        let mut pos = 0;
        b.iter(|| {
            let r = floor::decode(black_box(&bytes[pos + 4..pos + stream::PACKAGE_LEN]));
            pos += stream::PACKAGE_LEN;
            if pos == bytes.len() {
                pos = 0;
            }
            r
        });
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let servo = servo_sample();
    let mut g = c.benchmark_group("encode");
    g.bench_function("floor: to_be_bytes by hand", |b| {
        b.iter(|| floor::encode_servo(black_box(&servo)));
    });
    g.bench_function("derived: to_payload", |b| {
        b.iter(|| black_box(&servo).to_payload());
    });
    g.bench_function("derived: whole package", |b| {
        let mut buf = [0u8; 128];
        b.iter(|| {
            let payload = black_box(&servo).to_payload();
            let n = ClientMessage::DataPackage {
                recipe_id: 1,
                payload: &payload,
            }
            .encode(ProtocolVersion::V2, &mut buf);
            black_box(&buf);
            n
        });
    });
    g.finish();
}

criterion_group!(benches, decode, frames, encode);
criterion_main!(benches);
