//! The dynamic recipe's decoder: neighbouring values of one wire type are decoded as a
//! group of four, two or one, with one dispatch per group and no look at the values' own
//! types.
//!
//! Why groups: a dispatch per value (a jump table on each value's type) cost about as much
//! as the rest of the walk. A recipe's values come in runs (five poses and speeds in a row,
//! a block of registers), and a group of four is one straight line of reads and writes.
//! Each group writes whole values of its type, so the walk depends only on the plan: the
//! values hold their fields' types after every decode, whatever they held before.

use rtde_fields::WireType;

use crate::value::Value;
use crate::wire::{self, WireKind};

macro_rules! groups {
    ($($variant:ident, $kind:ident: $one:ident, $two:ident, $four:ident;)*) => {
        /// One, two or four neighbouring values of one wire type, decoded by one arm of
        /// [`read`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Group {
            $($one, $two, $four,)*
        }

        impl Group {
            /// The group of `len` values of `wire_type`: four, two, or else one.
            fn of(wire_type: WireType, len: usize) -> Group {
                match (wire_type, len) {
                    $(
                        (WireType::$variant, 4) => Group::$four,
                        (WireType::$variant, 2) => Group::$two,
                        (WireType::$variant, _) => Group::$one,
                    )*
                }
            }
        }

        /// Decodes `payload` into `values`, group by group.
        ///
        /// `groups` is [`plan`] of the values' types and `payload` their size (the caller
        /// checked it): then every group is in bounds. Otherwise the walk stops at the first
        /// group out of bounds; nothing panics.
        #[inline(never)]
        pub(crate) fn read(groups: &[Group], values: &mut [Value], payload: &[u8]) {
            let mut slots = values.iter_mut();
            let mut rest = payload;
            for group in groups {
                let next = match group {
                    $(
                        Group::$four => write::<wire::$kind, _, 4>(&mut slots, Value::$variant, rest),
                        Group::$two => write::<wire::$kind, _, 2>(&mut slots, Value::$variant, rest),
                        Group::$one => write::<wire::$kind, _, 1>(&mut slots, Value::$variant, rest),
                    )*
                };
                let Some(next) = next else {
                    debug_assert!(false, "a group outside the values or the payload");
                    return;
                };
                rest = next;
            }
        }
    };
}

groups! {
    Bool, BOOL: OneBool, TwoBool, FourBool;
    Uint8, UINT8: OneUint8, TwoUint8, FourUint8;
    Uint32, UINT32: OneUint32, TwoUint32, FourUint32;
    Uint64, UINT64: OneUint64, TwoUint64, FourUint64;
    Int32, INT32: OneInt32, TwoInt32, FourInt32;
    Double, DOUBLE: OneDouble, TwoDouble, FourDouble;
    Vector3d, VECTOR3D: OneVector3d, TwoVector3d, FourVector3d;
    Vector6d, VECTOR6D: OneVector6d, TwoVector6d, FourVector6d;
    Vector6Int32, VECTOR6INT32: OneVector6Int32, TwoVector6Int32, FourVector6Int32;
    Vector6Uint32, VECTOR6UINT32: OneVector6Uint32, TwoVector6Uint32, FourVector6Uint32;
}

/// The groups of a recipe's types, in order: each run of one type as fours, then a two,
/// then a one.
pub(crate) fn plan(types: &[WireType]) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut rest = types;
    while let Some(&first) = rest.first() {
        let run = rest.iter().take_while(|&&t| t == first).count();
        let mut left = run;
        for len in [4, 2, 1] {
            while left >= len {
                groups.push(Group::of(first, len));
                left -= len;
            }
        }
        rest = &rest[run..];
    }
    groups
}

/// `K` values of wire type `W` from the front of `bytes` into the next `K` slots, each
/// made a [`Value`] by `make`; the bytes after them, or `None` when either runs short.
#[inline(always)]
fn write<'a, W: WireKind<Bytes = [u8; N]>, const N: usize, const K: usize>(
    slots: &mut std::slice::IterMut<'_, Value>,
    make: fn(W::Repr) -> Value,
    bytes: &'a [u8],
) -> Option<&'a [u8]> {
    // One length check for the group; the chunks below are then known to be in bounds.
    if bytes.len() < N * K {
        return None;
    }
    let (group, rest) = bytes.split_at(N * K);
    for b in group.as_chunks::<N>().0 {
        *slots.next()? = make(W::decode(*b));
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use rtde_fields::WireType;

    use super::{Group, plan, read};
    use crate::value::Value;

    /// A value of `t` made from `seed`, different for every seed and byte-swap sensitive.
    fn sample(t: WireType, seed: u8) -> Value {
        let bytes: Vec<u8> = (0..=u8::MAX)
            .take(t.size())
            .map(|i| seed.wrapping_mul(31).wrapping_add(i.wrapping_mul(7)) | 1)
            .collect();
        let mut v = Value::zero(t);
        // A BOOL reads back as 0 or 1 only; its byte is made 1 so that it round-trips.
        let bytes = if t == WireType::Bool { vec![1] } else { bytes };
        assert!(v.read_be(t, &bytes));
        v
    }

    fn encode(values: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            let mut buf = [0u8; 48];
            let n = v.write_be(&mut buf).unwrap();
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    #[test]
    fn runs_are_split_into_fours_then_a_two_then_a_one() {
        let d = WireType::Double;
        let v = WireType::Vector6d;
        let types = [d, v, v, v, v, v, v, v, d, d, d];
        assert_eq!(
            plan(&types),
            [
                Group::OneDouble,
                Group::FourVector6d,
                Group::TwoVector6d,
                Group::OneVector6d,
                Group::TwoDouble,
                Group::OneDouble,
            ]
        );
        assert_eq!(plan(&[]), []);
    }

    #[test]
    fn every_type_in_runs_of_every_length_decodes_to_what_was_encoded() {
        for t in WireType::ALL {
            for len in 1..=9u8 {
                // The run between two values of other types, so that its ends are walked.
                let other = if t == WireType::Double {
                    WireType::Int32
                } else {
                    WireType::Double
                };
                let mut types = vec![other];
                types.extend(std::iter::repeat_n(t, usize::from(len)));
                types.push(other);
                let expected: Vec<Value> = types
                    .iter()
                    .zip(1..)
                    .map(|(&t, seed)| sample(t, seed))
                    .collect();
                let payload = encode(&expected);
                let mut values: Vec<Value> = types.iter().map(|&t| Value::zero(t)).collect();
                read(&plan(&types), &mut values, &payload);
                assert_eq!(values, expected, "{t} in a run of {len}");
            }
        }
    }

    #[test]
    fn values_take_their_plans_types_whatever_they_held() {
        let types = [WireType::Int32, WireType::Int32, WireType::Vector3d];
        let expected: Vec<Value> = types.iter().zip(7..).map(|(&t, s)| sample(t, s)).collect();
        let mut values = vec![Value::Bool(true); 3];
        read(&plan(&types), &mut values, &encode(&expected));
        assert_eq!(values, expected);
    }
}
