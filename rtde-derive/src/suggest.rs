//! "Did you mean": the closest registry name to a misspelt one.

use rtde_fields::{Direction, Field};

/// A hint to append to an unknown-name error, starting with `; `, or nothing.
///
/// A former name points to the field's current name; otherwise the registry's closest name
/// (case-insensitive match first, then the smallest edit distance) is offered.
pub(crate) fn hint(direction: Direction, name: &str) -> String {
    if let Some(r) = rtde_fields::renamed(direction, name) {
        return format!(
            "; `{}` is the former name of `{}`, which the controller uses now",
            r.old_name(),
            r.name()
        );
    }
    match rtde_fields::suggest(direction, name).map(Field::name) {
        Some(s) if s == name => String::new(),
        Some(s) if s.eq_ignore_ascii_case(name) => {
            format!("; did you mean `{s}`? (`name = \"…\"` is case-sensitive)")
        }
        Some(s) => format!("; did you mean `{s}`?"),
        None => match rtde_fields::suggest(direction.opposite(), name) {
            Some(f) => format!(
                "; `{}` is an {} field, it cannot appear in an {direction} recipe",
                f.name(),
                direction.opposite()
            ),
            None => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints() {
        assert_eq!(
            hint(Direction::Output, "actual_tcp_pos"),
            "; did you mean `actual_TCP_pose`?"
        );
        assert!(hint(Direction::Output, "controller_step").contains("`control_step`"));
        assert!(hint(Direction::Output, "actual_tcp_pose").contains("case-sensitive"));
        assert_eq!(hint(Direction::Output, "banana"), "");
        assert_eq!(
            hint(Direction::Input, "actual_tcp_pos"),
            "; `actual_TCP_pose` is an output field, it cannot appear in an input recipe"
        );
    }
}
