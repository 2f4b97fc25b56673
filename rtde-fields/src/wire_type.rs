//! The RTDE wire types and their sizes.

use std::fmt;
use std::str::FromStr;

/// The type of an RTDE variable on the wire, as the controller names it in setup replies.
///
/// Every multi-byte value is big-endian (network byte order). A `BOOL` takes one byte.
///
/// ```
/// use rtde_fields::WireType;
///
/// let t: WireType = "VECTOR6D".parse().unwrap();
/// assert_eq!(t, WireType::Vector6d);
/// assert_eq!(t.size(), 48);
/// assert_eq!(t.to_string(), "VECTOR6D");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireType {
    /// `BOOL`: one byte, 0 or 1.
    Bool,
    /// `UINT8`: one unsigned byte.
    Uint8,
    /// `UINT32`: unsigned 32-bit integer.
    Uint32,
    /// `UINT64`: unsigned 64-bit integer.
    Uint64,
    /// `INT32`: signed 32-bit integer.
    Int32,
    /// `DOUBLE`: IEEE 754 binary64.
    Double,
    /// `VECTOR3D`: three doubles.
    Vector3d,
    /// `VECTOR6D`: six doubles.
    Vector6d,
    /// `VECTOR6INT32`: six signed 32-bit integers.
    Vector6Int32,
    /// `VECTOR6UINT32`: six unsigned 32-bit integers.
    Vector6Uint32,
}

impl WireType {
    /// Every wire type, in declaration order.
    pub const ALL: [WireType; 10] = [
        WireType::Bool,
        WireType::Uint8,
        WireType::Uint32,
        WireType::Uint64,
        WireType::Int32,
        WireType::Double,
        WireType::Vector3d,
        WireType::Vector6d,
        WireType::Vector6Int32,
        WireType::Vector6Uint32,
    ];

    /// The exact spelling the controller uses, e.g. `"VECTOR6D"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            WireType::Bool => "BOOL",
            WireType::Uint8 => "UINT8",
            WireType::Uint32 => "UINT32",
            WireType::Uint64 => "UINT64",
            WireType::Int32 => "INT32",
            WireType::Double => "DOUBLE",
            WireType::Vector3d => "VECTOR3D",
            WireType::Vector6d => "VECTOR6D",
            WireType::Vector6Int32 => "VECTOR6INT32",
            WireType::Vector6Uint32 => "VECTOR6UINT32",
        }
    }

    /// The number of bytes a value of this type takes in a data package.
    #[must_use]
    pub const fn size(self) -> usize {
        match self {
            WireType::Bool | WireType::Uint8 => 1,
            WireType::Uint32 | WireType::Int32 => 4,
            WireType::Uint64 | WireType::Double => 8,
            WireType::Vector3d => 24,
            WireType::Vector6d => 48,
            WireType::Vector6Int32 | WireType::Vector6Uint32 => 24,
        }
    }

    /// The plain Rust type that holds a value of this type, as Rust source: `"[f64; 6]"` for
    /// `VECTOR6D`. For code generators (tests, benchmarks) that write recipes.
    ///
    /// ```
    /// use rtde_fields::WireType;
    ///
    /// assert_eq!(WireType::Vector6Int32.rust_type(), "[i32; 6]");
    /// ```
    #[must_use]
    pub const fn rust_type(self) -> &'static str {
        match self {
            WireType::Bool => "bool",
            WireType::Uint8 => "u8",
            WireType::Uint32 => "u32",
            WireType::Uint64 => "u64",
            WireType::Int32 => "i32",
            WireType::Double => "f64",
            WireType::Vector3d => "[f64; 3]",
            WireType::Vector6d => "[f64; 6]",
            WireType::Vector6Int32 => "[i32; 6]",
            WireType::Vector6Uint32 => "[u32; 6]",
        }
    }

    /// Parses the controller's spelling; `const` so the derive and tables can use it.
    ///
    /// Returns `None` for anything else, including the setup-reply tokens
    /// `NOT_FOUND` and `IN_USE`, which are not types.
    #[must_use]
    pub const fn from_wire_name(name: &str) -> Option<WireType> {
        let mut i = 0;
        while i < WireType::ALL.len() {
            let t = WireType::ALL[i];
            if same_name(t.as_str(), name) {
                return Some(t);
            }
            i += 1;
        }
        None
    }
}

/// Whether two names are equal, byte for byte: `==` on `str` where only a `const fn` will
/// do. The derive's compile-time checks across flattened recipes use it too.
///
/// ```
/// const SAME: bool = rtde_fields::same_name("actual_TCP_pose", "actual_TCP_pose");
/// assert!(SAME);
/// assert!(!rtde_fields::same_name("actual_TCP_pose", "actual_tcp_pose"));
/// ```
#[must_use]
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error from parsing a string that is not an RTDE wire type name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseWireTypeError {
    input: String,
}

impl ParseWireTypeError {
    /// The text that was not a wire type.
    #[must_use]
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseWireTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an RTDE wire type (expected one of BOOL, UINT8, UINT32, UINT64, INT32, \
             DOUBLE, VECTOR3D, VECTOR6D, VECTOR6INT32, VECTOR6UINT32)",
            self.input
        )
    }
}

impl std::error::Error for ParseWireTypeError {}

impl FromStr for WireType {
    type Err = ParseWireTypeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WireType::from_wire_name(s).ok_or_else(|| ParseWireTypeError {
            input: s.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for t in WireType::ALL {
            assert_eq!(t.as_str().parse::<WireType>(), Ok(t));
            assert_eq!(t.to_string(), t.as_str());
        }
    }

    #[test]
    fn spellings_are_case_sensitive_and_tokens_are_not_types() {
        assert!("double".parse::<WireType>().is_err());
        assert!("NOT_FOUND".parse::<WireType>().is_err());
        assert!("IN_USE".parse::<WireType>().is_err());
        let err = "VECTOR6".parse::<WireType>().unwrap_err();
        assert_eq!(err.input(), "VECTOR6");
        assert!(
            err.to_string()
                .contains("`VECTOR6` is not an RTDE wire type")
        );
    }

    #[test]
    fn sizes_match_the_guide() {
        let sizes: Vec<(&str, usize)> = WireType::ALL
            .iter()
            .map(|t| (t.as_str(), t.size()))
            .collect();
        assert_eq!(
            sizes,
            [
                ("BOOL", 1),
                ("UINT8", 1),
                ("UINT32", 4),
                ("UINT64", 8),
                ("INT32", 4),
                ("DOUBLE", 8),
                ("VECTOR3D", 24),
                ("VECTOR6D", 48),
                ("VECTOR6INT32", 24),
                ("VECTOR6UINT32", 24),
            ]
        );
    }
}
