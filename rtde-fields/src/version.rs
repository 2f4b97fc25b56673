//! Controller software versions and the hardware generations they imply.

use std::fmt;
use std::str::FromStr;

/// A controller software version: `major.minor.bugfix.build`, as the controller reports it
/// in its reply to GET_URCONTROL_VERSION.
///
/// Parsed from `5.4`, `5.4.0` or `3.15.8.106339`; missing parts are zero, so `5.4 == 5.4.0.0`.
/// Versions order by their parts, left to right.
///
/// ```
/// use rtde_fields::{ControllerVersion, Generation};
///
/// let v: ControllerVersion = "3.15.8.106339".parse().unwrap();
/// assert_eq!(v.generation(), Some(Generation::Cb3));
/// assert!(v < "5.4".parse().unwrap());
/// assert_eq!("5.4".parse::<ControllerVersion>().unwrap(), ControllerVersion::new(5, 4, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ControllerVersion {
    /// 3 on CB3, 5 on e-Series, 10 on PolyScope X.
    pub major: u32,
    /// The minor version.
    pub minor: u32,
    /// The bugfix version.
    pub bugfix: u32,
    /// The build number; 0 when not given.
    pub build: u32,
}

impl ControllerVersion {
    /// A version from its four parts.
    #[must_use]
    pub const fn new(major: u32, minor: u32, bugfix: u32, build: u32) -> Self {
        ControllerVersion {
            major,
            minor,
            bugfix,
            build,
        }
    }

    /// The generation this version belongs to, from its major number; `None` for a major
    /// number no Universal Robots controller has used (such as 4).
    #[must_use]
    pub const fn generation(self) -> Option<Generation> {
        Generation::from_major(self.major)
    }

    /// Parses `major.minor[.bugfix[.build]]` in a `const` context, for tables and the derive.
    ///
    /// # Errors
    /// [`ParseVersionError`] when the text is not two to four dot-separated decimal numbers,
    /// each fitting in a `u32`.
    pub const fn parse(s: &str) -> Result<Self, ParseVersionError> {
        let bytes = s.as_bytes();
        let mut parts = [0u32; 4];
        let mut count = 0;
        let mut i = 0;
        let mut digits = 0;
        let mut value: u32 = 0;
        loop {
            let end = i == bytes.len();
            if end || bytes[i] == b'.' {
                if digits == 0 {
                    return Err(ParseVersionError::new(VersionErrorKind::EmptyPart));
                }
                if count == 4 {
                    return Err(ParseVersionError::new(VersionErrorKind::TooManyParts));
                }
                parts[count] = value;
                count += 1;
                digits = 0;
                value = 0;
                if end {
                    break;
                }
            } else if bytes[i].is_ascii_digit() {
                let digit = (bytes[i] - b'0') as u32;
                value = match value.checked_mul(10) {
                    Some(v) => match v.checked_add(digit) {
                        Some(v) => v,
                        None => return Err(ParseVersionError::new(VersionErrorKind::TooLarge)),
                    },
                    None => return Err(ParseVersionError::new(VersionErrorKind::TooLarge)),
                };
                digits += 1;
            } else {
                return Err(ParseVersionError::new(VersionErrorKind::NotADigit));
            }
            i += 1;
        }
        if count < 2 {
            return Err(ParseVersionError::new(VersionErrorKind::TooFewParts));
        }
        Ok(ControllerVersion::new(
            parts[0], parts[1], parts[2], parts[3],
        ))
    }
}

impl fmt::Display for ControllerVersion {
    /// `major.minor.bugfix`, with `.build` only when it is not zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.bugfix)?;
        if self.build != 0 {
            write!(f, ".{}", self.build)?;
        }
        Ok(())
    }
}

impl FromStr for ControllerVersion {
    type Err = ParseVersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ControllerVersion::parse(s)
    }
}

/// Why a text is not a controller version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionErrorKind {
    /// Fewer than two parts (`5`).
    TooFewParts,
    /// More than four parts.
    TooManyParts,
    /// An empty part (`5..1`, `.5`, `5.`, or an empty text).
    EmptyPart,
    /// A character other than a digit or a dot.
    NotADigit,
    /// A part that does not fit in a `u32`.
    TooLarge,
}

/// The error from parsing a [`ControllerVersion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseVersionError {
    kind: VersionErrorKind,
}

impl ParseVersionError {
    const fn new(kind: VersionErrorKind) -> Self {
        ParseVersionError { kind }
    }

    /// What was wrong with the text.
    #[must_use]
    pub const fn kind(&self) -> VersionErrorKind {
        self.kind
    }

    /// The reason as text, usable in `const` panics and compile errors.
    #[must_use]
    pub const fn reason(&self) -> &'static str {
        match self.kind {
            VersionErrorKind::TooFewParts => {
                "a controller version needs at least major.minor, like `5.4`"
            }
            VersionErrorKind::TooManyParts => {
                "a controller version has at most four parts, major.minor.bugfix.build"
            }
            VersionErrorKind::EmptyPart => "a controller version part is empty",
            VersionErrorKind::NotADigit => {
                "a controller version holds only decimal digits and dots, like `5.21.0`"
            }
            VersionErrorKind::TooLarge => "a controller version part does not fit in 32 bits",
        }
    }
}

impl fmt::Display for ParseVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for ParseVersionError {}

/// A Universal Robots controller generation.
///
/// ```
/// use rtde_fields::Generation;
///
/// assert_eq!(Generation::from_major(5), Some(Generation::ESeries));
/// assert_eq!(Generation::ESeries.to_string(), "e-Series 5.x");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// CB3 controllers, software 3.x.
    Cb3,
    /// e-Series controllers (and UR20/UR30) on PolyScope 5, software 5.x.
    ESeries,
    /// PolyScope X, software 10.x.
    PolyScopeX,
}

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Generation; 3] = [Generation::Cb3, Generation::ESeries, Generation::PolyScopeX];

    /// The generation of a major version number: 3, 5 or 10.
    #[must_use]
    pub const fn from_major(major: u32) -> Option<Generation> {
        match major {
            3 => Some(Generation::Cb3),
            5 => Some(Generation::ESeries),
            10 => Some(Generation::PolyScopeX),
            _ => None,
        }
    }

    /// The major version number of this generation's software.
    #[must_use]
    pub const fn major(self) -> u32 {
        match self {
            Generation::Cb3 => 3,
            Generation::ESeries => 5,
            Generation::PolyScopeX => 10,
        }
    }

    /// The position of this generation in [`Generation::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Generation::Cb3 => 0,
            Generation::ESeries => 1,
            Generation::PolyScopeX => 2,
        }
    }

    /// The name people use, with the software line: `CB3 3.x`, `e-Series 5.x`, `PolyScope X 10.x`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Generation::Cb3 => "CB3 3.x",
            Generation::ESeries => "e-Series 5.x",
            Generation::PolyScopeX => "PolyScope X 10.x",
        }
    }

    /// The first software version of this generation with RTDE (3.4.0, 5.0.0, 10.7.0): a
    /// field that exists since it exists on every version of the generation.
    #[must_use]
    pub const fn first_rtde_version(self) -> ControllerVersion {
        match self {
            Generation::Cb3 => ControllerVersion::new(3, 4, 0, 0),
            Generation::ESeries => ControllerVersion::new(5, 0, 0, 0),
            Generation::PolyScopeX => ControllerVersion::new(10, 7, 0, 0),
        }
    }

    /// The highest output frequency the controller accepts in SETUP_OUTPUTS, in hertz:
    /// its control loop runs at 125 Hz on CB3 and 500 Hz on later generations.
    #[must_use]
    pub const fn max_frequency(self) -> f64 {
        match self {
            Generation::Cb3 => 125.0,
            Generation::ESeries | Generation::PolyScopeX => 500.0,
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ControllerVersion {
        s.parse().unwrap()
    }

    #[test]
    fn parses_two_three_and_four_parts() {
        assert_eq!(v("5.4"), ControllerVersion::new(5, 4, 0, 0));
        assert_eq!(v("5.4.0"), ControllerVersion::new(5, 4, 0, 0));
        assert_eq!(
            v("3.15.8.106339"),
            ControllerVersion::new(3, 15, 8, 106_339)
        );
        assert_eq!(v("10.11.0"), ControllerVersion::new(10, 11, 0, 0));
    }

    #[test]
    fn rejects_malformed_versions_with_a_reason() {
        let cases = [
            ("5", VersionErrorKind::TooFewParts),
            ("", VersionErrorKind::EmptyPart),
            ("5.", VersionErrorKind::EmptyPart),
            (".5", VersionErrorKind::EmptyPart),
            ("5..4", VersionErrorKind::EmptyPart),
            ("1.2.3.4.5", VersionErrorKind::TooManyParts),
            ("5.4a", VersionErrorKind::NotADigit),
            ("v5.4", VersionErrorKind::NotADigit),
            ("-5.4", VersionErrorKind::NotADigit),
            ("5.4294967296", VersionErrorKind::TooLarge),
        ];
        for (text, kind) in cases {
            assert_eq!(
                text.parse::<ControllerVersion>().map_err(|e| e.kind()),
                Err(kind),
                "{text:?}"
            );
        }
        assert_eq!(v("5.4294967295").minor, u32::MAX);
    }

    #[test]
    fn orders_numerically_part_by_part() {
        assert!(v("3.9") < v("3.10"));
        assert!(v("3.15.8") < v("3.15.8.1"));
        assert!(v("3.15.8.106339") < v("5.0"));
        assert!(v("5.23.0") < v("10.7"));
        assert_eq!(v("5.4"), v("5.4.0.0"));
        let mut list = vec![v("10.7"), v("5.10"), v("5.9.4"), v("3.15")];
        list.sort();
        assert_eq!(list, [v("3.15"), v("5.9.4"), v("5.10"), v("10.7")]);
    }

    #[test]
    fn displays_without_a_zero_build() {
        assert_eq!(v("5.4").to_string(), "5.4.0");
        assert_eq!(v("3.15.8.106339").to_string(), "3.15.8.106339");
    }

    #[test]
    fn generation_follows_the_major_number() {
        assert_eq!(v("3.15").generation(), Some(Generation::Cb3));
        assert_eq!(v("5.21.0").generation(), Some(Generation::ESeries));
        assert_eq!(v("10.11").generation(), Some(Generation::PolyScopeX));
        assert_eq!(v("4.0").generation(), None);
        assert_eq!(Generation::Cb3.max_frequency(), 125.0);
        assert_eq!(Generation::PolyScopeX.max_frequency(), 500.0);
        for (i, g) in Generation::ALL.into_iter().enumerate() {
            assert_eq!(g.index(), i);
            assert_eq!(Generation::from_major(g.major()), Some(g));
        }
    }
}
