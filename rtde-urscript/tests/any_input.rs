//! No text makes the parser or the checker panic, and every error lies inside the text:
//! random token soups in URScript's alphabet and random characters (the fuzz target
//! `urscript` goes further, with coverage guidance).

use proptest::prelude::*;
use rtde_urscript::{ControllerVersion, ErrorKind, check};

const PIECES: &[&str] = &[
    "def ",
    "thread ",
    "sec ",
    "end",
    "if ",
    "elif ",
    "else",
    "while ",
    "for ",
    " in ",
    "return",
    "break",
    "global ",
    "local ",
    "run ",
    "join ",
    "kill ",
    "enter_critical",
    "and ",
    "or ",
    "not ",
    "xor ",
    "True",
    "False",
    "struct(",
    "p[",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "=",
    "==",
    "<=",
    "+",
    "-",
    "*",
    "/",
    "%",
    ".",
    "$ 1 \"m\"",
    "\"s\\\"\"",
    "# c",
    "\\\n",
    "\n",
    " ",
    "x",
    "q",
    "movej",
    "f",
    "1",
    "2.5e-3",
    "1e",
    "99999999999",
];

fn places_are_inside(source: &str) {
    let lines = u32::try_from(source.lines().count()).unwrap_or(u32::MAX);
    for version in [
        ControllerVersion::new(3, 15, 0, 0),
        ControllerVersion::new(10, 7, 0, 0),
    ] {
        if let Err(errors) = check(source, version) {
            for e in &errors {
                assert!(
                    e.span.line >= 1 && e.span.line <= lines + 1,
                    "{source:?}: {e:?}"
                );
                assert!(e.span.column >= 1, "{source:?}: {e:?}");
            }
            if errors.iter().any(|e| e.kind == ErrorKind::Syntax) {
                assert_eq!(errors.len(), 1, "{source:?}");
            }
        }
    }
}

proptest! {
    #[test]
    fn token_soup(pieces in prop::collection::vec(prop::sample::select(PIECES), 0..80)) {
        places_are_inside(&pieces.concat());
    }

    #[test]
    fn any_characters(source in "\\PC{0,200}") {
        places_are_inside(&source);
    }
}
