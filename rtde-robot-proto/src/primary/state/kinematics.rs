//! Kinematics info (sub-package 5): the arm's calibrated Denavit–Hartenberg parameters.

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Kinematics info: the DH parameters the controller computes with, the nominal table
/// of the arm's model with the deltas measured at the factory applied.
///
/// The order of the arrays on the wire is theta, a, d, alpha (configuration data's
/// nominal table is a, d, alpha, theta).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KinematicsInfo {
    /// Each joint's calibration checksum.
    pub checksum: [u32; 6],
    /// DH theta offsets, in radians.
    pub dh_theta: [f64; 6],
    /// DH a, in metres.
    pub dh_a: [f64; 6],
    /// DH d, in metres.
    pub dh_d: [f64; 6],
    /// DH alpha, in radians.
    pub dh_alpha: [f64; 6],
    /// The calibration's status. Documented as a byte, sent as four: UR's own client
    /// library reads four, and the sub-package's size only adds up that way.
    pub calibration_status: u32,
}

impl SubPackage for KinematicsInfo {
    const TYPE: u8 = 5;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.fields(&mut self.checksum);
        w.fields(&mut self.dh_theta);
        w.fields(&mut self.dh_a);
        w.fields(&mut self.dh_d);
        w.fields(&mut self.dh_alpha);
        w.field(&mut self.calibration_status);
    }
}
