//! The bridge's configuration file (TOML): the broker, the topic layout, the payload,
//! and the robots.
//!
//! ```toml
//! [broker]
//! url = "mqtt://127.0.0.1:1883"     # mqtts:// with the `tls` feature
//! # or, for a broker cluster, its nodes instead of `url` (all mqtt:// or all mqtts://):
//! # urls = ["mqtt://10.0.0.1:1883", "mqtt://10.0.0.2:1883", "mqtt://10.0.0.3:1883"]
//! client_id = "cell-7-bridge"       # also names the bridge's status topic
//! username = "bridge"               # optional, with password
//! password = "secret"
//! qos = 1                           # 0 or 1 [default: 1]
//! keep_alive_secs = 5               # [default: 5]
//! # connections = 8                 # MQTT sessions, the robots shared out among them
//! #                                 # (JSON and binary formats) [default: 1]
//! # ca_file = "plant-ca.pem"        # with mqtts://: trust this CA (PEM) instead of the
//! #                                 # platform's certificates [default: the platform's]
//!
//! [topics]                          # {robot} and {client_id} are replaced
//! data = "rtde/{robot}/data"        # batches of packages [default]
//! status = "rtde/{robot}/status"    # retained online/offline per robot [default]
//! bridge = "rtde/bridges/{client_id}"  # retained birth and last will of the bridge [default]
//!
//! [payload]
//! format = "json"                   # "json", "binary" (raw-capture frames) or "sparkplug"
//!                                   # [default: json]
//! batch_packages = 50               # a batch closes at this many packages... [default: 50]
//! batch_ms = 10                     # ...or before a package would wait longer [default: 10]
//! queue_packages = 10000            # per robot, while the broker is slow or down [default: 10000]
//!
//! [sparkplug]                       # only with format = "sparkplug" (crate::sparkplug)
//! group_id = "cell-7"               # required: spBv1.0/{group_id}/...
//! edge_node_id = "bridge-1"         # [default: broker.client_id]
//!
//! [[robots]]
//! name = "arm-1"                    # a topic level: no `/`, `+`, `#`
//! address = "192.168.1.10"          # port 30004 unless given
//! preset = "joints"                 # or fields = ["actual_q", "actual_TCP_pose"]
//! frequency = 125
//! ```
//!
//! Every mistake is one line naming the file, the line and the key:
//! `bridge.toml:14: robots[0].frequency: 0 Hz is not an output frequency (0 < f <= 500)`.
//!
//! Sparkplug B fixes what the other formats leave to the file: its topics, QoS 0 for
//! births and data, a clean session. So `format = "sparkplug"` refuses `[topics]` and
//! `broker.qos = 1`, and needs a `[sparkplug]` table, which no other format takes.
//!
//! ```
//! let config = rtde_bridge::Config::parse(
//!     "[broker]\nurl = \"mqtt://127.0.0.1:1883\"\n\n[[robots]]\nname = \"a\"\naddress = \"127.0.0.1:30004\"\npreset = \"joints\"\nfrequency = 125\n",
//!     "bridge.toml",
//! )
//! .unwrap();
//! assert_eq!(config.robots[0].fields, ["timestamp", "actual_q", "actual_qd"]);
//!
//! let err = rtde_bridge::Config::parse("[broker]\nurl = \"mqtt://127.0.0.1\"\nqos = 3\n", "bridge.toml")
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "bridge.toml:3: broker.qos: QoS 3 is not offered: use 0 or 1");
//! ```

use std::collections::HashSet;
use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::Range;
use std::time::Duration;

use rtde_core::RTDE_PORT;
use rtde_core::fields::{Direction, lookup, suggest};
use serde::Deserialize;
use toml::Spanned;

use crate::tls::Tls;

/// The recipe presets a robot may name instead of listing fields.
pub const PRESETS: &[(&str, &[&str])] = &[
    ("joints", &["timestamp", "actual_q", "actual_qd"]),
    (
        "tcp",
        &[
            "timestamp",
            "actual_TCP_pose",
            "actual_TCP_speed",
            "actual_TCP_force",
        ],
    ),
    (
        "status",
        &["timestamp", "robot_mode", "safety_mode", "runtime_state"],
    ),
];

/// The highest output frequency of any controller (e-Series and later).
const MAX_FREQUENCY: f64 = 500.0;

/// A checked bridge configuration.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// The broker and how to talk to it.
    pub broker: Broker,
    /// Where messages go.
    pub topics: Topics,
    /// What messages look like, and how many may wait.
    pub payload: Payload,
    /// The robots to read, in the file's order.
    pub robots: Vec<Robot>,
    /// The Sparkplug B edge node, with `format = "sparkplug"` (and only then).
    pub sparkplug: Option<Sparkplug>,
}

/// The Sparkplug B identity of the bridge: the edge node of its robots.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sparkplug {
    /// The group in every topic: `spBv1.0/{group_id}/...`.
    pub group_id: String,
    /// The bridge's edge node id; the robots are its devices.
    pub edge_node_id: String,
}

/// The MQTT broker: one, or the nodes of a cluster.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Broker {
    /// The host name or address (of the first node of a cluster).
    pub host: String,
    /// The TCP port: 1883 unless given (8883 for `mqtts://`).
    pub port: u16,
    /// Every node, in the order given, `(host, port)`, the first being `host` and
    /// `port`: one for a single broker. The bridge connects to the first that answers,
    /// and when a connection breaks tries the next, round the list.
    pub nodes: Vec<(String, u16)>,
    /// TLS, if the URLs asked for it (`mqtts://`): trusting the authorities of `ca_file`
    /// (read with the configuration) if given, else the platform's.
    pub tls: Option<Tls>,
    /// The MQTT client id, also the bridge's name in topics.
    pub client_id: String,
    /// User name and password, when the broker wants them.
    pub credentials: Option<(String, String)>,
    /// Whether data batches are published with QoS 1 (at least once) or 0.
    pub qos1: bool,
    /// The MQTT keep-alive interval.
    pub keep_alive: Duration,
    /// How many MQTT sessions the JSON and binary formats publish on (1 to 64): robot
    /// `i` of the list goes on session `i % connections`. Session 0 has the client id
    /// and the bridge's will; session `k > 0` is `{client_id}-{k}`. A broker that
    /// stores each QoS 1 publication before it acknowledges it, one at a time per
    /// session (a NATS cluster's JetStream), takes more a second on more sessions.
    /// Sparkplug B's edge node is one session: 1.
    pub connections: usize,
}

impl Broker {
    /// The MQTT client id of session `k` (0 to [`Broker::connections`] − 1): the
    /// configured one for session 0, `{client_id}-{k}` for the others.
    ///
    /// ```
    /// let config = rtde_bridge::Config::parse(
    ///     "[broker]\nurl = \"mqtt://127.0.0.1\"\nclient_id = \"cell-7\"\nconnections = 3\n\n\
    ///      [[robots]]\nname = \"a\"\naddress = \"127.0.0.1\"\npreset = \"joints\"\nfrequency = 125\n",
    ///     "bridge.toml",
    /// )?;
    /// let ids: Vec<String> = (0..config.broker.connections)
    ///     .map(|k| config.broker.session_client_id(k))
    ///     .collect();
    /// assert_eq!(ids, ["cell-7", "cell-7-1", "cell-7-2"]);
    /// # Ok::<(), rtde_bridge::ConfigError>(())
    /// ```
    #[must_use]
    pub fn session_client_id(&self, k: usize) -> String {
        if k == 0 {
            self.client_id.clone()
        } else {
            format!("{}-{k}", self.client_id)
        }
    }
}

/// Topic templates; `{robot}` and `{client_id}` are replaced.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Topics {
    /// Batches of data packages.
    pub data: String,
    /// Each robot's retained online/offline message.
    pub status: String,
    /// The bridge's retained birth message and last will.
    pub bridge: String,
}

impl Topics {
    /// The data topic of `robot`.
    #[must_use]
    pub fn data_of(&self, robot: &str) -> String {
        self.data.replace("{robot}", robot)
    }

    /// The status topic of `robot`.
    #[must_use]
    pub fn status_of(&self, robot: &str) -> String {
        self.status.replace("{robot}", robot)
    }

    /// The bridge's own topic.
    #[must_use]
    pub fn bridge_of(&self, client_id: &str) -> String {
        self.bridge.replace("{client_id}", client_id)
    }
}

/// How batches are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// One JSON object per batch ([`crate::payload`]).
    Json,
    /// The binary batch: a small header, then the packages as raw-capture frames.
    Binary,
    /// Sparkplug B: births, deaths and data on the `spBv1.0` topics ([`crate::sparkplug`]).
    Sparkplug,
}

/// Payload, batching and buffering.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Payload {
    /// The encoding of data batches.
    pub format: Format,
    /// A batch is published once it holds this many packages...
    pub batch_packages: usize,
    /// ...or when the robot's next package would come this long or more after the
    /// batch's first, by the controller's timestamps: no package waits in a batch as long
    /// as this (a batch the robot stops filling closes once its first package is this old).
    pub batch_time: Duration,
    /// Packages each robot may have waiting for the broker; past it the oldest batch is
    /// dropped, and counted.
    pub queue_packages: usize,
}

/// One robot.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Robot {
    /// Its name in topics and messages.
    pub name: String,
    /// The controller's RTDE address (as written; resolved when connecting).
    pub address: String,
    /// The output fields, `timestamp` first.
    pub fields: Vec<String>,
    /// The output frequency in hertz.
    pub frequency: f64,
}

impl Robot {
    /// The address to connect to: `address`, with port 30004 unless it names one.
    ///
    /// # Errors
    /// An address that does not resolve.
    pub fn socket_addr(&self) -> std::io::Result<SocketAddr> {
        let with_port = if self.address.parse::<SocketAddr>().is_ok()
            || self.address.rsplit_once(':').is_some_and(|(h, p)| {
                !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok()
            }) {
            self.address.clone()
        } else {
            format!("{}:{RTDE_PORT}", self.address)
        };
        with_port.to_socket_addrs()?.next().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("`{}` resolves to no address", self.address),
            )
        })
    }
}

/// A configuration mistake: the file, the line and the key, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {key}{sep}{message}", sep = if key.is_empty() { "" } else { ": " })]
pub struct ConfigError {
    /// The file name as given.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// The key, as a path (`robots[1].frequency`); empty when no key is involved.
    pub key: String,
    /// What is wrong, and how to fix it where that is known.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    broker: Spanned<RawBroker>,
    #[serde(default)]
    topics: Option<Spanned<RawTopics>>,
    #[serde(default)]
    payload: Option<Spanned<RawPayload>>,
    #[serde(default)]
    robots: Vec<Spanned<RawRobot>>,
    #[serde(default)]
    sparkplug: Option<Spanned<RawSparkplug>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSparkplug {
    group_id: Spanned<String>,
    edge_node_id: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBroker {
    url: Option<Spanned<String>>,
    urls: Option<Spanned<Vec<Spanned<String>>>>,
    client_id: Option<Spanned<String>>,
    username: Option<Spanned<String>>,
    password: Option<Spanned<String>>,
    qos: Option<Spanned<i64>>,
    keep_alive_secs: Option<Spanned<i64>>,
    ca_file: Option<Spanned<String>>,
    connections: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopics {
    data: Option<Spanned<String>>,
    status: Option<Spanned<String>>,
    bridge: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPayload {
    format: Option<Spanned<String>>,
    batch_packages: Option<Spanned<i64>>,
    batch_ms: Option<Spanned<i64>>,
    queue_packages: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRobot {
    name: Spanned<String>,
    address: Spanned<String>,
    fields: Option<Spanned<Vec<Spanned<String>>>>,
    preset: Option<Spanned<String>>,
    frequency: Spanned<f64>,
}

/// Turns spans into lines and builds errors.
struct Source<'a> {
    text: &'a str,
    file: &'a str,
}

impl Source<'_> {
    fn line_of(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn error(&self, span: &Range<usize>, key: &str, message: impl fmt::Display) -> ConfigError {
        ConfigError {
            file: self.file.to_owned(),
            line: self.line_of(span),
            key: key.to_owned(),
            message: message.to_string(),
        }
    }

    /// A TOML or shape error from the parser: the key is the one on the error's line.
    fn parse_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span().unwrap_or(0..0);
        let line = self.line_of(&span);
        let text = self.text.lines().nth(line - 1).unwrap_or("");
        let key = text
            .split_once('=')
            .map(|(k, _)| k.trim())
            .filter(|k| !k.is_empty() && !k.starts_with('['))
            .map_or_else(
                // On a table's header (a key missing from it): the table.
                || self.path_of(line + 1, "").trim_end_matches('.').to_owned(),
                |k| self.path_of(line, k),
            );
        let message = e.message().trim().replace('\n', "; ");
        ConfigError {
            file: self.file.to_owned(),
            line,
            key,
            message,
        }
    }

    /// `key` on `line`, with the table it is in: `broker.qos`, `robots[1].frequency`.
    fn path_of(&self, line: usize, key: &str) -> String {
        let before: Vec<&str> = self.text.lines().take(line - 1).map(str::trim).collect();
        let Some(at) = before.iter().rposition(|l| l.starts_with('[')) else {
            return key.to_owned();
        };
        if key.is_empty() && at + 1 != before.len() {
            return String::new();
        }
        let header = before[at];
        if let Some(name) = header.strip_prefix("[[").and_then(|h| h.split("]]").next()) {
            let name = name.trim();
            let index = before[..at]
                .iter()
                .filter(|l| {
                    l.strip_prefix("[[")
                        .and_then(|h| h.split("]]").next())
                        .map(str::trim)
                        == Some(name)
                })
                .count();
            format!("{name}[{index}].{key}")
        } else {
            let name = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            format!("{name}.{key}")
        }
    }
}

/// The most MQTT sessions one bridge opens: past the broker's per-session limit, more
/// bridges (a fleet shared out) scale where one process would not.
const MAX_CONNECTIONS: u64 = 64;

fn positive(
    src: &Source<'_>,
    value: Option<&Spanned<i64>>,
    key: &str,
    default: u64,
    max: u64,
) -> Result<u64, ConfigError> {
    let Some(v) = value else {
        return Ok(default);
    };
    match u64::try_from(*v.get_ref()) {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(src.error(
            &v.span(),
            key,
            format!("{} is out of range: use 1 to {max}", v.get_ref()),
        )),
    }
}

/// Checks a topic template: no wildcards, the placeholders it needs.
fn topic(
    src: &Source<'_>,
    value: Option<&Spanned<String>>,
    key: &str,
    default: &str,
    needs: &str,
) -> Result<String, ConfigError> {
    let Some(v) = value else {
        return Ok(default.to_owned());
    };
    let t = v.get_ref();
    if t.contains(['+', '#']) || t.is_empty() {
        return Err(src.error(
            &v.span(),
            key,
            format!("`{t}` is no topic to publish to: no `+` or `#`, not empty"),
        ));
    }
    if !t.contains(needs) {
        return Err(src.error(
            &v.span(),
            key,
            format!("`{t}` must contain `{needs}`, or every robot would share it"),
        ));
    }
    Ok(t.clone())
}

impl Config {
    /// Reads and checks the configuration file at `path`.
    ///
    /// # Errors
    /// A file that cannot be read, or any mistake in it ([`ConfigError`]).
    pub fn read(path: &std::path::Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: file.clone(),
            line: 0,
            key: String::new(),
            message: format!("cannot read the file: {e}"),
        })?;
        Config::parse(&text, &file)
    }

    /// Parses and checks `text`, naming it `file` in errors.
    ///
    /// # Errors
    /// The first mistake, with its line and key ([`ConfigError`]).
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let src = Source { text, file };
        let raw: RawConfig = toml::from_str(text).map_err(|e| src.parse_error(&e))?;
        let mut broker = Self::broker(&src, &raw.broker)?;
        let topics = raw.topics.as_ref().map(Spanned::get_ref);
        let topics = Topics {
            data: topic(
                &src,
                topics.and_then(|t| t.data.as_ref()),
                "topics.data",
                "rtde/{robot}/data",
                "{robot}",
            )?,
            status: topic(
                &src,
                topics.and_then(|t| t.status.as_ref()),
                "topics.status",
                "rtde/{robot}/status",
                "{robot}",
            )?,
            bridge: topic(
                &src,
                topics.and_then(|t| t.bridge.as_ref()),
                "topics.bridge",
                "rtde/bridges/{client_id}",
                "{client_id}",
            )?,
        };
        let payload = Self::payload(&src, raw.payload.as_ref().map(Spanned::get_ref))?;
        if raw.robots.is_empty() {
            return Err(src.error(
                &raw.broker.span(),
                "robots",
                "no robot: add a [[robots]] table with name, address, fields or preset, frequency",
            ));
        }
        let mut names = HashSet::new();
        let mut robots = Vec::with_capacity(raw.robots.len());
        for (i, r) in raw.robots.iter().enumerate() {
            let robot = Self::robot(&src, i, r)?;
            if !names.insert(robot.name.clone()) {
                return Err(src.error(
                    &r.get_ref().name.span(),
                    &format!("robots[{i}].name"),
                    format!("a robot named `{}` is listed before", robot.name),
                ));
            }
            robots.push(robot);
        }
        let sparkplug = Self::sparkplug(&src, &raw, payload.format, &broker, &robots)?;
        if sparkplug.is_some() {
            // The rule is Sparkplug's, not a default: its data goes with QoS 0.
            broker.qos1 = false;
        }
        Ok(Config {
            broker,
            topics,
            payload,
            robots,
            sparkplug,
        })
    }

    /// The `[sparkplug]` table, and what Sparkplug B forbids elsewhere in the file.
    fn sparkplug(
        src: &Source<'_>,
        raw: &RawConfig,
        format: Format,
        broker: &Broker,
        robots: &[Robot],
    ) -> Result<Option<Sparkplug>, ConfigError> {
        let table = raw.sparkplug.as_ref();
        if format != Format::Sparkplug {
            return match table {
                Some(t) => Err(src.error(
                    &t.span(),
                    "sparkplug",
                    "a [sparkplug] table needs payload.format = \"sparkplug\"",
                )),
                None => Ok(None),
            };
        }
        let format_span = raw
            .payload
            .as_ref()
            .and_then(|p| p.get_ref().format.as_ref())
            .map_or(0..0, Spanned::span);
        let Some(table) = table else {
            return Err(src.error(
                &format_span,
                "payload.format",
                "Sparkplug B needs a [sparkplug] table with group_id = \"...\"",
            ));
        };
        if let Some(q) = &raw.broker.get_ref().qos
            && *q.get_ref() != 0
        {
            return Err(src.error(
                &q.span(),
                "broker.qos",
                "Sparkplug B publishes births and data with QoS 0: remove qos or set it to 0",
            ));
        }
        if let Some(c) = &raw.broker.get_ref().connections
            && *c.get_ref() != 1
        {
            return Err(src.error(
                &c.span(),
                "broker.connections",
                "a Sparkplug B edge node is one MQTT session: remove connections or set it to 1",
            ));
        }
        if let Some(t) = &raw.topics {
            return Err(src.error(
                &t.span(),
                "topics",
                "Sparkplug B fixes its topics (spBv1.0/GROUP/TYPE/EDGE_NODE/ROBOT): remove [topics]",
            ));
        }
        let id = |v: &Spanned<String>, key: &str| {
            let s = v.get_ref();
            if s.is_empty() || s.contains(['/', '+', '#']) || s.chars().any(char::is_control) {
                Err(src.error(
                    &v.span(),
                    key,
                    format!("`{s}` cannot be a Sparkplug id: not empty, no `/`, `+`, `#`"),
                ))
            } else {
                Ok(s.clone())
            }
        };
        let t = table.get_ref();
        let group_id = id(&t.group_id, "sparkplug.group_id")?;
        let edge_node_id = match &t.edge_node_id {
            Some(e) => id(e, "sparkplug.edge_node_id")?,
            None => broker.client_id.clone(),
        };
        // Host applications may fold ids to one case (the specification says should not
        // differ only in case): two such robots would be one device there.
        let mut seen = HashSet::new();
        for (i, (r, raw_robot)) in robots.iter().zip(&raw.robots).enumerate() {
            if !seen.insert(r.name.to_lowercase()) {
                return Err(src.error(
                    &raw_robot.get_ref().name.span(),
                    &format!("robots[{i}].name"),
                    format!(
                        "`{}` differs from another robot's name only in case, which Sparkplug B device ids should not",
                        r.name
                    ),
                ));
            }
        }
        Ok(Some(Sparkplug {
            group_id,
            edge_node_id,
        }))
    }

    fn broker(src: &Source<'_>, table: &Spanned<RawBroker>) -> Result<Broker, ConfigError> {
        let b = table.get_ref();
        let urls: Vec<(&Spanned<String>, String)> = match (&b.url, &b.urls) {
            (Some(url), None) => vec![(url, "broker.url".to_owned())],
            (None, Some(urls)) if !urls.get_ref().is_empty() => urls
                .get_ref()
                .iter()
                .enumerate()
                .map(|(i, u)| (u, format!("broker.urls[{i}]")))
                .collect(),
            (None, Some(urls)) => {
                return Err(src.error(&urls.span(), "broker.urls", "name at least one broker"));
            }
            (Some(url), Some(_)) => {
                return Err(src.error(
                    &url.span(),
                    "broker.url",
                    "give `url` (one broker) or `urls` (a cluster's nodes), not both",
                ));
            }
            (None, None) => {
                return Err(src.error(
                    &table.span(),
                    "broker",
                    "missing field `url` (one broker) or `urls` (a cluster's nodes)",
                ));
            }
        };
        let mut nodes = Vec::with_capacity(urls.len());
        let mut tls = None;
        for (url, key) in &urls {
            let (node_tls, host, port) = broker_url(src, url, key)?;
            if tls.is_some_and(|t| t != node_tls) {
                return Err(src.error(
                    &url.span(),
                    key,
                    "every node of a cluster is mqtt:// or every node mqtts://, not a mix",
                ));
            }
            tls = Some(node_tls);
            nodes.push((host, port));
        }
        let tls = tls.unwrap_or(false);
        let (host, port) = nodes[0].clone();
        let client_id = match &b.client_id {
            None => "rtde-bridge".to_owned(),
            Some(id) => {
                let v = id.get_ref();
                if v.is_empty() || v.contains(['/', '+', '#']) {
                    return Err(src.error(
                        &id.span(),
                        "broker.client_id",
                        format!(
                            "`{v}` cannot name the bridge's topic: not empty, no `/`, `+`, `#`"
                        ),
                    ));
                }
                v.clone()
            }
        };
        let credentials = match (&b.username, &b.password) {
            (None, None) => None,
            (Some(u), Some(p)) => Some((u.get_ref().clone(), p.get_ref().clone())),
            (Some(u), None) => {
                return Err(src.error(&u.span(), "broker.username", "a username needs a password"));
            }
            (None, Some(p)) => {
                return Err(src.error(&p.span(), "broker.password", "a password needs a username"));
            }
        };
        let qos1 = match &b.qos {
            None => true,
            Some(q) => match q.get_ref() {
                0 => false,
                1 => true,
                other => {
                    return Err(src.error(
                        &q.span(),
                        "broker.qos",
                        format!("QoS {other} is not offered: use 0 or 1"),
                    ));
                }
            },
        };
        let keep_alive = positive(
            src,
            b.keep_alive_secs.as_ref(),
            "broker.keep_alive_secs",
            5,
            65535,
        )?;
        let connections = positive(
            src,
            b.connections.as_ref(),
            "broker.connections",
            1,
            MAX_CONNECTIONS,
        )?;
        let ca = match &b.ca_file {
            None => None,
            Some(path) if !tls => {
                return Err(src.error(
                    &path.span(),
                    "broker.ca_file",
                    "a CA file is for TLS: use mqtts:// URLs, or remove it",
                ));
            }
            Some(path) => Some(std::fs::read(path.get_ref()).map_err(|e| {
                src.error(
                    &path.span(),
                    "broker.ca_file",
                    format!("cannot read `{}`: {e}", path.get_ref()),
                )
            })?),
        };
        Ok(Broker {
            host,
            port,
            nodes,
            tls: tls.then(|| Tls::configured(ca)),
            client_id,
            credentials,
            qos1,
            keep_alive: Duration::from_secs(keep_alive),
            connections: usize::try_from(connections).unwrap_or(1),
        })
    }

    fn payload(src: &Source<'_>, p: Option<&RawPayload>) -> Result<Payload, ConfigError> {
        let format = match p.and_then(|p| p.format.as_ref()) {
            None => Format::Json,
            Some(f) => match f.get_ref().as_str() {
                "json" => Format::Json,
                "binary" => Format::Binary,
                "sparkplug" => Format::Sparkplug,
                other => {
                    return Err(src.error(
                        &f.span(),
                        "payload.format",
                        format!(
                            "unknown format `{other}`: use \"json\", \"binary\" or \"sparkplug\""
                        ),
                    ));
                }
            },
        };
        let batch_packages = positive(
            src,
            p.and_then(|p| p.batch_packages.as_ref()),
            "payload.batch_packages",
            50,
            10_000,
        )?;
        let batch_ms = positive(
            src,
            p.and_then(|p| p.batch_ms.as_ref()),
            "payload.batch_ms",
            10,
            60_000,
        )?;
        let queue_packages = positive(
            src,
            p.and_then(|p| p.queue_packages.as_ref()),
            "payload.queue_packages",
            10_000,
            100_000_000,
        )?;
        // Bounded above, so these fit a usize on every platform rtde builds for.
        #[allow(clippy::cast_possible_truncation)]
        Ok(Payload {
            format,
            batch_packages: batch_packages as usize,
            batch_time: Duration::from_millis(batch_ms),
            queue_packages: (queue_packages as usize).max(batch_packages as usize),
        })
    }

    fn robot(src: &Source<'_>, i: usize, r: &Spanned<RawRobot>) -> Result<Robot, ConfigError> {
        let key = |k: &str| robot_key(i, k);
        let raw = r.get_ref();
        let name = raw.name.get_ref();
        if name.is_empty()
            || name.len() > 256
            || name.contains(['/', '+', '#'])
            || name.chars().any(char::is_control)
        {
            return Err(src.error(
                &raw.name.span(),
                &key("name"),
                format!("`{name}` cannot be a topic level: 1 to 256 bytes, no `/`, `+`, `#`"),
            ));
        }
        if raw.address.get_ref().trim().is_empty() {
            return Err(src.error(&raw.address.span(), &key("address"), "no address"));
        }
        let mut fields: Vec<String> = match (&raw.fields, &raw.preset) {
            (Some(_), Some(p)) => {
                return Err(src.error(
                    &p.span(),
                    &key("preset"),
                    "give fields or a preset, not both",
                ));
            }
            (None, None) => {
                return Err(src.error(
                    &r.span(),
                    &key("fields"),
                    "no fields: give fields = [...] or a preset",
                ));
            }
            (None, Some(p)) => Self::preset_fields(src, i, p)?,
            (Some(list), None) => Self::listed_fields(src, i, list)?,
        };
        // Every package carries its controller time: the time mapping and the gap count need it.
        if let Some(at) = fields.iter().position(|f| f == "timestamp") {
            let t = fields.remove(at);
            fields.insert(0, t);
        } else {
            fields.insert(0, "timestamp".to_owned());
        }
        let frequency = *raw.frequency.get_ref();
        if !(frequency.is_finite() && frequency > 0.0 && frequency <= MAX_FREQUENCY) {
            return Err(src.error(
                &raw.frequency.span(),
                &key("frequency"),
                format!("{frequency} Hz is not an output frequency (0 < f <= {MAX_FREQUENCY})"),
            ));
        }
        Ok(Robot {
            name: name.clone(),
            address: raw.address.get_ref().trim().to_owned(),
            fields,
            frequency,
        })
    }

    /// The fields of the preset robot `i` names.
    fn preset_fields(
        src: &Source<'_>,
        i: usize,
        p: &Spanned<String>,
    ) -> Result<Vec<String>, ConfigError> {
        let preset = PRESETS
            .iter()
            .find(|(n, _)| n == p.get_ref())
            .ok_or_else(|| {
                let known: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                src.error(
                    &p.span(),
                    &robot_key(i, "preset"),
                    format!(
                        "unknown preset `{}`: use one of {}",
                        p.get_ref(),
                        known.join(", ")
                    ),
                )
            })?;
        Ok(preset.1.iter().map(|&s| s.to_owned()).collect())
    }

    /// The fields robot `i` lists: known output fields, each once, at least one.
    fn listed_fields(
        src: &Source<'_>,
        i: usize,
        list: &Spanned<Vec<Spanned<String>>>,
    ) -> Result<Vec<String>, ConfigError> {
        let key = robot_key(i, "fields");
        let mut names = Vec::new();
        for f in list.get_ref() {
            let n = f.get_ref();
            if lookup(Direction::Output, n).is_none() {
                let hint = suggest(Direction::Output, n)
                    .map(|s| format!("; did you mean `{}`?", s.name()))
                    .unwrap_or_default();
                return Err(src.error(
                    &f.span(),
                    &key,
                    format!("unknown RTDE output field `{n}`{hint}"),
                ));
            }
            if names.contains(n) {
                return Err(src.error(&f.span(), &key, format!("`{n}` is listed twice")));
            }
            names.push(n.clone());
        }
        if names.is_empty() {
            return Err(src.error(&list.span(), &key, "no fields"));
        }
        Ok(names)
    }
}

/// The name of robot `i`'s key `k` in error messages.
fn robot_key(i: usize, k: &str) -> String {
    format!("robots[{i}].{k}")
}
/// One broker's URL in the configuration: TLS, host, port.
fn broker_url(
    src: &Source<'_>,
    spanned: &Spanned<String>,
    key: &str,
) -> Result<(bool, String, u16), ConfigError> {
    BrokerUrl::parse(spanned.get_ref())
        .map(|u| (u.tls, u.host, u.port))
        .map_err(|why| src.error(&spanned.span(), key, why))
}

/// A broker's URL, `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]` (with the `tls`
/// feature), as the configuration's `url` and `urls` and `rtde subscribe --broker` take it.
///
/// ```
/// use rtde_bridge::config::BrokerUrl;
///
/// let url = BrokerUrl::parse("mqtt://10.0.0.5").unwrap();
/// assert_eq!((url.tls, url.host.as_str(), url.port), (false, "10.0.0.5", 1883));
/// assert_eq!(
///     BrokerUrl::parse("tcp://10.0.0.5").unwrap_err(),
///     "`tcp://10.0.0.5`: use mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrokerUrl {
    /// Whether it asks for TLS (`mqtts://`).
    pub tls: bool,
    /// The host name or address.
    pub host: String,
    /// The TCP port: 1883 unless given (8883 for `mqtts://`).
    pub port: u16,
}

impl BrokerUrl {
    /// Reads `url`.
    ///
    /// # Errors
    /// What is wrong with it, naming it: not `mqtt://` or `mqtts://`, TLS without the
    /// `tls` feature, no host, a port not 1 to 65535.
    pub fn parse(url: &str) -> Result<BrokerUrl, String> {
        let bad_url = |why: &str| format!("`{url}`: {why}");
        let (tls, rest) = if let Some(rest) = url.strip_prefix("mqtt://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("mqtts://") {
            (true, rest)
        } else {
            return Err(bad_url("use mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"));
        };
        if tls && !cfg!(feature = "tls") {
            return Err(bad_url(
                "TLS needs rtde-bridge built with the `tls` feature (cargo install --features tls)",
            ));
        }
        let rest = rest.trim_end_matches('/');
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && !p.contains(']') => (
                h,
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| bad_url("the port is not 1 to 65535"))?,
            ),
            _ => (rest, if tls { 8883 } else { 1883 }),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || host.contains('/') {
            return Err(bad_url("no host"));
        }
        Ok(BrokerUrl {
            tls,
            host: host.to_owned(),
            port,
        })
    }
}
