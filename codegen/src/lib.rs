//! Reads `rtde-fields/data/fields.tsv`, checks it, and renders `rtde-fields/src/generated.rs`.
//!
//! The data file is the single source of truth for the registry. This crate shares
//! rtde-fields' own wire-type and version parsers (by path, so that a broken generated
//! table can never stop the generator from building).

#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::path::PathBuf;

#[allow(dead_code, unreachable_pub, missing_docs)] // only the parsers are used here
#[path = "../../rtde-fields/src/version.rs"]
mod version;
#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../rtde-fields/src/wire_type.rs"]
mod wire_type;

use version::ControllerVersion;
use wire_type::WireType;

/// Where the data file lives.
#[must_use]
pub fn data_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-fields/data/fields.tsv")
}

/// Where the table of former names lives.
#[must_use]
pub fn renamed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-fields/data/renamed.tsv")
}

/// Where the table of masks lives.
#[must_use]
pub fn masks_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-fields/data/masks.tsv")
}

/// Where the object-dictionary indices live.
#[must_use]
pub fn dictionary_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-fields/data/dictionary.tsv")
}

/// Where the generated field markers of `rtde_core::wire::field` go.
#[must_use]
pub fn markers_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-core/src/wire_field.rs")
}

/// Where the generated table goes.
#[must_use]
pub fn generated_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rtde-fields/src/generated.rs")
}

/// The columns of the data file, in order.
pub const COLUMNS: [&str; 11] = [
    "direction",
    "name",
    "type",
    "cb3",
    "e_series",
    "polyscope_x",
    "unit",
    "frame",
    "unit_source",
    "source",
    "description",
];

/// One registry entry after range expansion.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The data file line it came from.
    pub line: usize,
    /// `true` for `out`, `false` for `in`.
    pub output: bool,
    /// The canonical wire name.
    pub name: String,
    /// The wire type.
    wire_type: WireType,
    /// Minimum version per generation (CB3, e-Series, PolyScope X), and whether a source
    /// records it (`?` in the data file: the generation's first RTDE version stands in).
    since: [Option<(ControllerVersion, bool)>; 3],
    /// The unit, if any.
    pub unit: Option<String>,
    /// The coordinate frame, if any.
    pub frame: Option<String>,
    /// Where the unit and frame come from (`None` when there is neither).
    pub unit_source: Option<String>,
    /// Where the version numbers come from.
    pub source: String,
    /// One line of description.
    pub description: String,
    /// `(bank, kind, index)` for a general-purpose register.
    register: Option<(&'static str, &'static str, u8)>,
    /// The object-dictionary index, from `dictionary.tsv` ([`assign_indices`]).
    pub index: u16,
}

/// Parses and checks the data file; on failure, every problem found, each as `line: message`.
///
/// # Errors
/// A list of `line: message` strings, one per problem.
pub fn parse(text: &str) -> Result<Vec<Row>, Vec<String>> {
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (line, cols) in data_lines(text, &COLUMNS, &mut errors) {
        if let Err(e) = parse_line(line, &cols, &mut rows) {
            errors.push(format!("{line}: {e}"));
        }
    }
    check_unique(&rows, &mut errors);
    if errors.is_empty() {
        Ok(rows)
    } else {
        Err(errors)
    }
}

/// The data lines of a tab-separated file after its header, as (line number, columns);
/// blank lines and `#` comments are skipped, and a header other than `columns` is an error.
fn data_lines<'a>(
    text: &'a str,
    columns: &[&str],
    errors: &mut Vec<String>,
) -> Vec<(usize, Vec<&'a str>)> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, raw)| (i + 1, raw))
        .filter(|(_, raw)| !raw.trim().is_empty() && !raw.starts_with('#'))
        .map(|(line, raw)| (line, raw.split('\t').collect::<Vec<_>>()));
    match lines.next() {
        Some((_, header)) if header == columns => {}
        Some((line, _)) => errors.push(format!(
            "{line}: the header must be the columns {columns:?}"
        )),
        None => errors.push(format!(
            "1: the file is empty; it needs the header {columns:?}"
        )),
    }
    lines.collect()
}

fn parse_line(line: usize, cols: &[&str], rows: &mut Vec<Row>) -> Result<(), String> {
    let [
        direction,
        name,
        ty,
        cb3,
        e_series,
        px,
        unit,
        frame,
        unit_source,
        source,
        description,
    ] = cols
    else {
        return Err(format!(
            "expected {} tab-separated columns, found {}",
            COLUMNS.len(),
            cols.len()
        ));
    };
    let output = match *direction {
        "out" => true,
        "in" => false,
        other => return Err(format!("direction `{other}` is neither `out` nor `in`")),
    };
    let wire_type: WireType = ty.parse().map_err(|e| format!("{e}"))?;
    let since = [
        parse_since(cb3, 3, "cb3")?,
        parse_since(e_series, 5, "e_series")?,
        parse_since(px, 10, "polyscope_x")?,
    ];
    if since.iter().all(Option::is_none) {
        return Err(format!("`{name}` exists on no generation"));
    }
    if description.trim().is_empty() || source.trim().is_empty() {
        return Err(format!("`{name}` needs a source and a description"));
    }
    let cell = |text: &str| (text != "-").then(|| text.to_owned());
    let (unit, frame, unit_source) = (cell(unit), cell(frame), cell(unit_source));
    // Every unit and frame names where it comes from, and a source names something.
    match (unit.is_some() || frame.is_some(), unit_source.is_some()) {
        (true, false) => return Err(format!("`{name}` has a unit or frame but no unit_source")),
        (false, true) => return Err(format!("`{name}` has a unit_source but no unit or frame")),
        _ => {}
    }
    for expanded in expand_range(name)? {
        let register = register_of(&expanded, wire_type)?;
        rows.push(Row {
            line,
            output,
            name: expanded,
            wire_type,
            since,
            unit: unit.clone(),
            frame: frame.clone(),
            unit_source: unit_source.clone(),
            source: (*source).to_owned(),
            description: (*description).to_owned(),
            register,
            index: 0,
        });
    }
    Ok(())
}

fn parse_since(
    text: &str,
    major: u32,
    column: &str,
) -> Result<Option<(ControllerVersion, bool)>, String> {
    match text {
        "-" => return Ok(None),
        "?" => {
            // The generation's first RTDE version stands in for `?` cells.
            let baseline = version::Generation::from_major(major).map(|g| g.first_rtde_version());
            return Ok(baseline.map(|b| (b, false)));
        }
        _ => {}
    }
    let v: ControllerVersion = text
        .parse()
        .map_err(|e| format!("{column} `{text}`: {e}"))?;
    if v.major != major {
        return Err(format!("{column} `{text}` must be a {major}.x version"));
    }
    Ok(Some((v, true)))
}

/// `input_int_register_{24..47}` becomes 24 names; a name without braces is itself.
fn expand_range(name: &str) -> Result<Vec<String>, String> {
    let Some((prefix, rest)) = name.split_once('{') else {
        return Ok(vec![name.to_owned()]);
    };
    let bad =
        || format!("`{name}`: a range is written `prefix_{{first..last}}` at the end of the name");
    let range = rest.strip_suffix('}').ok_or_else(bad)?;
    let (first, last) = range.split_once("..").ok_or_else(bad)?;
    let first: u8 = first.parse().map_err(|_| bad())?;
    let last: u8 = last.parse().map_err(|_| bad())?;
    if first > last {
        return Err(bad());
    }
    Ok((first..=last).map(|i| format!("{prefix}{i}")).collect())
}

/// Recognises the general-purpose register names and checks their type.
fn register_of(
    name: &str,
    ty: WireType,
) -> Result<Option<(&'static str, &'static str, u8)>, String> {
    let (bank, rest) = if let Some(rest) = name.strip_prefix("input_") {
        ("Input", rest)
    } else if let Some(rest) = name.strip_prefix("output_") {
        ("Output", rest)
    } else {
        return Ok(None);
    };
    let (kind, index, expected) = if let Some(i) = rest.strip_prefix("bit_register_") {
        ("Bit", i, WireType::Bool)
    } else if let Some(i) = rest.strip_prefix("int_register_") {
        ("Int", i, WireType::Int32)
    } else if let Some(i) = rest.strip_prefix("double_register_") {
        ("Double", i, WireType::Double)
    } else if rest == "bit_registers0_to_31" {
        ("BitWord", "0", WireType::Uint32)
    } else if rest == "bit_registers32_to_63" {
        ("BitWord", "32", WireType::Uint32)
    } else {
        return Ok(None);
    };
    let index: u8 = index
        .parse()
        .map_err(|_| format!("`{name}`: register index is not a number"))?;
    let max = if kind == "Bit" { 127 } else { 47 };
    if index > max || (kind == "Bit" && index < 64) {
        return Err(format!("`{name}`: no controller has this register"));
    }
    if ty != expected {
        return Err(format!(
            "`{name}` is a {kind} register and must be {expected}, not {ty}"
        ));
    }
    Ok(Some((bank, kind, index)))
}

fn check_unique(rows: &[Row], errors: &mut Vec<String>) {
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[..i] {
            if a.output == b.output && a.name.eq_ignore_ascii_case(&b.name) {
                errors.push(format!(
                    "{}: `{}` repeats `{}` of line {} (names must differ in more than case)",
                    a.line, a.name, b.name, b.line
                ));
            }
        }
    }
}

/// A former name of a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    output: bool,
    old_name: String,
    name: String,
    source: String,
}

/// The columns of the renames file, in order.
pub const RENAMED_COLUMNS: [&str; 4] = ["direction", "old_name", "name", "source"];

/// Parses the renames file and checks it against the fields: the new name must be a field
/// of that direction and the old one must not.
///
/// # Errors
/// A list of `line: message` strings, one per problem.
pub fn parse_renamed(text: &str, rows: &[Row]) -> Result<Vec<Rename>, Vec<String>> {
    let mut renames = Vec::new();
    let mut errors = Vec::new();
    for (line, cols) in data_lines(text, &RENAMED_COLUMNS, &mut errors) {
        let [direction, old_name, name, source] = cols[..] else {
            errors.push(format!(
                "{line}: expected {} tab-separated columns",
                RENAMED_COLUMNS.len()
            ));
            continue;
        };
        let output = match direction {
            "out" => true,
            "in" => false,
            other => {
                errors.push(format!(
                    "{line}: direction `{other}` is neither `out` nor `in`"
                ));
                continue;
            }
        };
        let known = |n: &str| {
            rows.iter()
                .any(|r| r.output == output && r.name.eq_ignore_ascii_case(n))
        };
        if !known(name) {
            errors.push(format!("{line}: `{name}` is not a field of that direction"));
        }
        if known(old_name) {
            errors.push(format!(
                "{line}: `{old_name}` is a field, not a former name"
            ));
        }
        renames.push(Rename {
            output,
            old_name: old_name.to_owned(),
            name: name.to_owned(),
            source: source.to_owned(),
        });
    }
    if errors.is_empty() {
        Ok(renames)
    } else {
        Err(errors)
    }
}

/// One row of the masks file: a masked input value and its mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskRow {
    mask: String,
    value: String,
    /// `PerBit { width }` or `Whole { bit }`, as rendered.
    gate: String,
    /// The output field and, for bits, the bit the value starts at.
    reads_back: Option<(String, Option<u8>)>,
}

/// The columns of the masks file, in order.
pub const MASK_COLUMNS: [&str; 4] = ["mask", "value", "gate", "reads_back"];

/// Parses the masks file and checks it against the fields: masks and values are input
/// fields, a mask is an unsigned integer wide enough for its gate, a value is gated once,
/// and the read-back field is an output field.
///
/// # Errors
/// A list of `line: message` strings, one per problem.
pub fn parse_masks(text: &str, rows: &[Row]) -> Result<Vec<MaskRow>, Vec<String>> {
    let mut masks: Vec<MaskRow> = Vec::new();
    let mut errors = Vec::new();
    for (line, cols) in data_lines(text, &MASK_COLUMNS, &mut errors) {
        match parse_mask_line(&cols, rows) {
            Ok(m) if masks.iter().any(|n| n.value == m.value) => {
                errors.push(format!("{line}: `{}` is gated twice", m.value));
            }
            Ok(m) => masks.push(m),
            Err(e) => errors.push(format!("{line}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(masks)
    } else {
        Err(errors)
    }
}

fn parse_mask_line(cols: &[&str], rows: &[Row]) -> Result<MaskRow, String> {
    let [mask, value, gate, reads_back] = cols[..] else {
        return Err(format!(
            "expected {} tab-separated columns",
            MASK_COLUMNS.len()
        ));
    };
    let field = |output: bool, name: &str| {
        rows.iter()
            .find(|r| r.output == output && r.name == name)
            .ok_or_else(|| {
                let d = if output { "output" } else { "input" };
                format!("`{name}` is not an {d} field")
            })
    };
    let mask_row = field(false, mask)?;
    let value_row = field(false, value)?;
    let mask_width = match mask_row.wire_type {
        WireType::Uint8 => 8,
        WireType::Uint32 => 32,
        WireType::Uint64 => 64,
        other => return Err(format!("mask `{mask}` is {other}, not an unsigned integer")),
    };
    let bad_gate = || format!("gate `{gate}` is neither `bits 0..N` nor `bit N`");
    let (rendered, top) = if let Some(range) = gate.strip_prefix("bits 0..") {
        let last: u8 = range.parse().map_err(|_| bad_gate())?;
        let width = last + 1;
        let value_width = match value_row.wire_type {
            WireType::Uint8 => 8,
            WireType::Uint32 => 32,
            WireType::Uint64 => 64,
            other => {
                return Err(format!(
                    "`{value}` is {other}: only an unsigned integer is gated bit by bit"
                ));
            }
        };
        if width > value_width {
            return Err(format!("`{value}` has no bit {last}"));
        }
        (format!("PerBit {{ width: {width} }}"), last)
    } else if let Some(bit) = gate.strip_prefix("bit ") {
        let bit: u8 = bit.parse().map_err(|_| bad_gate())?;
        (format!("Whole {{ bit: {bit} }}"), bit)
    } else {
        return Err(bad_gate());
    };
    if top >= mask_width {
        return Err(format!("mask `{mask}` has no bit {top}"));
    }
    let reads_back = match reads_back.split_once(' ') {
        _ if reads_back == "-" => None,
        Some((out, shift)) => {
            field(true, out)?;
            let shift = match shift {
                "-" => None,
                n => Some(
                    n.parse::<u8>()
                        .map_err(|_| format!("read-back bit `{n}` is not a number"))?,
                ),
            };
            Some((out.to_owned(), shift))
        }
        None => {
            return Err(format!(
                "reads_back `{reads_back}` is `FIELD BIT`, `FIELD -` or `-`"
            ));
        }
    };
    Ok(MaskRow {
        mask: mask.to_owned(),
        value: value.to_owned(),
        gate: rendered,
        reads_back,
    })
}

/// The columns of the dictionary file, in order.
pub const DICTIONARY_COLUMNS: [&str; 3] = ["direction", "name", "index"];

/// The object-dictionary area of each direction: outputs, then inputs.
pub const INDEX_AREAS: [(bool, u16, u16); 2] = [(true, 0x2000, 0x3FFF), (false, 0x4000, 0x5FFF)];

/// Reads the checked-in indices of the dictionary file into `rows`. Every field needs
/// exactly one, in its direction's area, used by no other field; an entry for no field is
/// an error too, so a removed field's index is not silently reused.
///
/// # Errors
/// A list of `line: message` strings; a field without an index names the next free one.
pub fn assign_indices(text: &str, rows: &mut [Row]) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut seen: Vec<(u16, String)> = Vec::new();
    for (line, cols) in data_lines(text, &DICTIONARY_COLUMNS, &mut errors) {
        let [direction, name, index] = cols[..] else {
            errors.push(format!(
                "{line}: expected {} tab-separated columns",
                DICTIONARY_COLUMNS.len()
            ));
            continue;
        };
        let output = direction == "out";
        let parsed = index
            .strip_prefix("0x")
            .and_then(|hex| u16::from_str_radix(hex, 16).ok());
        let Some(index) = parsed else {
            errors.push(format!("{line}: index `{index}` is not 0x followed by hex"));
            continue;
        };
        let area = INDEX_AREAS.iter().find(|a| a.0 == output);
        if !area.is_some_and(|&(_, lo, hi)| (lo..=hi).contains(&index)) {
            errors.push(format!(
                "{line}: index 0x{index:04X} of `{name}` is outside the {direction} area"
            ));
            continue;
        }
        if let Some((_, other)) = seen.iter().find(|(i, _)| *i == index) {
            errors.push(format!("{line}: index 0x{index:04X} is taken by `{other}`"));
            continue;
        }
        seen.push((index, name.to_owned()));
        match rows
            .iter_mut()
            .find(|r| r.output == output && r.name == name)
        {
            Some(r) if r.index != 0 => errors.push(format!("{line}: `{name}` has two indices")),
            Some(r) => r.index = index,
            None => errors.push(format!("{line}: `{name}` is no {direction} field")),
        }
    }
    for (output, lo, _) in INDEX_AREAS {
        let next = seen
            .iter()
            .map(|(i, _)| *i)
            .filter(|i| (lo..lo.saturating_add(0x2000)).contains(i))
            .max()
            .map_or(lo, |i| i + 1);
        for r in rows.iter().filter(|r| r.output == output && r.index == 0) {
            errors.push(format!(
                "{}: `{}` has no index in dictionary.tsv; append it with the next free one, 0x{next:04X}",
                r.line, r.name
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Renders the Rust module for the parsed rows, renames and masks.
#[must_use]
pub fn render(rows: &[Row], renames: &[Rename], masks: &[MaskRow]) -> String {
    let mut out = String::new();
    out.push_str(
        "// @generated by `cargo run -p rtde-codegen` from `rtde-fields/data/fields.tsv`.\n\
         // Autogenerated file - DO NOT EDIT: change the data file and regenerate.\n\n\
         use crate::{ControllerVersion, Direction, Field, Gate, Mask, ReadBack, Register, RegisterBank, RegisterKind, Renamed, WireType};\n\n\
         const fn v(major: u32, minor: u32, bugfix: u32, build: u32) -> Option<ControllerVersion> {\n    \
         Some(ControllerVersion::new(major, minor, bugfix, build))\n}\n",
    );
    for (output, upper) in [(true, "OUTPUTS"), (false, "INPUTS")] {
        let table: Vec<&Row> = rows.iter().filter(|r| r.output == output).collect();
        let n = table.len();
        let _ = writeln!(out, "\npub(crate) static {upper}: [Field; {n}] = [");
        for r in &table {
            render_field(&mut out, r);
        }
        out.push_str("];\n");
        let mut by_name: Vec<usize> = (0..n).collect();
        by_name.sort_by(|&a, &b| table[a].name.cmp(&table[b].name));
        render_index(&mut out, &format!("{upper}_BY_NAME"), &by_name);
        let mut by_folded: Vec<usize> = (0..n).collect();
        by_folded.sort_by_key(|&i| table[i].name.to_ascii_lowercase());
        render_index(&mut out, &format!("{upper}_BY_FOLDED_NAME"), &by_folded);
    }
    let _ = writeln!(
        out,
        "\npub(crate) static RENAMED: [Renamed; {}] = [",
        renames.len()
    );
    for r in renames {
        let direction = if r.output { "Output" } else { "Input" };
        let _ = writeln!(
            out,
            "    Renamed {{\n        direction: Direction::{direction},\n        old_name: {:?},\n        name: {:?},\n        source: {:?},\n    }},",
            r.old_name, r.name, r.source
        );
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "\npub(crate) static MASKS: [Mask; {}] = [",
        masks.len()
    );
    for m in masks {
        let reads_back = match &m.reads_back {
            Some((field, shift)) => {
                format!("Some(ReadBack {{ field: {field:?}, shift: {shift:?} }})")
            }
            None => "None".to_owned(),
        };
        let _ = writeln!(
            out,
            "    Mask {{\n        mask: {:?},\n        value: {:?},\n        gate: Gate::{},\n        reads_back: {reads_back},\n    }},",
            m.mask, m.value, m.gate
        );
    }
    out.push_str("];\n");
    out
}

fn render_field(out: &mut String, r: &Row) {
    let direction = if r.output { "Output" } else { "Input" };
    let since: Vec<String> = r
        .since
        .iter()
        .map(|s| match s {
            Some((v, _)) => format!("v({}, {}, {}, {})", v.major, v.minor, v.bugfix, v.build),
            None => "None".to_owned(),
        })
        .collect();
    let recorded: Vec<String> = r
        .since
        .iter()
        .map(|s| s.is_none_or(|(_, known)| known).to_string())
        .collect();
    let optional = |o: &Option<String>| match o {
        Some(u) => format!("Some({u:?})"),
        None => "None".to_owned(),
    };
    let (unit, frame, unit_source) = (
        optional(&r.unit),
        optional(&r.frame),
        optional(&r.unit_source),
    );
    let register = match r.register {
        Some((bank, kind, index)) => format!(
            "Some(Register {{ bank: RegisterBank::{bank}, kind: RegisterKind::{kind}, index: {index} }})"
        ),
        None => "None".to_owned(),
    };
    let variant = format!("{:?}", r.wire_type);
    let _ = write!(
        out,
        "    Field {{\n        \
         name: {name:?},\n        \
         direction: Direction::{direction},\n        \
         wire_type: WireType::{variant},\n        \
         since: [{since}],\n        \
         since_recorded: [{recorded}],\n        \
         unit: {unit},\n        \
         frame: {frame},\n        \
         unit_source: {unit_source},\n        \
         description: {description:?},\n        \
         source: {source:?},\n        \
         register: {register},\n        \
         index: 0x{index:04X},\n    \
         }},\n",
        name = r.name,
        since = since.join(", "),
        recorded = recorded.join(", "),
        description = r.description,
        source = r.source,
        index = r.index,
    );
}

/// Renders `rtde_core::wire::field`: one uninhabited marker type per field name, so a
/// field's Rust type is checked against the field itself, not only its wire type
/// (`RobotMode` fits `robot_mode`, not `safety_mode`). A name in both directions (input
/// registers read back as outputs) has one marker, and both must agree on the wire type.
///
/// # Errors
/// A name with two wire types, or one that is no Rust identifier.
pub fn render_markers(rows: &[Row]) -> Result<String, Vec<String>> {
    let mut by_name: Vec<(&str, WireType, Vec<&str>, &str)> = Vec::new();
    let mut errors = Vec::new();
    for r in rows {
        let direction = if r.output { "output" } else { "input" };
        match by_name.iter_mut().find(|(n, ..)| *n == r.name) {
            Some((_, ty, _, _)) if *ty != r.wire_type => errors.push(format!(
                "{}: `{}` has two wire types; wire::field needs one per name",
                r.line, r.name
            )),
            Some((_, _, dirs, _)) => dirs.push(direction),
            None => by_name.push((&r.name, r.wire_type, vec![direction], &r.description)),
        }
    }
    by_name.sort_by_key(|(n, ..)| *n);
    let mut out = String::from(
        "// @generated by `cargo run -p rtde-codegen` from `rtde-fields/data/fields.tsv`.\n\
         // Autogenerated file - DO NOT EDIT: change the data file and regenerate.\n\n",
    );
    for (name, wire, dirs, description) in &by_name {
        let identifier = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
        if !identifier {
            errors.push(format!("`{name}` is not a Rust identifier"));
            continue;
        }
        let doc = format!("`{name}`: {wire}, {}. {description}", dirs.join(" and "));
        let _ = writeln!(out, "#[doc = {doc:?}]\npub enum {name} {{}}");
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn render_index(out: &mut String, name: &str, order: &[usize]) {
    let _ = write!(
        out,
        "\npub(crate) static {name}: [u16; {}] = [",
        order.len()
    );
    for (k, i) in order.iter().enumerate() {
        out.push_str(if k % 16 == 0 { "\n    " } else { " " });
        let _ = write!(out, "{i},");
    }
    out.push_str("\n];\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "direction\tname\ttype\tcb3\te_series\tpolyscope_x\tunit\tframe\tunit_source\tsource\tdescription\n";

    fn parse_one(line: &str) -> Result<Vec<Row>, Vec<String>> {
        parse(&format!("{HEADER}{line}\n"))
    }

    #[test]
    fn markers_are_one_per_name_and_refuse_what_rust_cannot_name() {
        let rows = parse_one(
            "in\tinput_int_register_{24..25}\tINT32\t3.9.0\t5.3.0\t-\t-\t-\t-\tguide\tInt",
        )
        .unwrap();
        let markers = render_markers(&rows).unwrap();
        assert!(
            markers.contains("pub enum input_int_register_24 {}"),
            "{markers}"
        );
        assert!(markers.contains("DO NOT EDIT"));
        // The same name read back as an output with another type has no single marker.
        let mut both = rows.clone();
        let mut other = both[0].clone();
        other.output = true;
        other.wire_type = WireType::Double;
        both.push(other);
        let errors = render_markers(&both).unwrap_err();
        assert!(errors[0].contains("two wire types"), "{errors:?}");
        let mut odd = rows[0].clone();
        odd.name = "9lives".into();
        assert!(render_markers(&[odd]).unwrap_err()[0].contains("not a Rust identifier"));
    }

    #[test]
    fn every_unit_and_frame_names_its_source() {
        let rows = parse_one(
            "out\tactual_TCP_pose\tVECTOR6D\t3.4\t5.0\t-\tm, rad\tbase\tURScript manual\tguide\tPose",
        )
        .unwrap();
        assert_eq!(rows[0].frame.as_deref(), Some("base"));
        assert_eq!(rows[0].unit_source.as_deref(), Some("URScript manual"));
        for (line, needle) in [
            (
                "out\tx\tDOUBLE\t3.4\t5.0\t-\tm\t-\t-\tguide\tX",
                "no unit_source",
            ),
            (
                "out\tx\tDOUBLE\t3.4\t5.0\t-\t-\tbase\t-\tguide\tX",
                "no unit_source",
            ),
            (
                "out\tx\tDOUBLE\t3.4\t5.0\t-\t-\t-\tguide\tguide\tX",
                "no unit or frame",
            ),
        ] {
            let errors = parse_one(line).unwrap_err();
            assert!(errors[0].contains(needle), "{line}: {errors:?}");
        }
    }

    /// The checked-in data and dictionary, parsed.
    fn checked_in(extra_field: &str, extra_index: &str) -> Result<Vec<Row>, Vec<String>> {
        let data = std::fs::read_to_string(data_path()).unwrap() + extra_field;
        let mut rows = parse(&data)?;
        let dictionary = std::fs::read_to_string(dictionary_path()).unwrap() + extra_index;
        assign_indices(&dictionary, &mut rows)?;
        Ok(rows)
    }

    #[test]
    fn a_new_field_moves_no_index_and_needs_one_of_its_own() {
        let before = checked_in("", "").unwrap();
        // Before `timestamp` in the data file, where sorting by position would shift all.
        let field = "out\tadded_field\tDOUBLE\t-\t5.30.0\t-\t-\t-\t-\tpeer: test\tAdded\n";
        let errors = checked_in(field, "").unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("`added_field` has no index in dictionary.tsv")
                && errors[0].contains("0x2196"),
            "{errors:?}"
        );
        let after = checked_in(field, "out\tadded_field\t0x2196\n").unwrap();
        for old in &before {
            let new = after
                .iter()
                .find(|r| r.output == old.output && r.name == old.name)
                .unwrap();
            assert_eq!(new.index, old.index, "{} moved", old.name);
        }
        let added = after.iter().find(|r| r.name == "added_field").unwrap();
        assert_eq!(added.index, 0x2196);
    }

    #[test]
    fn dictionary_mistakes_are_errors() {
        for (extra, needle) in [
            ("out\tnot_a_field\t0x3000\n", "is no out field"),
            ("out\ttimestamp\t0x3000\n", "two indices"),
            ("out\tactual_q\t0x2000\n", "taken by"),
            ("in\tspeed_slider_mask\t0x2FFF\n", "outside the in area"),
            ("out\ttimestamp\t2000\n", "not 0x"),
        ] {
            let errors = checked_in("", extra).unwrap_err();
            assert!(
                errors.iter().any(|e| e.contains(needle)),
                "{extra}: {errors:?}"
            );
        }
    }

    #[test]
    fn expands_register_ranges_with_their_index() {
        let rows = parse_one(
            "in\tinput_int_register_{24..47}\tINT32\t3.9.0\t5.3.0\t10.7.0\t-\t-\t-\tguide\tInt register",
        )
        .unwrap();
        assert_eq!(rows.len(), 24);
        assert_eq!(rows[0].name, "input_int_register_24");
        assert_eq!(rows[23].register, Some(("Input", "Int", 47)));
    }

    #[test]
    fn rejects_what_no_controller_has() {
        for (line, needle) in [
            (
                "in\tinput_bit_register_5\tBOOL\t3.4.0\t5.0.0\t-\t-\t-\t-\tguide\tBit",
                "no controller has this register",
            ),
            (
                "in\tinput_int_register_48\tINT32\t3.4.0\t5.0.0\t-\t-\t-\t-\tguide\tInt",
                "no controller has this register",
            ),
            (
                "in\tinput_int_register_3\tDOUBLE\t3.4.0\t5.0.0\t-\t-\t-\t-\tguide\tInt",
                "must be INT32",
            ),
            (
                "out\tx\tFLOAT\t3.0.0\t5.0.0\t-\t-\t-\t-\tguide\tX",
                "is not an RTDE wire type",
            ),
            (
                "out\tx\tDOUBLE\t5.0.0\t5.0.0\t-\t-\t-\t-\tguide\tX",
                "must be a 3.x version",
            ),
            (
                "out\tx\tDOUBLE\t-\t-\t-\t-\t-\t-\tguide\tX",
                "exists on no generation",
            ),
            (
                "up\tx\tDOUBLE\t3.0\t-\t-\t-\t-\t-\tguide\tX",
                "neither `out` nor `in`",
            ),
            ("out\tx\tDOUBLE\t3.0", "tab-separated columns"),
        ] {
            let errors = parse_one(line).unwrap_err();
            assert!(errors[0].contains(needle), "{line}: {errors:?}");
        }
    }

    #[test]
    fn the_header_must_name_the_columns() {
        assert!(parse("").unwrap_err()[0].starts_with("1: the file is empty"));
        let errors = parse("# comment\ndirection\tname\n").unwrap_err();
        assert!(
            errors[0].starts_with("2: the header must be the columns"),
            "{errors:?}"
        );
        assert_eq!(parse(HEADER).unwrap(), []);
    }

    #[test]
    fn rejects_names_that_differ_only_in_case() {
        let text = format!(
            "{HEADER}out\tactual_TCP_pose\tVECTOR6D\t3.0\t5.0\t-\tm\t-\tguide\tguide\tPose\n\
             out\tactual_tcp_pose\tVECTOR6D\t3.0\t5.0\t-\tm\t-\tguide\tguide\tPose\n"
        );
        let errors = parse(&text).unwrap_err();
        assert!(
            errors[0].contains("repeats `actual_TCP_pose`"),
            "{errors:?}"
        );
    }

    #[test]
    fn renames_point_from_a_non_field_to_a_field() {
        let rows = parse_one("out\tcontrol_step\tUINT64\t-\t5.26.0\t10.13.0\t-\t-\t-\tpeer\tStep")
            .unwrap();
        let header = "direction\told_name\tname\tsource\n";
        let ok = parse_renamed(
            &format!("{header}out\tcontroller_step\tcontrol_step\tpeer\n"),
            &rows,
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        let errors = parse_renamed(
            &format!("{header}out\tcontrol_step\tnothing\tpeer\n"),
            &rows,
        )
        .unwrap_err();
        assert!(errors[0].contains("`nothing` is not a field"), "{errors:?}");
        assert!(
            errors[1].contains("`control_step` is a field"),
            "{errors:?}"
        );
    }

    #[test]
    fn masks_are_checked_against_the_fields() {
        let rows = parse(&format!(
            "{HEADER}in\tspeed_slider_mask\tUINT32\t3.4\t5.0\t-\t-\t-\t-\tguide\tMask\n\
             in\tspeed_slider_fraction\tDOUBLE\t3.4\t5.0\t-\t-\t-\t-\tguide\tSlider\n\
             out\ttarget_speed_fraction\tDOUBLE\t3.4\t5.0\t-\t-\t-\t-\tguide\tSlider\n"
        ))
        .unwrap();
        let header = "mask\tvalue\tgate\treads_back\n";
        let ok = parse_masks(
            &format!(
                "{header}speed_slider_mask\tspeed_slider_fraction\tbit 0\ttarget_speed_fraction -\n"
            ),
            &rows,
        )
        .unwrap();
        assert_eq!(ok[0].gate, "Whole { bit: 0 }");
        for (line, needle) in [
            (
                "speed_slider_mask\tnothing\tbit 0\t-",
                "`nothing` is not an input field",
            ),
            (
                "speed_slider_mask\tspeed_slider_fraction\tbit 32\t-",
                "has no bit 32",
            ),
            (
                "speed_slider_mask\tspeed_slider_fraction\tbits 0..3\t-",
                "bit by bit",
            ),
            (
                "speed_slider_fraction\tspeed_slider_mask\tbit 0\t-",
                "not an unsigned integer",
            ),
            (
                "speed_slider_mask\tspeed_slider_fraction\tsome\t-",
                "neither",
            ),
            (
                "speed_slider_mask\tspeed_slider_fraction\tbit 0\tactual_q 3",
                "not an output field",
            ),
        ] {
            let errors = parse_masks(&format!("{header}{line}\n"), &rows).unwrap_err();
            assert!(errors[0].contains(needle), "{line}: {errors:?}");
        }
        let twice = "speed_slider_mask\tspeed_slider_fraction\tbit 0\t-\n";
        let errors = parse_masks(&format!("{header}{twice}{twice}"), &rows).unwrap_err();
        assert!(errors[0].contains("gated twice"), "{errors:?}");
    }

    #[test]
    fn checked_in_table_is_what_the_data_file_generates() {
        let text = std::fs::read_to_string(data_path()).unwrap();
        let mut rows = parse(&text).unwrap_or_else(|e| panic!("data file errors: {e:#?}"));
        let text = std::fs::read_to_string(dictionary_path()).unwrap();
        assign_indices(&text, &mut rows).unwrap_or_else(|e| panic!("dictionary errors: {e:#?}"));
        let text = std::fs::read_to_string(renamed_path()).unwrap();
        let renames =
            parse_renamed(&text, &rows).unwrap_or_else(|e| panic!("renamed file errors: {e:#?}"));
        let text = std::fs::read_to_string(masks_path()).unwrap();
        let masks =
            parse_masks(&text, &rows).unwrap_or_else(|e| panic!("masks file errors: {e:#?}"));
        let expected = render(&rows, &renames, &masks);
        let actual = std::fs::read_to_string(generated_path()).unwrap();
        assert!(
            actual == expected,
            "rtde-fields/src/generated.rs is stale: run `cargo run -p rtde-codegen` and commit the result"
        );
        let expected = render_markers(&rows).unwrap();
        let actual = std::fs::read_to_string(markers_path()).unwrap();
        assert!(
            actual == expected,
            "rtde-core/src/wire_field.rs is stale: run `cargo run -p rtde-codegen` and commit the result"
        );
    }
}
