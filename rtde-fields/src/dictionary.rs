//! The registry as an object dictionary, in the shape of GB/T 32197-2015 (a robot
//! controller open-communication interface profile, after CANopen's CiA 301): an export
//! view for tools that speak that profile, not a second registry.
//!
//! GB/T 32197-2015 has since been replaced by a 2025 edition; this view follows the 2015
//! tables (index, object code, name, data type, access, M/O, PDO mapping, value range and
//! default, with subindexes for structured objects), which is what integrators still
//! receive in specifications.
//!
//! - **Index.** Every RTDE field is one object in the manufacturer-specific area: outputs
//!   in 2000h–3FFFh, inputs in 4000h–5FFFh. The index comes from the checked-in
//!   `data/dictionary.tsv`, never from a field's position, so adding a field moves no
//!   other: the generator refuses a field without an index and names the next free one.
//! - **Subindex.** A scalar is a VAR at subindex 00h; a vector is an ARRAY whose 00h holds
//!   the number of elements (UNSIGNED8) and 01h..06h the elements.
//! - **Data type.** The standard's names: BOOLEAN, UNSIGNED8, UNSIGNED32, UNSIGNED64,
//!   INTEGER32, REAL64.
//! - **Access.** `ro` for outputs (the controller writes them), `rw` for inputs.
//! - **M/O**, per generation: mandatory when every version of the generation has the field
//!   (it exists since the generation's first RTDE version, recorded as such), optional when
//!   it is version-gated or its first version is unrecorded, absent otherwise.
//! - **PDO mapping.** Every field is PDO-mappable: an output recipe is a TPDO, an input
//!   recipe an RPDO ([`pdo_mapping`]).
//!
//! ```
//! use rtde_fields::{dictionary, object, Direction, Generation};
//! use rtde_fields::dictionary::{Access, DataType, ObjectCode, Presence};
//!
//! let q = object(Direction::Output, "actual_q").unwrap();
//! assert_eq!(q.index(), 0x2006);
//! assert_eq!((q.object_code(), q.data_type(), q.access()), (ObjectCode::Array, DataType::Real64, Access::Ro));
//! assert_eq!(q.presence(Generation::ESeries), Some(Presence::Mandatory));
//! assert_eq!(dictionary().count(), 581);
//! ```

use std::fmt;

use crate::{Direction, Field, Generation, WireType, fields, lookup};

/// The kind of object, as CiA 301 codes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectCode {
    /// A single value (object code 7h).
    Var,
    /// Elements of one type, with the count at subindex 00h (object code 8h).
    Array,
}

impl ObjectCode {
    /// The standard's name: `VAR` or `ARRAY`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ObjectCode::Var => "VAR",
            ObjectCode::Array => "ARRAY",
        }
    }
}

/// A data type, by the standard's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `BOOLEAN`, one byte on the RTDE wire.
    Boolean,
    /// `UNSIGNED8`.
    Unsigned8,
    /// `UNSIGNED32`.
    Unsigned32,
    /// `UNSIGNED64`.
    Unsigned64,
    /// `INTEGER32`.
    Integer32,
    /// `REAL64`.
    Real64,
}

impl DataType {
    /// The standard's name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            DataType::Boolean => "BOOLEAN",
            DataType::Unsigned8 => "UNSIGNED8",
            DataType::Unsigned32 => "UNSIGNED32",
            DataType::Unsigned64 => "UNSIGNED64",
            DataType::Integer32 => "INTEGER32",
            DataType::Real64 => "REAL64",
        }
    }

    /// The length in a PDO, in bits: RTDE's own sizes (a BOOLEAN takes a byte).
    #[must_use]
    pub const fn bits(self) -> u8 {
        match self {
            DataType::Boolean | DataType::Unsigned8 => 8,
            DataType::Unsigned32 | DataType::Integer32 => 32,
            DataType::Unsigned64 | DataType::Real64 => 64,
        }
    }

    /// The value range, for the integer types.
    #[must_use]
    pub const fn range(self) -> Option<&'static str> {
        match self {
            DataType::Boolean => Some("0..1"),
            DataType::Unsigned8 => Some("0..255"),
            DataType::Unsigned32 => Some("0..4294967295"),
            DataType::Unsigned64 => Some("0..18446744073709551615"),
            DataType::Integer32 => Some("-2147483648..2147483647"),
            DataType::Real64 => None,
        }
    }

    /// The element type and count of a wire type (count 0 for a scalar).
    const fn of(wire: WireType) -> (DataType, u8) {
        match wire {
            WireType::Bool => (DataType::Boolean, 0),
            WireType::Uint8 => (DataType::Unsigned8, 0),
            WireType::Uint32 => (DataType::Unsigned32, 0),
            WireType::Uint64 => (DataType::Unsigned64, 0),
            WireType::Int32 => (DataType::Integer32, 0),
            WireType::Double => (DataType::Real64, 0),
            WireType::Vector3d => (DataType::Real64, 3),
            WireType::Vector6d => (DataType::Real64, 6),
            WireType::Vector6Int32 => (DataType::Integer32, 6),
            WireType::Vector6Uint32 => (DataType::Unsigned32, 6),
        }
    }
}

/// Who may write an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read only: an output.
    Ro,
    /// Read and write: an input.
    Rw,
}

impl Access {
    /// `ro` or `rw`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Access::Ro => "ro",
            Access::Rw => "rw",
        }
    }
}

/// Whether a generation's controllers all have an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Presence {
    /// Every version of the generation has it (M).
    Mandatory,
    /// Some versions have it (O): version-gated, or first version unrecorded.
    Optional,
}

impl Presence {
    /// `M` or `O`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Presence::Mandatory => "M",
            Presence::Optional => "O",
        }
    }
}

/// One RTDE field as a dictionary object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object {
    field: &'static Field,
}

impl Object {
    /// The registry entry.
    #[must_use]
    pub const fn field(&self) -> &'static Field {
        self.field
    }

    /// The index, from the checked-in dictionary file.
    #[must_use]
    pub const fn index(&self) -> u16 {
        self.field.index
    }

    /// VAR for a scalar, ARRAY for a vector.
    #[must_use]
    pub const fn object_code(&self) -> ObjectCode {
        if self.elements() == 0 {
            ObjectCode::Var
        } else {
            ObjectCode::Array
        }
    }

    /// The data type: the value's, or for an ARRAY its elements'.
    #[must_use]
    pub const fn data_type(&self) -> DataType {
        DataType::of(self.field.wire_type).0
    }

    /// The number of elements of an ARRAY (subindex 00h); 0 for a VAR.
    #[must_use]
    pub const fn elements(&self) -> u8 {
        DataType::of(self.field.wire_type).1
    }

    /// `ro` for outputs, `rw` for inputs.
    #[must_use]
    pub const fn access(&self) -> Access {
        match self.field.direction {
            Direction::Output => Access::Ro,
            Direction::Input => Access::Rw,
        }
    }

    /// M, O, or `None` where the generation lacks the field.
    #[must_use]
    pub fn presence(&self, generation: Generation) -> Option<Presence> {
        let since = self.field.since(generation)?;
        if since == generation.first_rtde_version() && self.field.since_is_recorded(generation) {
            Some(Presence::Mandatory)
        } else {
            Some(Presence::Optional)
        }
    }

    /// Whether the object can be mapped into a PDO: every RTDE field can.
    #[must_use]
    pub const fn pdo_mappable(&self) -> bool {
        true
    }

    /// The entries: `(subindex, data type)`, the count first for an ARRAY.
    pub fn entries(&self) -> impl Iterator<Item = (u8, DataType)> + '_ {
        let n = self.elements();
        let count = (n > 0).then_some((0, DataType::Unsigned8));
        let values = if n == 0 { 0..=0 } else { 1..=n };
        count
            .into_iter()
            .chain(values.map(move |sub| (sub, self.data_type())))
    }
}

/// Every field as an object, by index.
///
/// ```
/// let first = rtde_fields::dictionary().next().unwrap();
/// assert_eq!((first.index(), first.field().name()), (0x2000, "timestamp"));
/// ```
pub fn dictionary() -> impl Iterator<Item = Object> {
    let mut all: Vec<Object> = fields(Direction::Output)
        .iter()
        .chain(fields(Direction::Input))
        .map(|field| Object { field })
        .collect();
    all.sort_by_key(Object::index);
    all.into_iter()
}

/// The object of a field, by its canonical name.
#[must_use]
pub fn object(direction: Direction, name: &str) -> Option<Object> {
    lookup(direction, name).map(|field| Object { field })
}

/// One entry of a PDO mapping: which object's subindex, how many bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdoEntry {
    /// The object's index.
    pub index: u16,
    /// The subindex mapped.
    pub subindex: u8,
    /// The length in bits.
    pub bits: u8,
    /// The field's name.
    pub name: &'static str,
}

impl PdoEntry {
    /// The mapping parameter as CiA 301 writes it: index, subindex and length in one
    /// `UNSIGNED32` (`0x20060140` for `actual_q`'s first element).
    #[must_use]
    pub const fn mapping_value(&self) -> u32 {
        (self.index as u32) << 16 | (self.subindex as u32) << 8 | self.bits as u32
    }
}

/// A recipe as a PDO mapping: an output recipe is a TPDO (the controller transmits it), an
/// input recipe an RPDO. One entry per value in wire order, so the mapping describes the
/// data package's payload byte for byte.
///
/// ```
/// use rtde_fields::{pdo_mapping, Direction};
///
/// let map = pdo_mapping(Direction::Output, &["timestamp", "actual_q"]).unwrap();
/// assert_eq!(map.len(), 1 + 6);
/// assert_eq!(map[1].mapping_value(), 0x2006_0140);
/// assert_eq!(pdo_mapping(Direction::Output, &["speed_slider_mask"]).unwrap_err(), "speed_slider_mask");
/// ```
///
/// # Errors
/// The first name that is no field of `direction`.
pub fn pdo_mapping<'n>(direction: Direction, names: &[&'n str]) -> Result<Vec<PdoEntry>, &'n str> {
    let mut map = Vec::new();
    for &name in names {
        let object = object(direction, name).ok_or(name)?;
        map.extend(
            object
                .entries()
                .filter(|&(sub, _)| object.elements() == 0 || sub > 0)
                .map(|(subindex, ty)| PdoEntry {
                    index: object.index(),
                    subindex,
                    bits: ty.bits(),
                    name: object.field().name(),
                }),
        );
    }
    Ok(map)
}

/// One row of the dictionary table: an object, or one subindex of an ARRAY.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// `2006h`.
    pub index: String,
    /// `00h`.
    pub subindex: String,
    /// The field's name; `name[k]` for element `k` of an ARRAY, `name (count)` for 00h.
    pub name: String,
    /// `VAR` or `ARRAY` (the object row), empty for subindex rows.
    pub object_code: String,
    /// The data type's name.
    pub data_type: String,
    /// `ro` or `rw`.
    pub access: String,
    /// M, O or `-`, for CB3, e-Series and PolyScope X.
    pub presence: [String; 3],
    /// `yes` or `no`.
    pub pdo_mapping: String,
    /// The unit, or `-`.
    pub unit: String,
    /// The value range, or `-`.
    pub range: String,
    /// The default value, or `-`: the count of an ARRAY at 00h.
    pub default: String,
}

/// The table's columns, in order.
pub const COLUMNS: [&str; 13] = [
    "index",
    "subindex",
    "name",
    "object_code",
    "data_type",
    "access",
    "cb3",
    "e_series",
    "polyscope_x",
    "pdo_mapping",
    "unit",
    "range",
    "default",
];

/// The whole dictionary as table rows, by index, each ARRAY followed by its subindexes.
#[must_use]
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for o in dictionary() {
        let presence =
            Generation::ALL.map(|g| o.presence(g).map_or("-", Presence::as_str).to_owned());
        let f = o.field();
        for (sub, ty) in o.entries() {
            let (name, code, default) = match (o.object_code(), sub) {
                (ObjectCode::Var, _) => (f.name().to_owned(), "VAR", "-".to_owned()),
                (ObjectCode::Array, 0) => (
                    format!("{} (count)", f.name()),
                    "ARRAY",
                    o.elements().to_string(),
                ),
                (ObjectCode::Array, k) => (format!("{}[{}]", f.name(), k - 1), "", "-".to_owned()),
            };
            let count = o.object_code() == ObjectCode::Array && sub == 0;
            rows.push(Row {
                index: format!("{:04X}h", o.index()),
                subindex: format!("{sub:02X}h"),
                name,
                object_code: code.to_owned(),
                data_type: ty.as_str().to_owned(),
                access: if count { "ro" } else { o.access().as_str() }.to_owned(),
                presence: presence.clone(),
                pdo_mapping: if count { "no" } else { "yes" }.to_owned(),
                unit: if count { None } else { f.unit() }
                    .unwrap_or("-")
                    .to_owned(),
                range: ty.range().unwrap_or("-").to_owned(),
                default,
            });
        }
    }
    rows
}

impl Row {
    fn cells(&self) -> [&str; 13] {
        [
            &self.index,
            &self.subindex,
            &self.name,
            &self.object_code,
            &self.data_type,
            &self.access,
            &self.presence[0],
            &self.presence[1],
            &self.presence[2],
            &self.pdo_mapping,
            &self.unit,
            &self.range,
            &self.default,
        ]
    }
}

/// The rows as CSV (RFC 4180: a header line, cells with commas or quotes quoted).
#[must_use]
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if cell.contains([',', '"', '\n']) {
                out.push('"');
                out.push_str(&cell.replace('"', "\"\""));
                out.push('"');
            } else {
                out.push_str(cell);
            }
        }
        out.push('\n');
    };
    line(&COLUMNS);
    for r in rows {
        line(&r.cells());
    }
    out
}

/// Why [`from_csv`] refused a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub reason: &'static str,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for CsvError {}

/// Reads rows back from [`to_csv`]'s format.
///
/// # Errors
/// A header other than [`COLUMNS`], a row of another width, or an unterminated quote.
pub fn from_csv(text: &str) -> Result<Vec<Row>, CsvError> {
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| split_csv(l));
    if header
        .as_ref()
        .and_then(|h| h.as_ref().ok())
        .map(Vec::as_slice)
        != Some(&COLUMNS.map(str::to_owned)[..])
    {
        return Err(CsvError {
            line: 1,
            reason: "the header is not the dictionary's columns",
        });
    }
    let mut rows = Vec::new();
    for (i, l) in lines {
        let line = i + 1;
        let cells = split_csv(l).map_err(|reason| CsvError { line, reason })?;
        let Ok::<[String; 13], _>(
            [
                index,
                subindex,
                name,
                object_code,
                data_type,
                access,
                cb3,
                e,
                px,
                pdo,
                unit,
                range,
                default,
            ],
        ) = cells.try_into()
        else {
            return Err(CsvError {
                line,
                reason: "a row needs 13 cells",
            });
        };
        rows.push(Row {
            index,
            subindex,
            name,
            object_code,
            data_type,
            access,
            presence: [cb3, e, px],
            pdo_mapping: pdo,
            unit,
            range,
            default,
        });
    }
    Ok(rows)
}

fn split_csv(line: &str) -> Result<Vec<String>, &'static str> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => cells.push(std::mem::take(&mut cell)),
            (_, c) => cell.push(c),
        }
    }
    if quoted {
        return Err("a quoted cell is not closed");
    }
    cells.push(cell);
    Ok(cells)
}
