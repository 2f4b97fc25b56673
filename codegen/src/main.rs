//! `cargo run -p rtde-codegen`: regenerates `rtde-fields/src/generated.rs` from
//! `rtde-fields/data/fields.tsv`,
//! `renamed.tsv`, `masks.tsv` and `dictionary.tsv`, and `rtde-core/src/wire_field.rs` (the
//! field markers) from the same rows.

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
    let mut rows = match rtde_codegen::parse(&text) {
        Ok(rows) => rows,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}:{e}", data.display());
            }
            return ExitCode::FAILURE;
        }
    };
    let dictionary = rtde_codegen::dictionary_path();
    let text = match std::fs::read_to_string(&dictionary) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", dictionary.display());
            return ExitCode::FAILURE;
        }
    };
    if let Err(errors) = rtde_codegen::assign_indices(&text, &mut rows) {
        for e in errors {
            eprintln!("error: {}:{e}", dictionary.display());
        }
        return ExitCode::FAILURE;
    }
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
    let masks_file = rtde_codegen::masks_path();
    let text = match std::fs::read_to_string(&masks_file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", masks_file.display());
            return ExitCode::FAILURE;
        }
    };
    let masks = match rtde_codegen::parse_masks(&text, &rows) {
        Ok(masks) => masks,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}:{e}", masks_file.display());
            }
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&out, rtde_codegen::render(&rows, &renames, &masks)) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {} ({} entries)", out.display(), rows.len());
    let markers = rtde_codegen::markers_path();
    let text = match rtde_codegen::render_markers(&rows) {
        Ok(text) => text,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}:{e}", data.display());
            }
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&markers, text) {
        eprintln!("error: cannot write {}: {e}", markers.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", markers.display());
    ExitCode::SUCCESS
}
