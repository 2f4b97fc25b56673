//! `cargo run -p rtde-codegen`: regenerates `rtde-fields/src/generated.rs` from
//! `rtde-fields/data/fields.tsv`.

#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let data = rtde_codegen::data_path();
    let out = rtde_codegen::generated_path();
    let text = match std::fs::read_to_string(&data) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", data.display());
            return ExitCode::FAILURE;
        }
    };
    let rows = match rtde_codegen::parse(&text) {
        Ok(rows) => rows,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}:{e}", data.display());
            }
            return ExitCode::FAILURE;
        }
    };
    let renamed = rtde_codegen::renamed_path();
    let text = match std::fs::read_to_string(&renamed) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", renamed.display());
            return ExitCode::FAILURE;
        }
    };
    let renames = match rtde_codegen::parse_renamed(&text, &rows) {
        Ok(renames) => renames,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}:{e}", renamed.display());
            }
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&out, rtde_codegen::render(&rows, &renames)) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {} ({} entries)", out.display(), rows.len());
    ExitCode::SUCCESS
}
