//! The floor: the reference recipe decoded and the servo input encoded by hand, with
//! `from_be_bytes` and `to_be_bytes` at fixed offsets, as one would write them in C.
//!
//! One length check, then loads, byte swaps and stores: no decoder of this layout can do
//! less work, so the derived code is measured as a ratio against it.

use crate::{REFERENCE_PAYLOAD, Reference, SERVO_PAYLOAD, ServoInput};

#[inline(always)]
fn be<const S: usize>(p: &[u8; REFERENCE_PAYLOAD], offset: usize) -> [u8; S] {
    let mut b = [0; S];
    b.copy_from_slice(&p[offset..offset + S]);
    b
}

#[inline(always)]
fn f64_at(p: &[u8; REFERENCE_PAYLOAD], offset: usize) -> f64 {
    f64::from_be_bytes(be(p, offset))
}

#[inline(always)]
fn six_at(p: &[u8; REFERENCE_PAYLOAD], offset: usize) -> [f64; 6] {
    [
        f64_at(p, offset),
        f64_at(p, offset + 8),
        f64_at(p, offset + 16),
        f64_at(p, offset + 24),
        f64_at(p, offset + 32),
        f64_at(p, offset + 40),
    ]
}

/// Decodes the reference recipe's payload, or `None` when it is not 272 bytes.
#[inline]
#[must_use]
pub fn decode(payload: &[u8]) -> Option<Reference> {
    let p: &[u8; REFERENCE_PAYLOAD] = payload.try_into().ok()?;
    Some(Reference {
        timestamp: f64_at(p, 0),
        actual_q: six_at(p, 8),
        actual_qd: six_at(p, 56),
        actual_tcp_pose: six_at(p, 104),
        actual_tcp_speed: six_at(p, 152),
        actual_tcp_force: six_at(p, 200),
        actual_digital_input_bits: u64::from_be_bytes(be(p, 248)),
        actual_digital_output_bits: u64::from_be_bytes(be(p, 256)),
        robot_mode: i32::from_be_bytes(be(p, 264)),
        safety_status: i32::from_be_bytes(be(p, 268)),
    })
}

/// [`decode`] behind a call: the base of every decode ratio, called once per package.
///
/// Inlined into a timing loop, the floor costs more than this: LLVM cannot tell the value
/// it builds from the payload apart there, so it loads all 35 values before storing the
/// first and spills two thirds of them to the stack. That is the caller's cost, not the
/// decoder's: out of line, the payload is a `noalias` read-only argument and each value is
/// stored as it is read. Measured against the inlined floor, a decoder that spills the
/// same way would look free.
#[inline(never)]
#[must_use]
pub fn decode_out_of_line(payload: &[u8]) -> Option<Reference> {
    decode(payload)
}

/// Encodes the reference recipe; the benchmarks build their packages with it, so that the
/// bytes do not depend on the code under test.
#[must_use]
pub fn encode(r: &Reference) -> [u8; REFERENCE_PAYLOAD] {
    let mut p = [0; REFERENCE_PAYLOAD];
    p[..8].copy_from_slice(&r.timestamp.to_be_bytes());
    for (i, six) in [
        r.actual_q,
        r.actual_qd,
        r.actual_tcp_pose,
        r.actual_tcp_speed,
        r.actual_tcp_force,
    ]
    .iter()
    .enumerate()
    {
        for (j, x) in six.iter().enumerate() {
            let at = 8 + 48 * i + 8 * j;
            p[at..at + 8].copy_from_slice(&x.to_be_bytes());
        }
    }
    p[248..256].copy_from_slice(&r.actual_digital_input_bits.to_be_bytes());
    p[256..264].copy_from_slice(&r.actual_digital_output_bits.to_be_bytes());
    p[264..268].copy_from_slice(&r.robot_mode.to_be_bytes());
    p[268..272].copy_from_slice(&r.safety_status.to_be_bytes());
    p
}

/// Encodes the servo input by hand: the floor of encoding.
#[inline]
#[must_use]
pub fn encode_servo(s: &ServoInput) -> [u8; SERVO_PAYLOAD] {
    let mut p = [0; SERVO_PAYLOAD];
    p[..4].copy_from_slice(&s.input_int_register_24.to_be_bytes());
    p[4..12].copy_from_slice(&s.input_double_register_24.to_be_bytes());
    p[12..20].copy_from_slice(&s.input_double_register_25.to_be_bytes());
    p[20..28].copy_from_slice(&s.input_double_register_26.to_be_bytes());
    p[28..36].copy_from_slice(&s.input_double_register_27.to_be_bytes());
    p[36..44].copy_from_slice(&s.input_double_register_28.to_be_bytes());
    p[44..52].copy_from_slice(&s.input_double_register_29.to_be_bytes());
    p[52..56].copy_from_slice(&s.speed_slider_mask.to_be_bytes());
    p[56..64].copy_from_slice(&s.speed_slider_fraction.to_be_bytes());
    p[64] = s.standard_digital_output_mask;
    p[65] = s.standard_digital_output;
    p
}
