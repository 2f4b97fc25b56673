//! `rtde bridge` and `rtde subscribe` as binaries, through a real Mosquitto: the
//! subscriber's CSV holds the simulator's values and its raw capture reads back as one;
//! bad configurations and unreachable brokers are one-line errors.

mod common;
use rtde_testkit::mosquitto;

use std::time::Duration;

use common::{Spawned, rtde, scratch};
use rtde_sim::{Motion, Sim};

#[test]
fn bridge_to_subscribe_writes_the_csv_and_a_capture_replay_reads() {
    bridge_to_subscribe("cli", "format = \"binary\"", "rtde/#");
}

/// The same recording from Sparkplug B: DDATA read back through the births.
#[test]
fn bridge_to_subscribe_over_sparkplug_writes_the_same_files() {
    bridge_to_subscribe(
        "cli-sparkplug",
        "format = \"sparkplug\"\n\n[sparkplug]\ngroup_id = \"plant\"",
        "spBv1.0/#",
    );
}

/// Two simulated robots, and a bridge configuration for them in a scratch directory of
/// the test's own, publishing to `broker` with `payload` at 125 Hz.
struct Fleet {
    _sims: rtde_sim::Fleet,
    robots: Vec<(String, std::net::SocketAddr)>,
    dir: std::path::PathBuf,
    config: std::path::PathBuf,
}

impl Fleet {
    fn new(broker: &mosquitto::Broker, test: &str, payload: &str) -> Fleet {
        Fleet::at(&broker.url(), "", test, payload)
    }

    /// The same on the broker at `url`, with `broker_extra` (lines) in `[broker]`.
    fn at(url: &str, broker_extra: &str, test: &str, payload: &str) -> Fleet {
        let sims = Sim::builder().deterministic().start_fleet(2).unwrap();
        let robots: Vec<_> = sims
            .addrs()
            .enumerate()
            .map(|(i, a)| (format!("arm-{i}"), a))
            .collect();
        let dir = scratch(test);
        let config = dir.join("fleet.toml");
        let url_line = format!("url = \"{url}\"");
        std::fs::write(
            &config,
            mosquitto::config(url, &robots, payload, 125.0).replacen(
                &url_line,
                &format!("{url_line}\n{broker_extra}"),
                1,
            ),
        )
        .unwrap();
        Fleet {
            _sims: sims,
            robots,
            dir,
            config,
        }
    }

    fn config(&self) -> &str {
        self.config.to_str().unwrap()
    }
}

/// The same over TLS to a broker whose certificate a CA of the test's own signed: the
/// bridge trusts it through `[broker] ca_file`, `rtde subscribe` through `--ca-file`.
#[cfg(feature = "tls")]
#[test]
fn bridge_to_subscribe_over_tls_trusting_a_ca_file() {
    let Some(cluster) = rtde_testkit::nats::Cluster::start_tls("cli-tls") else {
        return;
    };
    let ca = cluster.ca_file();
    let ca = ca.to_str().unwrap();
    bridge_to_subscribe_at(
        &cluster.tls_url(0),
        &format!("ca_file = \"{ca}\""),
        &["--ca-file", ca],
        "cli-tls",
        "format = \"binary\"",
        "rtde/#",
    );
}

/// `rtde subscribe` given a cluster's nodes, the first dead: it subscribes at the next
/// that answers and records every package.
#[test]
fn subscribe_takes_a_clusters_nodes_and_uses_the_first_that_answers() {
    let Some(broker) = mosquitto::Broker::start("cli-nodes") else {
        return;
    };
    // Free when asked, so nothing answers there (the OS hands ports out in turn).
    let dead = format!("mqtt://127.0.0.1:{}", mosquitto::free_port());
    bridge_to_subscribe_at(
        &broker.url(),
        "",
        &["--broker", &dead],
        "cli-nodes",
        "format = \"binary\"",
        "rtde/#",
    );
}

/// A cluster's nodes are all plain or all TLS (only an rtde with TLS takes `mqtts://`).
#[cfg(feature = "tls")]
#[test]
fn subscribe_refuses_nodes_over_tls_and_not_mixed_over_tls() {
    let mixed = common::run(&[
        "subscribe",
        "--broker",
        "mqtt://127.0.0.1",
        "--broker",
        "mqtts://127.0.0.1",
        "-o",
        "unused",
    ]);
    assert_eq!(
        mixed.one_line_error(),
        "error: every --broker is mqtt:// or every one mqtts://, not a mix"
    );
}

/// `rtde bridge` with `payload` for a second, `rtde subscribe` to `filter` until the
/// bridge goes offline: each robot's CSV and raw capture hold every package.
fn bridge_to_subscribe(test: &str, payload: &str, filter: &str) {
    let Some(broker) = mosquitto::Broker::start(test) else {
        return;
    };
    bridge_to_subscribe_at(&broker.url(), "", &[], test, payload, filter);
}

/// [`bridge_to_subscribe`] on the broker at `url`, with `broker_extra` in the bridge's
/// `[broker]` and `subscribe_extra` before `rtde subscribe`'s `--broker URL`.
fn bridge_to_subscribe_at(
    url: &str,
    broker_extra: &str,
    subscribe_extra: &[&str],
    test: &str,
    payload: &str,
    filter: &str,
) {
    let fleet = Fleet::at(url, broker_extra, test, payload);
    let (robots, dir) = (fleet.robots.as_slice(), &fleet.dir);
    let out = dir.join("rec");
    let mut cmd = rtde();
    cmd.arg("subscribe")
        .args(subscribe_extra)
        .args(["--broker", url])
        .args([
            "--until-offline",
            "--topic",
            filter,
            "--client-id",
            "cli-sub",
            "-o",
        ])
        .arg(&out);
    let mut sub = Spawned::new(cmd);
    let line = sub.line(Duration::from_secs(10));
    assert!(line.contains(&format!("subscribed to {filter}")), "{line}");

    let bridge = common::run(&["bridge", fleet.config(), "--duration", "1s"]);
    let said = bridge.ok();
    assert!(said.contains("arm-1: "), "{said}");
    assert!(sub.wait(Duration::from_secs(20)).success());

    for (name, _) in robots {
        let csv = std::fs::read_to_string(out.join(format!("{name}.csv"))).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("timestamp,actual_q_0,actual_q_1,actual_q_2,actual_q_3,actual_q_4,actual_q_5")
        );
        let rows: Vec<Vec<f64>> = lines
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert!(
            rows.len() >= 100,
            "{name}: {} rows in a second at 125 Hz",
            rows.len()
        );
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(row[1..], Motion::DEFAULT.position(row[0]), "{name} row {k}");
            if k > 0 {
                assert_eq!(
                    ((row[0] - rows[k - 1][0]) * 500.0).round(),
                    4.0,
                    "{name}: no gap"
                );
            }
        }
        // The capture is what `rtde replay` reads: the same packages, in order.
        let raw = std::fs::read(out.join(format!("{name}.rtde"))).unwrap();
        let capture = rtde_record::capture::parse(&raw).unwrap();
        assert_eq!(capture.len(), rows.len(), "{name}");
        assert_eq!(capture.header.frequency, 125.0);
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(
                capture.payload(k)[..8],
                row[0].to_be_bytes(),
                "{name} package {k}"
            );
        }
    }
}

/// `rtde subscribe` started while `rtde bridge` has long been publishing, then stopped
/// and started again (same client id) while it still publishes: neither run reports the
/// packages published before it joined as missing, and both succeed.
#[test]
fn subscribe_joining_late_and_rejoining_reports_no_loss() {
    let Some(broker) = mosquitto::Broker::start("cli-late") else {
        return;
    };
    let fleet = Fleet::new(&broker, "cli-late", "format = \"json\"");
    let (robots, dir) = (fleet.robots.as_slice(), &fleet.dir);
    let mut cmd = rtde();
    cmd.args(["bridge", fleet.config(), "--duration", "6s"]);
    let mut bridge = Spawned::new(cmd);
    // Joins late for sure: the bridge has published a hundred packages of a robot.
    published(&broker, 100);
    let url = broker.url();
    let subscribe = |out: &str, until: &[&str]| {
        let out = dir.join(out);
        let mut args = vec![
            "subscribe",
            "--broker",
            &url,
            "--client-id",
            "cli-late-sub",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(until);
        let run = common::run(&args);
        let said = run.ok().to_owned();
        for (name, _) in robots {
            let summary = said
                .lines()
                .find(|l| l.starts_with(&format!("rtde subscribe: {name}: ")))
                .unwrap_or_else(|| panic!("no summary of {name}: {said}"));
            assert!(summary.contains(" 0 missing"), "{summary}");
        }
    };
    subscribe("first", &["--duration", "1s"]);
    subscribe("again", &["--until-offline"]);
    assert!(bridge.wait(Duration::from_secs(20)).success());
}

/// A Sparkplug B message whose `seq` does not follow its node's previous one means
/// messages were lost on the way: `rtde subscribe` says how many.
#[test]
fn subscribe_says_how_many_sparkplug_messages_came_out_of_sequence() {
    use rtde_bridge::sparkplug::{proto::Payload, topic};
    use rumqttc::{Client, Event, MqttOptions, QoS};

    let Some(broker) = mosquitto::Broker::start("cli-seq-gap") else {
        return;
    };
    let out = scratch("cli-seq-gap").join("rec");
    let mut cmd = rtde();
    cmd.args([
        "subscribe",
        "--broker",
        &broker.url(),
        "--topic",
        "spBv1.0/#",
        "--duration",
        "2s",
        "-o",
    ])
    .arg(&out);
    let mut sub = Spawned::new(cmd);
    let line = sub.line(Duration::from_secs(10));
    assert!(line.contains("subscribed to spBv1.0/#"), "{line}");
    // A node's birth (seq 0), then a device death with seq 3: 1 and 2 never came.
    let (client, mut connection) = Client::new(
        MqttOptions::new("seq-gap-node", "127.0.0.1", broker.port),
        10,
    );
    for (kind, device, seq) in [("NBIRTH", None, 0), ("DDEATH", Some("arm-0"), 3)] {
        let payload = Payload {
            timestamp: Some(1),
            metrics: Vec::new(),
            seq: Some(seq),
        };
        client
            .publish(
                topic("g", kind, "node", device),
                QoS::AtLeastOnce,
                false,
                payload.encode(),
            )
            .unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut acked = 0;
    while acked < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the broker took nothing"
        );
        if let Ok(Ok(Event::Incoming(rumqttc::Packet::PubAck(_)))) =
            connection.recv_timeout(Duration::from_millis(100))
        {
            acked += 1;
        }
    }
    let _ = client.disconnect();
    let run = common::finish(sub, Duration::from_secs(20));
    let said = run.ok();
    assert!(
        said.contains("rtde subscribe: 1 Sparkplug B message out of sequence"),
        "{said}"
    );
}

/// Waits until the bridge publishing to `broker` has published package `first` of a
/// robot (at most 20 s).
fn published(broker: &mosquitto::Broker, first: u64) {
    let probe = rtde_bridge::Subscriber::connect(
        "127.0.0.1",
        broker.port,
        "probe",
        &["rtde/#".to_owned()],
        Duration::from_secs(5),
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no batch from the bridge"
        );
        if let Some(rtde_bridge::Message::Batch { batch, .. }) =
            probe.recv_timeout(Duration::from_millis(100))
            && batch.first >= first
        {
            break;
        }
    }
    probe.close();
}

/// The broker stops answering while `rtde bridge` publishes, then dies and comes back
/// without the bridge's session: the bridge says why it lost the broker in words (and,
/// with `--verbose`, the MQTT client's account), and the packages lost in flight as soon
/// as the broker is back, before it stops.
#[test]
fn bridge_says_why_the_broker_was_lost_and_the_losses_in_flight_when_they_happen() {
    let Some(mut broker) = mosquitto::Broker::start("cli-in-flight") else {
        return;
    };
    let fleet = Fleet::new(&broker, "cli-in-flight", "batch_ms = 10");
    let robots = fleet.robots.as_slice();
    let mut cmd = rtde();
    cmd.args(["bridge", fleet.config(), "--duration", "4s", "--verbose"]);
    let bridge = Spawned::new(cmd);
    published(&broker, 20);
    broker.freeze();
    std::thread::sleep(Duration::from_millis(300));
    broker.crash();
    broker.forget();
    broker.restart();
    let run = common::finish(bridge, Duration::from_secs(20));
    let said: Vec<&str> = run.ok().lines().collect();
    let at = |text: &str| {
        said.iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no {text:?} in {said:#?}"))
    };
    // A frozen broker's socket holds unread data: killed, it resets the connection.
    let lost = at("rtde bridge: the broker closed the connection (connection reset); queueing");
    let detail = at("rtde bridge:   the MQTT client said: ");
    let in_flight = at("packages lost in flight with a broken broker connection so far (arm-0 ");
    let stopping = at("rtde bridge: stopping");
    // The broker came back without the session: what it had not acknowledged is lost,
    // not re-sent.
    let reconnections = at(
        "rtde bridge: broker: 2 connections, 0 failovers to another node, 0 publications re-sent",
    );
    assert!(
        lost < detail && detail < in_flight && in_flight < stopping && stopping < reconnections,
        "{said:#?}"
    );
    assert!(said[detail].contains("os error"), "{}", said[detail]);
    for (name, _) in robots {
        let summary = said[at(&format!("rtde bridge: {name}: "))];
        assert!(!summary.contains(" 0 lost in flight"), "{summary}");
    }
}

#[test]
fn a_malformed_config_is_one_line_naming_the_line_and_key() {
    let dir = scratch("bridge-bad-config");
    let config = dir.join("bad.toml");
    std::fs::write(
        &config,
        "[broker]\nurl = \"mqtt://127.0.0.1:1883\"\n\n[[robots]]\nname = \"a\"\naddress = \"127.0.0.1\"\nfields = [\"actual_tcp_pose\"]\nfrequency = 125\n",
    )
    .unwrap();
    let run = common::run(&["bridge", config.to_str().unwrap()]);
    assert_eq!(
        run.one_line_error(),
        format!(
            "error: {}:7: robots[0].fields: unknown RTDE output field `actual_tcp_pose`; did you mean `actual_TCP_pose`?",
            config.display()
        )
    );
}

#[test]
fn an_unreachable_broker_is_one_line() {
    let dir = scratch("bridge-no-broker");
    let config = dir.join("fleet.toml");
    let port = mosquitto::free_port();
    let url = format!("mqtt://127.0.0.1:{port}");
    std::fs::write(
        &config,
        mosquitto::config(
            &url,
            &[("a".into(), "127.0.0.1:30004".parse().unwrap())],
            "",
            125.0,
        ),
    )
    .unwrap();
    let run = common::run(&["bridge", config.to_str().unwrap(), "--broker-timeout", "1s"]);
    // In words, not the MQTT client's (`I/O: Connection refused (os error 111)`).
    assert_eq!(
        run.one_line_error(),
        format!("error: cannot reach the broker at {url}: connection refused")
    );
}
