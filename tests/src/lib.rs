//! The derive's test suite lives in `tests/`; this library compiles the README's examples.
#![doc = include_str!("../../README.md")]
