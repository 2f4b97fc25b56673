//! A robot as a Sparkplug B device: the metrics of its birth, a batch as one DDATA, and
//! the way back from those metrics to a [`Batch`]. The one table of metric names, types
//! and aliases is [`FIXED`] plus the recipe's fields.

use std::sync::Arc;

use rtde_core::fields::{ControllerVersion, Direction, WireType, lookup};
use rtde_core::protocol::ProtocolVersion;
use rtde_record::capture::Header;

use super::proto::{Metric, Payload, Value, datatype};
use crate::payload::{Batch, FORMAT_VERSION};

/// The metrics every device has before its recipe's fields, in birth order: a metric's
/// index here (and the recipe's fields after it) makes its alias.
pub const FIXED: [(&str, u32); 13] = [
    ("Bridge/format_version", datatype::UINT16),
    ("Bridge/session", datatype::UINT64),
    ("Stream/controller", datatype::STRING),
    ("Stream/protocol", datatype::UINT8),
    ("Stream/recipe_id", datatype::UINT8),
    ("Stream/frequency", datatype::DOUBLE),
    ("Bridge/batch", datatype::UINT64),
    ("Bridge/dropped", datatype::UINT64),
    ("Bridge/skipped", datatype::UINT64),
    ("Bridge/lost", datatype::UINT64),
    ("Bridge/t0_unix_us", datatype::INT64),
    ("Bridge/t0_timestamp", datatype::DOUBLE),
    ("Bridge/package", datatype::UINT64),
];
const FORMAT: usize = 0;
const SESSION: usize = 1;
const CONTROLLER: usize = 2;
const PROTOCOL: usize = 3;
const RECIPE: usize = 4;
const FREQUENCY: usize = 5;
const BATCH: usize = 6;
const T0_TIMESTAMP: usize = 11;
const PACKAGE: usize = 12;
/// The prefix of a recipe field's metric name: `RTDE/actual_q`.
pub const FIELD_PREFIX: &str = "RTDE/";

/// The Sparkplug datatype of an RTDE wire type.
///
/// ```
/// use rtde_bridge::sparkplug::{device::datatype_of, proto::datatype};
/// use rtde_core::fields::WireType;
///
/// assert_eq!(datatype_of(WireType::Vector6d), datatype::DOUBLE_ARRAY);
/// assert_eq!(datatype_of(WireType::Int32), datatype::INT32);
/// ```
#[must_use]
pub fn datatype_of(t: WireType) -> u32 {
    match t {
        WireType::Bool => datatype::BOOLEAN,
        WireType::Uint8 => datatype::UINT8,
        WireType::Uint32 => datatype::UINT32,
        WireType::Uint64 => datatype::UINT64,
        WireType::Int32 => datatype::INT32,
        WireType::Double => datatype::DOUBLE,
        WireType::Vector3d | WireType::Vector6d => datatype::DOUBLE_ARRAY,
        WireType::Vector6Int32 => datatype::INT32_ARRAY,
        WireType::Vector6Uint32 => datatype::UINT32_ARRAY,
    }
}

/// The element size of an array wire type; 0 for scalars.
fn element(t: WireType) -> usize {
    match t {
        WireType::Vector3d | WireType::Vector6d => 8,
        WireType::Vector6Int32 | WireType::Vector6Uint32 => 4,
        _ => 0,
    }
}

/// A field's value, from its big-endian RTDE bytes (`be` holds exactly the field).
fn value_of(t: WireType, be: &[u8]) -> Value {
    let u32_be = || be.first_chunk::<4>().map_or(0, |b| u32::from_be_bytes(*b));
    match t {
        WireType::Bool => Value::Boolean(be.first().is_some_and(|b| *b != 0)),
        WireType::Uint8 => Value::Int(be.first().map_or(0, |b| u32::from(*b))),
        // Int32 goes as its two's complement bits, as the specification says.
        WireType::Uint32 | WireType::Int32 => Value::Int(u32_be()),
        WireType::Uint64 => {
            Value::Long(be.first_chunk::<8>().map_or(0, |b| u64::from_be_bytes(*b)))
        }
        WireType::Double => Value::Double(
            be.first_chunk::<8>()
                .map_or(f64::NAN, |b| f64::from_be_bytes(*b)),
        ),
        // Arrays are packed little-endian: each element's bytes, reversed.
        _ => Value::Bytes(
            be.chunks(element(t))
                .flat_map(|c| c.iter().rev().copied())
                .collect(),
        ),
    }
}

/// Writes `v` as wire type `t` into `out` (exactly the field's bytes); false if `v` is
/// not a value of that type.
fn write_be(t: WireType, v: &Value, out: &mut [u8]) -> bool {
    match (t, v) {
        (WireType::Bool, Value::Boolean(b)) => out.copy_from_slice(&[u8::from(*b)]),
        (WireType::Uint8, Value::Int(n)) => match u8::try_from(*n) {
            Ok(n) => out.copy_from_slice(&[n]),
            Err(_) => return false,
        },
        (WireType::Uint32 | WireType::Int32, Value::Int(n)) => {
            out.copy_from_slice(&n.to_be_bytes());
        }
        (WireType::Uint64, Value::Long(n)) => out.copy_from_slice(&n.to_be_bytes()),
        (WireType::Double, Value::Double(x)) => out.copy_from_slice(&x.to_be_bytes()),
        (_, Value::Bytes(le)) if element(t) > 0 && le.len() == out.len() => {
            for (o, l) in out.chunks_mut(element(t)).zip(le.chunks(element(t))) {
                for (a, b) in o.iter_mut().zip(l.iter().rev()) {
                    *a = *b;
                }
            }
        }
        _ => return false,
    }
    true
}

/// The values a device's birth reports as current: its last batch's numbers and last
/// package, as a batch of that one package.
#[derive(Clone, Debug)]
struct Last {
    batch: Batch,
    /// The host time of the last package, ms since the Unix epoch.
    at_ms: u64,
}

/// One robot as a device of the edge node.
#[derive(Debug)]
pub(crate) struct Device {
    pub(crate) name: String,
    /// The aliases of its metrics are `base | index`.
    base: u64,
    session: u64,
    /// The stream its birth declared, while it is born in the current node birth.
    pub(crate) born: Option<Arc<Header>>,
    last: Option<Last>,
}

/// Milliseconds since the Unix epoch of a host time in µs (never negative).
fn ms(unix_us: i64) -> u64 {
    u64::try_from(unix_us.div_euclid(1000)).unwrap_or(0)
}

impl Device {
    /// Device `index` (from 0) of the node, named `name`.
    pub(crate) fn new(name: String, index: usize, session: u64) -> Device {
        Device {
            name,
            base: alias_base(index),
            session,
            born: None,
            last: None,
        }
    }

    /// Its birth for `stream`: every metric with its name, alias, datatype and current
    /// value (the last batch's, if it had the same stream; else null).
    pub(crate) fn birth(&mut self, stream: &Arc<Header>, now_ms: u64) -> Payload {
        self.born = Some(Arc::clone(stream));
        let last = self.last.as_ref().filter(|l| *l.batch.stream == **stream);
        let mut metrics = Vec::with_capacity(FIXED.len() + stream.fields.len());
        // One time for every metric, so the list stays in chronological order (the
        // specification's rule): the values are the last package's, as of its host time.
        let at_ms = last.map_or(now_ms, |l| l.at_ms);
        for (i, (name, datatype)) in FIXED.iter().enumerate() {
            let value = match i {
                FORMAT => Some(Value::Int(u32::from(FORMAT_VERSION))),
                SESSION => Some(Value::Long(self.session)),
                CONTROLLER => Some(Value::String(stream.controller.to_string())),
                PROTOCOL => Some(Value::Int(u32::from(stream.protocol.number()))),
                RECIPE => stream.recipe_id.map(|r| Value::Int(u32::from(r))),
                FREQUENCY => Some(Value::Double(stream.frequency)),
                _ => last.and_then(|l| batch_value(&l.batch, i, 0)),
            };
            metrics.push(self.named(i, name, *datatype, at_ms, value));
        }
        for (j, f) in stream.fields.iter().enumerate() {
            let value = last.and_then(|l| {
                let at: usize = stream.fields[..j]
                    .iter()
                    .map(|f| f.wire_type().size())
                    .sum();
                let p = l.batch.payload(0)?;
                Some(value_of(f.wire_type(), &p[at..at + f.wire_type().size()]))
            });
            metrics.push(self.named(
                FIXED.len() + j,
                &format!("{FIELD_PREFIX}{}", f.name()),
                datatype_of(f.wire_type()),
                at_ms,
                value,
            ));
        }
        Payload {
            timestamp: Some(now_ms),
            metrics,
            seq: None,
        }
    }

    fn named(
        &self,
        index: usize,
        name: &str,
        datatype: u32,
        at_ms: u64,
        value: Option<Value>,
    ) -> Metric {
        Metric {
            name: Some(name.to_owned()),
            alias: Some(self.base | index as u64),
            timestamp: Some(at_ms),
            datatype: Some(datatype),
            is_null: value.is_none(),
            value,
            ..Metric::default()
        }
    }

    /// A batch as one DDATA: the batch's numbers and time mapping once, then each
    /// package's number and fields, with the package's host time, by alias only.
    pub(crate) fn data(&mut self, batch: &Batch, now_ms: u64) -> Payload {
        let count = batch.count();
        let host_ms = |i: usize| ms(batch.host_time_us(i).unwrap_or(batch.t0_unix_us));
        let fields = &batch.stream.fields;
        let mut metrics = Vec::with_capacity(6 + count * (1 + fields.len()));
        let first_ms = host_ms(0);
        for i in BATCH..PACKAGE {
            let value = batch_value(batch, i, 0);
            metrics.push(self.aliased(i, first_ms, value));
        }
        for p in 0..count {
            let at_ms = host_ms(p);
            metrics.push(self.aliased(PACKAGE, at_ms, Some(Value::Long(batch.first + p as u64))));
            let payload = batch.payload(p).unwrap_or_default();
            let mut at = 0;
            for (j, f) in fields.iter().enumerate() {
                let t = f.wire_type();
                let value = payload.get(at..at + t.size()).map(|be| value_of(t, be));
                metrics.push(self.aliased(FIXED.len() + j, at_ms, value));
                at += t.size();
            }
        }
        if let Some(newest) = batch.payload(count.wrapping_sub(1)) {
            let at_ms = host_ms(count - 1);
            let last = self.last.get_or_insert_with(|| Last {
                batch: Batch {
                    robot: batch.robot.clone(),
                    stream: Arc::clone(&batch.stream),
                    payloads: Vec::with_capacity(newest.len()),
                    ..*batch
                },
                at_ms,
            });
            // The last package only, in the buffer of the one before: no allocation per batch.
            last.batch.payloads.clear();
            last.batch.payloads.extend_from_slice(newest);
            last.batch.first = batch.first + count as u64 - 1;
            last.at_ms = at_ms;
            for (to, from) in [
                (&mut last.batch.seq, batch.seq),
                (&mut last.batch.dropped, batch.dropped),
                (&mut last.batch.skipped, batch.skipped),
                (&mut last.batch.lost, batch.lost),
            ] {
                *to = from;
            }
            last.batch.t0_unix_us = batch.t0_unix_us;
            last.batch.t0_timestamp = batch.t0_timestamp;
            if !Arc::ptr_eq(&last.batch.stream, &batch.stream) {
                last.batch.stream = Arc::clone(&batch.stream);
            }
        }
        Payload {
            timestamp: Some(now_ms),
            metrics,
            seq: None,
        }
    }

    fn aliased(&self, index: usize, at_ms: u64, value: Option<Value>) -> Metric {
        Metric {
            alias: Some(self.base | index as u64),
            timestamp: Some(at_ms),
            is_null: value.is_none(),
            value,
            ..Metric::default()
        }
    }
}

/// The alias base of device `index`: its metrics' aliases are unique across the node
/// (the specification's rule), and the node's own metrics have none.
fn alias_base(index: usize) -> u64 {
    (index as u64 + 1) << 16
}

/// The value of batch-level metric `i` ([`FIXED`]'s index), package `p` for the number.
fn batch_value(b: &Batch, i: usize, p: usize) -> Option<Value> {
    Some(match i {
        BATCH => Value::Long(b.seq),
        7 => Value::Long(b.dropped),
        8 => Value::Long(b.skipped),
        9 => Value::Long(b.lost),
        // Two's complement bits in long_value, as for every Int64.
        10 => Value::Long(u64::from_ne_bytes(b.t0_unix_us.to_ne_bytes())),
        T0_TIMESTAMP => Value::Double(b.t0_timestamp),
        PACKAGE => Value::Long(b.first + p as u64),
        _ => return None,
    })
}

/// What a subscriber knows of a device from its birth, to read its DDATA.
///
/// ```
/// use rtde_bridge::sparkplug::device::{Birth, FIELD_PREFIX, FIXED};
/// use rtde_bridge::sparkplug::proto::{Metric, Payload, Value, datatype};
///
/// // A DBIRTH: the fixed metrics (values only where a stream needs them), then the fields.
/// let mut birth = Payload { timestamp: Some(1), metrics: Vec::new(), seq: Some(1) };
/// for (i, (name, t)) in FIXED.iter().enumerate() {
///     let value = match *name {
///         "Bridge/format_version" => Some(Value::Int(1)),
///         "Bridge/session" => Some(Value::Long(7)),
///         "Stream/controller" => Some(Value::String("5.21.0".into())),
///         "Stream/protocol" => Some(Value::Int(2)),
///         "Stream/frequency" => Some(Value::Double(500.0)),
///         _ => None,
///     };
///     let m = Metric { alias: Some(1 << 16 | i as u64), is_null: value.is_none(), value, ..Metric::new(name, *t, 1, Value::Int(0)) };
///     birth.metrics.push(m);
/// }
/// let field = Metric { alias: Some(1 << 16 | 13), ..Metric::new(&format!("{FIELD_PREFIX}timestamp"), datatype::DOUBLE, 1, Value::Double(0.0)) };
/// birth.metrics.push(field);
/// let birth = Birth::read(&birth).unwrap();
///
/// // A DDATA of one package, by alias: batch 0, its numbers, then package 0's fields.
/// let by_alias = |i: u64, v: Value| Metric { alias: Some(1 << 16 | i), timestamp: Some(1), value: Some(v), ..Metric::default() };
/// let data = Payload {
///     timestamp: Some(2),
///     metrics: vec![
///         by_alias(6, Value::Long(0)), by_alias(7, Value::Long(0)), by_alias(8, Value::Long(0)),
///         by_alias(9, Value::Long(0)), by_alias(10, Value::Long(1_000_000)), by_alias(11, Value::Double(10.0)),
///         by_alias(12, Value::Long(0)), by_alias(13, Value::Double(10.0)),
///     ],
///     seq: Some(2),
/// };
/// let batch = birth.batch("arm-1", &data).unwrap();
/// assert_eq!((batch.count(), batch.timestamp(0), batch.host_time_us(0)), (1, Some(10.0), Some(1_000_000)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Birth {
    /// The stream: versions, recipe, frequency, fields.
    pub stream: Arc<Header>,
    /// The bridge's session id.
    pub session: u64,
    /// Alias → metric index ([`FIXED`], then the fields).
    aliases: std::collections::HashMap<u64, usize>,
    names: std::collections::HashMap<String, usize>,
}

fn err(why: impl Into<String>) -> String {
    why.into()
}

impl Birth {
    /// Reads a DBIRTH.
    ///
    /// # Errors
    /// A birth that lacks a metric of the mapping, or whose fields are no RTDE outputs.
    pub fn read(p: &Payload) -> Result<Birth, String> {
        let mut values: Vec<Option<&Value>> = vec![None; FIXED.len()];
        let mut fields = Vec::new();
        let mut aliases = std::collections::HashMap::new();
        let mut names = std::collections::HashMap::new();
        for m in &p.metrics {
            let Some(name) = m.name.as_deref() else {
                return Err(err("a birth metric without a name"));
            };
            let index = if let Some(i) = FIXED.iter().position(|(n, _)| *n == name) {
                values[i] = m.value.as_ref();
                i
            } else if let Some(field) = name.strip_prefix(FIELD_PREFIX) {
                let f = lookup(Direction::Output, field)
                    .ok_or_else(|| err(format!("`{field}` is no RTDE output field")))?;
                fields.push(f);
                FIXED.len() + fields.len() - 1
            } else {
                // A metric of a newer mapping: not read.
                continue;
            };
            if let Some(a) = m.alias {
                aliases.insert(a, index);
            }
            names.insert(name.to_owned(), index);
        }
        let long = |i: usize| match values[i] {
            Some(Value::Long(n)) => Ok(*n),
            _ => Err(err(format!("no `{}` in the birth", FIXED[i].0))),
        };
        let int = |i: usize| match values[i] {
            Some(Value::Int(n)) => Ok(*n),
            _ => Err(err(format!("no `{}` in the birth", FIXED[i].0))),
        };
        let version = int(FORMAT)?;
        if version != u32::from(FORMAT_VERSION) {
            return Err(err(format!(
                "mapping version {version}; this reader reads {FORMAT_VERSION}"
            )));
        }
        let controller: ControllerVersion = match values[CONTROLLER] {
            Some(Value::String(s)) => s
                .parse()
                .map_err(|_| err(format!("`{s}` is no controller version")))?,
            _ => return Err(err("no `Stream/controller` in the birth")),
        };
        let protocol = u16::try_from(int(PROTOCOL)?)
            .ok()
            .and_then(ProtocolVersion::from_number)
            .ok_or_else(|| err("`Stream/protocol` is neither 1 nor 2"))?;
        let recipe_id = match values[RECIPE] {
            Some(Value::Int(n)) => {
                Some(u8::try_from(*n).map_err(|_| err("`Stream/recipe_id` is no u8"))?)
            }
            _ => None,
        };
        let frequency = match values[FREQUENCY] {
            Some(Value::Double(f)) => *f,
            _ => return Err(err("no `Stream/frequency` in the birth")),
        };
        if fields.is_empty() || fields[0].name() != "timestamp" {
            return Err(err("the fields do not start with `RTDE/timestamp`"));
        }
        let session = long(SESSION)?;
        Ok(Birth {
            stream: Arc::new(Header {
                protocol,
                controller,
                frequency,
                recipe_id,
                started_unix_micros: 0,
                fields,
            }),
            session,
            aliases,
            names,
        })
    }

    /// Reads a DDATA of device `robot` back into the batch it was made of.
    ///
    /// # Errors
    /// Metrics the birth did not declare, packages with missing fields or values of
    /// the wrong type, package numbers that do not follow each other.
    pub fn batch(&self, robot: &str, p: &Payload) -> Result<Batch, String> {
        let mut batch = Batch {
            robot: robot.to_owned(),
            session: self.session,
            seq: 0,
            first: 0,
            dropped: 0,
            skipped: 0,
            lost: 0,
            t0_unix_us: 0,
            t0_timestamp: 0.0,
            stream: Arc::clone(&self.stream),
            payloads: Vec::new(),
        };
        let fields = &self.stream.fields;
        let size = self.stream.payload_size();
        // The next field expected in the current package; `fields.len()` between packages.
        let mut next = fields.len();
        let mut at = 0;
        let mut count = 0u64;
        for m in &p.metrics {
            let index = m
                .alias
                .and_then(|a| self.aliases.get(&a))
                .or_else(|| m.name.as_ref().and_then(|n| self.names.get(n)))
                .copied()
                .ok_or_else(|| err("a metric the birth did not declare"))?;
            let value = m.value.as_ref();
            let long = || match value {
                Some(Value::Long(n)) => Ok(*n),
                _ => Err(err(format!("`{}` is no long value", FIXED[index].0))),
            };
            match index {
                BATCH => batch.seq = long()?,
                7 => batch.dropped = long()?,
                8 => batch.skipped = long()?,
                9 => batch.lost = long()?,
                10 => batch.t0_unix_us = i64::from_ne_bytes(long()?.to_ne_bytes()),
                T0_TIMESTAMP => match value {
                    Some(Value::Double(t)) => batch.t0_timestamp = *t,
                    _ => return Err(err("`Bridge/t0_timestamp` is no double")),
                },
                PACKAGE => {
                    if next != fields.len() {
                        return Err(err(format!("package {count} lacks fields")));
                    }
                    let n = long()?;
                    if count == 0 {
                        batch.first = n;
                    } else if n != batch.first + count {
                        return Err(err(format!(
                            "package {n} does not follow package {}",
                            batch.first + count - 1
                        )));
                    }
                    count += 1;
                    next = 0;
                    batch.payloads.resize(batch.payloads.len() + size, 0);
                    at = batch.payloads.len() - size;
                }
                i if i >= FIXED.len() => {
                    let j = i - FIXED.len();
                    if j != next {
                        return Err(err(format!("package {count}: fields out of order")));
                    }
                    let t = fields[j].wire_type();
                    let ok = value
                        .is_some_and(|v| write_be(t, v, &mut batch.payloads[at..at + t.size()]));
                    if !ok {
                        return Err(err(format!(
                            "package {count}: `{}` is no {t} value",
                            fields[j].name()
                        )));
                    }
                    at += t.size();
                    next += 1;
                }
                _ => {}
            }
        }
        if next != fields.len() {
            return Err(err(format!("package {count} lacks fields")));
        }
        Ok(batch)
    }
}

/// The edge node's birth: its `bdSeq` and the `Node Control/Rebirth` command a host
/// application may write; neither has an alias (the specification forbids one on
/// `Node Control/Rebirth`).
pub(crate) fn node_birth(bd_seq: u8, now_ms: u64) -> Payload {
    Payload {
        timestamp: Some(now_ms),
        metrics: vec![
            Metric::new(
                BD_SEQ,
                datatype::INT64,
                now_ms,
                Value::Long(u64::from(bd_seq)),
            ),
            Metric::new(REBIRTH, datatype::BOOLEAN, now_ms, Value::Boolean(false)),
        ],
        seq: None,
    }
}

/// The edge node's death (its MQTT will, and its goodbye): the `bdSeq` of its birth
/// and no sequence number.
pub(crate) fn node_death(bd_seq: u8, now_ms: u64) -> Payload {
    Payload {
        timestamp: Some(now_ms),
        metrics: vec![Metric::new(
            BD_SEQ,
            datatype::INT64,
            now_ms,
            Value::Long(u64::from(bd_seq)),
        )],
        seq: None,
    }
}

/// The birth/death sequence metric, an Int64 as in the specification's NBIRTH example (its
/// NDEATH example says UInt64; both put the number in `long_value`, which is what hosts
/// read).
pub const BD_SEQ: &str = "bdSeq";
/// The node command that asks for the births again.
pub const REBIRTH: &str = "Node Control/Rebirth";

/// Whether an NCMD payload asks for a rebirth (`Node Control/Rebirth` = true).
pub(crate) fn asks_rebirth(p: &Payload) -> bool {
    p.metrics
        .iter()
        .any(|m| m.name.as_deref() == Some(REBIRTH) && m.value == Some(Value::Boolean(true)))
}

/// The `bdSeq` of an NBIRTH or NDEATH.
///
/// ```
/// use rtde_bridge::sparkplug::device::{BD_SEQ, bd_seq_of};
/// use rtde_bridge::sparkplug::proto::{Metric, Payload, Value, datatype};
///
/// let death = Payload {
///     timestamp: Some(1),
///     metrics: vec![Metric::new(BD_SEQ, datatype::INT64, 1, Value::Long(7))],
///     seq: None,
/// };
/// assert_eq!(bd_seq_of(&death), Some(7));
/// ```
#[must_use]
pub fn bd_seq_of(p: &Payload) -> Option<u64> {
    p.metrics.iter().find_map(|m| match (&m.name, &m.value) {
        (Some(n), Some(Value::Long(v))) if n == BD_SEQ => Some(*v),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Arc<Header> {
        let names = [
            "timestamp",
            "actual_q",
            "robot_mode",
            "actual_digital_input_bits",
        ];
        Arc::new(Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 500.0,
            recipe_id: Some(1),
            started_unix_micros: 0,
            fields: names
                .iter()
                .map(|n| lookup(Direction::Output, n).unwrap())
                .collect(),
        })
    }

    fn batch(first: u64, count: usize) -> Batch {
        let stream = stream();
        let mut payloads = Vec::new();
        for i in 0..count {
            let t = 10.0 + (first as f64 + i as f64) * 0.002;
            payloads.extend_from_slice(&t.to_be_bytes());
            for j in 0..6u8 {
                payloads.extend_from_slice(&(-f64::from(j) * t).to_be_bytes());
            }
            payloads.extend_from_slice(&(-3i32).to_be_bytes());
            payloads.extend_from_slice(&u64::MAX.to_be_bytes());
        }
        Batch {
            robot: "arm-1".into(),
            session: 77,
            seq: 4,
            first,
            dropped: 3,
            skipped: 2,
            lost: 1,
            t0_unix_us: 1_764_576_000_123_456,
            t0_timestamp: 10.0,
            stream,
            payloads,
        }
    }

    #[test]
    fn a_batch_goes_out_as_ddata_and_reads_back_bit_for_bit() {
        let mut device = Device::new("arm-1".into(), 2, 77);
        let b = batch(20, 5);
        let birth = device.birth(&b.stream, 1);
        // Names, aliases, datatypes in the birth; unknown values are null.
        assert!(
            birth
                .metrics
                .iter()
                .all(|m| m.name.is_some() && m.datatype.is_some())
        );
        assert_eq!(birth.metrics[0].alias, Some(3 << 16));
        let q = &birth.metrics[FIXED.len() + 1];
        assert_eq!(q.name.as_deref(), Some("RTDE/actual_q"));
        assert_eq!(q.datatype, Some(datatype::DOUBLE_ARRAY));
        assert!(q.is_null && q.value.is_none());
        let data = device.data(&b, 2);
        // Aliases only in data, and every metric has its timestamp.
        assert!(
            data.metrics
                .iter()
                .all(|m| m.name.is_none() && m.datatype.is_none())
        );
        assert!(data.metrics.iter().all(|m| m.timestamp.is_some()));
        // Package 1's timestamp: t0 + (T1 - T0), 20 packages on at 500 Hz... in ms.
        let pkg1 = &data.metrics[6 + FIXED.len() - FIXED.len() + 5];
        assert_eq!(pkg1.value, Some(Value::Long(21)));
        assert_eq!(pkg1.timestamp, Some(1_764_576_000_123 + 42));
        let wire = Payload::decode(&data.encode()).unwrap();
        let read = Birth::read(&Payload::decode(&birth.encode()).unwrap()).unwrap();
        assert_eq!(read.stream, b.stream);
        assert_eq!(read.batch("arm-1", &wire).unwrap(), b);
        // A rebirth reports the last package's values as current.
        let again = device.birth(&b.stream, 3);
        assert_eq!(
            again.metrics[FIXED.len() + 2].value,
            Some(Value::Int((-3i32).cast_unsigned()))
        );
        assert_eq!(again.metrics[PACKAGE].value, Some(Value::Long(24)));
    }

    #[test]
    fn arrays_are_packed_little_endian() {
        let be: Vec<u8> = [1.0f64, -2.5]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let le: Vec<u8> = [1.0f64, -2.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(value_of(WireType::Vector6d, &be), Value::Bytes(le.clone()));
        let mut back = vec![0; 16];
        assert!(write_be(WireType::Vector6d, &Value::Bytes(le), &mut back));
        assert_eq!(back, be);
        // The specification's Int32Array example: [-1, 315338746].
        let be: Vec<u8> = [-1i32, 315_338_746]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        assert_eq!(
            value_of(WireType::Vector6Int32, &be),
            Value::Bytes(vec![0xff, 0xff, 0xff, 0xff, 0xfa, 0xaf, 0xcb, 0x12])
        );
    }

    /// DDATA changed at random (a fixed seed) is read or refused, never a panic.
    #[test]
    fn mutated_ddata_is_read_or_refused() {
        let mut device = Device::new("arm-1".into(), 0, 77);
        let b = batch(0, 3);
        let birth = Birth::read(&device.birth(&b.stream, 1)).unwrap();
        let valid = device.data(&b, 2).encode();
        let mut outcomes = std::collections::HashMap::new();
        let mut next = crate::sparkplug::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..20_000 {
            let mut bytes = valid.clone();
            #[allow(clippy::cast_possible_truncation)] // indices and bytes from the generator
            for _ in 0..=next() % 3 {
                let at = next() as usize % bytes.len();
                bytes[at] = next() as u8;
            }
            if let Ok(p) = Payload::decode(&bytes) {
                let read = birth.batch("arm-1", &p);
                *outcomes.entry(read.is_ok()).or_insert(0) += 1;
            }
        }
        assert!(outcomes.len() == 2, "both read and refused: {outcomes:?}");
    }

    #[test]
    fn ddata_that_does_not_fit_its_birth_is_refused() {
        let mut device = Device::new("arm-1".into(), 0, 77);
        let b = batch(0, 2);
        let birth = Birth::read(&device.birth(&b.stream, 1)).unwrap();
        let good = device.data(&b, 2);
        let mut missing = good.clone();
        missing.metrics.pop();
        assert!(
            birth
                .batch("arm-1", &missing)
                .unwrap_err()
                .contains("lacks fields")
        );
        let mut skipped = good.clone();
        skipped.metrics.remove(6);
        assert!(birth.batch("arm-1", &skipped).is_err());
        let mut stranger = good;
        stranger.metrics[0].alias = Some(9 << 16);
        assert!(birth.batch("arm-1", &stranger).is_err());
    }
}
