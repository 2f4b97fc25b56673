//! Sparkplug B (Eclipse Sparkplug 3.0) payloads: `format = "sparkplug"`. The bridge is an
//! edge node, each robot a device.
//!
//! # Topics and messages
//!
//! `spBv1.0/{group_id}/{type}/{edge_node_id}[/{robot}]` (the `[sparkplug]` table names the
//! group and the edge node; `[topics]` is refused):
//!
//! | message | when | QoS, retain |
//! | --- | --- | --- |
//! | `NDEATH` | the MQTT will of every connection; and published before a clean DISCONNECT | 1, no |
//! | `NBIRTH` | first after every connection, and on a rebirth request | 0, no |
//! | `DBIRTH` | a robot's first batch of a stream, and after every `NBIRTH` for robots born before | 0, no |
//! | `DDATA` | each batch | 0, no |
//! | `DDEATH` | a robot goes offline (link lost, the bridge stops) | 0, no |
//! | `NCMD` | subscribed (QoS 1): `Node Control/Rebirth` = true publishes every birth again | |
//!
//! Every connection has a clean session, as the specification requires of MQTT 3.1.1 edge
//! nodes, and is a new MQTT client: the `bdSeq` metric of its will (`NDEATH`) is the one of
//! the `NBIRTH` that follows, counting CONNECT packets from 0 (wrapping at 255, like
//! `seq`; an attempt whose TCP connection was refused sent none and takes none). `seq` is 0 in each `NBIRTH` and one more in every message after it, across all
//! robots, in publish order: one task publishes everything. While the broker is down,
//! batches wait in the robots' bounded queues (dropped oldest first, counted); births
//! are not queued, they are made again. QoS 0 delivers at most once: what the MQTT client
//! held unwritten when a connection broke is lost, and counted in
//! [`Counts::lost_with_session`](crate::Counts::lost_with_session); the packages of its
//! DDATA in their robots' [`RobotCounts::lost_in_flight`](crate::RobotCounts) and in
//! the robots' next `Bridge/dropped`. (What was written to a connection that then broke
//! cannot be told from what arrived: QoS 0 has no acknowledgement.)
//!
//! A robot is born with its first batch (the batch's stream defines its metrics): a robot
//! that connects sends its `DBIRTH` with its first packages, and one whose stream changes
//! (it reconnected to another controller version or recipe) is born again before that
//! batch. A `DDEATH` carries no reason (the specification gives it none); the reason is in
//! the JSON statuses of the other formats only.
//!
//! # Metrics of a robot
//!
//! What every message of the other formats carries (see [`crate::payload`]) is here too,
//! as metrics ([`device::FIXED`], then the recipe's fields):
//!
//! | metric | datatype | in |
//! | --- | --- | --- |
//! | `Bridge/format_version` | UInt16 (1) | DBIRTH |
//! | `Bridge/session` | UInt64: the bridge's start, µs since the epoch | DBIRTH |
//! | `Stream/controller`, `Stream/protocol`, `Stream/recipe_id`, `Stream/frequency` | String, UInt8, UInt8, Double | DBIRTH |
//! | `Bridge/batch` | UInt64: the batch's number, per robot and session | DBIRTH, DDATA |
//! | `Bridge/dropped`, `Bridge/skipped`, `Bridge/lost` | UInt64: the counts so far | DBIRTH, DDATA |
//! | `Bridge/t0_unix_us`, `Bridge/t0_timestamp` | Int64, Double: the time mapping | DBIRTH, DDATA |
//! | `Bridge/package` | UInt64: the package's number, per robot and session | DBIRTH, DDATA per package |
//! | `RTDE/{field}` (`RTDE/timestamp` first) | as its wire type: Boolean, UInt8, UInt32, UInt64, Int32, Double; DoubleArray, Int32Array, UInt32Array for vectors | DBIRTH, DDATA per package |
//!
//! - The robot's name is the device id.
//! - A `DDATA` holds one batch: the batch-level metrics once, then for each package its
//!   `Bridge/package` and every field, in order. Each package's metrics carry the
//!   package's host time, `t0 + (Tn − T0)` in ms; `RTDE/timestamp` is the controller's own,
//!   exact. A subscriber reads a `DDATA` back into the batch it was made of, bit for bit
//!   ([`device::Birth::batch`]).
//! - Births give every metric its name, alias and datatype; data messages use aliases
//!   only. A robot's aliases are `(index + 1) << 16 | metric`, `index` its place in the
//!   configuration: unique across the node, as the specification requires.
//! - A birth reports the last batch's values as current; before the first, they are null.
//!
//! # Not built
//!
//! Waiting for a primary host application's `STATE` before the births (the
//! specification's optional `primary host` mode), device commands (`DCMD`: the bridge only
//! reads robots), and `NDATA` (the bridge has no node-level metric that changes).
//!
//! A subscriber reads it all back with [`Reader`] (as [`crate::Subscriber`] does for
//! `rtde subscribe --topic 'spBv1.0/#'`), into the same batches and statuses as the
//! other formats.

pub mod device;
pub(crate) mod node;
pub mod proto;

use std::collections::HashMap;

use crate::payload::Message;
use device::Birth;
use proto::Payload;

/// The topic namespace of Sparkplug B.
pub const NAMESPACE: &str = "spBv1.0";

/// The topic of a message of type `kind` (`NBIRTH`, `DDATA`, …) of an edge node, or of
/// one of its devices.
///
/// ```
/// use rtde_bridge::sparkplug::topic;
///
/// assert_eq!(topic("cell-7", "DDATA", "bridge-1", Some("arm-1")), "spBv1.0/cell-7/DDATA/bridge-1/arm-1");
/// assert_eq!(topic("cell-7", "NBIRTH", "bridge-1", None), "spBv1.0/cell-7/NBIRTH/bridge-1");
/// ```
#[must_use]
pub fn topic(group_id: &str, kind: &str, edge_node_id: &str, device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{NAMESPACE}/{group_id}/{kind}/{edge_node_id}/{d}"),
        None => format!("{NAMESPACE}/{group_id}/{kind}/{edge_node_id}"),
    }
}

/// A Sparkplug topic, split: `(group_id, type, edge_node_id, device_id)`.
///
/// ```
/// use rtde_bridge::sparkplug::parse_topic;
///
/// assert_eq!(parse_topic("spBv1.0/cell-7/DDEATH/b/arm-1"), Some(("cell-7", "DDEATH", "b", Some("arm-1"))));
/// assert_eq!(parse_topic("rtde/arm-1/data"), None);
/// ```
#[must_use]
pub fn parse_topic(topic: &str) -> Option<(&str, &str, &str, Option<&str>)> {
    let mut levels = topic.split('/');
    if levels.next() != Some(NAMESPACE) {
        return None;
    }
    let (group, kind, edge) = (levels.next()?, levels.next()?, levels.next()?);
    let device = levels.next();
    levels
        .next()
        .is_none()
        .then_some((group, kind, edge, device))
}

/// What [`Reader::read`] made of a message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Read {
    /// A batch or a status.
    Message(Message),
    /// Data of a robot whose birth this reader has not seen (it subscribed later): the
    /// message to publish (QoS 0) on `topic` to ask the edge node for its births.
    AskRebirth {
        /// The node's `NCMD` topic.
        topic: String,
        /// A `Node Control/Rebirth` = true payload.
        payload: Vec<u8>,
    },
    /// Nothing for a recording (commands, host states, node data).
    Nothing,
}

/// Reads the bridge's Sparkplug B messages back into [`Message`]s: births and deaths
/// become statuses, `DDATA` becomes batches (through the births' aliases and streams).
/// Checks each edge node's `seq`. An `NDEATH` whose `bdSeq` is not the one of the
/// `NBIRTH` held (a stale will of an earlier connection) is ignored: the births stay.
///
/// ```
/// use rtde_bridge::sparkplug::{Read, Reader};
///
/// let mut reader = Reader::default();
/// // Data before a birth: the reader asks for the births.
/// let read = reader.read("spBv1.0/cell/DDATA/bridge/arm-1", &[]);
/// assert!(matches!(read, Read::AskRebirth { ref topic, .. } if topic == "spBv1.0/cell/NCMD/bridge"));
/// ```
#[derive(Debug, Default)]
pub struct Reader {
    births: HashMap<(String, String, String), Birth>,
    /// Per edge node: the `bdSeq` of its NBIRTH, the session its births belong to.
    bd_seq: HashMap<(String, String), u64>,
    /// Per edge node: the `seq` expected next.
    next_seq: HashMap<(String, String), u64>,
    seq_gaps: u64,
    asked: HashMap<(String, String), std::time::Instant>,
}

impl Reader {
    /// Messages whose `seq` was not the one after the edge node's previous message.
    #[must_use]
    pub fn seq_gaps(&self) -> u64 {
        self.seq_gaps
    }

    /// Reads a message that came on `topic`.
    pub fn read(&mut self, topic: &str, bytes: &[u8]) -> Read {
        let Some((group, kind, edge, device)) = parse_topic(topic) else {
            return Read::Nothing;
        };
        let node = (group.to_owned(), edge.to_owned());
        if !matches!(kind, "NBIRTH" | "NDEATH" | "DBIRTH" | "DDATA" | "DDEATH") {
            return Read::Nothing;
        }
        if kind == "DDATA"
            && let Some(d) = device
            && !self
                .births
                .contains_key(&(node.0.clone(), node.1.clone(), d.to_owned()))
        {
            return self.ask_rebirth(group, edge, node);
        }
        let p = match Payload::decode(bytes) {
            Ok(p) => p,
            Err(e) => return unreadable(topic, e.to_string()),
        };
        if kind != "NDEATH" {
            self.check_seq(kind, &node, p.seq.unwrap_or(0));
        }
        self.take(topic, kind, device, node, &p)
    }

    /// Data from a device whose birth this reader has not seen: the edge node is asked
    /// for its births, at most once a second (the births take a moment).
    fn ask_rebirth(&mut self, group: &str, edge: &str, node: (String, String)) -> Read {
        let now = std::time::Instant::now();
        let recent = self
            .asked
            .get(&node)
            .is_some_and(|t| now.duration_since(*t).as_secs() < 1);
        if recent {
            return Read::Nothing;
        }
        self.asked.insert(node, now);
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
        Read::AskRebirth {
            topic: topic(group, "NCMD", edge, None),
            payload: Payload {
                timestamp: Some(ms),
                metrics: vec![proto::Metric::new(
                    device::REBIRTH,
                    proto::datatype::BOOLEAN,
                    ms,
                    proto::Value::Boolean(true),
                )],
                seq: None,
            }
            .encode(),
        }
    }

    /// Counts a gap if `seq` is not the one after `node`'s previous message; a birth
    /// starts the count again.
    fn check_seq(&mut self, kind: &str, node: &(String, String), seq: u64) {
        if kind == "NBIRTH" {
            self.next_seq.insert(node.clone(), (seq + 1) % 256);
        } else {
            let expected = self.next_seq.insert(node.clone(), (seq + 1) % 256);
            if expected.is_some_and(|e| e != seq) {
                self.seq_gaps += 1;
            }
        }
    }

    /// What a decoded message of `kind` from `node` (and `device`) says, with the births
    /// it brings or ends kept.
    fn take(
        &mut self,
        topic: &str,
        kind: &str,
        device: Option<&str>,
        node: (String, String),
        p: &Payload,
    ) -> Read {
        match (kind, device) {
            ("NBIRTH", None) => {
                // Its devices are born again after it, maybe with other streams.
                self.births
                    .retain(|(g, e, _), _| (g, e) != (&node.0, &node.1));
                match device::bd_seq_of(p) {
                    Some(b) => self.bd_seq.insert(node, b),
                    None => self.bd_seq.remove(&node),
                };
                status(topic, None, true, None)
            }
            ("NDEATH", None) => {
                let bd_seq = device::bd_seq_of(p);
                // The death of another session than the births held: the will of an
                // earlier connection, delivered after the NBIRTH of the next (MQTT
                // orders messages per topic only; a cluster's failover delivers wills
                // late). Sparkplug B 3.0 has a host act on an NDEATH "with a bdSeq
                // number that matches the preceding bdSeq number in the NBIRTH"
                // (Topics, Payload (NDEATH); Operational Behavior, Edge Node Session
                // Termination), which is what the NDEATH's bdSeq is for: "used by Host
                // Applications to correlate the NDEATH messages with a previously
                // received NBIRTH message" [tck-id-payloads-ndeath-bdseq]. A death
                // without a bdSeq, or with no birth seen, cannot be told stale.
                if let (Some(died), Some(&born)) = (bd_seq, self.bd_seq.get(&node))
                    && died != born
                {
                    return Read::Nothing;
                }
                // The node's devices died with it.
                self.births
                    .retain(|(g, e, _), _| (g, e) != (&node.0, &node.1));
                self.bd_seq.remove(&node);
                let bd_seq = bd_seq.map_or_else(String::new, |b| format!(" (bdSeq {b})"));
                status(
                    topic,
                    None,
                    false,
                    Some(format!("the edge node died{bd_seq}")),
                )
            }
            ("DBIRTH", Some(d)) => match Birth::read(p) {
                Ok(birth) => {
                    self.births.insert((node.0, node.1, d.to_owned()), birth);
                    status(topic, Some(d), true, None)
                }
                Err(why) => unreadable(topic, why),
            },
            ("DDEATH", Some(d)) => {
                self.births.remove(&(node.0, node.1, d.to_owned()));
                status(topic, Some(d), false, None)
            }
            ("DDATA", Some(d)) => {
                let Some(birth) = self.births.get(&(node.0, node.1, d.to_owned())) else {
                    return Read::Nothing;
                };
                match birth.batch(d, p) {
                    Ok(batch) => Read::Message(Message::Batch {
                        topic: topic.to_owned(),
                        batch,
                    }),
                    Err(why) => unreadable(topic, why),
                }
            }
            _ => unreadable(topic, format!("a {kind} on a topic of the wrong shape")),
        }
    }
}

/// A message on `topic` that could not be read, and why.
fn unreadable(topic: &str, why: String) -> Read {
    Read::Message(Message::Unreadable {
        topic: topic.to_owned(),
        why,
    })
}

/// A node's (`robot` is `None`) or a device's birth or death, read from `topic`.
fn status(topic: &str, robot: Option<&str>, online: bool, reason: Option<String>) -> Read {
    Read::Message(Message::Status {
        topic: topic.to_owned(),
        robot: robot.map(str::to_owned),
        online,
        reason,
        retained: false,
    })
}

/// A small deterministic generator for the decoders' mutation tests: the same bytes on
/// every run.
#[cfg(test)]
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::payload::Batch;
    use device::{Device, node_birth, node_death};

    const NBIRTH: &str = "spBv1.0/cell/NBIRTH/bridge";
    const NDEATH: &str = "spBv1.0/cell/NDEATH/bridge";
    const DBIRTH: &str = "spBv1.0/cell/DBIRTH/bridge/arm-1";
    const DDATA: &str = "spBv1.0/cell/DDATA/bridge/arm-1";

    /// A batch of two packages of `arm-1`, the timestamp only, from package `first`.
    fn batch(first: u64) -> Batch {
        let stream = Arc::new(crate::fixtures::timestamp_stream());
        let payloads = [first, first + 1]
            .iter()
            .flat_map(|&n| (n as f64 * 0.002).to_be_bytes())
            .collect();
        Batch {
            robot: "arm-1".into(),
            session: 1,
            seq: first / 2,
            first,
            dropped: 0,
            skipped: 0,
            lost: 0,
            t0_unix_us: 0,
            t0_timestamp: 0.0,
            stream,
            payloads,
        }
    }

    /// `payload` with `seq`, encoded.
    fn numbered(mut payload: Payload, seq: u64) -> Vec<u8> {
        payload.seq = Some(seq);
        payload.encode()
    }

    fn is_batch(read: &Read) -> bool {
        matches!(read, Read::Message(Message::Batch { .. }))
    }

    #[test]
    fn an_ndeath_of_an_earlier_session_keeps_the_births_the_current_ones_drops_them() {
        let mut reader = Reader::default();
        let mut arm = Device::new("arm-1".into(), 0, 1);
        let first = batch(0);
        reader.read(NBIRTH, &numbered(node_birth(6, 1), 0));
        reader.read(DBIRTH, &numbered(arm.birth(&first.stream, 1), 1));
        assert!(is_batch(
            &reader.read(DDATA, &numbered(arm.data(&first, 2), 2))
        ));
        // The will of the connection before (bdSeq 5), delivered after this one's births.
        let stale = reader.read(NDEATH, &node_death(5, 3).encode());
        assert_eq!(stale, Read::Nothing);
        assert!(is_batch(
            &reader.read(DDATA, &numbered(arm.data(&batch(2), 4), 3))
        ));
        // This session's own death: the node and its devices are gone.
        let death = reader.read(NDEATH, &node_death(6, 5).encode());
        assert!(
            matches!(
                death,
                Read::Message(Message::Status { online: false, ref reason, .. })
                    if reason.as_deref() == Some("the edge node died (bdSeq 6)")
            ),
            "{death:?}"
        );
        assert!(matches!(
            reader.read(DDATA, &numbered(arm.data(&batch(4), 6), 4)),
            Read::AskRebirth { .. }
        ));
    }
}
