//! Cartesian info (sub-package 4): where the tool is.

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Cartesian info: the TCP's pose in the base frame and the TCP offset from the flange,
/// each `[x, y, z, rx, ry, rz]` in metres and an axis-angle vector.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CartesianInfo {
    /// The TCP's pose.
    pub tcp_pose: [f64; 6],
    /// The TCP offset: the tool's pose on the flange.
    pub tcp_offset: [f64; 6],
}

impl SubPackage for CartesianInfo {
    const TYPE: u8 = 4;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.fields(&mut self.tcp_pose);
        w.fields(&mut self.tcp_offset);
    }
}
