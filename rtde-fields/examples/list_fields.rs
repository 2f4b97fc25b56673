//! Prints the registry as a tab-separated table, header first, one line per field and
//! direction: `cargo run -q -p rtde-fields --example list_fields`.
//!
//! Each version column holds the first controller version of that generation with the
//! field, `-` where the generation does not have it, or `?` where it has it but no source
//! records from which version.

use std::io::{self, Write};

use rtde_fields::{Generation, all_fields};

fn main() -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    writeln!(out, "direction\tname\ttype\tcb3\te_series\tpolyscope_x")?;
    for f in all_fields() {
        write!(out, "{}\t{}\t{}", f.direction(), f.name(), f.wire_type())?;
        for g in Generation::ALL {
            match f.since(g) {
                Some(_) if !f.since_is_recorded(g) => write!(out, "\t?")?,
                Some(v) => write!(out, "\t{v}")?,
                None => write!(out, "\t-")?,
            }
        }
        writeln!(out)?;
    }
    out.flush()
}
