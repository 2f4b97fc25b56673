//! Joint data (sub-package 1): each joint's position, speed, current, voltage,
//! temperatures and mode, one block per joint.

use rtde_core::JointMode;

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// One joint's block of [`JointData`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Joint {
    /// Its actual position, in radians.
    pub q_actual: f64,
    /// Its target position, in radians.
    pub q_target: f64,
    /// Its actual speed, in radians per second.
    pub qd_actual: f64,
    /// Its actual current, in amperes.
    pub i_actual: f32,
    /// Its actual voltage, in volts.
    pub v_actual: f32,
    /// Its motor's temperature, in °C.
    pub t_motor: f32,
    /// Its micro-controller's temperature (deprecated on e-Series: ignore it).
    pub t_micro: f32,
    /// Its mode's code ([`JointMode`]).
    pub mode: u8,
}

/// Joint data: the six joints, base first.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointData {
    /// The joints, base to wrist 3.
    pub joints: [Joint; 6],
}

impl JointData {
    /// The actual joint positions, in radians.
    #[must_use]
    pub fn q_actual(&self) -> [f64; 6] {
        self.joints.map(|j| j.q_actual)
    }

    /// The target joint positions, in radians.
    #[must_use]
    pub fn q_target(&self) -> [f64; 6] {
        self.joints.map(|j| j.q_target)
    }

    /// The actual joint speeds, in radians per second.
    #[must_use]
    pub fn qd_actual(&self) -> [f64; 6] {
        self.joints.map(|j| j.qd_actual)
    }

    /// The joints' modes, typed.
    #[must_use]
    pub fn modes(&self) -> [JointMode; 6] {
        self.joints.map(|j| JointMode::from_code(i32::from(j.mode)))
    }
}

impl SubPackage for JointData {
    const TYPE: u8 = 1;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        for joint in &mut self.joints {
            w.field(&mut joint.q_actual);
            w.field(&mut joint.q_target);
            w.field(&mut joint.qd_actual);
            w.field(&mut joint.i_actual);
            w.field(&mut joint.v_actual);
            w.field(&mut joint.t_motor);
            w.field(&mut joint.t_micro);
            w.field(&mut joint.mode);
        }
    }
}
