//! The smaller sub-packages: force mode data (7), additional info (8) and the
//! controller's calibration data (9).

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Force mode data: the wrench force mode applies, and the arm's dexterity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ForceModeData {
    /// The wrench `[fx, fy, fz, trx, try, trz]`, in newtons and newton-metres.
    pub wrench: [f64; 6],
    /// The arm's dexterity.
    pub robot_dexterity: f64,
}

impl SubPackage for ForceModeData {
    const TYPE: u8 = 7;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.fields(&mut self.wrench);
        w.field(&mut self.robot_dexterity);
    }
}

/// Additional info: the freedrive button.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdditionalInfo {
    /// On e-Series the teach pendant's button state; on CB3 whether the freedrive button
    /// is pressed (0 or 1).
    pub button_state: u8,
    /// The freedrive button is enabled.
    pub freedrive_button_enabled: bool,
    /// Freedrive through an I/O is enabled.
    pub io_enabled_freedrive: bool,
}

impl SubPackage for AdditionalInfo {
    const TYPE: u8 = 8;

    fn walk(&mut self, w: &mut impl Walker, layout: Layout) {
        w.field(&mut self.button_state);
        w.field(&mut self.freedrive_button_enabled);
        w.field(&mut self.io_enabled_freedrive);
        if layout.is_e_series() {
            w.reserved(1);
        }
    }
}

/// Calibration data: "used by Universal Robots software only"; decoded for
/// completeness.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CalibrationData {
    /// Six values, a wrench by their names.
    pub values: [f64; 6],
}

impl SubPackage for CalibrationData {
    const TYPE: u8 = 9;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.fields(&mut self.values);
    }
}
