//! The CSV that `rtde record` writes and `rtde plot` reads: written by
//! [`rtde_record::csv`], which documents the format, and read back here.

use crate::said;
use std::path::Path;

pub(crate) use rtde_record::csv::{columns as columns_of, width, write_header, write_row};

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
        .map_err(|e| format!("cannot read `{}`: {e}", path.display(), e = said(e)))?;
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
    use rtde_core::Value;

    use super::*;

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
