//! The Sparkplug B `Payload` message (protobuf, proto2), encoded and decoded by hand: the
//! part of the schema the bridge writes and reads (payload timestamp, metrics, seq; a
//! metric's name, alias, timestamp, datatype, `is_historical`, `is_null` and its scalar,
//! string or bytes value). Fields outside that part are skipped when decoding, as
//! protobuf readers do; data sets, templates, property sets and metadata are not read.
//!
//! ```text
//! Payload  1 timestamp  varint      Metric  1 name           bytes
//!          2 metrics    bytes (*)           2 alias          varint
//!          3 seq        varint              3 timestamp      varint
//!                                           4 datatype       varint
//!                                           5 is_historical  varint
//!                                           7 is_null        varint
//!                                          10 int_value      varint (uint32)
//!                                          11 long_value     varint (uint64)
//!                                          12 float_value    fixed32
//!                                          13 double_value   fixed64
//!                                          14 boolean_value  varint
//!                                          15 string_value   bytes
//!                                          16 bytes_value    bytes
//! ```
//!
//! ```
//! use rtde_bridge::sparkplug::proto::{Metric, Payload, Value, datatype};
//!
//! let payload = Payload {
//!     timestamp: Some(1_764_576_000_000),
//!     metrics: vec![Metric::new("bdSeq", datatype::INT64, 1_764_576_000_000, Value::Long(3))],
//!     seq: None,
//! };
//! let bytes = payload.encode();
//! assert_eq!(Payload::decode(&bytes).unwrap(), payload);
//! ```

/// The Sparkplug B datatypes the bridge uses (the specification's `DataType` enum).
pub mod datatype {
    /// Signed 32-bit integer, in `int_value` (two's complement).
    pub const INT32: u32 = 3;
    /// Signed 64-bit integer, in `long_value` (two's complement).
    pub const INT64: u32 = 4;
    /// Unsigned 8-bit integer, in `int_value`.
    pub const UINT8: u32 = 5;
    /// Unsigned 16-bit integer, in `int_value`.
    pub const UINT16: u32 = 6;
    /// Unsigned 32-bit integer, in `int_value`.
    pub const UINT32: u32 = 7;
    /// Unsigned 64-bit integer, in `long_value`.
    pub const UINT64: u32 = 8;
    /// 64-bit float, in `double_value`.
    pub const DOUBLE: u32 = 10;
    /// Boolean, in `boolean_value`.
    pub const BOOLEAN: u32 = 11;
    /// UTF-8 string, in `string_value`.
    pub const STRING: u32 = 12;
    /// Signed 32-bit integers, packed little-endian in `bytes_value`.
    pub const INT32_ARRAY: u32 = 24;
    /// Unsigned 32-bit integers, packed little-endian in `bytes_value`.
    pub const UINT32_ARRAY: u32 = 28;
    /// 64-bit floats, packed little-endian in `bytes_value`.
    pub const DOUBLE_ARRAY: u32 = 31;
}

/// A metric's value: the `oneof value` of the schema, without data sets and templates.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// `int_value` (Int8 to Int32, UInt8 to UInt32).
    Int(u32),
    /// `long_value` (Int64, UInt64, DateTime).
    Long(u64),
    /// `float_value`.
    Float(f32),
    /// `double_value`.
    Double(f64),
    /// `boolean_value`.
    Boolean(bool),
    /// `string_value`.
    String(String),
    /// `bytes_value` (Bytes, File, and every array type).
    Bytes(Vec<u8>),
}

/// One metric of a payload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metric {
    /// The name; in births, and in data messages of nodes that use no aliases.
    pub name: Option<String>,
    /// The alias the birth tied to the name.
    pub alias: Option<u64>,
    /// When the value was taken, ms since the Unix epoch (UTC).
    pub timestamp: Option<u64>,
    /// The [`datatype`]; in births.
    pub datatype: Option<u32>,
    /// The value is not a current one.
    pub is_historical: bool,
    /// The value is null (and `value` is `None`).
    pub is_null: bool,
    /// The value, unless null.
    pub value: Option<Value>,
}

impl Metric {
    /// A named metric with its datatype, timestamp and value, as births carry them.
    #[must_use]
    pub fn new(name: &str, datatype: u32, timestamp: u64, value: Value) -> Metric {
        Metric {
            name: Some(name.to_owned()),
            datatype: Some(datatype),
            timestamp: Some(timestamp),
            value: Some(value),
            ..Metric::default()
        }
    }
}

/// A Sparkplug B payload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Payload {
    /// When the message was published, ms since the Unix epoch (UTC).
    pub timestamp: Option<u64>,
    /// The metrics, in order.
    pub metrics: Vec<Metric>,
    /// The edge node's message sequence number (0 to 255); absent in NDEATH.
    pub seq: Option<u64>,
}

/// Bytes that are no Sparkplug B payload this module reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a Sparkplug B payload: {0}")]
pub struct DecodeError(String);

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const BYTES: u32 = 2;
const FIXED32: u32 = 5;

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        // The low seven bits, with the continuation bit.
        #[allow(clippy::cast_possible_truncation)]
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    #[allow(clippy::cast_possible_truncation)]
    out.push(n as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, BYTES);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

impl Metric {
    fn encode_into(&self, out: &mut Vec<u8>) {
        if let Some(name) = &self.name {
            bytes(out, 1, name.as_bytes());
        }
        for (field, v) in [(2, self.alias), (3, self.timestamp)] {
            if let Some(v) = v {
                key(out, field, VARINT);
                varint(out, v);
            }
        }
        if let Some(t) = self.datatype {
            key(out, 4, VARINT);
            varint(out, u64::from(t));
        }
        for (field, flag) in [(5, self.is_historical), (7, self.is_null)] {
            if flag {
                key(out, field, VARINT);
                varint(out, 1);
            }
        }
        match &self.value {
            None => {}
            Some(Value::Int(n)) => {
                key(out, 10, VARINT);
                varint(out, u64::from(*n));
            }
            Some(Value::Long(n)) => {
                key(out, 11, VARINT);
                varint(out, *n);
            }
            Some(Value::Float(x)) => {
                key(out, 12, FIXED32);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Some(Value::Double(x)) => {
                key(out, 13, FIXED64);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Some(Value::Boolean(b)) => {
                key(out, 14, VARINT);
                varint(out, u64::from(*b));
            }
            Some(Value::String(s)) => bytes(out, 15, s.as_bytes()),
            Some(Value::Bytes(b)) => bytes(out, 16, b),
        }
    }
}

impl Payload {
    /// The payload's protobuf encoding.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.metrics.len() * 24);
        if let Some(t) = self.timestamp {
            key(&mut out, 1, VARINT);
            varint(&mut out, t);
        }
        let mut metric = Vec::with_capacity(64);
        for m in &self.metrics {
            metric.clear();
            m.encode_into(&mut metric);
            bytes(&mut out, 2, &metric);
        }
        if let Some(seq) = self.seq {
            key(&mut out, 3, VARINT);
            varint(&mut out, seq);
        }
        out
    }

    /// Decodes a payload.
    ///
    /// # Errors
    /// Bytes that are not a protobuf message, or whose fields have the wrong wire types.
    pub fn decode(b: &[u8]) -> Result<Payload, DecodeError> {
        let mut p = Payload::default();
        let mut r = Reader { b, at: 0 };
        while let Some((field, wire)) = r.key()? {
            match (field, wire) {
                (1, VARINT) => p.timestamp = Some(r.varint()?),
                (2, BYTES) => p.metrics.push(decode_metric(r.bytes()?)?),
                (3, VARINT) => p.seq = Some(r.varint()?),
                _ => r.skip(field, wire)?,
            }
        }
        Ok(p)
    }
}

fn decode_metric(b: &[u8]) -> Result<Metric, DecodeError> {
    let mut m = Metric::default();
    let mut r = Reader { b, at: 0 };
    let int32 = |n: u64| {
        u32::try_from(n).map_err(|_| DecodeError(format!("int_value {n} is over 32 bits")))
    };
    while let Some((field, wire)) = r.key()? {
        match (field, wire) {
            (1, BYTES) => m.name = Some(r.string()?),
            (2, VARINT) => m.alias = Some(r.varint()?),
            (3, VARINT) => m.timestamp = Some(r.varint()?),
            (4, VARINT) => m.datatype = Some(int32(r.varint()?)?),
            (5, VARINT) => m.is_historical = r.varint()? != 0,
            (7, VARINT) => m.is_null = r.varint()? != 0,
            (10, VARINT) => m.value = Some(Value::Int(int32(r.varint()?)?)),
            (11, VARINT) => m.value = Some(Value::Long(r.varint()?)),
            (12, FIXED32) => m.value = Some(Value::Float(f32::from_le_bytes(r.fixed()?))),
            (13, FIXED64) => m.value = Some(Value::Double(f64::from_le_bytes(r.fixed()?))),
            (14, VARINT) => m.value = Some(Value::Boolean(r.varint()? != 0)),
            (15, BYTES) => m.value = Some(Value::String(r.string()?)),
            (16, BYTES) => m.value = Some(Value::Bytes(r.bytes()?.to_vec())),
            _ => r.skip(field, wire)?,
        }
    }
    Ok(m)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn short(&self) -> DecodeError {
        DecodeError(format!("cut short at byte {}", self.at))
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.at).ok_or_else(|| self.short())?;
            self.at += 1;
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(DecodeError(format!(
            "a varint longer than 10 bytes at {}",
            self.at
        )))
    }

    /// The next field's number and wire type; `None` at the end.
    fn key(&mut self) -> Result<Option<(u32, u32)>, DecodeError> {
        if self.at == self.b.len() {
            return Ok(None);
        }
        let k = self.varint()?;
        let field =
            u32::try_from(k >> 3).map_err(|_| DecodeError(format!("field number {}", k >> 3)))?;
        // The low three bits.
        #[allow(clippy::cast_possible_truncation)]
        let wire = (k & 7) as u32;
        if field == 0 {
            return Err(DecodeError("field number 0".into()));
        }
        Ok(Some((field, wire)))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = usize::try_from(self.varint()?).map_err(|_| self.short())?;
        let end = self.at.checked_add(len).ok_or_else(|| self.short())?;
        let b = self.b.get(self.at..end).ok_or_else(|| self.short())?;
        self.at = end;
        Ok(b)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let at = self.at;
        std::str::from_utf8(self.bytes()?)
            .map(str::to_owned)
            .map_err(|_| DecodeError(format!("a string at byte {at} is not UTF-8")))
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let b = self
            .b
            .get(self.at..self.at + N)
            .and_then(|b| <[u8; N]>::try_from(b).ok())
            .ok_or_else(|| self.short())?;
        self.at += N;
        Ok(b)
    }

    fn skip(&mut self, field: u32, wire: u32) -> Result<(), DecodeError> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed::<8>().map(drop),
            BYTES => self.bytes().map(drop),
            FIXED32 => self.fixed::<4>().map(drop),
            other => Err(DecodeError(format!(
                "field {field} has wire type {other}, which proto2 payloads do not use"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes written out by hand from the protobuf encoding rules, one comment per field.
    #[test]
    fn a_payload_encodes_to_the_bytes_of_the_schema() {
        let p = Payload {
            timestamp: Some(300),
            metrics: vec![
                Metric {
                    name: Some("a".into()),
                    alias: Some(1),
                    timestamp: Some(300),
                    datatype: Some(datatype::DOUBLE),
                    value: Some(Value::Double(1.0)),
                    ..Metric::default()
                },
                Metric {
                    alias: Some(2),
                    is_null: true,
                    ..Metric::default()
                },
            ],
            seq: Some(255),
        };
        let expected: Vec<u8> = [
            &[0x08, 0xac, 0x02][..], // 1 timestamp: varint 300
            &[0x12, 0x13],           // 2 metrics: 19 bytes
            &[0x0a, 0x01, b'a'],     //   1 name: "a"
            &[0x10, 0x01],           //   2 alias: 1
            &[0x18, 0xac, 0x02],     //   3 timestamp: 300
            &[0x20, 0x0a],           //   4 datatype: Double
            &[0x69],                 //   13 double_value: fixed64
            &1.0f64.to_le_bytes(),
            &[0x12, 0x04],       // 2 metrics: 4 bytes
            &[0x10, 0x02],       //   2 alias: 2
            &[0x38, 0x01],       //   7 is_null: true
            &[0x18, 0xff, 0x01], // 3 seq: 255
        ]
        .concat();
        assert_eq!(p.encode(), expected);
        assert_eq!(Payload::decode(&expected).unwrap(), p);
    }

    #[test]
    fn every_value_round_trips_and_unknown_fields_are_skipped() {
        let values = [
            Value::Int(u32::MAX),
            Value::Long(u64::MAX),
            Value::Float(-1.5),
            Value::Double(f64::MIN_POSITIVE),
            Value::Boolean(true),
            Value::String("Node Control/Rebirth".into()),
            Value::Bytes(vec![0, 1, 2]),
        ];
        for v in values {
            let p = Payload {
                timestamp: None,
                metrics: vec![Metric::new("m", 0, 1, v)],
                seq: Some(0),
            };
            let mut bytes = p.encode();
            // A uuid (field 4) and a payload extension (field 6, fixed32) a reader ignores.
            bytes.extend_from_slice(&[0x22, 0x01, b'u', 0x35, 1, 2, 3, 4]);
            assert_eq!(Payload::decode(&bytes).unwrap(), p);
        }
    }

    /// Valid payloads with bytes changed at random (a fixed seed): each decodes or is an
    /// error, never a panic, and what decodes encodes to what decodes the same.
    #[test]
    fn mutated_payloads_decode_or_fail_and_what_decodes_round_trips() {
        let valid = Payload {
            timestamp: Some(1_764_576_000_000),
            metrics: vec![
                Metric::new(
                    "RTDE/actual_q",
                    datatype::DOUBLE_ARRAY,
                    5,
                    Value::Bytes(vec![7; 48]),
                ),
                Metric::new("Bridge/package", datatype::UINT64, 5, Value::Long(1 << 40)),
                Metric::new("RTDE/robot_mode", datatype::INT32, 5, Value::Int(u32::MAX)),
                Metric::new("RTDE/timestamp", datatype::DOUBLE, 5, Value::Double(12.5)),
            ],
            seq: Some(17),
        }
        .encode();
        let mut next = crate::sparkplug::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut decoded = 0;
        for _ in 0..20_000 {
            let mut bytes = valid.clone();
            #[allow(clippy::cast_possible_truncation)] // indices and bytes from the generator
            for _ in 0..=next() % 4 {
                let at = next() as usize % bytes.len();
                bytes[at] = next() as u8;
            }
            #[allow(clippy::cast_possible_truncation)]
            bytes.truncate(bytes.len() - next() as usize % 8);
            if let Ok(p) = Payload::decode(&bytes) {
                decoded += 1;
                let again = Payload::decode(&p.encode()).unwrap();
                // NaN doubles are not equal to themselves: compare the encodings.
                assert_eq!(again.encode(), p.encode());
            }
        }
        assert!(decoded > 0, "some mutations still decode");
    }

    #[test]
    fn bytes_cut_short_or_malformed_are_errors_not_panics() {
        let p = Payload {
            timestamp: Some(u64::MAX),
            metrics: vec![Metric::new(
                "x",
                datatype::STRING,
                7,
                Value::String("y".into()),
            )],
            seq: Some(3),
        }
        .encode();
        for end in 0..p.len() {
            // Every prefix either decodes (it ends between fields) or is an error.
            let _ = Payload::decode(&p[..end]);
        }
        assert!(Payload::decode(&p[..p.len() - 1]).is_err());
        assert!(Payload::decode(&[0x0f]).is_err(), "wire type 7");
        assert!(Payload::decode(&[0x00]).is_err(), "field 0");
        let mut endless = vec![0x08];
        endless.extend_from_slice(&[0xff; 10]);
        endless.push(0x01);
        assert!(Payload::decode(&endless).is_err(), "a varint over 10 bytes");
        assert!(Payload::decode(&[0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    }
}
