//! Any text parses to a program or to one syntax error, and checks without panicking or
//! hanging at any controller version; every error's place is inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_urscript::{ControllerVersion, ErrorKind, ScriptError};

const VERSIONS: [ControllerVersion; 3] = [
    ControllerVersion::new(3, 15, 0, 0),
    ControllerVersion::new(5, 9, 0, 0),
    ControllerVersion::new(10, 7, 0, 0),
];

fn inside(source: &str, e: &ScriptError) {
    let lines = u32::try_from(source.lines().count()).unwrap_or(u32::MAX);
    assert!(e.span.line >= 1 && e.span.line <= lines.saturating_add(1), "{e:?}");
    assert!(e.span.column >= 1, "{e:?}");
}

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    match rtde_urscript::parse(&source) {
        Ok(program) => {
            for version in VERSIONS {
                for e in rtde_urscript::check_program(&program, version) {
                    assert_ne!(e.kind, ErrorKind::Syntax, "{e:?}");
                    inside(&source, &e);
                }
            }
        }
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Syntax, "{e:?}");
            inside(&source, &e);
        }
    }
});
