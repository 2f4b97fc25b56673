//! Robot mode data (sub-package 0): the robot's and the program's modes.

use rtde_core::RobotMode;

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Robot mode data: what state the arm, its power and its program are in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RobotModeData {
    /// The controller's time, in milliseconds.
    pub timestamp: u64,
    /// A real arm is connected (false in a simulator).
    pub real_robot_connected: bool,
    /// The real arm is enabled.
    pub real_robot_enabled: bool,
    /// The arm is powered on.
    pub robot_power_on: bool,
    /// An emergency stop is active.
    pub emergency_stopped: bool,
    /// A protective stop is active.
    pub protective_stopped: bool,
    /// A program is running.
    pub program_running: bool,
    /// The running program is paused.
    pub program_paused: bool,
    /// The robot mode's code; sent as a byte, and -1 (no controller) among them: see
    /// [`mode`](Self::mode).
    pub robot_mode: i8,
    /// The control mode: 0 position, 1 teach, 2 force, 3 torque.
    pub control_mode: u8,
    /// The speed slider's fraction.
    pub target_speed_fraction: f64,
    /// The speed scaling the controller applies.
    pub speed_scaling: f64,
    /// The limit of the speed fraction (CB3 3.2 and later).
    pub target_speed_fraction_limit: f64,
}

impl RobotModeData {
    /// The robot mode, typed.
    #[must_use]
    pub fn mode(&self) -> RobotMode {
        RobotMode::from_code(i32::from(self.robot_mode))
    }
}

impl SubPackage for RobotModeData {
    const TYPE: u8 = 0;

    fn walk(&mut self, w: &mut impl Walker, layout: Layout) {
        w.field(&mut self.timestamp);
        w.field(&mut self.real_robot_connected);
        w.field(&mut self.real_robot_enabled);
        w.field(&mut self.robot_power_on);
        w.field(&mut self.emergency_stopped);
        w.field(&mut self.protective_stopped);
        w.field(&mut self.program_running);
        w.field(&mut self.program_paused);
        w.field(&mut self.robot_mode);
        w.field(&mut self.control_mode);
        w.field(&mut self.target_speed_fraction);
        w.field(&mut self.speed_scaling);
        if layout.at_least(3, 2, 0) {
            w.field(&mut self.target_speed_fraction_limit);
        }
        // "Used by Universal Robots software only", from 3.5.
        if layout.at_least(3, 5, 0) {
            w.reserved(1);
        }
    }
}
