//! Where a piece of source is: its line and column, as the controller reports them.

use std::fmt;

/// A position in a script: line and column, both from 1, the column counted in characters.
///
/// ```
/// use rtde_urscript::Span;
///
/// let span = Span::new(3, 7);
/// assert_eq!(span.to_string(), "3:7");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub column: u32,
}

impl Span {
    /// A span at this line and column.
    #[must_use]
    pub const fn new(line: u32, column: u32) -> Self {
        Span { line, column }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}
