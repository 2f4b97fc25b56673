//! An MCAP recording read back with the `mcap` crate against the raw capture recorded in
//! the same run: every value bit for bit, each log and publish time, the metadata record
//! and the gap channel (packages the simulator skips, and a reconnection).

mod common;

use rtde_view::GAPS_TOPIC;
use rtde_view::convert::{self, Package};

use common::{FIELDS, timestamp};

#[test]
fn every_value_time_gap_and_the_metadata_read_back() {
    let common::Recording {
        mcap: bytes,
        raw,
        arrivals,
        counts,
    } = common::record(false);
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
    for (i, &(_, reconnection)) in arrivals.iter().enumerate().skip(1) {
        let (a, b) = (timestamp(raw.payload(i - 1)), timestamp(raw.payload(i)));
        // A new connection of the unpaced simulator may start its clock anew: no gap.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let missing = (((b - a) / tick).round() as u64).saturating_sub(1);
        if missing > 0 || reconnection {
            let kind = if reconnection {
                "reconnection"
            } else {
                "skipped"
            };
            expected.push((kind.to_owned(), missing, a, b));
        }
    }
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if m.channel.topic == GAPS_TOPIC {
            let schema = m.channel.schema.as_ref().unwrap();
            assert_eq!(
                (schema.name.as_str(), schema.encoding.as_str()),
                ("rtde.Gap", "protobuf")
            );
        }
    }
    // Decoded by the descriptor in the file.
    let mut gaps: Vec<(String, u64, f64, f64)> = Vec::new();
    convert::read_numbers(&bytes, |m| {
        if m.topic == GAPS_TOPIC {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let packages = m.number("packages").unwrap() as u64;
            gaps.push((
                m.text("kind").unwrap().to_owned(),
                packages,
                m.number("after").unwrap(),
                m.number("before").unwrap(),
            ));
        }
    })
    .unwrap();
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
}

/// Every message but the link frames and TCP pose, decoded: what a conversion keeps.
fn kept(bytes: &[u8]) -> Vec<convert::Message> {
    let mut all = Vec::new();
    convert::read_numbers(bytes, |m| {
        if m.topic != "/tf" && m.topic != "/tcp_pose" {
            all.push(m);
        }
    })
    .unwrap();
    all
}

#[test]
fn a_recording_converted_again_keeps_its_times_gaps_and_reconnection() {
    let recording = common::record(false);
    let options = rtde_view::RecorderOptions::new().frames(false);
    let (again, read) =
        convert::mcap_to_mcap(&recording.mcap, std::io::Cursor::new(Vec::new()), &options).unwrap();
    assert_eq!(read.packages, recording.raw.len() as u64);
    let (before, after) = (kept(&recording.mcap), kept(&again.into_inner()));
    assert!(
        before
            .iter()
            .any(|m| m.text("kind") == Some("reconnection"))
    );
    assert_eq!(after, before);
}
