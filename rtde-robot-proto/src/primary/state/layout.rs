//! Which layout of each sub-package a controller version sends.

use rtde_core::fields::ControllerVersion;

/// The robot state layout of one controller version: sub-packages grew fields over the
/// software releases (a byte here, two integers there), so encoding and decoding both
/// follow the version the controller announced in its version message.
///
/// ```
/// use rtde_core::fields::ControllerVersion;
/// use rtde_robot_proto::primary::Layout;
///
/// let cb3 = Layout::of(ControllerVersion::new(3, 15, 8, 0));
/// assert!(!cb3.is_e_series());
/// assert!(Layout::of(ControllerVersion::new(5, 21, 0, 0)).is_e_series());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    version: ControllerVersion,
}

impl Layout {
    /// The newest layout this crate knows: what a decoder assumes before a version
    /// message says otherwise.
    pub const NEWEST: Layout = Layout::of(ControllerVersion::new(5, 25, 1, 0));

    /// The layout controller software `version` sends.
    #[must_use]
    pub const fn of(version: ControllerVersion) -> Self {
        Layout { version }
    }

    /// The version it is the layout of.
    #[must_use]
    pub const fn version(self) -> ControllerVersion {
        self.version
    }

    /// e-Series (and PolyScope X, which keeps the e-Series layout): software 5 and later.
    #[must_use]
    pub const fn is_e_series(self) -> bool {
        self.version.major >= 5
    }

    /// Whether the version is `major.minor.bugfix` or later.
    pub(crate) fn at_least(self, major: u32, minor: u32, bugfix: u32) -> bool {
        self.version >= ControllerVersion::new(major, minor, bugfix, 0)
    }

    /// On CB3 from `cb3`, on e-Series from `e_series` (`major.minor`).
    pub(crate) fn since(self, cb3: (u32, u32), e_series: (u32, u32)) -> bool {
        let (major, minor) = if self.is_e_series() { e_series } else { cb3 };
        self.at_least(major, minor, 0)
    }
}
