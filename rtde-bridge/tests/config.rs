//! Every configuration mistake is one line naming the file, the line and the key.

use std::time::Duration;

use rtde_bridge::{Config, Format};

const GOOD: &str = r#"
[broker]
url = "mqtt://127.0.0.1:1884"
client_id = "cell-7"
username = "bridge"
password = "secret"
qos = 0

[topics]
data = "plant/{robot}/rtde"

[payload]
format = "binary"
batch_packages = 20
batch_ms = 5
queue_packages = 1000

[[robots]]
name = "arm-1"
address = "10.0.0.1"
preset = "tcp"
frequency = 500

[[robots]]
name = "arm-2"
address = "10.0.0.2:30010"
fields = ["actual_q", "timestamp", "robot_mode"]
frequency = 125.5
"#;

#[test]
fn a_good_configuration_reads_with_defaults_filled_in() {
    let c = Config::parse(GOOD, "fleet.toml").unwrap();
    assert_eq!(
        (
            c.broker.host.as_str(),
            c.broker.port,
            c.broker.tls.is_some()
        ),
        ("127.0.0.1", 1884, false)
    );
    assert_eq!(c.broker.client_id, "cell-7");
    assert_eq!(
        c.broker.credentials,
        Some(("bridge".into(), "secret".into()))
    );
    assert!(!c.broker.qos1);
    assert_eq!(c.broker.keep_alive, Duration::from_secs(5));
    assert_eq!(c.broker.connections, 1);
    assert_eq!(c.topics.data_of("arm-1"), "plant/arm-1/rtde");
    assert_eq!(c.topics.status_of("arm-1"), "rtde/arm-1/status");
    assert_eq!(c.topics.bridge_of("cell-7"), "rtde/bridges/cell-7");
    assert_eq!(c.payload.format, Format::Binary);
    assert_eq!(c.payload.batch_packages, 20);
    assert_eq!(c.payload.batch_time, Duration::from_millis(5));
    assert_eq!(c.payload.queue_packages, 1000);
    assert_eq!(
        c.robots[0].fields,
        [
            "timestamp",
            "actual_TCP_pose",
            "actual_TCP_speed",
            "actual_TCP_force"
        ]
    );
    // `timestamp` goes first, where the time mapping and the gap count read it.
    assert_eq!(c.robots[1].fields, ["timestamp", "actual_q", "robot_mode"]);
    assert_eq!(
        c.robots[0].socket_addr().unwrap().to_string(),
        "10.0.0.1:30004"
    );
    assert_eq!(
        c.robots[1].socket_addr().unwrap().to_string(),
        "10.0.0.2:30010"
    );
    assert_eq!(c.robots[1].frequency, 125.5);
}

/// `GOOD` with `from` replaced by `to`: the error.
fn mistake(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    Config::parse(&GOOD.replacen(from, to, 1), "fleet.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn mistakes_name_the_line_and_key() {
    let cases = [
        (
            "qos = 0",
            "qos = 2",
            "fleet.toml:7: broker.qos: QoS 2 is not offered: use 0 or 1",
        ),
        (
            "qos = 0",
            "qos = \"one\"",
            "fleet.toml:7: broker.qos: invalid type: string \"one\", expected i64",
        ),
        (
            "qos = 0",
            "qos = 0\nretain = true",
            "fleet.toml:8: broker.retain: unknown field `retain`, expected one of `url`, `urls`, `client_id`, `username`, `password`, `qos`, `keep_alive_secs`, `ca_file`, `connections`",
        ),
        (
            "url = \"mqtt://127.0.0.1:1884\"",
            "url = \"http://127.0.0.1\"",
            "fleet.toml:3: broker.url: `http://127.0.0.1`: use mqtt://HOST[:PORT] or mqtts://HOST[:PORT]",
        ),
        (
            "url = \"mqtt://127.0.0.1:1884\"",
            "url = \"mqtt://127.0.0.1:0\"",
            "fleet.toml:3: broker.url: `mqtt://127.0.0.1:0`: the port is not 1 to 65535",
        ),
        (
            "password = \"secret\"\n",
            "",
            "fleet.toml:5: broker.username: a username needs a password",
        ),
        (
            "client_id = \"cell-7\"",
            "client_id = \"a/b\"",
            "fleet.toml:4: broker.client_id: `a/b` cannot name the bridge's topic: not empty, no `/`, `+`, `#`",
        ),
        (
            "data = \"plant/{robot}/rtde\"",
            "data = \"plant/+/rtde\"",
            "fleet.toml:10: topics.data: `plant/+/rtde` is no topic to publish to: no `+` or `#`, not empty",
        ),
        (
            "data = \"plant/{robot}/rtde\"",
            "data = \"plant/all\"",
            "fleet.toml:10: topics.data: `plant/all` must contain `{robot}`, or every robot would share it",
        ),
        (
            "format = \"binary\"",
            "format = \"xml\"",
            "fleet.toml:13: payload.format: unknown format `xml`: use \"json\", \"binary\" or \"sparkplug\"",
        ),
        (
            "batch_ms = 5",
            "batch_ms = 0",
            "fleet.toml:15: payload.batch_ms: 0 is out of range: use 1 to 60000",
        ),
        (
            "frequency = 500",
            "frequency = 0",
            "fleet.toml:22: robots[0].frequency: 0 Hz is not an output frequency (0 < f <= 500)",
        ),
        (
            "frequency = 125.5",
            "frequency = \"fast\"",
            "fleet.toml:28: robots[1].frequency: invalid type: string \"fast\", expected f64",
        ),
        (
            "preset = \"tcp\"",
            "preset = \"arm\"",
            "fleet.toml:21: robots[0].preset: unknown preset `arm`: use one of joints, tcp, status",
        ),
        (
            "preset = \"tcp\"",
            "preset = \"tcp\"\nfields = [\"actual_q\"]",
            "fleet.toml:21: robots[0].preset: give fields or a preset, not both",
        ),
        (
            "\"robot_mode\"",
            "\"robotmode\"",
            "fleet.toml:27: robots[1].fields: unknown RTDE output field `robotmode`; did you mean `robot_mode`?",
        ),
        (
            "\"robot_mode\"",
            "\"actual_q\"",
            "fleet.toml:27: robots[1].fields: `actual_q` is listed twice",
        ),
        (
            "name = \"arm-2\"",
            "name = \"arm-1\"",
            "fleet.toml:25: robots[1].name: a robot named `arm-1` is listed before",
        ),
        (
            "name = \"arm-2\"",
            "name = \"arm/2\"",
            "fleet.toml:25: robots[1].name: `arm/2` cannot be a topic level: 1 to 256 bytes, no `/`, `+`, `#`",
        ),
        (
            "address = \"10.0.0.1\"\n",
            "",
            "fleet.toml:18: robots[0]: missing field `address`",
        ),
        (
            "[broker]",
            "[broker",
            "fleet.toml:2: broker: unclosed table, expected `]`",
        ),
    ];
    for (from, to, expected) in cases {
        assert_eq!(mistake(from, to), expected, "{from} -> {to}");
    }
}

#[test]
fn a_configuration_without_robots_or_broker_says_what_is_missing() {
    let e = Config::parse("[broker]\nurl = \"mqtt://127.0.0.1\"\n", "f.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:1: robots: no robot: add a [[robots]] table with name, address, fields or preset, frequency"
    );
    let e = Config::parse("", "f.toml").unwrap_err();
    assert_eq!(e.to_string(), "f.toml:1: missing field `broker`");
    let e = Config::read("/nonexistent/fleet.toml".as_ref()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/fleet.toml:0: cannot read the file: "),
        "{e}"
    );
}

#[cfg(not(feature = "tls"))]
#[test]
fn tls_needs_the_feature() {
    let e = mistake("mqtt://127.0.0.1:1884", "mqtts://127.0.0.1");
    assert_eq!(
        e,
        "fleet.toml:3: broker.url: `mqtts://127.0.0.1`: TLS needs rtde-bridge built with the `tls` feature (cargo install --features tls)"
    );
}

#[test]
fn a_ca_file_is_for_tls_only() {
    let e = mistake("qos = 0", "qos = 0\nca_file = \"ca.pem\"");
    assert_eq!(
        e,
        "fleet.toml:8: broker.ca_file: a CA file is for TLS: use mqtts:// URLs, or remove it"
    );
}

/// The CA file is read with the configuration: one that cannot be read is the
/// configuration's mistake, and one that can is what the connection trusts.
#[cfg(feature = "tls")]
#[test]
fn a_ca_file_is_read_with_the_configuration() {
    let tls = GOOD.replacen("mqtt://127.0.0.1:1884", "mqtts://127.0.0.1", 1);
    let missing = "/nonexistent/rtde-ca.pem";
    let e = Config::parse(
        &tls.replacen("qos = 0", &format!("qos = 0\nca_file = \"{missing}\""), 1),
        "fleet.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with(&format!(
            "fleet.toml:8: broker.ca_file: cannot read `{missing}`: "
        )),
        "{e}"
    );
    let ca = std::env::temp_dir().join(format!("rtde-ca-{}.pem", std::process::id()));
    std::fs::write(&ca, b"-----BEGIN CERTIFICATE-----\n").unwrap();
    let c = Config::parse(
        &tls.replacen(
            "qos = 0",
            &format!("qos = 0\nca_file = \"{}\"", ca.display()),
            1,
        ),
        "fleet.toml",
    )
    .unwrap();
    let _ = std::fs::remove_file(&ca);
    assert_eq!(
        c.broker.tls.as_ref().and_then(rtde_bridge::Tls::ca),
        Some(&b"-----BEGIN CERTIFICATE-----\n"[..])
    );
}

const SPARKPLUG: &str = r#"
[broker]
url = "mqtt://127.0.0.1:1884"
client_id = "cell-7"

[payload]
format = "sparkplug"

[sparkplug]
group_id = "plant"

[[robots]]
name = "arm-1"
address = "10.0.0.1"
preset = "joints"
frequency = 500

[[robots]]
name = "arm-2"
address = "10.0.0.2"
preset = "joints"
frequency = 500
"#;

#[test]
fn sparkplug_names_the_edge_node_and_publishes_with_qos_0() {
    let c = Config::parse(SPARKPLUG, "fleet.toml").unwrap();
    assert_eq!(c.payload.format, Format::Sparkplug);
    let sp = c.sparkplug.unwrap();
    assert_eq!(
        (sp.group_id.as_str(), sp.edge_node_id.as_str()),
        ("plant", "cell-7")
    );
    assert!(!c.broker.qos1, "births and data go with QoS 0");
    let c = Config::parse(
        &SPARKPLUG.replace(
            "group_id = \"plant\"",
            "group_id = \"plant\"\nedge_node_id = \"b-1\"\n",
        ),
        "fleet.toml",
    )
    .unwrap();
    assert_eq!(c.sparkplug.unwrap().edge_node_id, "b-1");
    assert_eq!(Config::parse(GOOD, "fleet.toml").unwrap().sparkplug, None);
}

/// What Sparkplug B forbids is refused where it is written.
#[test]
fn sparkplug_refuses_what_the_specification_forbids() {
    let sparkplug_mistake = |from: &str, to: &str| {
        assert!(SPARKPLUG.contains(from), "{from}");
        Config::parse(&SPARKPLUG.replacen(from, to, 1), "fleet.toml")
            .unwrap_err()
            .to_string()
    };
    let cases = [
        (
            "client_id = \"cell-7\"",
            "client_id = \"cell-7\"\nqos = 1",
            "fleet.toml:5: broker.qos: Sparkplug B publishes births and data with QoS 0: remove qos or set it to 0",
        ),
        (
            "[payload]",
            "[topics]\ndata = \"x/{robot}\"\n\n[payload]",
            "fleet.toml:6: topics: Sparkplug B fixes its topics (spBv1.0/GROUP/TYPE/EDGE_NODE/ROBOT): remove [topics]",
        ),
        (
            "[sparkplug]\ngroup_id = \"plant\"\n",
            "",
            "fleet.toml:7: payload.format: Sparkplug B needs a [sparkplug] table with group_id = \"...\"",
        ),
        (
            "group_id = \"plant\"",
            "group_id = \"plant/a\"",
            "fleet.toml:10: sparkplug.group_id: `plant/a` cannot be a Sparkplug id: not empty, no `/`, `+`, `#`",
        ),
        (
            "group_id = \"plant\"",
            "group_id = \"plant\"\nedge_node_id = \"\"",
            "fleet.toml:11: sparkplug.edge_node_id: `` cannot be a Sparkplug id: not empty, no `/`, `+`, `#`",
        ),
        (
            "group_id = \"plant\"",
            "group = \"plant\"",
            "fleet.toml:10: sparkplug.group: unknown field `group`, expected `group_id` or `edge_node_id`",
        ),
        (
            "name = \"arm-2\"",
            "name = \"ARM-1\"",
            "fleet.toml:19: robots[1].name: `ARM-1` differs from another robot's name only in case, which Sparkplug B device ids should not",
        ),
        (
            "client_id = \"cell-7\"",
            "client_id = \"cell-7\"\nconnections = 2",
            "fleet.toml:5: broker.connections: a Sparkplug B edge node is one MQTT session: remove connections or set it to 1",
        ),
        (
            "format = \"sparkplug\"",
            "format = \"json\"",
            "fleet.toml:9: sparkplug: a [sparkplug] table needs payload.format = \"sparkplug\"",
        ),
    ];
    for (from, to, expected) in cases {
        assert_eq!(sparkplug_mistake(from, to), expected, "{from} -> {to}");
    }
}

/// A cluster's nodes in `urls`, in order, the first also `host` and `port`; `url` and
/// `urls` together, an empty list, neither, or a mix of TLS and plain are each one line.
#[test]
fn a_clusters_nodes_are_listed_in_urls_instead_of_url() {
    let with = |broker: &str| {
        format!(
            "[broker]\n{broker}\n\n[[robots]]\nname = \"a\"\naddress = \"10.0.0.1\"\npreset = \"joints\"\nfrequency = 125\n"
        )
    };
    let c = Config::parse(
        &with("urls = [\"mqtt://10.0.0.5:1884\", \"mqtt://node-b\", \"mqtt://[::1]:1886\"]"),
        "f.toml",
    )
    .unwrap();
    assert_eq!(
        c.broker.nodes,
        [
            ("10.0.0.5".to_owned(), 1884),
            ("node-b".to_owned(), 1883),
            ("::1".to_owned(), 1886)
        ]
    );
    assert_eq!((c.broker.host.as_str(), c.broker.port), ("10.0.0.5", 1884));
    let single = Config::parse(&with("url = \"mqtt://10.0.0.5\""), "f.toml").unwrap();
    assert_eq!(single.broker.nodes, [("10.0.0.5".to_owned(), 1883)]);
    let mistakes = [
        (
            "url = \"mqtt://a\"\nurls = [\"mqtt://b\"]",
            "f.toml:2: broker.url: give `url` (one broker) or `urls` (a cluster's nodes), not both",
        ),
        (
            "urls = []",
            "f.toml:2: broker.urls: name at least one broker",
        ),
        (
            "client_id = \"x\"",
            "f.toml:1: broker: missing field `url` (one broker) or `urls` (a cluster's nodes)",
        ),
        (
            "urls = [\"mqtt://a\", \"http://b\"]",
            "f.toml:2: broker.urls[1]: `http://b`: use mqtt://HOST[:PORT] or mqtts://HOST[:PORT]",
        ),
    ];
    for (broker, expected) in mistakes {
        let e = Config::parse(&with(broker), "f.toml").unwrap_err();
        assert_eq!(e.to_string(), expected, "{broker}");
    }
}

/// `connections` opens that many MQTT sessions, from 1 to 64, each with a client id of
/// its own.
#[test]
fn connections_name_the_sessions_from_1_to_64() {
    let c = Config::parse(
        &GOOD.replacen("qos = 0", "qos = 0\nconnections = 64", 1),
        "f.toml",
    )
    .unwrap();
    assert_eq!(c.broker.connections, 64);
    assert_eq!(c.broker.session_client_id(0), "cell-7");
    assert_eq!(c.broker.session_client_id(63), "cell-7-63");
    for (value, expected) in [
        (
            "0",
            "fleet.toml:8: broker.connections: 0 is out of range: use 1 to 64",
        ),
        (
            "65",
            "fleet.toml:8: broker.connections: 65 is out of range: use 1 to 64",
        ),
    ] {
        assert_eq!(
            mistake("qos = 0", &format!("qos = 0\nconnections = {value}")),
            expected
        );
    }
}
