//! Any protobuf message read by the descriptor its MCAP schema carries, as the numbers it
//! holds, each named by its path (`actual_q[0]`, `pose.position.x`,
//! `transforms[5].translation.z`), and its top-level texts: what `rtde plot` picks fields
//! of, from any channel.

use std::collections::HashMap;

use super::{Item, Reader, TYPE_MESSAGE, TYPE_STRING};

/// A field of a message type, as its descriptor declares it.
#[derive(Debug, Clone)]
struct FieldInfo {
    name: String,
    number: u64,
    kind: u64,
    repeated: bool,
    /// For a message field: its type's full name, with the leading dot.
    type_name: String,
}

/// The message types of a `google.protobuf.FileDescriptorSet`, by full name
/// (`.foxglove.PoseInFrame`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Descriptors {
    types: HashMap<String, Vec<FieldInfo>>,
}

/// Where a message's numbers and texts go.
type Sink<'a> = (&'a mut Vec<(String, f64)>, &'a mut Vec<(String, String)>);

/// The bytes of each length-delimited field `number` of a message.
fn each_bytes(bytes: &[u8], number: u64) -> Result<Vec<&[u8]>, String> {
    let mut r = Reader { bytes };
    let mut all = Vec::new();
    while let Some((n, item)) = r.next_field()? {
        if let (true, Item::Bytes(b)) = (n == number, item) {
            all.push(b);
        }
    }
    Ok(all)
}

fn text(bytes: &[u8], number: u64) -> Result<String, String> {
    Ok(each_bytes(bytes, number)?
        .last()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default())
}

fn number(bytes: &[u8], number: u64) -> Result<u64, String> {
    let mut r = Reader { bytes };
    let mut found = 0;
    while let Some((n, item)) = r.next_field()? {
        if let (true, Item::Varint(v)) = (n == number, item) {
            found = v;
        }
    }
    Ok(found)
}

impl Descriptors {
    /// Reads a serialized `FileDescriptorSet`.
    pub(crate) fn parse(set: &[u8]) -> Result<Descriptors, String> {
        let mut d = Descriptors::default();
        for file in each_bytes(set, 1)? {
            let package = text(file, 2)?;
            let prefix = if package.is_empty() {
                String::new()
            } else {
                format!(".{package}")
            };
            for message in each_bytes(file, 4)? {
                d.add(&prefix, message)?;
            }
        }
        Ok(d)
    }

    fn add(&mut self, prefix: &str, message: &[u8]) -> Result<(), String> {
        let full = format!("{prefix}.{}", text(message, 1)?);
        let mut fields = Vec::new();
        for field in each_bytes(message, 2)? {
            fields.push(FieldInfo {
                name: text(field, 1)?,
                number: number(field, 3)?,
                repeated: number(field, 4)? == super::LABEL_REPEATED,
                kind: number(field, 5)?,
                type_name: text(field, 6)?,
            });
        }
        for nested in each_bytes(message, 3)? {
            self.add(&full, nested)?;
        }
        self.types.insert(full, fields);
        Ok(())
    }

    /// The numbers of a message of type `name`, each with its path, appended to `out`
    /// (booleans are 0 or 1), and its top-level texts to `texts`; bytes are left out.
    pub(crate) fn numbers(
        &self,
        name: &str,
        bytes: &[u8],
        out: &mut Vec<(String, f64)>,
        texts: &mut Vec<(String, String)>,
    ) -> Result<(), String> {
        self.flatten(&format!(".{name}"), bytes, "", 0, &mut (out, texts))
    }

    fn flatten(
        &self,
        type_name: &str,
        bytes: &[u8],
        prefix: &str,
        depth: usize,
        sink: &mut Sink<'_>,
    ) -> Result<(), String> {
        // Deeper than any schema here: a type that contains itself, in a hostile file.
        if depth > 32 {
            return Err("messages nested more than 32 deep".into());
        }
        let fields = self
            .types
            .get(type_name)
            .ok_or_else(|| format!("the descriptor has no type `{type_name}`"))?;
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut r = Reader { bytes };
        while let Some((n, item)) = r.next_field()? {
            let Some(field) = fields.iter().find(|f| f.number == n) else {
                continue;
            };
            let index = seen.entry(n).or_default();
            let path = |i: usize| {
                let dot = if prefix.is_empty() { "" } else { "." };
                if field.repeated {
                    format!("{prefix}{dot}{}[{i}]", field.name)
                } else {
                    format!("{prefix}{dot}{}", field.name)
                }
            };
            match item {
                Item::Bytes(inner) if field.kind == TYPE_MESSAGE => {
                    let at = path(*index);
                    self.flatten(&field.type_name, inner, &at, depth + 1, sink)?;
                    *index += 1;
                }
                Item::Bytes(inner) if field.kind == TYPE_STRING && depth == 0 => {
                    let text = String::from_utf8_lossy(inner).into_owned();
                    sink.1.push((path(*index), text));
                    *index += 1;
                }
                Item::Bytes(inner) => {
                    for v in packed(field.kind, inner)? {
                        sink.0.push((path(*index), v));
                        *index += 1;
                    }
                }
                scalar => {
                    if let Some(v) = scalar_value(field.kind, &scalar) {
                        sink.0.push((path(*index), v));
                    }
                    *index += 1;
                }
            }
        }
        Ok(())
    }
}

/// A scalar of protobuf type `kind` as a number; `None` for a wire type that does not
/// carry it.
// Numbers for a plot: integers beyond 2^53 lose their last bits, as in any plotting tool.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_wrap)]
fn scalar_value(kind: u64, item: &Item<'_>) -> Option<f64> {
    Some(match (kind, item) {
        (1 | 6 | 16, Item::Fixed64(v)) => match kind {
            1 => f64::from_bits(*v),
            6 => *v as f64,
            _ => *v as i64 as f64,
        },
        (2 | 7 | 15, Item::Fixed32(v)) => match kind {
            2 => f64::from(f32::from_bits(*v)),
            7 => f64::from(*v),
            _ => f64::from(*v as i32),
        },
        // int64, int32 (sign-extended on the wire), enum.
        (3 | 5 | 14, Item::Varint(v)) => *v as i64 as f64,
        (4 | 13 | 8, Item::Varint(v)) => *v as f64,
        (17 | 18, Item::Varint(v)) => ((*v >> 1) as i64 ^ -((*v & 1) as i64)) as f64,
        _ => return None,
    })
}

/// The values of a packed repeated scalar field; none for texts and bytes.
fn packed(kind: u64, bytes: &[u8]) -> Result<Vec<f64>, String> {
    let mut r = Reader { bytes };
    let mut all = Vec::new();
    match kind {
        9 | 12 => {}
        1 | 6 | 16 => {
            while !r.bytes.is_empty() {
                let eight: [u8; 8] = r.take(8)?.try_into().map_err(|_| "cut short")?;
                let item = Item::Fixed64(u64::from_le_bytes(eight));
                all.extend(scalar_value(kind, &item));
            }
        }
        2 | 7 | 15 => {
            while !r.bytes.is_empty() {
                let four: [u8; 4] = r.take(4)?.try_into().map_err(|_| "cut short")?;
                let item = Item::Fixed32(u32::from_le_bytes(four));
                all.extend(scalar_value(kind, &item));
            }
        }
        _ => {
            while !r.bytes.is_empty() {
                let item = Item::Varint(r.varint()?);
                all.extend(scalar_value(kind, &item));
            }
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::foxglove;

    #[test]
    fn a_pose_in_frame_reads_back_by_its_descriptor() {
        let d = Descriptors::parse(&foxglove::pose_in_frame_descriptor()).unwrap();
        let mut bytes = Vec::new();
        foxglove::encode_pose_in_frame(
            "base",
            [0.1, -0.2, 0.3],
            [0.0, 0.0, 0.6, 0.8],
            1_500_000_000,
            &mut bytes,
        );
        let mut numbers = Vec::new();
        let mut texts = Vec::new();
        d.numbers("foxglove.PoseInFrame", &bytes, &mut numbers, &mut texts)
            .unwrap();
        assert_eq!(texts, [("frame_id".to_owned(), "base".to_owned())]);
        let get = |p: &str| numbers.iter().find(|(n, _)| n == p).map(|&(_, v)| v);
        assert_eq!(get("timestamp.seconds"), Some(1.0));
        assert_eq!(get("timestamp.nanos"), Some(500_000_000.0));
        assert_eq!(get("pose.position.y"), Some(-0.2));
        assert_eq!(get("pose.orientation.w"), Some(0.8));
    }

    #[test]
    fn a_type_that_contains_itself_is_an_error_not_a_stack_overflow() {
        use crate::protobuf::{FieldDef, FileDef, descriptor_set};
        let set = descriptor_set(&[FileDef {
            name: "loop.proto",
            package: "l",
            dependencies: &[],
            messages: &[("M", &[FieldDef::message("m", 1, ".l.M")])],
        }]);
        let d = Descriptors::parse(&set).unwrap();
        // Each level a field 1 holding the next: 40 deep.
        let mut bytes = Vec::new();
        for _ in 0..40 {
            let mut outer = vec![0x0a];
            crate::protobuf::varint(&mut outer, bytes.len() as u64);
            outer.extend_from_slice(&bytes);
            bytes = outer;
        }
        assert!(
            d.numbers("l.M", &bytes, &mut Vec::new(), &mut Vec::new())
                .is_err()
        );
    }
}
