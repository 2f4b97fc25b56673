//! Lookups over the generated tables: exact, case-insensitive, and "did you mean".

use std::cmp::Ordering;

use crate::generated;
use crate::{Direction, Field};

/// Every field of one direction, in the RTDE guide's order (registers by index).
///
/// ```
/// use rtde_fields::{fields, Direction};
///
/// assert_eq!(fields(Direction::Output)[0].name(), "timestamp");
/// ```
#[must_use]
pub fn fields(direction: Direction) -> &'static [Field] {
    table(direction).fields
}

/// Every field of both directions: outputs first, then inputs.
///
/// An input register appears twice, once per direction.
pub fn all_fields() -> impl Iterator<Item = &'static Field> {
    generated::OUTPUTS.iter().chain(generated::INPUTS.iter())
}

/// The field with exactly this canonical name (case-sensitive, as on the wire).
///
/// A binary search over a sorted index: O(log n), no allocation.
///
/// ```
/// use rtde_fields::{lookup, Direction, WireType};
///
/// assert_eq!(lookup(Direction::Output, "actual_TCP_pose").unwrap().wire_type(), WireType::Vector6d);
/// assert!(lookup(Direction::Output, "actual_tcp_pose").is_none());
/// assert!(lookup(Direction::Input, "actual_q").is_none());
/// ```
#[must_use]
pub fn lookup(direction: Direction, name: &str) -> Option<&'static Field> {
    let t = table(direction);
    t.by_name
        .binary_search_by(|&i| t.fields[usize::from(i)].name.cmp(name))
        .ok()
        .map(|pos| &t.fields[usize::from(t.by_name[pos])])
}

/// The field whose canonical name equals `name` ignoring ASCII case, so that a Rust
/// identifier such as `actual_tcp_pose` finds `actual_TCP_pose`.
///
/// No two fields of one direction differ only in case (a test proves it), so the answer
/// is unique. O(log n), no allocation.
///
/// ```
/// use rtde_fields::{lookup_ignore_case, Direction};
///
/// let f = lookup_ignore_case(Direction::Output, "actual_tcp_pose").unwrap();
/// assert_eq!(f.name(), "actual_TCP_pose");
/// ```
#[must_use]
pub fn lookup_ignore_case(direction: Direction, name: &str) -> Option<&'static Field> {
    let t = table(direction);
    t.by_folded_name
        .binary_search_by(|&i| cmp_ignore_ascii_case(t.fields[usize::from(i)].name, name))
        .ok()
        .map(|pos| &t.fields[usize::from(t.by_folded_name[pos])])
}

/// The closest field name to a misspelt one, for "did you mean" messages; `None` when
/// nothing is close enough to be a plausible typo.
///
/// A case-insensitive match wins; otherwise the smallest edit distance (insertions,
/// deletions, substitutions and swaps of neighbours, ignoring case) not above a third of
/// the name's length, ties going to the earlier field in the guide's order.
///
/// ```
/// use rtde_fields::{suggest, Direction};
///
/// assert_eq!(suggest(Direction::Output, "actual_tcp_pos").unwrap().name(), "actual_TCP_pose");
/// assert_eq!(suggest(Direction::Output, "acutal_q").unwrap().name(), "actual_q");
/// assert!(suggest(Direction::Output, "banana").is_none());
/// ```
#[must_use]
pub fn suggest(direction: Direction, name: &str) -> Option<&'static Field> {
    if let Some(f) = lookup_ignore_case(direction, name) {
        return Some(f);
    }
    if let Some(r) = renamed(direction, name) {
        return lookup(direction, r.name);
    }
    closest(name, fields(direction), |f| f.name)
}

/// The candidate whose name is closest to `name`, for "did you mean" messages: the
/// smallest edit distance (insertions, deletions, substitutions and swaps of neighbours,
/// ignoring ASCII case) not above a third of the name's length, ties going to the earlier
/// candidate; `None` when nothing is that close. [`suggest`] and the URScript checker both
/// use this rule.
///
/// ```
/// use rtde_fields::closest;
///
/// assert_eq!(closest("mvoej", ["movel", "movej", "sleep"], |n| *n), Some("movej"));
/// assert_eq!(closest("MOVEL", ["movej", "movel"], |n| *n), Some("movel"));
/// assert_eq!(closest("banana", ["movej", "movel"], |n| *n), None);
/// ```
pub fn closest<T>(
    name: &str,
    candidates: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> &str,
) -> Option<T> {
    let limit = (name.len() / 3).max(1);
    let mut best: Option<(usize, T)> = None;
    for candidate in candidates {
        let c = key(&candidate);
        // Names whose lengths differ by more than the limit cannot be within it.
        if c.len().abs_diff(name.len()) > limit {
            continue;
        }
        let d = edit_distance(c, name);
        if d <= limit && best.as_ref().is_none_or(|(bd, _)| d < *bd) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// A name under which a field was documented before taking its canonical name.
///
/// The controller does not accept former names; the registry knows them so that
/// suggestions can point to the right field.
///
/// ```
/// use rtde_fields::{lookup, renamed, suggest, Direction};
///
/// assert!(lookup(Direction::Output, "controller_step").is_none());
/// assert_eq!(renamed(Direction::Output, "controller_step").unwrap().name(), "control_step");
/// assert_eq!(suggest(Direction::Output, "controller_step").unwrap().name(), "control_step");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Renamed {
    pub(crate) direction: Direction,
    pub(crate) old_name: &'static str,
    pub(crate) name: &'static str,
    pub(crate) source: &'static str,
}

impl Renamed {
    /// The direction of the field.
    #[must_use]
    pub const fn direction(&self) -> Direction {
        self.direction
    }

    /// The former name.
    #[must_use]
    pub const fn old_name(&self) -> &'static str {
        self.old_name
    }

    /// The canonical name the field has now.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Where the rename is recorded.
    #[must_use]
    pub const fn source(&self) -> &'static str {
        self.source
    }
}

/// The rename whose former name is `old_name` (ignoring ASCII case), if any.
#[must_use]
pub fn renamed(direction: Direction, old_name: &str) -> Option<&'static Renamed> {
    generated::RENAMED
        .iter()
        .find(|r| r.direction == direction && r.old_name.eq_ignore_ascii_case(old_name))
}

struct Table {
    fields: &'static [Field],
    by_name: &'static [u16],
    by_folded_name: &'static [u16],
}

fn table(direction: Direction) -> Table {
    match direction {
        Direction::Output => Table {
            fields: &generated::OUTPUTS,
            by_name: &generated::OUTPUTS_BY_NAME,
            by_folded_name: &generated::OUTPUTS_BY_FOLDED_NAME,
        },
        Direction::Input => Table {
            fields: &generated::INPUTS,
            by_name: &generated::INPUTS_BY_NAME,
            by_folded_name: &generated::INPUTS_BY_FOLDED_NAME,
        },
    }
}

/// Compares as if both were lowercased, byte by byte; the generator sorts with the same rule.
fn cmp_ignore_ascii_case(a: &str, b: &str) -> Ordering {
    let a = a.bytes().map(|c| c.to_ascii_lowercase());
    let b = b.bytes().map(|c| c.to_ascii_lowercase());
    a.cmp(b)
}

/// Optimal string alignment distance over ASCII-lowercased bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<u8> = a.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<u8> = b.bytes().map(|c| c.to_ascii_lowercase()).collect();
    // Three rows: two back (for swaps), one back, current.
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_typos() {
        assert_eq!(edit_distance("actual_q", "actual_q"), 0);
        assert_eq!(edit_distance("actual_q", "acutal_q"), 1); // swap
        assert_eq!(edit_distance("actual_TCP_pose", "actual_tcp_pos"), 1); // case ignored, deletion
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn sorted_indexes_are_sorted_and_complete() {
        for d in Direction::ALL {
            let t = table(d);
            let mut seen = vec![false; t.fields.len()];
            for w in t.by_name.windows(2) {
                let (a, b) = (
                    t.fields[usize::from(w[0])].name,
                    t.fields[usize::from(w[1])].name,
                );
                assert!(a < b, "{d}: {a} !< {b}");
            }
            for w in t.by_folded_name.windows(2) {
                let (a, b) = (
                    t.fields[usize::from(w[0])].name,
                    t.fields[usize::from(w[1])].name,
                );
                assert_eq!(
                    cmp_ignore_ascii_case(a, b),
                    Ordering::Less,
                    "{d}: {a} vs {b}"
                );
            }
            for &i in t.by_name {
                seen[usize::from(i)] = true;
            }
            assert!(seen.iter().all(|&s| s), "{d}: by_name misses an entry");
            assert_eq!(t.by_folded_name.len(), t.fields.len());
        }
    }

    #[test]
    fn every_field_is_found_by_every_lookup() {
        for f in all_fields() {
            assert_eq!(lookup(f.direction, f.name), Some(f));
            assert_eq!(
                lookup_ignore_case(f.direction, &f.name.to_ascii_lowercase()),
                Some(f)
            );
            assert_eq!(
                lookup_ignore_case(f.direction, &f.name.to_ascii_uppercase()),
                Some(f)
            );
            assert_eq!(suggest(f.direction, f.name), Some(f));
        }
    }
}
