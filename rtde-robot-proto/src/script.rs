//! A URScript program to send: a whole program or a single line, and its marker.

use std::fmt;

/// The marker line's prefix that names one of the project's own programs and its
/// version (`# rtde-program: servo 1`); the simulator runs programs that carry one.
pub const MARKER_PREFIX: &str = "# rtde-program:";

/// The marker in a text (`servo 1` from a `# rtde-program: servo 1` line): its first
/// marker line's text after [`MARKER_PREFIX`], if it has one.
///
/// ```
/// use rtde_robot_proto::programs::servo;
/// use rtde_robot_proto::script::marker_of;
///
/// assert_eq!(marker_of(servo::MARKER), Some("servo 1"));
/// assert_eq!(marker_of(servo::SCRIPT), Some("servo 1"));
/// assert_eq!(marker_of("textmsg(\"hi\")"), None);
/// ```
#[must_use]
pub fn marker_of(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(MARKER_PREFIX))
        .map(str::trim)
}

/// A URScript program ready to send to a script port.
///
/// A text whose first statement is `def name():` or `sec name():` is sent as it is; any
/// other text is wrapped in `def rtde_program(): … end`, so that its top-level
/// statements run as one program (a controller runs each top-level line sent to a script
/// port as a program of its own). [`Program::line`] sends one statement by itself.
///
/// ```
/// use rtde_robot_proto::script::Program;
///
/// let p = Program::new("def pick():\n  movej([0, -1.57, 1.57, -1.57, -1.57, 0])\nend\n").unwrap();
/// assert_eq!(p.name(), Some("pick"));
/// let wrapped = Program::new("# rtde-program: servo 1\ntextmsg(\"hi\")\n").unwrap();
/// assert_eq!(wrapped.name(), Some("rtde_program"));
/// assert_eq!(wrapped.marker(), Some("servo 1"));
/// assert_eq!(Program::line("set_digital_out(0, True)").unwrap().text(), "set_digital_out(0, True)\n");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    text: String,
}

/// Why a text cannot be sent as a program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramError {
    /// Nothing but blank lines and comments.
    #[error("the program is empty: it has no statement")]
    Empty,
    /// [`Program::line`] given more than one line.
    #[error("a single line cannot hold a line break; send a whole program instead")]
    NotOneLine,
}

fn statements(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

impl Program {
    /// A whole program from its source.
    ///
    /// # Errors
    /// [`ProgramError::Empty`] for a text without a statement.
    pub fn new(source: &str) -> Result<Program, ProgramError> {
        let first = statements(source).next().ok_or(ProgramError::Empty)?;
        let text = if first.starts_with("def ") || first.starts_with("sec ") {
            let mut text = source.trim_end().to_owned();
            text.push('\n');
            text
        } else {
            format!("def rtde_program():\n{}\nend\n", source.trim_end())
        };
        Ok(Program { text })
    }

    /// A single statement, sent by itself (`set_digital_out(0, True)`).
    ///
    /// # Errors
    /// [`ProgramError::NotOneLine`] for a text with a line break, [`ProgramError::Empty`]
    /// for a blank one.
    pub fn line(statement: &str) -> Result<Program, ProgramError> {
        let statement = statement.trim();
        if statement.contains(['\n', '\r']) {
            return Err(ProgramError::NotOneLine);
        }
        if statement.is_empty() {
            return Err(ProgramError::Empty);
        }
        Ok(Program {
            text: format!("{statement}\n"),
        })
    }

    /// The bytes sent.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The program's name (`def name():`), if it is a whole program.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        let first = statements(&self.text).next()?;
        let rest = first
            .strip_prefix("def ")
            .or_else(|| first.strip_prefix("sec "))?;
        Some(rest.split('(').next().unwrap_or(rest).trim())
    }

    /// The marker of one of the project's programs (`servo 1`), if the program carries one.
    #[must_use]
    pub fn marker(&self) -> Option<&str> {
        marker_of(&self.text)
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_lines_and_empties() {
        assert_eq!(
            Program::new("# only a comment\n\n"),
            Err(ProgramError::Empty)
        );
        assert_eq!(Program::line("a()\nb()"), Err(ProgramError::NotOneLine));
        let p = Program::new("\n# c\nsec watch():\n  x = 1\nend").unwrap();
        assert_eq!(p.text(), "\n# c\nsec watch():\n  x = 1\nend\n");
        assert_eq!(p.name(), Some("watch"));
        assert_eq!(p.marker(), None);
        let wrapped = Program::new("x = 1\ny = 2\n").unwrap();
        assert_eq!(wrapped.text(), "def rtde_program():\nx = 1\ny = 2\nend\n");
    }
}
