//! The built-in functions: each one's parameters (names, types, defaults), what it returns,
//! and the controller versions it exists in, in one table ([`BUILTINS`]).
//!
//! ```
//! use rtde_urscript::builtins::{lookup, Type};
//! use rtde_urscript::ControllerVersion;
//!
//! let movej = lookup("movej").unwrap();
//! assert_eq!(movej.params[0].name, "q");
//! assert_eq!(movej.params[1].default, Some("1.4"));
//! let tool_contact = lookup("tool_contact").unwrap();
//! assert!(!tool_contact.since.covers(ControllerVersion::new(3, 15, 0, 0)));
//! assert!(tool_contact.since.covers(ControllerVersion::new(5, 4, 0, 0)));
//! assert_eq!(lookup("get_actual_tcp_pose").unwrap().returns, Type::Pose);
//! ```

mod table;

use std::fmt;

use crate::ControllerVersion;
pub use table::BUILTINS;

/// A value's type, as far as the checker can know it without running the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Type {
    /// Anything (or not knowable from the text).
    Any,
    /// An integer or a floating-point number.
    Number,
    /// An integer.
    Int,
    /// `True` or `False`.
    Bool,
    /// A string.
    Str,
    /// A pose, `p[…]`.
    Pose,
    /// A list (an array), such as joint positions.
    List,
    /// A pose, or joint positions as a list (the targets of the move functions).
    PoseOrList,
    /// A struct.
    Struct,
    /// No value: the function returns nothing.
    Nothing,
}

impl Type {
    /// Whether a value of type `actual` may be passed where `self` is expected; `Any` on
    /// either side is not known to be wrong.
    #[must_use]
    pub fn accepts(self, actual: Type) -> bool {
        use Type as T;
        match (self, actual) {
            (T::Any, _) | (_, T::Any) => true,
            (T::Number, T::Int) | (T::PoseOrList, T::Pose | T::List) => true,
            (expected, actual) => expected == actual,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Type::Any => "any value",
            Type::Number => "a number",
            Type::Int => "an integer",
            Type::Bool => "a boolean",
            Type::Str => "a string",
            Type::Pose => "a pose",
            Type::List => "a list",
            Type::PoseOrList => "a pose or a list of joint positions",
            Type::Struct => "a struct",
            Type::Nothing => "nothing",
        })
    }
}

/// A parameter of a built-in function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name, which is also its keyword.
    pub name: &'static str,
    /// The type it takes.
    pub ty: Type,
    /// Its default, as URScript text; `None` when the argument is required.
    pub default: Option<&'static str>,
}

/// The controller versions a function exists in: from which minor version of CB3 (3.x)
/// and of e-Series (5.x); `None` where it does not exist. PolyScope X (10.x) has what
/// e-Series has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Since {
    /// The first CB3 minor version (`Some(5)`: 3.5), if any.
    pub cb3: Option<u32>,
    /// The first e-Series minor version (`Some(4)`: 5.4), if any.
    pub e_series: Option<u32>,
    /// Whether these first versions are from the text of UR's URScript manual. When they
    /// are only a driver's version gate (ur_rtde's, the UR Client Library's), they say
    /// where the function is known to exist, and an older controller may have it too: a
    /// script that uses it on an older one is warned, not refused.
    pub confirmed: bool,
}

impl Since {
    /// Whether a script that uses the function on `version` is refused: the version lacks
    /// it, by the manual's word.
    #[must_use]
    pub fn refuses(self, version: ControllerVersion) -> bool {
        self.confirmed && !self.covers(version)
    }
}

impl Since {
    /// Whether the function exists in this controller version.
    #[must_use]
    pub fn covers(self, version: ControllerVersion) -> bool {
        match version.major {
            0..=4 => self.cb3.is_some_and(|m| version.minor >= m),
            5..=9 => self.e_series.is_some_and(|m| version.minor >= m),
            _ => self.e_series.is_some(),
        }
    }
}

impl fmt::Display for Since {
    /// `3.5 and 5.0`, `5.4`, …: the first versions that have it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.cb3, self.e_series) {
            (Some(c), Some(e)) => write!(f, "3.{c} (CB3) or 5.{e} (e-Series)"),
            (Some(c), None) => write!(f, "3.{c} (CB3 only)"),
            (None, Some(e)) => write!(f, "5.{e} (e-Series)"),
            (None, None) => f.write_str("no controller version"),
        }
    }
}

/// A built-in function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Builtin {
    /// Its name.
    pub name: &'static str,
    /// Its parameters, in order.
    pub params: &'static [Param],
    /// What it returns.
    pub returns: Type,
    /// The versions it exists in.
    pub since: Since,
}

/// The built-in function with this name, in any version.
#[must_use]
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The newest e-Series version the table knows of: the highest minor version any
/// built-in appeared in.
///
/// ```
/// use rtde_urscript::builtins::newest_e_series;
///
/// assert_eq!(newest_e_series().major, 5);
/// assert!(newest_e_series().minor >= 23);
/// ```
#[must_use]
pub fn newest_e_series() -> ControllerVersion {
    let minor = BUILTINS
        .iter()
        .filter_map(|b| b.since.e_series)
        .max()
        .unwrap_or(0);
    ControllerVersion::new(5, minor, 0, 0)
}

/// The language features a controller version may lack: each with the versions it
/// exists in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Feature {
    /// `for name in range(…):`.
    ForLoop,
    /// `struct(a=1)` and `s.a`.
    Struct,
}

impl Feature {
    /// The versions that have the feature: PolyScope X (the e-Series manuals read so far
    /// do not describe either).
    #[must_use]
    pub const fn since(self) -> Since {
        match self {
            Feature::ForLoop | Feature::Struct => Since {
                cb3: None,
                e_series: None,
                confirmed: false,
            },
        }
    }

    /// Whether the version has it: PolyScope X (10.x) and later.
    #[must_use]
    pub fn covers(self, version: ControllerVersion) -> bool {
        version.major >= 10 || self.since().covers(version)
    }

    /// The feature as the error message names it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Feature::ForLoop => "the `for` loop",
            Feature::Struct => "structs",
        }
    }
}
