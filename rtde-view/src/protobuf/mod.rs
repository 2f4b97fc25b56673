//! The protobuf of MCAP files, written and read without a protobuf compiler or crate: the
//! wire format's few primitives, and descriptors (`google.protobuf.FileDescriptorSet`)
//! built from declarations, which MCAP readers decode the messages with.
//!
//! - [`outputs`]: `rtde.Outputs`, its descriptor made from the recipe;
//! - [`foxglove`]: Foxglove's `FrameTransforms` and `PoseInFrame`, with the files,
//!   field numbers and names of Foxglove's published `.proto` schemas;
//! - [`messages`]: `rtde.Gap` and `rtde.Modes`;
//! - [`dynamic`]: any message read by its descriptor, as named numbers.

pub(crate) mod dynamic;
pub(crate) mod foxglove;
pub(crate) mod messages;
pub(crate) mod outputs;

// google.protobuf.FieldDescriptorProto.Type and .Label.
pub(crate) const TYPE_DOUBLE: u64 = 1;
pub(crate) const TYPE_INT64: u64 = 3;
pub(crate) const TYPE_UINT64: u64 = 4;
pub(crate) const TYPE_INT32: u64 = 5;
pub(crate) const TYPE_BOOL: u64 = 8;
pub(crate) const TYPE_STRING: u64 = 9;
pub(crate) const TYPE_MESSAGE: u64 = 11;
pub(crate) const TYPE_UINT32: u64 = 13;
pub(crate) const LABEL_OPTIONAL: u64 = 1;
pub(crate) const LABEL_REPEATED: u64 = 3;

// Wire types.
pub(crate) const VARINT: u64 = 0;
pub(crate) const FIXED64: u64 = 1;
pub(crate) const LENGTH: u64 = 2;
pub(crate) const FIXED32: u64 = 5;

// Each byte pushed is below 0x100: seven bits masked, or the last, below 0x80.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits, with the continuation bit.
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// How many bytes [`varint`] writes for `v`.
pub(crate) fn varint_len(v: u64) -> u64 {
    u64::from((64 - (v | 1).leading_zeros()).div_ceil(7))
}

pub(crate) fn tag(out: &mut Vec<u8>, number: u64, wire: u64) {
    varint(out, number << 3 | wire);
}

pub(crate) fn bytes_field(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    tag(out, number, LENGTH);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(crate) fn varint_field(out: &mut Vec<u8>, number: u64, v: u64) {
    tag(out, number, VARINT);
    varint(out, v);
}

pub(crate) fn double_field(out: &mut Vec<u8>, number: u64, v: f64) {
    tag(out, number, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Reads the bytes of a message.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

/// One field read from a message: its number and its value by wire type.
pub(crate) enum Item<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Reader<'a> {
    pub(crate) fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self
                .bytes
                .split_first()
                .ok_or("a varint runs past the end")?;
            self.bytes = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("a varint longer than ten bytes".into())
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err(format!("{n} bytes announced, {} left", self.bytes.len()));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// The next field, `None` at the end of the message.
    pub(crate) fn next_field(&mut self) -> Result<Option<(u64, Item<'a>)>, String> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        let item = match wire {
            VARINT => Item::Varint(self.varint()?),
            FIXED64 => {
                let mut eight = [0u8; 8];
                eight.copy_from_slice(self.take(8)?);
                Item::Fixed64(u64::from_le_bytes(eight))
            }
            LENGTH => {
                let n = usize::try_from(self.varint()?).map_err(|_| "a length beyond memory")?;
                Item::Bytes(self.take(n)?)
            }
            FIXED32 => {
                let mut four = [0u8; 4];
                four.copy_from_slice(self.take(4)?);
                Item::Fixed32(u32::from_le_bytes(four))
            }
            other => return Err(format!("wire type {other} in field {number}")),
        };
        Ok(Some((number, item)))
    }
}

/// A field of a message declaration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldDef<'a> {
    pub(crate) name: &'a str,
    pub(crate) number: u64,
    pub(crate) repeated: bool,
    pub(crate) kind: u64,
    /// The message type, fully qualified with a leading dot (`.foxglove.Vector3`).
    pub(crate) type_name: Option<&'a str>,
    /// The JSON name, when it is not the one protoc derives (camel case).
    pub(crate) json_name: Option<&'a str>,
}

impl<'a> FieldDef<'a> {
    /// A singular field of a scalar type.
    pub(crate) const fn scalar(name: &'a str, number: u64, kind: u64) -> Self {
        FieldDef {
            name,
            number,
            repeated: false,
            kind,
            type_name: None,
            json_name: None,
        }
    }

    /// A singular field of a message type.
    pub(crate) const fn message(name: &'a str, number: u64, type_name: &'a str) -> Self {
        FieldDef {
            name,
            number,
            repeated: false,
            kind: TYPE_MESSAGE,
            type_name: Some(type_name),
            json_name: None,
        }
    }

    pub(crate) const fn repeated(mut self) -> Self {
        self.repeated = true;
        self
    }
}

/// A `.proto` file: its name, package, imports and messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileDef<'a> {
    pub(crate) name: &'a str,
    pub(crate) package: &'a str,
    pub(crate) dependencies: &'a [&'a str],
    /// Each message's name and fields.
    pub(crate) messages: &'a [(&'a str, &'a [FieldDef<'a>])],
}

/// A serialized `google.protobuf.FileDescriptorSet` of `files`, each after the files it
/// imports.
pub(crate) fn descriptor_set(files: &[FileDef<'_>]) -> Vec<u8> {
    let mut set = Vec::new();
    for file in files {
        let mut out = Vec::new();
        bytes_field(&mut out, 1, file.name.as_bytes());
        bytes_field(&mut out, 2, file.package.as_bytes());
        for dependency in file.dependencies {
            bytes_field(&mut out, 3, dependency.as_bytes());
        }
        for (name, fields) in file.messages {
            let mut message = Vec::new();
            bytes_field(&mut message, 1, name.as_bytes());
            for f in *fields {
                let mut field = Vec::new();
                bytes_field(&mut field, 1, f.name.as_bytes());
                varint_field(&mut field, 3, f.number);
                let label = if f.repeated {
                    LABEL_REPEATED
                } else {
                    LABEL_OPTIONAL
                };
                varint_field(&mut field, 4, label);
                varint_field(&mut field, 5, f.kind);
                if let Some(type_name) = f.type_name {
                    bytes_field(&mut field, 6, type_name.as_bytes());
                }
                if let Some(json) = f.json_name {
                    bytes_field(&mut field, 10, json.as_bytes());
                }
                bytes_field(&mut message, 2, &field);
            }
            bytes_field(&mut out, 4, &message);
        }
        bytes_field(&mut out, 12, b"proto3");
        bytes_field(&mut set, 1, &out);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths_are_what_is_written() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            varint(&mut out, v);
            assert_eq!(varint_len(v), out.len() as u64, "{v}");
        }
    }
}
