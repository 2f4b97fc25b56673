//! The decoders as functions of their own, so that their machine code can be read:
//!
//! ```text
//! cargo rustc --release -p rtde-bench --lib -- --emit asm
//! grep -A200 '^_ZN10rtde_bench3asm7derived' <target dir>/release/deps/rtde_bench-*.s
//! ```
//!
//! `derived` and `floor` are the same straight line: one length check, then loads, byte
//! swaps and stores, no call and no other branch; `frame` adds the header checks and the
//! data-package fast path of `ControllerMessage::decode`, inlined.

use rtde_core::{DynamicRecipe, FromPayload, OutputRecipe, PayloadError};

use crate::{Reference, floor, stream};

/// `Reference::from_payload`.
///
/// # Errors
/// A payload of another length.
#[inline(never)]
pub fn derived(payload: &[u8]) -> Result<Reference, PayloadError> {
    Reference::from_payload(payload)
}

/// The hand-written floor.
#[inline(never)]
#[must_use]
pub fn floor(payload: &[u8]) -> Option<Reference> {
    floor::decode(payload)
}

/// A package parsed and decoded from the front of a receive buffer.
#[inline(never)]
#[must_use]
pub fn frame(buf: &[u8]) -> Option<(Reference, usize)> {
    stream::parse_and_decode(buf)
}

/// `DynamicRecipe::decode_into`.
///
/// # Errors
/// A payload of another length.
#[inline(never)]
pub fn dynamic(recipe: &mut DynamicRecipe, payload: &[u8]) -> Result<(), PayloadError> {
    recipe.decode_into(payload)
}
