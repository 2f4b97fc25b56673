//! `rtde check-script FILE [--version X]`: parse and check a URScript file against a
//! controller version's built-ins, without running it.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use rtde_fields::ControllerVersion;
use rtde_urscript::{Review, Span};

use crate::said;

/// Check a URScript file without running it: syntax, names, arguments, versions.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Parse a URScript file and check it against the built-in functions of a \
controller version, without running it or reaching a robot. Each error prints as \
FILE:LINE:COLUMN: then the controller's error code and the message, with the closest known \
name for a misspelt function, variable or keyword, as the controller's compiler would report \
it on the primary interface; a summary follows on stderr.

What is checked: syntax (the first error stops parsing, as on the controller), unknown \
functions and variables, built-ins the version lacks (and which version has them), argument \
counts and keywords, argument types the text shows (literals, poses, built-ins' results), \
`return`/`break`/`continue` out of place, `run` of something that is not a thread. \
docs/urscript.md lists what is supported per version.

A built-in used on a version older than the first one a driver's version gate knows it \
from (not UR's manual: docs/urscript.md gives each source) prints as a warning, since the \
controller may have it; so do `for` loops and structs before PolyScope X.

Exits 0 when the script passes (warnings or not), 1 when it has errors.",
    after_help = "Examples:
  rtde check-script pick.script                   against the newest e-Series version known
  rtde check-script pick.script --version 3.15    against a CB3 running 3.15"
)]
pub(crate) struct CheckScriptArgs {
    /// The URScript file.
    file: PathBuf,
    /// The controller's software version, e.g. 5.4 or 3.15.8 (default: the newest
    /// e-Series version the built-in table knows).
    #[arg(long, value_name = "X")]
    version: Option<ControllerVersion>,
}

/// Runs `rtde check-script`.
pub(crate) fn run(args: &CheckScriptArgs) -> Result<ExitCode, String> {
    let version = args
        .version
        .unwrap_or_else(rtde_urscript::builtins::newest_e_series);
    if version.generation().is_none() {
        return Err(format!(
            "{version} is no known controller generation (3.x CB3, 5.x e-Series, 10.x PolyScope X)"
        ));
    }
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display(), e = said(e)))?;
    let file = args.file.display();
    let found = match rtde_urscript::parse(&source) {
        Ok(program) => rtde_urscript::review(&program, version),
        Err(e) => Review {
            errors: vec![e],
            warnings: Vec::new(),
        },
    };
    let mut lines: Vec<(Span, String)> = found
        .errors
        .iter()
        .map(|e| (e.span, e.to_string()))
        .chain(
            found
                .warnings
                .iter()
                .map(|w| (w.span, format!("warning: {w}"))),
        )
        .collect();
    lines.sort_by_key(|(span, _)| *span);
    let mut out = io::stdout().lock();
    let printed = lines
        .iter()
        .try_for_each(|(at, text)| writeln!(out, "{file}:{}:{}: {text}", at.line, at.column))
        .and_then(|()| out.flush());
    match printed {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(said(e)),
        _ => {}
    }
    let counted = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let warned = match found.warnings.len() {
        0 => String::new(),
        n => format!(", {}", counted(n, "warning")),
    };
    if found.errors.is_empty() {
        eprintln!(
            "{file}: {lines} lines, no errors{warned} (controller {version})",
            lines = source.lines().count()
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{file}: {}{warned} (controller {version})",
        counted(found.errors.len(), "error")
    );
    Ok(ExitCode::FAILURE)
}
