//! rtde's own programs (`rtde_command.script`, `rtde_servo.script`), run as their URScript
//! text on the engine, as every other program runs: one way a program runs (issue 34).

use rtde_robot_proto::programs::command::{self, CommandLayout};
use rtde_robot_proto::programs::servo;
use rtde_robot_proto::script::Program as ScriptText;

/// Which of rtde's own programs a running program is, and where its registers are: what
/// the snapshots ([`state`]) read it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Own {
    Servo,
    Command(CommandLayout),
}

impl Own {
    /// The own program `text` is, by its marker line (and a command program's register
    /// bases); `None` for any other program.
    pub(crate) fn of_text(text: &str) -> Option<Own> {
        if let Some(layout) = command::layout_of(text) {
            return Some(Own::Command(layout));
        }
        let marker = rtde_robot_proto::script::marker_of;
        (marker(text).is_some() && marker(text) == marker(servo::MARKER)).then_some(Own::Servo)
    }
}

/// The text rtde-robot sends for the command program on `layout`: the script with its
/// register bases, wrapped in its `def` as [`ScriptText`] wraps any script.
pub(crate) fn command_text(layout: CommandLayout) -> String {
    sent(&command::command_program(layout))
}

/// The text `rtde run-script` sends for the servo program.
pub(crate) fn servo_text() -> String {
    sent(servo::SCRIPT)
}

/// `script` as a sender sends it. Only an empty text has no program; rtde's are not
/// empty, and one that were would fail to compile with its own line and column.
fn sent(script: &str) -> String {
    ScriptText::new(script).map_or_else(|_| script.to_owned(), |p| p.text().to_owned())
}

#[cfg(test)]
mod command_tests;
pub(crate) mod state;
#[cfg(test)]
mod tests;
