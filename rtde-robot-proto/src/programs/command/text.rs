//! The command program's text: sent by rtde-robot's `Robot::connect` for the layout in
//! use, and recognised, with its layout, by whoever runs it.

use super::{CommandLayout, MARKER};

/// `rtde_command.script` as this folder holds it, on the upper registers.
pub const SCRIPT: &str = include_str!("rtde_command.script");

/// The line of the program that places its int registers, and the one for its doubles.
const INT_BASE: &str = "INT_BASE";
const DOUBLE_BASE: &str = "DOUBLE_BASE";

/// The command program on the registers of `layout`: [`SCRIPT`] with its two
/// base lines set.
///
/// ```
/// use rtde_robot_proto::programs::command::{CommandLayout, command_program, layout_of};
///
/// let lower = command_program(CommandLayout::LOWER);
/// assert!(lower.contains("\nINT_BASE = 0\n"));
/// assert_eq!(layout_of(&lower), Some(CommandLayout::LOWER));
/// ```
#[must_use]
pub fn command_program(layout: CommandLayout) -> String {
    let mut text = String::with_capacity(SCRIPT.len());
    for line in SCRIPT.lines() {
        match base_of(line) {
            Some((INT_BASE, _)) => text.push_str(&format!("{INT_BASE} = {}", layout.int_base())),
            Some((DOUBLE_BASE, _)) => {
                text.push_str(&format!("{DOUBLE_BASE} = {}", layout.double_base()));
            }
            _ => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// The layout a command program's text was made for, from its marker and base lines;
/// `None` for any other text, or bases that no [`CommandLayout`] has.
///
/// ```
/// use rtde_robot_proto::programs::command::{CommandLayout, SCRIPT, layout_of};
///
/// assert_eq!(layout_of(SCRIPT), Some(CommandLayout::UPPER));
/// assert_eq!(layout_of("def p():\n  INT_BASE = 30\nend\n"), None);
/// ```
#[must_use]
pub fn layout_of(text: &str) -> Option<CommandLayout> {
    text.lines().find(|l| l.trim() == MARKER)?;
    let base = |name: &str| {
        text.lines()
            .find_map(|line| base_of(line).filter(|(n, _)| *n == name))
            .map(|(_, value)| value)
    };
    let (int, double) = (base(INT_BASE)?, base(DOUBLE_BASE)?);
    [CommandLayout::UPPER, CommandLayout::LOWER]
        .into_iter()
        .find(|l| l.int_base() == int && l.double_base() == double)
}

/// A base line (`INT_BASE = 30`): its name and value.
fn base_of(line: &str) -> Option<(&'static str, u8)> {
    let line = line.trim();
    [INT_BASE, DOUBLE_BASE].into_iter().find_map(|name| {
        let value = line.strip_prefix(name)?.trim_start().strip_prefix('=')?;
        Some((name, value.trim().parse().ok()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_round_trips_and_nothing_else_changes() {
        for layout in [CommandLayout::UPPER, CommandLayout::LOWER] {
            let text = command_program(layout);
            assert_eq!(layout_of(&text), Some(layout));
            let changed: Vec<_> = text
                .lines()
                .zip(SCRIPT.lines())
                .filter(|(a, b)| a != b)
                .map(|(a, _)| a)
                .collect();
            assert!(changed.iter().all(|l| base_of(l).is_some()), "{changed:?}");
            assert_eq!(text.lines().count(), SCRIPT.lines().count());
        }
    }

    #[test]
    fn a_text_without_the_marker_or_with_other_bases_has_no_layout() {
        let unmarked = SCRIPT.replacen(MARKER, "# another program", 1);
        assert_eq!(layout_of(&unmarked), None);
        let odd = command_program(CommandLayout::UPPER).replace("INT_BASE = 30", "INT_BASE = 31");
        assert_eq!(layout_of(&odd), None);
    }
}
