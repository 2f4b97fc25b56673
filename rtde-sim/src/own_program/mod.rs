//! rtde's own programs (`rtde_command.script`, `rtde_servo.script`), run either natively
//! ([`CommandProgram`], [`ServoProgram`]) or, with
//! [`SimBuilder::interpret_own_programs`](crate::SimBuilder::interpret_own_programs), as
//! their URScript text on the engine, as every other program runs: one way a program runs,
//! the native behaviour kept beside it for speed and held to the same motion by tests.

use rtde_kinematics::Arm;
use rtde_robot_proto::programs::command::{self, CommandLayout};
use rtde_robot_proto::programs::servo;
use rtde_robot_proto::script::Program as ScriptText;
use rtde_urscript::ControllerVersion;

use crate::command_program::{CommandProgram, ProgramFaults};
use crate::controller::KnownProgram;
use crate::program::ServoProgram;
use crate::robot_program::Program;
use crate::script_program::ScriptProgram;

/// One of rtde's own programs, as the simulator is to start it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OwnProgram<'a> {
    pub(crate) kind: KnownProgram,
    /// The text as sent (a command program's text places its registers).
    pub(crate) text: &'a str,
    pub(crate) arm: Arm,
    pub(crate) q: [f64; 6],
    pub(crate) faults: ProgramFaults,
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
                let program =
                    CommandProgram::new(self.arm, self.q, layout).with_faults(self.faults);
                Program::Command(Box::new(program))
            }
        })
    }

    /// The program's text on the URScript engine, checked against `version`. The
    /// simulator's fault flags for the command program (a stop after some motion) are the
    /// native program's only.
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

#[cfg(test)]
mod tests;
