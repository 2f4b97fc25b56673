//! Configuration data (sub-package 6): the arm's limits, defaults, nominal kinematics and
//! type.

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Configuration data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConfigurationData {
    /// Each joint's lower position limit, in radians.
    pub joint_min_limit: [f64; 6],
    /// Each joint's upper position limit, in radians.
    pub joint_max_limit: [f64; 6],
    /// Each joint's speed limit, in radians per second.
    pub joint_max_speed: [f64; 6],
    /// Each joint's acceleration limit, in radians per second squared.
    pub joint_max_acceleration: [f64; 6],
    /// The default joint speed, in radians per second.
    pub v_joint_default: f64,
    /// The default joint acceleration, in radians per second squared.
    pub a_joint_default: f64,
    /// The default tool speed, in metres per second.
    pub v_tool_default: f64,
    /// The default tool acceleration, in metres per second squared.
    pub a_tool_default: f64,
    /// The equivalent radius, in metres.
    pub eq_radius: f64,
    /// The nominal DH a, in metres.
    pub dh_a: [f64; 6],
    /// The nominal DH d, in metres.
    pub dh_d: [f64; 6],
    /// The nominal DH alpha, in radians.
    pub dh_alpha: [f64; 6],
    /// The nominal DH theta offsets, in radians.
    pub dh_theta: [f64; 6],
    /// The masterboard's version.
    pub masterboard_version: i32,
    /// The control box's type.
    pub controller_box_type: i32,
    /// The robot's type: UR5 1, UR10 2, UR3 3, UR16 4, UR18 5, UR8 Long 6, UR20 7, UR30 8,
    /// UR15 9 (`rtde_kinematics::Arm::MODELS`); e-Series or CB3 by the software's version.
    pub robot_type: i32,
    /// The robot's sub-type.
    pub robot_sub_type: i32,
}

impl SubPackage for ConfigurationData {
    const TYPE: u8 = 6;

    fn walk(&mut self, w: &mut impl Walker, layout: Layout) {
        // Limits come a joint at a time: minimum and maximum, then speed and acceleration.
        for j in 0..6 {
            w.field(&mut self.joint_min_limit[j]);
            w.field(&mut self.joint_max_limit[j]);
        }
        for j in 0..6 {
            w.field(&mut self.joint_max_speed[j]);
            w.field(&mut self.joint_max_acceleration[j]);
        }
        w.field(&mut self.v_joint_default);
        w.field(&mut self.a_joint_default);
        w.field(&mut self.v_tool_default);
        w.field(&mut self.a_tool_default);
        w.field(&mut self.eq_radius);
        w.fields(&mut self.dh_a);
        w.fields(&mut self.dh_d);
        w.fields(&mut self.dh_alpha);
        w.fields(&mut self.dh_theta);
        w.field(&mut self.masterboard_version);
        w.field(&mut self.controller_box_type);
        w.field(&mut self.robot_type);
        w.field(&mut self.robot_sub_type);
        // Two 16-bit fields, undocumented, from 5.25.1.
        if layout.is_e_series() && layout.at_least(5, 25, 1) {
            w.reserved(4);
        }
    }
}
