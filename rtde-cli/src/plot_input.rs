//! What `rtde plot` reads: a CSV from `rtde record`, an MCAP recording or a raw capture,
//! each as a [`Table`] of columns. An MCAP recording's `/rtde/outputs` gives the columns a
//! CSV of the same packages has; a field of another channel is a column named by its
//! topic and path (`/tcp_pose.pose.position.z`, `/tf.transforms[5].translation.x`), read
//! by the descriptor in the file and set on the row of the package it came with.

use crate::said;
use std::collections::HashMap;
use std::path::Path;

use rtde_core::{DynamicRecipe, OutputRecipe};
use rtde_record::capture;
use rtde_record::csv::CsvWriter;
use rtde_view::OUTPUTS_TOPIC;

use crate::convert::extension;
use crate::table::{self, Table};

/// The kinds of file `rtde plot` reads, for its messages.
pub(crate) const READS: &str =
    "a CSV from `rtde record` (.csv), an MCAP recording (.mcap) or a raw capture (.rtde)";

/// Reads a recording to plot; `requested` names the fields of channels other than
/// `/rtde/outputs` to read from an MCAP recording (names that start with `/`).
pub(crate) fn read(path: &Path, requested: &[String]) -> Result<Table, String> {
    let name = path.display();
    match extension(path).as_str() {
        "csv" => table::read(path),
        "rtde" => {
            let capture = capture::read_file(path)?;
            let names: Vec<&str> = capture.header.fields.iter().map(|f| f.name()).collect();
            let mut recipe = DynamicRecipe::outputs(&names).map_err(said)?;
            let mut csv = CsvWriter::new(Vec::new(), recipe.fields()).map_err(said)?;
            for i in 0..capture.len() {
                recipe
                    .decode_into(capture.payload(i))
                    .map_err(|e| format!("package {i} of `{name}`: {e}", e = said(e)))?;
                csv.row(recipe.values()).map_err(said)?;
            }
            csv_table(&csv.into_inner(), path)
        }
        "mcap" => {
            let bytes = std::fs::read(path)
                .map_err(|e| format!("cannot read `{name}`: {e}", e = said(e)))?;
            let mut csv = Vec::new();
            rtde_view::convert::mcap_to_csv(&bytes, &mut csv)
                .map_err(|e| format!("`{name}`: {e}", e = said(e)))?;
            let mut table = csv_table(&csv, path)?;
            let wanted: Vec<&str> = requested
                .iter()
                .map(|r| r.trim())
                .filter(|r| r.starts_with('/'))
                .collect();
            if !wanted.is_empty() {
                add_channels(&bytes, &wanted, &mut table).map_err(|e| format!("`{name}`: {e}"))?;
            }
            Ok(table)
        }
        other => Err(format!(
            "`{name}`: rtde plot cannot read a .{other} file; it reads {READS}"
        )),
    }
}

fn csv_table(csv: &[u8], path: &Path) -> Result<Table, String> {
    let text = String::from_utf8_lossy(csv);
    table::parse(&text).map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Adds the columns `wanted` (`/topic.path`) from the other channels of an MCAP
/// recording: each value on the row of the package of the same publish time, NaN where a
/// package has none.
fn add_channels(bytes: &[u8], wanted: &[&str], table: &mut Table) -> Result<(), String> {
    let rows = table.rows();
    let mut row_of: HashMap<u64, usize> = HashMap::new();
    let mut columns: Vec<Vec<f64>> = vec![vec![f64::NAN; rows]; wanted.len()];
    let mut packages = 0;
    rtde_view::convert::read_numbers(bytes, |m| {
        if m.topic == OUTPUTS_TOPIC {
            row_of.insert(m.publish_time, packages);
            packages += 1;
            return;
        }
        let Some(&row) = row_of.get(&m.publish_time) else {
            return;
        };
        for (path, v) in &m.numbers {
            let name = format!("{}.{path}", m.topic);
            if let Some(c) = wanted.iter().position(|w| *w == name)
                && let Some(cell) = columns[c].get_mut(row)
            {
                *cell = *v;
            }
        }
    })
    .map_err(said)?;
    for (name, values) in wanted.iter().zip(columns) {
        if values.iter().any(|v| !v.is_nan()) {
            table.columns.push((*name).to_owned());
            table.values.push(values);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use rtde_core::fields::{ControllerVersion, Direction, lookup};
    use rtde_core::protocol::ProtocolVersion;
    use rtde_record::capture::Header;
    use rtde_view::{Recorder, RecorderOptions};

    use super::*;

    #[test]
    fn a_field_of_another_channel_is_set_on_its_package_row() {
        let header = Header {
            protocol: ProtocolVersion::V2,
            controller: ControllerVersion::new(5, 21, 0, 0),
            frequency: 500.0,
            recipe_id: Some(1),
            started_unix_micros: 0,
            fields: ["timestamp", "actual_TCP_pose"]
                .map(|n| lookup(Direction::Output, n).unwrap())
                .to_vec(),
        };
        let mut recorder =
            Recorder::new(Cursor::new(Vec::new()), &header, &RecorderOptions::new()).unwrap();
        for i in 0..5u32 {
            let mut payload = (f64::from(i) * 0.002).to_be_bytes().to_vec();
            for k in 0..6u32 {
                payload.extend((f64::from(i) + f64::from(k) / 10.0).to_be_bytes());
            }
            recorder.package(&payload, 0).unwrap();
        }
        let path = std::env::temp_dir().join(format!("rtde-plot-{}.mcap", std::process::id()));
        std::fs::write(&path, recorder.finish().unwrap().into_inner()).unwrap();
        let wanted = ["/tcp_pose.pose.position.z".to_owned()];
        let table = read(&path, &wanted);
        std::fs::remove_file(&path).unwrap();
        let table = table.unwrap();
        assert_eq!(
            table.column("actual_TCP_pose_2"),
            Some(&[0.2, 1.2, 2.2, 3.2, 4.2][..])
        );
        assert_eq!(table.column(&wanted[0]), table.column("actual_TCP_pose_2"));
    }
}
