//! `rtde fields --dictionary` and `--pdo`: the registry as a GB/T 32197-2015-shaped object
//! dictionary (an export view; the 2015 edition has since been replaced by a 2025 one), and
//! a recipe as its TPDO or RPDO mapping.

use crate::said;
use std::io::{self, Write};

use rtde_fields::dictionary::{self, COLUMNS, Row};
use rtde_fields::{Direction, lookup};

/// Prints the dictionary rows of the objects `keep` accepts: an aligned table, or CSV.
pub(crate) fn print(
    out: &mut impl Write,
    csv: bool,
    keep: impl Fn(&rtde_fields::Field) -> bool,
) -> io::Result<()> {
    let rows: Vec<Row> = dictionary::rows()
        .into_iter()
        .filter(|r| {
            let name = r.name.split(['[', ' ']).next().unwrap_or_default();
            // Inputs live from 4000h on (see `rtde_fields::dictionary`).
            let index = u16::from_str_radix(r.index.trim_end_matches('h'), 16).unwrap_or(0);
            let direction = if index >= 0x4000 {
                Direction::Input
            } else {
                Direction::Output
            };
            lookup(direction, name).is_some_and(&keep)
        })
        .collect();
    if csv {
        return out.write_all(dictionary::to_csv(&rows).as_bytes());
    }
    writeln!(
        out,
        "RTDE object dictionary in the shape of GB/T 32197-2015 (an export view; the 2015 \
         edition is replaced by a 2025 one)"
    )?;
    let cells: Vec<Vec<&str>> = rows.iter().map(cells).collect();
    let mut widths: Vec<usize> = COLUMNS.iter().map(|c| c.len()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |out: &mut dyn Write, row: &[&str]| -> io::Result<()> {
        let text: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        writeln!(out, "{}", text.join("  ").trim_end())
    };
    line(out, &COLUMNS)?;
    for row in &cells {
        line(out, row)?;
    }
    Ok(())
}

fn cells(r: &Row) -> Vec<&str> {
    vec![
        &r.index,
        &r.subindex,
        &r.name,
        &r.object_code,
        &r.data_type,
        &r.access,
        &r.presence[0],
        &r.presence[1],
        &r.presence[2],
        &r.pdo_mapping,
        &r.unit,
        &r.range,
        &r.default,
    ]
}

/// Prints a recipe's PDO mapping: TPDO for outputs, RPDO for inputs. `direction` is
/// inferred from the names when not given.
pub(crate) fn print_pdo(
    out: &mut impl Write,
    names: &str,
    direction: Option<Direction>,
) -> Result<(), String> {
    let names: Vec<&str> = names.split(',').map(str::trim).collect();
    let direction = match direction {
        Some(d) => d,
        None if names.iter().all(|n| lookup(Direction::Output, n).is_some()) => Direction::Output,
        None if names.iter().all(|n| lookup(Direction::Input, n).is_some()) => Direction::Input,
        None => {
            return Err(
                "the names are neither all outputs nor all inputs (canonical names, any order)"
                    .to_owned(),
            );
        }
    };
    let map = rtde_fields::pdo_mapping(direction, &names)
        .map_err(|name| format!("`{name}` is no {direction} field"))?;
    let kind = match direction {
        Direction::Output => "TPDO (controller transmits)",
        Direction::Input => "RPDO (controller receives)",
    };
    let write = |out: &mut dyn Write| -> io::Result<()> {
        writeln!(out, "{kind} mapping, {} entries:", map.len())?;
        writeln!(out, "entry  object     bits  mapping     field")?;
        for (i, e) in map.iter().enumerate() {
            let element = match e.subindex {
                0 => String::new(),
                k => format!("[{}]", k - 1),
            };
            writeln!(
                out,
                "{:<5}  {:04X}h:{:02X}h  {:<4}  0x{:08X}  {}{element}",
                i + 1,
                e.index,
                e.subindex,
                e.bits,
                e.mapping_value(),
                e.name
            )?;
        }
        Ok(())
    };
    write(out).map_err(said)
}
