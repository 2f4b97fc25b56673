//! rtde's own programs (`rtde_command.script`, `rtde_servo.script`), run as their URScript
//! text on the engine, as every other program runs: one way a program runs. The native
//! behaviour ([`CommandProgram`], [`ServoProgram`]) is kept only as the baseline the tests
//! hold the engine to ([`SimBuilder::native_own_programs`](crate::SimBuilder::native_own_programs)).

use rtde_kinematics::Arm;
use rtde_robot_proto::programs::command::{self, CommandLayout};
use rtde_robot_proto::programs::servo;
use rtde_robot_proto::script::Program as ScriptText;
use rtde_urscript::ControllerVersion;

use crate::command_program::CommandProgram;
use crate::controller::KnownProgram;
use crate::program::ServoProgram;
use crate::robot_program::Program;
use crate::script_program::ScriptProgram;

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

/// One of rtde's own programs, as the simulator is to start it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OwnProgram<'a> {
    pub(crate) kind: KnownProgram,
    /// The text as sent (a command program's text places its registers).
    pub(crate) text: &'a str,
    pub(crate) arm: Arm,
    pub(crate) q: [f64; 6],
}

impl OwnProgram<'_> {
    /// The native behaviour of the program.
    ///
    /// # Errors
    /// A command program on registers no layout has.
    pub(crate) fn native(&self) -> Result<Program, String> {
        Ok(match self.kind {
            KnownProgram::Servo => Program::Servo(ServoProgram::new(self.q)),
            KnownProgram::Command => {
                let layout = command::layout_of(self.text).ok_or(
                    "its INT_BASE and DOUBLE_BASE lines place the registers where no layout \
                     of rtde-robot has them",
                )?;
                Program::Command(Box::new(CommandProgram::new(self.arm, self.q, layout)))
            }
        })
    }

    /// The program's text on the URScript engine, checked against `version`.
    ///
    /// # Errors
    /// The first compile error: its line, its column and its text.
    pub(crate) fn interpreted(
        &self,
        version: ControllerVersion,
    ) -> Result<Program, (u32, u32, String)> {
        let program = ScriptProgram::compile(self.text, version, self.arm, self.q)?;
        Ok(Program::Script(Box::new(program)))
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

pub(crate) mod state;
#[cfg(test)]
mod tests;
