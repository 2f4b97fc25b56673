//! The messages the bridge publishes: data batches (JSON or binary), and status messages.
//! Sparkplug B, the third format, has births, deaths and metrics instead
//! ([`crate::sparkplug`]); its metrics carry the same facts.
//! Format version 1; a version changes only when a reader of the old one could no longer
//! read the new.
//!
//! # Data batches
//!
//! A batch is a run of consecutive data packages of one robot. Whatever the encoding it
//! says:
//!
//! - `robot`: the robot's name from the configuration;
//! - `session`: when this bridge process started (microseconds since the Unix epoch), so
//!   a subscriber can tell a restarted bridge, whose counters start again;
//! - `seq`: the batch's number, per robot and session, from 0. `(robot, session, seq)`
//!   identifies a batch: one re-sent after a failover to another broker node (what the
//!   lost node had not acknowledged) carries the same numbers and bytes, so a subscriber
//!   that has seen them counts it as a duplicate; no flag in the payload marks it (MQTT's
//!   DUP flag marks it on the way to the broker, which does not pass it on);
//! - `first`, `count`: the packages' numbers, per robot and session, from 0: the next
//!   batch's `first` is this `first + count` unless packages were dropped;
//! - `dropped`: packages of this robot the bridge has lost so far in the session: dropped
//!   from its queue (oldest first, while the broker was down or slow), or lost in flight
//!   (published, then lost with a broken broker connection; see the status's
//!   `lost_in_flight`). A gap in `first` equals the growth of `dropped`, exactly; a loss
//!   in flight, which the bridge learns of when it reconnects, is counted in the batches
//!   published after that, so a subscriber compares the gaps with the growth over the
//!   session ([`crate::SequenceCheck`]);
//! - `skipped`, `lost`: packages the controller skipped (from `timestamp`) and packages
//!   lost while the bridge reconnected to the robot, so far in the session;
//! - the time mapping `t0_unix_us`, `t0_timestamp`: the host's clock (µs since the Unix
//!   epoch) when the package with controller `timestamp` `t0_timestamp` arrived; package
//!   `n` happened at host time `t0 + (Tn − T0)` ([`Batch::host_time_us`]). It is taken at
//!   the first package of each connection to the robot;
//! - the stream: controller version, protocol version, recipe id, frequency, the fields
//!   (`timestamp` first) and their wire types;
//! - the packages' values.
//!
//! **JSON** (`format = "json"`): one object, numbers printed shortest-exact, so every
//! double reads back bit for bit; a non-finite double is `null`; vectors are arrays;
//! `UINT64` values above 2^53 lose precision in readers that hold numbers as doubles.
//!
//! ```json
//! {"format":"rtde-bridge/batch","version":1,"robot":"arm-1","session":1764576000000000,
//!  "seq":3,"first":150,"count":2,"dropped":0,"skipped":0,"lost":0,
//!  "t0_unix_us":1764576000123456,"t0_timestamp":1234.5,
//!  "controller":"5.21.0","protocol":2,"recipe_id":1,"frequency":125,
//!  "fields":["timestamp","actual_q"],"types":["DOUBLE","VECTOR6D"],
//!  "packages":[[1235.7,[0,1,2,3,4,5]],[1235.708,[0,1,2,3,4,5]]]}
//! ```
//!
//! **Binary** (`format = "binary"`): big-endian, as RTDE; the packages are exactly the body
//! of a raw capture ([`rtde_record::capture`]), and the capture header is included, so a
//! subscriber writes a capture that `rtde replay` serves by writing the header once and
//! appending each batch's packages.
//!
//! ```text
//! offset  size  field
//!      0     8  magic: 89 52 54 44 45 42 41 54 ("\x89RTDEBAT")
//!      8     2  format version: 1
//!     10     4  H: the bytes before the first package
//!     14     8  session (u64)
//!     22     8  seq (u64)
//!     30     8  first (u64)
//!     38     4  count (u32)
//!     42     8  dropped (u64)
//!     50     8  skipped (u64)
//!     58     8  lost (u64)
//!     66     8  t0_unix_us (i64)
//!     74     8  t0_timestamp (f64)
//!     82     2  R, then R bytes: the robot's name (UTF-8)
//!   84+R     4  C, then C bytes: a capture header (format 1, counts unfinished): the
//!               controller and protocol versions, frequency, recipe id, fields, types
//!      H     …  `count` RTDE data packages, header included, as in a capture body
//! ```
//!
//! # Status messages
//!
//! Retained JSON on each robot's status topic, and on the bridge's topic (its birth, and
//! its last will, which the broker publishes if the bridge vanishes). A robot's status
//! says how many of its packages were lost in flight so far (`lost_in_flight`); it is
//! published again, with the new count, as soon as the bridge is back on a broker that
//! lost its session, the outage that loses them:
//!
//! ```json
//! {"format":"rtde-bridge/status","version":1,"robot":"arm-1","bridge":"cell-7","session":1764576000000000,
//!  "online":false,"reason":"link lost: connection reset by peer","lost_in_flight":0}
//! {"format":"rtde-bridge/bridge","version":1,"bridge":"cell-7","session":1764576000000000,"online":true}
//! ```
//!
//! A robot whose bridge is offline is offline too, whatever its last status says.
//!
//! ```
//! use std::sync::Arc;
//! use rtde_bridge::payload::{Batch, decode};
//! use rtde_record::capture::Header;
//! use rtde_core::fields::{ControllerVersion, Direction, lookup};
//! use rtde_core::protocol::ProtocolVersion;
//!
//! let stream = Arc::new(Header {
//!     protocol: ProtocolVersion::V2,
//!     controller: ControllerVersion::new(5, 21, 0, 0),
//!     frequency: 125.0,
//!     recipe_id: Some(1),
//!     started_unix_micros: 1_000_000,
//!     fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
//! });
//! let mut payloads = Vec::new();
//! payloads.extend_from_slice(&10.0f64.to_be_bytes());
//! payloads.extend_from_slice(&10.008f64.to_be_bytes());
//! let batch = Batch {
//!     robot: "arm-1".into(), session: 7, seq: 0, first: 0, dropped: 0, skipped: 0, lost: 0,
//!     t0_unix_us: 1_000_000, t0_timestamp: 10.0, stream, payloads,
//! };
//! for bytes in [batch.to_json(), batch.to_binary().unwrap()] {
//!     let back = decode(&bytes).unwrap();
//!     assert_eq!(back, batch);
//!     assert_eq!(back.host_time_us(1), Some(1_008_000));
//! }
//! ```

use std::fmt::Write as _;
use std::sync::Arc;

use rtde_core::Value;
use rtde_core::fields::{ControllerVersion, Direction, lookup};
use rtde_core::protocol::{ControllerMessage, ProtocolVersion};
use rtde_json::{write_integer, write_number};
use rtde_record::capture::{self, Header};
use rtde_record::host_time::HostTime;
use serde_json::Value as Json;

/// The payload format version this module writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// The first bytes of a binary batch.
pub const BINARY_MAGIC: [u8; 8] = *b"\x89RTDEBAT";
/// The `format` of a JSON batch.
pub const JSON_BATCH: &str = "rtde-bridge/batch";
/// The `format` of a robot's status message.
pub const JSON_STATUS: &str = "rtde-bridge/status";
/// The `format` of the bridge's status message.
pub const JSON_BRIDGE: &str = "rtde-bridge/bridge";

/// The fixed part of a binary batch, up to the robot name's length.
const FIXED_LEN: usize = 82;

/// A batch of one robot's consecutive data packages, as published and as decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The robot's name.
    pub robot: String,
    /// When the bridge process started, µs since the Unix epoch.
    pub session: u64,
    /// The batch's number in the session, per robot.
    pub seq: u64,
    /// The number of the batch's first package in the session, per robot.
    pub first: u64,
    /// Packages the bridge lost so far in the session: dropped from the robot's queue,
    /// or lost in flight with a broken broker connection.
    pub dropped: u64,
    /// Packages the controller skipped so far in the session.
    pub skipped: u64,
    /// Packages lost while reconnecting to the robot so far in the session.
    pub lost: u64,
    /// Host time (µs since the Unix epoch) when the package of `t0_timestamp` arrived.
    pub t0_unix_us: i64,
    /// The controller `timestamp` the host time `t0_unix_us` belongs to.
    pub t0_timestamp: f64,
    /// The stream: protocol and controller versions, frequency, recipe id, fields.
    pub stream: Arc<Header>,
    /// The packages' values, one after the other, [`Header::payload_size`] bytes each.
    pub payloads: Vec<u8>,
}

/// What arrived on a subscribed topic.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A data batch.
    Batch {
        /// The topic it came on.
        topic: String,
        /// The batch, decoded.
        batch: Batch,
    },
    /// A robot's or the bridge's status.
    Status {
        /// The topic it came on.
        topic: String,
        /// The robot; `None` for the bridge's own status.
        robot: Option<String>,
        /// Online or offline.
        online: bool,
        /// Why offline, when known.
        reason: Option<String>,
        /// Whether the broker kept it (a retained message read on subscribing).
        retained: bool,
    },
    /// A message that is neither: its topic, and why it was not read.
    Unreadable {
        /// The topic it came on.
        topic: String,
        /// What is wrong with it.
        why: String,
    },
    /// The subscriber lost its connection to the broker; it reconnects on its own.
    BrokerLost {
        /// What happened, in words.
        why: String,
    },
    /// The subscriber is connected to the broker again.
    BrokerBack {
        /// Whether the broker still had this subscriber's session, and so the messages it
        /// queued for it. A broker that lost it (no persistence, a lost disk) lost those
        /// messages: the gaps that follow are the broker's, not the bridge's.
        session_kept: bool,
    },
}

/// Why bytes are no batch this version reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an rtde-bridge batch: {0}")]
pub struct PayloadError(String);

impl Batch {
    /// The number of packages.
    #[must_use]
    pub fn count(&self) -> usize {
        self.payloads
            .len()
            .checked_div(self.stream.payload_size())
            .unwrap_or(0)
    }

    /// The values of package `i`, if there is one.
    #[must_use]
    pub fn payload(&self, i: usize) -> Option<&[u8]> {
        let size = self.stream.payload_size();
        self.payloads.get(i * size..(i + 1) * size)
    }

    /// The controller `timestamp` of package `i` (the first field).
    #[must_use]
    pub fn timestamp(&self, i: usize) -> Option<f64> {
        let p = self.payload(i)?;
        Some(f64::from_be_bytes(p.get(..8)?.try_into().ok()?))
    }

    /// The host time of package `i`: `t0 + (Tn − T0)`, µs since the Unix epoch
    /// ([`rtde_record::host_time`]).
    #[must_use]
    pub fn host_time_us(&self, i: usize) -> Option<i64> {
        HostTime {
            t0_unix_us: self.t0_unix_us,
            t0_timestamp: self.t0_timestamp,
        }
        .host_time_us(self.timestamp(i)?)
    }

    /// The batch as one JSON object.
    #[must_use]
    pub fn to_json(&self) -> Vec<u8> {
        // A double takes 8 bytes on the wire and at most 24 printed: rarely a second
        // allocation.
        let mut s = String::with_capacity(512 + self.payloads.len() * 3);
        let h = &*self.stream;
        s.push_str("{\"format\":\"");
        s.push_str(JSON_BATCH);
        // Written piece by piece, not through `fmt`: this runs for every batch.
        s.push_str("\",\"version\":");
        write_integer(&mut s, FORMAT_VERSION);
        s.push_str(",\"robot\":");
        string(&mut s, &self.robot);
        for (key, n) in [
            (",\"session\":", self.session),
            (",\"seq\":", self.seq),
            (",\"first\":", self.first),
            (",\"count\":", self.count() as u64),
            (",\"dropped\":", self.dropped),
            (",\"skipped\":", self.skipped),
            (",\"lost\":", self.lost),
        ] {
            s.push_str(key);
            write_integer(&mut s, n);
        }
        s.push_str(",\"t0_unix_us\":");
        write_integer(&mut s, self.t0_unix_us);
        s.push_str(",\"t0_timestamp\":");
        write_number(&mut s, self.t0_timestamp);
        let _ = write!(s, ",\"controller\":\"{}\"", h.controller);
        s.push_str(",\"protocol\":");
        write_integer(&mut s, h.protocol.number());
        s.push_str(",\"recipe_id\":");
        write_integer(&mut s, h.recipe_id.map_or(0, u16::from));
        s.push_str(",\"frequency\":");
        write_number(&mut s, h.frequency);
        s.push_str(",\"fields\":[");
        list(&mut s, h.fields.iter().map(|f| f.name()));
        s.push_str("],\"types\":[");
        list(&mut s, h.fields.iter().map(|f| f.wire_type().as_str()));
        s.push_str("],\"packages\":[");
        let mut value = Value::Bool(false);
        for i in 0..self.count() {
            if i > 0 {
                s.push(',');
            }
            s.push('[');
            let mut at = 0;
            let payload = self.payload(i).unwrap_or_default();
            for (j, f) in h.fields.iter().enumerate() {
                if j > 0 {
                    s.push(',');
                }
                let t = f.wire_type();
                if value.read_be(t, &payload[at..]) {
                    rtde_json::write_value(&mut s, &value);
                }
                at += t.size();
            }
            s.push(']');
        }
        s.push_str("]}");
        s.into_bytes()
    }

    /// The batch in the binary encoding.
    ///
    /// # Errors
    /// A robot name or recipe too long for the header's length fields.
    pub fn to_binary(&self) -> Result<Vec<u8>, PayloadError> {
        let too_long = |what: &str| PayloadError(format!("the {what} is too long"));
        let header = self
            .stream
            .encode(None)
            .map_err(|e| PayloadError(e.to_string()))?;
        let name = self.robot.as_bytes();
        let name_len = u16::try_from(name.len()).map_err(|_| too_long("robot name"))?;
        let header_len = FIXED_LEN + 2 + name.len() + 4 + header.len();
        let count = u32::try_from(self.count()).map_err(|_| too_long("batch"))?;
        let frame_len = rtde_core::protocol::HEADER_LEN + 1 + self.stream.payload_size();
        let mut out = Vec::with_capacity(header_len + self.count() * frame_len);
        out.extend_from_slice(&BINARY_MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
        out.extend_from_slice(
            &u32::try_from(header_len)
                .map_err(|_| too_long("header"))?
                .to_be_bytes(),
        );
        for n in [self.session, self.seq, self.first] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(&count.to_be_bytes());
        for n in [self.dropped, self.skipped, self.lost] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(&self.t0_unix_us.to_be_bytes());
        out.extend_from_slice(&self.t0_timestamp.to_be_bytes());
        out.extend_from_slice(&name_len.to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(
            &u32::try_from(header.len())
                .map_err(|_| too_long("recipe"))?
                .to_be_bytes(),
        );
        out.extend_from_slice(&header);
        debug_assert_eq!(out.len(), header_len);
        let mut frame = vec![0u8; frame_len];
        for i in 0..self.count() {
            let msg = ControllerMessage::DataPackage {
                recipe_id: self.stream.recipe_id,
                payload: self.payload(i).unwrap_or_default(),
            };
            let n = msg
                .encode(self.stream.protocol, &mut frame)
                .map_err(|e| PayloadError(e.to_string()))?;
            out.extend_from_slice(&frame[..n]);
        }
        Ok(out)
    }
}

/// Appends `v` as a JSON string. Names need no escape as a rule; one that does goes
/// through serde_json, which owns the escaping.
fn string(s: &mut String, v: &str) {
    if v.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        s.push_str(&Json::from(v).to_string());
    } else {
        s.push('"');
        s.push_str(v);
        s.push('"');
    }
}

fn list<'a>(s: &mut String, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        s.push_str(item);
        s.push('"');
    }
}

/// Decodes a batch in either encoding (JSON starts with `{`, binary with its magic).
///
/// # Errors
/// Bytes that are no batch of format version 1, naming what is wrong.
pub fn decode(bytes: &[u8]) -> Result<Batch, PayloadError> {
    if bytes.starts_with(&BINARY_MAGIC) {
        decode_binary(bytes)
    } else if bytes.first() == Some(&b'{') {
        decode_json(bytes)
    } else {
        Err(PayloadError(
            "neither JSON nor the binary batch magic".into(),
        ))
    }
}

fn err(why: impl Into<String>) -> PayloadError {
    PayloadError(why.into())
}

fn decode_binary(b: &[u8]) -> Result<Batch, PayloadError> {
    let short = || err("the binary batch is cut short");
    let u64_at = |at: usize| -> Result<u64, PayloadError> {
        Ok(u64::from_be_bytes(
            b.get(at..at + 8)
                .ok_or_else(short)?
                .try_into()
                .map_err(|_| short())?,
        ))
    };
    let version = u16::from_be_bytes(
        b.get(8..10)
            .ok_or_else(short)?
            .try_into()
            .map_err(|_| short())?,
    );
    if version != FORMAT_VERSION {
        return Err(err(format!(
            "format version {version}; this reader reads {FORMAT_VERSION}"
        )));
    }
    let header_len = u32::from_be_bytes(
        b.get(10..14)
            .ok_or_else(short)?
            .try_into()
            .map_err(|_| short())?,
    ) as usize;
    let count = u32::from_be_bytes(
        b.get(38..42)
            .ok_or_else(short)?
            .try_into()
            .map_err(|_| short())?,
    ) as usize;
    let name_len = usize::from(u16::from_be_bytes(
        b.get(82..84)
            .ok_or_else(short)?
            .try_into()
            .map_err(|_| short())?,
    ));
    let robot = std::str::from_utf8(b.get(84..84 + name_len).ok_or_else(short)?)
        .map_err(|_| err("the robot name is not UTF-8"))?
        .to_owned();
    let cap_at = 84 + name_len;
    let cap_len = u32::from_be_bytes(
        b.get(cap_at..cap_at + 4)
            .ok_or_else(short)?
            .try_into()
            .map_err(|_| short())?,
    ) as usize;
    let cap = b.get(cap_at + 4..cap_at + 4 + cap_len).ok_or_else(short)?;
    if header_len != cap_at + 4 + cap_len || header_len > b.len() {
        return Err(err("the header length does not match its parts"));
    }
    // The capture header and the packages make a capture: its reader checks them.
    let mut as_capture = cap.to_vec();
    as_capture.extend_from_slice(&b[header_len..]);
    let parsed = capture::parse(&as_capture).map_err(|e| err(e.to_string()))?;
    if parsed.len() != count {
        return Err(err(format!(
            "the header says {count} packages, the batch holds {}",
            parsed.len()
        )));
    }
    Ok(Batch {
        robot,
        session: u64_at(14)?,
        seq: u64_at(22)?,
        first: u64_at(30)?,
        dropped: u64_at(42)?,
        skipped: u64_at(50)?,
        lost: u64_at(58)?,
        t0_unix_us: i64::from_be_bytes(u64_at(66)?.to_be_bytes()),
        t0_timestamp: f64::from_bits(u64_at(74)?),
        stream: Arc::new(parsed.header),
        payloads: parsed.payloads,
    })
}

fn decode_json(bytes: &[u8]) -> Result<Batch, PayloadError> {
    let v: Json = serde_json::from_slice(bytes).map_err(|e| err(format!("invalid JSON: {e}")))?;
    let field = |k: &str| v.get(k).ok_or_else(|| err(format!("no `{k}`")));
    let uint = |k: &str| {
        field(k)?
            .as_u64()
            .ok_or_else(|| err(format!("`{k}` is no unsigned integer")))
    };
    if field("format")?.as_str() != Some(JSON_BATCH) {
        return Err(err(format!("`format` is not \"{JSON_BATCH}\"")));
    }
    if uint("version")? != u64::from(FORMAT_VERSION) {
        return Err(err(format!("`version` is not {FORMAT_VERSION}")));
    }
    let text = |k: &str| {
        field(k)?
            .as_str()
            .ok_or_else(|| err(format!("`{k}` is no string")))
    };
    let controller: ControllerVersion = text("controller")?
        .parse()
        .map_err(|_| err("`controller` is no controller version"))?;
    let protocol = u16::try_from(uint("protocol")?)
        .ok()
        .and_then(ProtocolVersion::from_number)
        .ok_or_else(|| err("`protocol` is neither 1 nor 2"))?;
    let recipe_id = u8::try_from(uint("recipe_id")?).map_err(|_| err("`recipe_id` is no u8"))?;
    let names = field("fields")?
        .as_array()
        .ok_or_else(|| err("`fields` is no array"))?;
    let mut fields = Vec::with_capacity(names.len());
    for n in names {
        let n = n.as_str().ok_or_else(|| err("a field name is no string"))?;
        fields
            .push(lookup(Direction::Output, n).ok_or_else(|| err(format!("unknown field `{n}`")))?);
    }
    let stream = Header {
        protocol,
        controller,
        frequency: field("frequency")?
            .as_f64()
            .ok_or_else(|| err("`frequency` is no number"))?,
        recipe_id: (protocol == ProtocolVersion::V2).then_some(recipe_id),
        started_unix_micros: field("t0_unix_us")?
            .as_i64()
            .ok_or_else(|| err("`t0_unix_us` is no integer"))?,
        fields,
    };
    let packages = field("packages")?
        .as_array()
        .ok_or_else(|| err("`packages` is no array"))?;
    let size = stream.payload_size();
    let mut payloads = vec![0u8; size * packages.len()];
    for (i, p) in packages.iter().enumerate() {
        let values = p
            .as_array()
            .filter(|a| a.len() == stream.fields.len())
            .ok_or_else(|| err(format!("package {i} does not have one value per field")))?;
        let mut at = i * size;
        for (f, j) in stream.fields.iter().zip(values) {
            let t = f.wire_type();
            let value = rtde_json::read_value(t, j)
                .ok_or_else(|| err(format!("package {i}: `{}` is no {t} value", f.name())))?;
            let _ = value.write_be(&mut payloads[at..at + t.size()]);
            at += t.size();
        }
    }
    if uint("count")? != packages.len() as u64 {
        return Err(err("`count` is not the number of packages"));
    }
    Ok(Batch {
        robot: text("robot")?.to_owned(),
        session: uint("session")?,
        seq: uint("seq")?,
        first: uint("first")?,
        dropped: uint("dropped")?,
        skipped: uint("skipped")?,
        lost: uint("lost")?,
        t0_unix_us: stream.started_unix_micros,
        t0_timestamp: field("t0_timestamp")?
            .as_f64()
            .ok_or_else(|| err("`t0_timestamp` is no number"))?,
        stream: Arc::new(stream),
        payloads,
    })
}

/// A robot's status message, with the robot's packages lost in flight so far.
#[must_use]
pub fn robot_status(
    robot: &str,
    bridge: &str,
    session: u64,
    online: bool,
    reason: Option<&str>,
    lost_in_flight: u64,
) -> Vec<u8> {
    let mut v = serde_json::json!({
        "format": JSON_STATUS,
        "version": FORMAT_VERSION,
        "robot": robot,
        "bridge": bridge,
        "session": session,
        "online": online,
        "lost_in_flight": lost_in_flight,
    });
    if let Some(reason) = reason {
        v["reason"] = Json::from(reason);
    }
    v.to_string().into_bytes()
}

/// The bridge's status message: its birth (`online`) or its last will.
#[must_use]
pub fn bridge_status(bridge: &str, session: u64, online: bool) -> Vec<u8> {
    serde_json::json!({
        "format": JSON_BRIDGE,
        "version": FORMAT_VERSION,
        "bridge": bridge,
        "session": session,
        "online": online,
    })
    .to_string()
    .into_bytes()
}

/// A status message, decoded: `(robot, online, reason)`; `robot` is `None` for the
/// bridge's own.
///
/// # Errors
/// Bytes that are no status message of this format version.
pub fn decode_status(bytes: &[u8]) -> Result<(Option<String>, bool, Option<String>), PayloadError> {
    let v: Json = serde_json::from_slice(bytes).map_err(|e| err(format!("invalid JSON: {e}")))?;
    let format = v.get("format").and_then(Json::as_str);
    if format != Some(JSON_STATUS) && format != Some(JSON_BRIDGE) {
        return Err(err("no status message"));
    }
    let online = v
        .get("online")
        .and_then(Json::as_bool)
        .ok_or_else(|| err("no `online`"))?;
    Ok((
        v.get("robot").and_then(Json::as_str).map(str::to_owned),
        online,
        v.get("reason").and_then(Json::as_str).map(str::to_owned),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(robot: &str) -> Batch {
        let stream = Arc::new(Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 500.0,
            recipe_id: Some(3),
            // What a decoded batch says: the JSON carries t0, not the stream's start.
            started_unix_micros: -5,
            fields: vec![lookup(Direction::Output, "timestamp").unwrap()],
        });
        let mut payloads = Vec::new();
        payloads.extend_from_slice(&12.5f64.to_be_bytes());
        payloads.extend_from_slice(&12.502f64.to_be_bytes());
        Batch {
            robot: robot.into(),
            session: 17,
            seq: 4,
            first: 20,
            dropped: 1,
            skipped: 2,
            lost: 3,
            t0_unix_us: -5,
            t0_timestamp: 0.25,
            stream,
            payloads,
        }
    }

    #[test]
    fn a_json_batch_is_written_key_by_key_as_documented() {
        let json = String::from_utf8(batch("arm-1").to_json()).unwrap();
        assert_eq!(
            json,
            "{\"format\":\"rtde-bridge/batch\",\"version\":1,\"robot\":\"arm-1\",\"session\":17,\
             \"seq\":4,\"first\":20,\"count\":2,\"dropped\":1,\"skipped\":2,\"lost\":3,\
             \"t0_unix_us\":-5,\"t0_timestamp\":0.25,\"controller\":\"5.21.0\",\"protocol\":2,\
             \"recipe_id\":3,\"frequency\":500,\"fields\":[\"timestamp\"],\"types\":[\"DOUBLE\"],\
             \"packages\":[[12.5],[12.502]]}"
        );
    }

    #[test]
    fn robot_names_that_need_escapes_survive_json() {
        for name in [
            "a\"b",
            "back\\slash",
            "new\nline",
            "tab\t",
            "Zelle 7 · Roboter",
        ] {
            let b = batch(name);
            let back = decode(&b.to_json()).unwrap();
            assert_eq!(back, b, "{name:?}");
        }
    }
}
