//! URScript, the language of Universal Robots controllers: a parser into a syntax tree
//! whose every node knows its line and column, the built-in functions of each controller
//! version, and a checker that finds, without running a script, the errors the
//! controller's compiler reports (unknown names, argument counts and keywords, types
//! knowable from the text, misplaced statements), each at its line and column and with the
//! closest known name.
//!
//! - [`parse`]: text into a [`Program`](ast::Program).
//! - [`builtins`]: the built-in function table, with the versions each exists in.
//! - [`check`]: parse and check against a controller version.
//!
//! ```
//! use rtde_urscript::{check, ControllerVersion};
//!
//! let script = "def main():\n  q = get_actual_joint_positions()\n  movej(q, a=1.2, v=0.25)\nend\n";
//! assert!(check(script, ControllerVersion::new(5, 4, 0, 0)).is_ok());
//!
//! let errors = check("servoj([0, 0, 0, 0, 0, 0], gian=300)\n", ControllerVersion::new(5, 4, 0, 0)).unwrap_err();
//! assert_eq!(errors[0].to_string(),
//!     "compile_error_unknown_keyword_argument: `servoj` has no parameter `gian`; did you mean `gain`?");
//! ```

#![forbid(unsafe_code)]

pub mod ast;
pub mod builtins;
mod check;
mod error;
mod parse;
pub mod run;
mod span;

pub use check::{Checked, Review, check, check_program, review};
pub use error::{ErrorKind, ScriptError};
pub use parse::parse;
pub use rtde_fields::ControllerVersion;
pub use span::Span;
