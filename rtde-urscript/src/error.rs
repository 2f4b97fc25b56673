//! Errors in a script: what kind, where, and what the controller would say.

use std::fmt;

use crate::Span;

/// What is wrong with a script; each kind has the controller's error code
/// ([`ErrorKind::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not URScript: an unexpected token, an unclosed block or string.
    Syntax,
    /// A function or variable that is not defined.
    NameNotFound,
    /// A built-in function that exists, but not in the target controller version.
    NotInVersion,
    /// Too many or too few arguments.
    ArgumentCount,
    /// A keyword argument the function does not have, or one given twice.
    UnknownKeyword,
    /// An argument or operand of a type the function or operator does not take.
    TypeMismatch,
    /// `return` outside a function, `break` or `continue` outside a loop.
    Misplaced,
    /// `run` of something that is not a thread.
    NotAThread,
    /// Valid URScript the interpreter does not run (an assignment to an element of an
    /// element, `for` over something other than `range`).
    Unsupported,
}

impl ErrorKind {
    /// The error code that opens the controller's runtime exception text on the primary
    /// interface (`compile_error_name_not_found`, `syntax_error_on_line`, …).
    ///
    /// ```
    /// use rtde_urscript::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::NameNotFound.code(), "compile_error_name_not_found");
    /// ```
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax_error_on_line",
            ErrorKind::NameNotFound | ErrorKind::NotInVersion => "compile_error_name_not_found",
            ErrorKind::ArgumentCount => "compile_error_wrong_number_of_arguments",
            ErrorKind::UnknownKeyword => "compile_error_unknown_keyword_argument",
            ErrorKind::TypeMismatch => "compile_error_type_mismatch",
            ErrorKind::Misplaced => "compile_error_misplaced_statement",
            ErrorKind::NotAThread => "compile_error_not_a_thread",
            ErrorKind::Unsupported => "compile_error_unsupported",
        }
    }
}

/// One error in a script, at its line and column.
///
/// Displayed as the controller's runtime exception text: the code, then the message, which
/// names the closest known name for a misspelt one.
///
/// ```
/// use rtde_urscript::{check, ControllerVersion, ErrorKind};
///
/// let errors = check("mvoej([0, 0, 0, 0, 0, 0])\n", ControllerVersion::new(5, 4, 0, 0)).unwrap_err();
/// assert_eq!(errors[0].kind, ErrorKind::NameNotFound);
/// assert_eq!((errors[0].span.line, errors[0].span.column), (1, 1));
/// assert_eq!(errors[0].suggestion.as_deref(), Some("movej"));
/// assert_eq!(
///     errors[0].to_string(),
///     "compile_error_name_not_found: name `mvoej` is not defined; did you mean `movej`?",
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptError {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Where.
    pub span: Span,
    /// What is wrong, in words (without the code or the suggestion).
    pub message: String,
    /// The closest known name, for a misspelt one.
    pub suggestion: Option<String>,
}

impl ScriptError {
    pub(crate) fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        ScriptError {
            kind,
            span,
            message: message.into(),
            suggestion: None,
        }
    }

    pub(crate) fn suggest(mut self, name: Option<&str>) -> Self {
        self.suggestion = name.map(str::to_owned);
        self
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean `{s}`?")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScriptError {}
