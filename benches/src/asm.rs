//! The decoders as functions of their own, so that their machine code can be read:
//!
//! ```text
//! cargo rustc --release -p rtde-bench --lib -- --emit asm
//! grep -A200 '^_ZN10rtde_bench3asm7derived' <target dir>/release/deps/rtde_bench-*.s
//! grep -A200 '^_ZN10rtde_bench5floor18decode_out_of_line' <target dir>/release/deps/rtde_bench-*.s
//! ```
//!
//! `floor` is one length check, then loads, byte swaps and stores, each value stored as it
//! is read, no call and no other branch. `derived` is the length check and a jump to the
//! derive's decoder (`__rtde_decode`), the same straight line as the floor;
//! `derived_in_a_loop` shows that line staying out of line when `from_payload` is inlined.
//! `frame_as`, `frame_into` and `frame` add the header checks and the data-package fast
//! path of `ControllerMessage::decode`, inlined; `frame_as` and `frame_into` leave the
//! values where the decoder wrote them, `frame` moves them into a tuple (a `memcpy`).

use rtde_core::{DynamicRecipe, FromPayload, OutputRecipe, PayloadError};

use crate::{Reference, stream};

/// `Reference::from_payload`.
///
/// # Errors
/// A payload of another length.
#[inline(never)]
pub fn derived(payload: &[u8]) -> Result<Reference, PayloadError> {
    Reference::from_payload(payload)
}

pub use crate::floor::decode_out_of_line as floor;

/// `Reference::from_payload` inlined into a caller's loop, each result stored: what a
/// receive loop in user code becomes. The length check is inlined; the reads are the
/// derive's out-of-line decoder (the recipe holds more values than registers).
#[inline(never)]
pub fn derived_in_a_loop(payloads: &[&[u8]], out: &mut [Option<Reference>]) {
    for (payload, out) in payloads.iter().zip(out) {
        *out = Reference::from_payload(payload).ok();
    }
}

/// A package parsed and decoded from the front of a receive buffer.
#[inline(never)]
#[must_use]
pub fn frame(buf: &[u8]) -> Option<(Reference, usize)> {
    stream::parse_and_decode(buf)
}

/// A package parsed from the front of a receive buffer and decoded as `Client::recv_as`
/// returns it.
///
/// # Errors
/// Anything but a whole data package of the recipe.
#[inline(never)]
pub fn frame_as(buf: &[u8], used: &mut usize) -> Result<Reference, rtde_core::Error> {
    stream::parse_and_decode_as(buf, used)
}

/// A package parsed from the front of a receive buffer and decoded into `out`.
///
/// # Errors
/// Anything but a whole data package of the recipe.
#[inline(never)]
pub fn frame_into(
    buf: &[u8],
    out: &mut Reference,
    used: &mut usize,
) -> Result<(), rtde_core::Error> {
    stream::parse_and_decode_into(buf, out, used)
}

/// `DynamicRecipe::decode_into`.
///
/// # Errors
/// A payload of another length.
#[inline(never)]
pub fn dynamic(recipe: &mut DynamicRecipe, payload: &[u8]) -> Result<(), PayloadError> {
    recipe.decode_into(payload)
}
