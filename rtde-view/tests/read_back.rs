//! An MCAP recording read back with the `mcap` crate against the raw capture recorded in
//! the same run: every value bit for bit, each log and publish time, the metadata record
//! and the gap channel (packages the simulator skips, and a reconnection).

use std::io::Cursor;
use std::time::{SystemTime, UNIX_EPOCH};

use rtde_core::capture::{self, Header};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
use rtde_sim::{Fault, Sim};
use rtde_view::convert::{self, Package};
use rtde_view::{GAPS_TOPIC, Recorder};

/// The reference recipe, and one field of every other wire type the simulator serves.
const FIELDS: [&str; 16] = [
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
const FREQUENCY: f64 = 500.0;
/// Packages per connection; the simulator leaves out every 97th.
const PER_CONNECTION: usize = 400;
const SKIP_EVERY: u64 = 97;

fn now_us() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(d.as_micros()).unwrap()
}

fn timestamp(payload: &[u8]) -> f64 {
    f64::from_be_bytes(payload[..8].try_into().unwrap())
}

#[test]
fn every_value_time_gap_and_the_metadata_read_back() {
    let sim = Sim::builder()
        .controller_version("5.21.0")
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
    let header = Header {
        protocol: client.protocol_version(),
        controller: client.controller_version(),
        frequency: FREQUENCY,
        recipe_id: client.output_recipe_id(),
        started_unix_micros: now_us(),
        fields: recipe.fields().to_vec(),
    };
    let mut raw = capture::Writer::new(Cursor::new(Vec::new()), &header).unwrap();
    let mut mcap = Recorder::new(Cursor::new(Vec::new()), &header, "arm-7").unwrap();
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

    // Values bit for bit, and the times.
    let mut read: Vec<Package> = Vec::new();
    let summary = convert::read_packages(&bytes, |_, p| {
        read.push(p);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        (summary.packages, summary.cut_short),
        (raw.len() as u64, None)
    );
    let mut mapping = (0, 0.0);
    for (i, package) in read.iter().enumerate() {
        let mut bytes = vec![0u8; raw.header.payload_size()];
        let mut at = 0;
        for v in &package.values {
            at += v.write_be(&mut bytes[at..]).unwrap();
        }
        assert_eq!(bytes, raw.payload(i), "package {i}");
        let t = timestamp(raw.payload(i));
        let (arrived, fresh) = arrivals[i];
        if i == 0 || fresh {
            mapping = (arrived, t);
        }
        #[allow(clippy::cast_possible_truncation)]
        let host_us = mapping.0 + ((t - mapping.1) * 1e6).round() as i64;
        assert_eq!(
            package.log_time,
            u64::try_from(host_us).unwrap() * 1000,
            "package {i}"
        );
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let publish = (t * 1e9).round() as u64;
        assert_eq!(package.publish_time, publish, "package {i}");
    }

    // The gaps: every hole in the capture's timestamps, and the reconnection.
    let tick = 1.0 / 500.0;
    let mut expected = Vec::new();
    for i in 1..raw.len() {
        let (a, b) = (timestamp(raw.payload(i - 1)), timestamp(raw.payload(i)));
        // A new connection of the unpaced simulator may start its clock anew: no gap.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let missing = (((b - a) / tick).round() as u64).saturating_sub(1);
        let reconnection = arrivals[i].1;
        if missing > 0 || reconnection {
            let kind = if reconnection {
                "reconnection"
            } else {
                "skipped"
            };
            expected.push((kind.to_owned(), missing, a, b));
        }
    }
    let gaps: Vec<(String, u64, f64, f64)> = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == GAPS_TOPIC)
        .map(|m| {
            assert_eq!(m.channel.schema.as_ref().unwrap().name, "rtde.Gap");
            let j: serde_json::Value = serde_json::from_slice(&m.data).unwrap();
            (
                j["kind"].as_str().unwrap().to_owned(),
                j["packages"].as_u64().unwrap(),
                j["after"].as_f64().unwrap(),
                j["before"].as_f64().unwrap(),
            )
        })
        .collect();
    let skipped: u64 = expected
        .iter()
        .filter(|g| g.0 == "skipped")
        .map(|g| g.1)
        .sum();
    assert!(skipped >= 7, "the simulator skipped {skipped}");
    assert_eq!(gaps, expected);
    assert_eq!(counts.skipped, skipped);
    assert_eq!(counts.gaps, expected.len() as u64);

    // The metadata record.
    let meta = convert::metadata(&bytes).unwrap();
    for (key, value) in [
        ("robot", "arm-7"),
        ("controller", "5.21.0"),
        ("protocol", "2"),
        ("frequency", "500"),
        ("recipe_id", "1"),
        ("fields", &FIELDS.join(",")),
    ] {
        assert_eq!(meta.get(key).map(String::as_str), Some(value), "{key}");
    }
    assert!(meta["types"].starts_with("DOUBLE,VECTOR6D,VECTOR6D,"));

    // The recipe's channel: protobuf, with the descriptor made from the recipe.
    let first = mcap::MessageStream::new(&bytes)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let schema = first.channel.schema.as_ref().unwrap();
    assert_eq!(
        (
            first.channel.message_encoding.as_str(),
            schema.name.as_str(),
            schema.encoding.as_str()
        ),
        ("protobuf", "rtde.Outputs", "protobuf")
    );
    sim.shutdown().unwrap();
}
