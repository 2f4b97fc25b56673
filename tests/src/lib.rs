//! The derive's test suite lives in `tests/`; this library compiles the README's examples.
#![doc = include_str!("../../README.md")]

/// The guide for users of ur_rtde, `docs/migrating-from-ur_rtde.md`, whose examples are
/// compiled and run here.
#[doc = include_str!("../../docs/migrating-from-ur_rtde.md")]
pub mod migrating_from_ur_rtde {}
