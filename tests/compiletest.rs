//! The catalogue of mistakes: one per file in `ui/`, named after it, with the compiler's
//! output in the `.stderr` beside it. Regenerate with `TRYBUILD=overwrite` and review the diff.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}

/// Cases whose repeated errors are known and not fixed yet, with the reason.
const REPEATS_KNOWN: &[(&str, &str)] = &[(
    "flatten_non_recipe",
    "the flattened type is named in consts and array lengths, where no stand-in can take the \
     place of a missing `StaticRecipe`, so each use reports it again",
)];

/// rustc counts an error each time it is raised, but prints a repeated one once ("due to 12
/// previous errors" over 3 shown), and trybuild drops the count from its snapshots. So the
/// cases are compiled again here, and each error a case raises must differ from the others:
/// the count the user sees is then the number of errors shown.
#[test]
fn each_error_is_raised_once() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("error_count");
    std::fs::create_dir_all(&project).unwrap();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(here.join("ui"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    cases.sort();
    let mut manifest = format!(
        "[package]\nname = \"error-count\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\nrtde-core = {{ path = {:?} }}\n\n[workspace]\n",
        here.join("../rtde-core").display().to_string()
    );
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy();
        let path = case.display().to_string();
        write!(manifest, "\n[[bin]]\nname = {name:?}\npath = {path:?}\n").unwrap();
    }
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(here.join("../Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--bins", "--keep-going"])
        .arg("--message-format=json")
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", project.join("target"))
        // Incremental, as a developer's `cargo build` is: only then does rustc count an
        // error each time it is raised (without, it counts what it shows, whatever the
        // environment of the run says).
        .env("CARGO_INCREMENTAL", "1")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message" || message["message"]["level"] != "error" {
            continue;
        }
        let case = message["target"]["name"].as_str().unwrap_or_default();
        let rendered = message["message"]["rendered"].as_str().unwrap_or_default();
        errors
            .entry(case.to_owned())
            .or_default()
            .push(rendered.to_owned());
    }

    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().into_owned();
        let raised = errors.get(&name).map(Vec::as_slice).unwrap_or_default();
        if raised.is_empty() {
            failures.push(format!(
                "{name}: no error (the case must fail to compile)\n{}",
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        }
        let mut distinct: Vec<&String> = raised.iter().collect();
        distinct.sort();
        distinct.dedup();
        let repeated = raised.len() != distinct.len();
        if repeated != REPEATS_KNOWN.iter().any(|(known, _)| *known == name) {
            failures.push(format!(
                "{name}: {} errors raised, {} different{}",
                raised.len(),
                distinct.len(),
                if repeated {
                    format!(":\n{}", raised.join("\n"))
                } else {
                    "; it is no longer a known repeat: take it off REPEATS_KNOWN".to_owned()
                }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
