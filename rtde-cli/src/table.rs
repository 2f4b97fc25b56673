//! The CSV that `rtde record` writes and `rtde plot` reads.
//!
//! A header row, then one row per data package, in the order the controller sent them.
//! The columns are the recipe's fields in order; a vector field takes one column per
//! element, `actual_q_0` … `actual_q_5`. Doubles are written in the shortest form that
//! reads back as the same `f64` (`0.1`, `-1.5707963267948966`, `1e-7`, `NaN`, `inf`),
//! booleans as `0` and `1`, integers in decimal. Nothing is quoted: no value needs it.

use std::io::{self, Write};
use std::path::Path;

use rtde_core::Value;
use rtde_core::fields::{Field, WireType};

/// How many values a wire type holds: 1, 3 or 6.
pub(crate) fn width(t: WireType) -> usize {
    match t {
        WireType::Vector3d => 3,
        WireType::Vector6d | WireType::Vector6Int32 | WireType::Vector6Uint32 => 6,
        _ => 1,
    }
}

/// The column names of a field: its name, or `name_0` … for a vector.
pub(crate) fn columns_of(field: &Field) -> Vec<String> {
    match width(field.wire_type()) {
        1 => vec![field.name().to_owned()],
        n => (0..n).map(|i| format!("{}_{i}", field.name())).collect(),
    }
}

/// Writes the header row.
pub(crate) fn write_header(out: &mut impl Write, fields: &[&Field]) -> io::Result<()> {
    let columns: Vec<String> = fields.iter().flat_map(|f| columns_of(f)).collect();
    writeln!(out, "{}", columns.join(","))
}

/// Writes one row of values.
pub(crate) fn write_row(out: &mut impl Write, values: &[Value]) -> io::Result<()> {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write_value(out, v)?;
    }
    out.write_all(b"\n")
}

fn write_value(out: &mut impl Write, v: &Value) -> io::Result<()> {
    fn all<T>(
        out: &mut impl Write,
        xs: &[T],
        f: impl Fn(&mut dyn Write, &T) -> io::Result<()>,
    ) -> io::Result<()> {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            f(out, x)?;
        }
        Ok(())
    }
    // `{:?}` of an f64 is the shortest text that parses back to the same bits, with an
    // exponent for very large and small magnitudes (`{}` would print 1e-300 in full).
    match v {
        Value::Bool(b) => write!(out, "{}", u8::from(*b)),
        Value::Uint8(x) => write!(out, "{x}"),
        Value::Uint32(x) => write!(out, "{x}"),
        Value::Uint64(x) => write!(out, "{x}"),
        Value::Int32(x) => write!(out, "{x}"),
        Value::Double(x) => write!(out, "{x:?}"),
        Value::Vector3d(xs) => all(out, xs, |o, x| write!(o, "{x:?}")),
        Value::Vector6d(xs) => all(out, xs, |o, x| write!(o, "{x:?}")),
        Value::Vector6Int32(xs) => all(out, xs, |o, x| write!(o, "{x}")),
        Value::Vector6Uint32(xs) => all(out, xs, |o, x| write!(o, "{x}")),
    }
}

/// A CSV read back, column by column.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) columns: Vec<String>,
    /// `values[c][r]`: column `c`, row `r`.
    pub(crate) values: Vec<Vec<f64>>,
}

impl Table {
    /// The values of a column, by name.
    pub(crate) fn column(&self, name: &str) -> Option<&[f64]> {
        self.columns
            .iter()
            .position(|c| c == name)
            .map(|i| self.values[i].as_slice())
    }

    /// The number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.values.first().map_or(0, Vec::len)
    }
}

/// Reads a CSV of numbers with a header row, such as `rtde record` writes.
pub(crate) fn read(path: &Path) -> Result<Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Parses CSV text; see [`read`].
pub(crate) fn parse(text: &str) -> Result<Table, String> {
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err("the file is empty: no header row".into());
    };
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_owned()).collect();
    if columns.iter().any(String::is_empty) {
        return Err("line 1: an empty column name; is this a CSV with a header row?".into());
    }
    let mut values = vec![Vec::new(); columns.len()];
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let mut n = 0;
        for (c, cell) in line.split(',').enumerate() {
            let Some(column) = values.get_mut(c) else {
                return Err(format!(
                    "line {}: more than the header's {} columns",
                    i + 1,
                    columns.len()
                ));
            };
            let cell = cell.trim();
            let x = cell.parse::<f64>().map_err(|_| {
                format!(
                    "line {}: `{cell}` in column `{}` is not a number",
                    i + 1,
                    columns[c]
                )
            })?;
            column.push(x);
            n += 1;
        }
        if n != columns.len() {
            return Err(format!(
                "line {}: {n} values where the header has {} columns",
                i + 1,
                columns.len()
            ));
        }
    }
    Ok(Table { columns, values })
}

#[cfg(test)]
mod tests {
    use rtde_core::fields::{Direction, lookup};

    use super::*;

    fn field(name: &str) -> &'static Field {
        lookup(Direction::Output, name).unwrap()
    }

    #[test]
    fn vectors_take_a_column_per_element() {
        let mut out = Vec::new();
        let fields = [
            field("timestamp"),
            field("actual_q"),
            field("actual_tool_accelerometer"),
            field("robot_mode"),
        ];
        write_header(&mut out, &fields).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "timestamp,actual_q_0,actual_q_1,actual_q_2,actual_q_3,actual_q_4,actual_q_5,\
             actual_tool_accelerometer_0,actual_tool_accelerometer_1,actual_tool_accelerometer_2,\
             robot_mode\n"
        );
    }

    #[test]
    fn values_read_back_exactly() {
        let values = [
            Value::Double(0.1),
            Value::Double(-std::f64::consts::FRAC_PI_2),
            Value::Double(1e-300),
            Value::Double(f64::MAX),
            Value::Vector3d([f64::NAN, f64::INFINITY, -0.0]),
            Value::Bool(true),
            Value::Uint8(255),
            Value::Uint64(u64::MAX),
            Value::Int32(-7),
            Value::Vector6Int32([-1, 0, 1, 2, 3, i32::MIN]),
            Value::Vector6Uint32([0, 1, 2, 3, 4, u32::MAX]),
        ];
        let mut out = Vec::new();
        write_row(&mut out, &values).unwrap();
        let row = String::from_utf8(out).unwrap();
        assert_eq!(
            row,
            "0.1,-1.5707963267948966,1e-300,1.7976931348623157e308,NaN,inf,-0.0,1,255,\
             18446744073709551615,-7,-1,0,1,2,3,-2147483648,0,1,2,3,4,4294967295\n"
        );
        let columns: Vec<String> = (0..23).map(|i| format!("c{i}")).collect();
        let t = parse(&format!("{}\n{row}", columns.join(","))).unwrap();
        assert_eq!(t.rows(), 1);
        assert_eq!(t.column("c1"), Some(&[-std::f64::consts::FRAC_PI_2][..]));
        assert_eq!(t.column("c2"), Some(&[1e-300][..]));
        assert!(t.column("c4").unwrap()[0].is_nan());
    }

    #[test]
    fn malformed_csv_is_refused_with_the_line() {
        assert_eq!(parse("").unwrap_err(), "the file is empty: no header row");
        assert_eq!(
            parse("a,b\n1,2\n3\n").unwrap_err(),
            "line 3: 1 values where the header has 2 columns"
        );
        assert_eq!(
            parse("a,b\n1,x\n").unwrap_err(),
            "line 2: `x` in column `b` is not a number"
        );
        assert_eq!(
            parse("a\n1,2\n").unwrap_err(),
            "line 2: more than the header's 1 columns"
        );
    }
}
