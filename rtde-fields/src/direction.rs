//! Which way a variable travels.

use std::fmt;

/// The direction of an RTDE variable, seen from the client.
///
/// The controller's `input_*` registers (and the packed `input_bit_registers*` words) are
/// listed in both directions: a client writes them as inputs, and any client can read them
/// back as outputs. The registry holds one [`crate::Field`] per direction for those.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Controller to client: requested with SETUP_OUTPUTS, received in data packages.
    Output,
    /// Client to controller: requested with SETUP_INPUTS, sent in data packages.
    Input,
}

impl Direction {
    /// Both directions, outputs first.
    pub const ALL: [Direction; 2] = [Direction::Output, Direction::Input];

    /// `"output"` or `"input"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::Output => "output",
            Direction::Input => "input",
        }
    }

    /// The other direction.
    #[must_use]
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::Output => Direction::Input,
            Direction::Input => Direction::Output,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
