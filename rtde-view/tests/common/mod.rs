//! The recording both MCAP read-back tests check: the simulator streamed into an MCAP
//! file and a raw capture in the same run, with skipped packages and a reconnection.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::io::Cursor;
use std::time::{SystemTime, UNIX_EPOCH};

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use rtde_record::capture::{self, Capture, Header};
use rtde_sim::{Fault, Sim};
use rtde_view::{Recorder, RecorderCounts, RecorderOptions};

/// The reference recipe, and one field of every other wire type the simulator serves.
pub const FIELDS: [&str; 16] = [
    "timestamp",
    "actual_q",
    "actual_qd",
    "actual_TCP_pose",
    "actual_TCP_speed",
    "actual_TCP_force",
    "actual_digital_input_bits",
    "actual_digital_output_bits",
    "robot_mode",
    "safety_status",
    "safety_status_bits",
    "speed_scaling",
    "actual_tool_accelerometer",
    "joint_mode",
    "output_int_register_24",
    "output_bit_register_64",
];
pub const FREQUENCY: f64 = 500.0;
/// Packages per connection; the simulator leaves out every 97th.
pub const PER_CONNECTION: usize = 400;
pub const SKIP_EVERY: u64 = 97;

fn now_us() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(d.as_micros()).unwrap()
}

/// The `timestamp` of a package of `FIELDS`.
pub fn timestamp(payload: &[u8]) -> f64 {
    f64::from_be_bytes(payload[..8].try_into().unwrap())
}

/// What one run recorded.
pub struct Recording {
    /// The MCAP file.
    pub mcap: Vec<u8>,
    /// The raw capture of the same packages.
    pub raw: Capture,
    /// Per package: when it arrived (µs since the epoch), and whether it is the first
    /// after the reconnection.
    pub arrivals: Vec<(i64, bool)>,
    /// What the recorder counted.
    pub counts: RecorderCounts,
}

/// Two connections of `PER_CONNECTION` packages each, the simulator leaving out every
/// `SKIP_EVERY`th.
pub fn record(deterministic: bool) -> Recording {
    let sim = Sim::builder()
        .controller_version("5.21.0")
        .noise(!deterministic)
        .unpaced()
        .fault(Fault::SkipEvery(SKIP_EVERY))
        .start()
        .unwrap();
    let recipe = DynamicRecipe::outputs(FIELDS).unwrap();
    let connect = || {
        let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
        client.setup_outputs(recipe.spec(), FREQUENCY).unwrap();
        client.start().unwrap();
        client
    };
    let mut client = connect();
    let header = Header::of_client(&client, &recipe).unwrap();
    let mut raw = capture::Writer::new(Cursor::new(Vec::new()), &header).unwrap();
    let options = RecorderOptions::new().robot("arm-7");
    let mut mcap = Recorder::new(Cursor::new(Vec::new()), &header, &options).unwrap();
    // Per package: when it arrived, and whether it is the first after a reconnection.
    let mut arrivals = Vec::new();
    for connection in 0..2 {
        if connection == 1 {
            client.close().unwrap();
            client = connect();
            mcap.reconnected();
        }
        for i in 0..PER_CONNECTION {
            let payload = client.recv().unwrap();
            let arrived = now_us();
            raw.package(payload).unwrap();
            mcap.package(payload, arrived).unwrap();
            arrivals.push((arrived, connection == 1 && i == 0));
        }
    }
    let counts = mcap.counts();
    let bytes = mcap.finish().unwrap().into_inner();
    let raw = capture::parse(&raw.finish(0).unwrap().into_inner()).unwrap();
    assert_eq!(raw.len(), 2 * PER_CONNECTION);

    sim.shutdown().unwrap();
    Recording {
        mcap: bytes,
        raw,
        arrivals,
        counts,
    }
}
