//! The decode and encode targets of the performance issues, as ratios measured in one
//! run: every case is timed in short batches, all cases interleaved round by round, and
//! each ratio is the median over rounds of the two cases' times in the same round, so a
//! noisy neighbour slows numerator and denominator alike.
//!
//! The base of every decode ratio is the hand-written floor called out of line, once per
//! package (`floor::decode_out_of_line`). Every decode case hands its result to
//! `black_box` by reference, as a caller that keeps the values does, so no case pays for a
//! copy the others do not.
//!
//! `cargo bench -p rtde-bench --bench ratios [-- --rounds N]`

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use rtde_bench::interleave::Interleaved;
use rtde_bench::stream::{self, Frames};
use rtde_bench::{REFERENCE_NAMES, Reference, ReferenceTyped, asm, floor, sample, servo_sample};
use rtde_core::protocol::{ClientMessage, FrameBuffer, ProtocolVersion};
use rtde_core::{DynamicRecipe, FromPayload, OutputRecipe, RecipeView, StaticRecipe, ToPayload};

const FLOOR: &str = "floor: by hand, out of line";
const FLOOR_INLINED: &str = "floor: by hand, inlined (context)";
const DERIVED_INLINED: &str = "derived: from_payload, inlined";
const DERIVED_OUT_OF_LINE: &str = "derived: from_payload, out of line";
const TYPED: &str = "derived, typed values: from_payload";
const VIEW_ONE: &str = "view: one field (timestamp)";
const FRAMES: &str = "frame parse + decode, as recv_as";
const FRAMES_INTO: &str = "frame parse + decode_into, as recv_into";
const FRAMES_TUPLE: &str = "frame parse + decode, moved into a tuple";
const BACKLOG_FLOOR: &str = "floor, walking a 100-package backlog";
const BACKLOG_FRAMES_INTO: &str = "frame parse + decode_into, that backlog";
const DYNAMIC: &str = "dynamic: decode_into";

const ENCODE_FLOOR: &str = "encode floor: to_be_bytes by hand";

/// A target: a case's ratio to the floor, or its absolute time, at most `limit`.
enum Target {
    Ratio(f64),
    Nanos(f64),
}

fn rounds_from_args() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

#[allow(clippy::too_many_lines)] // one case per line, the table at the end
fn main() -> ExitCode {
    let rounds = rounds_from_args();
    let batch = Duration::from_micros(200);

    let payload = floor::encode(&sample(1234.5));
    let mut package = [0u8; 273];
    package[0] = stream::RECIPE_ID;
    package[1..].copy_from_slice(&payload);
    let frames = Frames::new(100);
    let bytes = frames.bytes();
    let mut dynamic = DynamicRecipe::outputs(REFERENCE_NAMES).expect("known fields");
    let mut into = sample(0.0);
    let mut frame_into = sample(0.0);
    let mut backlog_into = sample(0.0);
    let servo = servo_sample();

    // Every decoder must read what the floor reads before any is timed.
    let expected = floor::decode(&payload);
    assert_eq!(floor::decode_out_of_line(&payload), expected);
    assert_eq!(Reference::from_payload(&payload).ok(), expected);
    assert_eq!(asm::derived(&payload).ok(), expected);
    assert_eq!(
        stream::parse_and_decode(bytes).map(|(r, _)| r.timestamp),
        Some(0.0)
    );
    let mut used = 0;
    assert_eq!(
        stream::parse_and_decode_as(bytes, &mut used).ok(),
        stream::parse_and_decode(bytes).map(|(r, _)| r)
    );
    assert_eq!(used, stream::PACKAGE_LEN);
    let mut check = sample(9.0);
    let mut used = 0;
    assert!(stream::parse_and_decode_into(bytes, &mut check, &mut used).is_ok());
    assert_eq!(used, stream::PACKAGE_LEN);
    assert_eq!(Some(check), stream::parse_and_decode(bytes).map(|(r, _)| r));
    assert_eq!(servo.to_payload(), floor::encode_servo(&servo));

    // One package read into the session's receive buffer, where a read puts it.
    let mut received = FrameBuffer::new();
    received.spare()[..stream::PACKAGE_LEN].copy_from_slice(&bytes[..stream::PACKAGE_LEN]);
    received.commit(stream::PACKAGE_LEN);
    let mut bench = Interleaved::new();
    bench.case("loop overhead (black_box in and out)", |n| {
        for _ in 0..n {
            black_box(black_box(&payload).len());
        }
    });
    bench.case("memcpy 273 B", |n| {
        let mut out = [0u8; 273];
        for _ in 0..n {
            out.copy_from_slice(black_box(&package));
            black_box(&mut out);
        }
    });
    bench.case(FLOOR, |n| {
        for _ in 0..n {
            let r = floor::decode_out_of_line(black_box(&payload));
            black_box(&r);
        }
    });
    // Context only: inlined here, the floor is slower than out of line, because the payload
    // came out of `black_box` and may, for all LLVM knows, overlap the result: every value
    // is loaded before the first is stored, and most wait on the stack. A ratio against it
    // would hide the same spill in the code under test.
    bench.case(FLOOR_INLINED, |n| {
        for _ in 0..n {
            let r = floor::decode(black_box(&payload));
            black_box(&r);
        }
    });
    bench.case(DERIVED_INLINED, |n| {
        for _ in 0..n {
            let r = Reference::from_payload(black_box(&payload));
            black_box(&r);
        }
    });
    bench.case(DERIVED_OUT_OF_LINE, |n| {
        for _ in 0..n {
            let r = asm::derived(black_box(&payload));
            black_box(&r);
        }
    });
    bench.case(TYPED, |n| {
        for _ in 0..n {
            let r = ReferenceTyped::from_payload(black_box(&payload));
            black_box(&r);
        }
    });
    bench.case("derived: decode_into", |n| {
        for _ in 0..n {
            let _ = black_box(&mut into).decode_into(black_box(&payload));
        }
    });
    bench.case(VIEW_ONE, |n| {
        for _ in 0..n {
            let _ = black_box(Reference::view(black_box(&payload)).map(|v| v.timestamp()));
        }
    });
    bench.case("view: one vector (actual_TCP_pose)", |n| {
        for _ in 0..n {
            let _ = black_box(Reference::view(black_box(&payload)).map(|v| v.actual_tcp_pose()));
        }
    });
    bench.case("view: all fields", |n| {
        for _ in 0..n {
            let r = Reference::view(black_box(&payload)).map(|v| Reference {
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
            });
            black_box(&r);
        }
    });
    bench.case(DYNAMIC, |n| {
        for _ in 0..n {
            let _ = dynamic.decode_into(black_box(&payload));
            black_box(dynamic.values());
        }
    });
    // The client's per-package work as the session does it: a data package of the recipe
    // set up is recognised by its header (`DataHeader`), anything else goes through the
    // frame parse and message decode; then the decode. At the stream's pace each read
    // brings one package, and the session's receive buffer, drained, takes it at its
    // front (its values 8-byte aligned): the same memory every time, as the floor's
    // payload is.
    let one = received.buffered();
    bench.case(FRAMES, |n| {
        for _ in 0..n {
            let mut used = 0;
            let decoded = stream::parse_and_decode_as(black_box(one), &mut used);
            black_box(&decoded);
            black_box(used);
        }
    });
    // Context: moving the decoded struct into another aggregate copies its 272 bytes, as
    // `from_payload(…).map_err(…)` would; `from_payload_as` is there to avoid it.
    bench.case(FRAMES_TUPLE, |n| {
        for _ in 0..n {
            let decoded = stream::parse_and_decode(black_box(one));
            black_box(&decoded);
        }
    });
    bench.case(FRAMES_INTO, |n| {
        for _ in 0..n {
            let mut used = 0;
            let decoded = stream::parse_and_decode_into(black_box(one), &mut frame_into, &mut used);
            // A caller branches on the result (`recv_into(..)?`); it keeps the values.
            if let Err(e) = decoded {
                black_box(e);
            }
            black_box(&frame_into);
            black_box(used);
        }
    });
    // Context: a client that fell behind finds many packages in one read and walks them.
    // The floor walking the same memory is the fair base there; against the floor on one
    // hot payload, the walk itself costs the difference on some CPUs.
    bench.case(BACKLOG_FLOOR, |n| {
        let mut pos = 0;
        for _ in 0..n {
            let values = &bytes[pos + stream::PACKAGE_LEN - Reference::PAYLOAD_SIZE..]
                [..Reference::PAYLOAD_SIZE];
            let r = floor::decode_out_of_line(black_box(values));
            black_box(&r);
            pos += stream::PACKAGE_LEN;
            if pos >= bytes.len() {
                pos = 0;
            }
        }
    });
    bench.case(BACKLOG_FRAMES_INTO, |n| {
        let mut pos = 0;
        for _ in 0..n {
            let mut used = bytes.len();
            let decoded = stream::parse_and_decode_into(
                black_box(&bytes[pos..]),
                &mut backlog_into,
                &mut used,
            );
            if let Err(e) = decoded {
                black_box(e);
            }
            black_box(&backlog_into);
            pos += used;
            if pos >= bytes.len() {
                pos = 0;
            }
        }
    });
    bench.case(ENCODE_FLOOR, |n| {
        for _ in 0..n {
            black_box(floor::encode_servo(black_box(&servo)));
        }
    });
    bench.case("encode derived: to_payload", |n| {
        for _ in 0..n {
            black_box(black_box(&servo).to_payload());
        }
    });
    bench.case("encode derived: whole package", |n| {
        let mut buf = [0u8; 128];
        for _ in 0..n {
            let payload = black_box(&servo).to_payload();
            let len = ClientMessage::DataPackage {
                recipe_id: 1,
                payload: &payload,
            }
            .encode(ProtocolVersion::V2, &mut buf);
            let _ = black_box((&buf, len));
        }
    });

    eprintln!(
        "timing {} cases, {rounds} interleaved rounds of ~{} µs each...",
        bench.names().count(),
        batch.as_micros()
    );
    bench.run(rounds, batch);

    let targets = [
        (DERIVED_INLINED, Target::Ratio(1.1)),
        (DERIVED_OUT_OF_LINE, Target::Ratio(1.05)),
        (TYPED, Target::Ratio(1.1)),
        (FRAMES, Target::Ratio(1.2)),
        (FRAMES_INTO, Target::Ratio(1.2)),
        (DYNAMIC, Target::Ratio(2.0)),
        (VIEW_ONE, Target::Nanos(2.0)),
    ];
    println!("reference recipe: 10 output fields, 272 bytes of payload; {rounds} rounds");
    println!("decode ratios are against `{FLOOR}`, encode ratios against `{ENCODE_FLOOR}`");
    println!(
        "{:<42} {:>9} {:>9} {:>8}  target",
        "case", "median", "fastest", "× floor"
    );
    let mut met = Vec::new();
    let mut missed = Vec::new();
    let names: Vec<&str> = bench.names().collect();
    for name in names {
        let base = if name.starts_with("encode") {
            ENCODE_FLOOR
        } else {
            FLOOR
        };
        let median = bench.median(name);
        let ratio = bench.ratio(name, base);
        let verdict = match targets.iter().find(|(n, _)| *n == name) {
            Some((_, target)) => {
                let (pass, limit) = match target {
                    Target::Ratio(limit) => (ratio <= *limit, format!("≤ {limit}× floor")),
                    Target::Nanos(limit) => (median <= *limit, format!("≤ {limit} ns")),
                };
                if pass { &mut met } else { &mut missed }.push(name);
                format!("{limit}: {}", if pass { "met" } else { "MISSED" })
            }
            None => String::new(),
        };
        println!(
            "{name:<42} {median:>7.2}ns {:>7.2}ns {ratio:>7.2}×  {verdict}",
            bench.min(name)
        );
    }
    println!(
        "context: `{BACKLOG_FRAMES_INTO}` against `{BACKLOG_FLOOR}` (the same memory walked): {:.2}×",
        bench.ratio(BACKLOG_FRAMES_INTO, BACKLOG_FLOOR)
    );
    println!("{} of {} targets met in this run", met.len(), targets.len());
    for name in &met {
        println!("  met:    {name}");
    }
    for name in &missed {
        println!("  missed: {name}");
    }
    ExitCode::SUCCESS
}
