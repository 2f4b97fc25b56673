//! Masterboard data (sub-package 3): the control box's I/O, power and safety mode.

use rtde_core::SafetyMode;

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// The Euromap 67 interface's block of [`MasterboardData`], sent when one is installed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Euromap67 {
    /// Its input bits.
    pub input_bits: u32,
    /// Its output bits.
    pub output_bits: u32,
    /// Its 24 V supply's voltage, in volts.
    pub voltage: f32,
    /// Its current, in amperes.
    pub current: f32,
}

/// Masterboard data: the control box.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MasterboardData {
    /// The digital inputs (standard, configurable and tool), one bit each.
    pub digital_input_bits: u32,
    /// The digital outputs, one bit each.
    pub digital_output_bits: u32,
    /// The analog inputs' ranges.
    pub analog_input_range: [u8; 2],
    /// The analog inputs.
    pub analog_input: [f64; 2],
    /// The analog outputs' domains: 0 current, 1 voltage.
    pub analog_output_domain: [u8; 2],
    /// The analog outputs.
    pub analog_output: [f64; 2],
    /// The masterboard's temperature, in °C.
    pub temperature: f32,
    /// The arm's supply voltage, in volts.
    pub robot_voltage_48v: f32,
    /// The arm's current, in amperes.
    pub robot_current: f32,
    /// The I/O's current, in amperes.
    pub io_current: f32,
    /// The safety mode's code ([`SafetyMode`]).
    pub safety_mode: u8,
    /// Reduced mode is active.
    pub in_reduced_mode: u8,
    /// The Euromap 67 interface, when one is installed.
    pub euromap67: Option<Euromap67>,
    /// The operational mode selector input (CB3 3.3 and later).
    pub operational_mode_selector_input: u8,
    /// The three-position enabling device input (CB3 3.3 and later).
    pub three_position_enabling_device_input: u8,
}

impl MasterboardData {
    /// The safety mode, typed.
    #[must_use]
    pub fn safety(&self) -> SafetyMode {
        SafetyMode::from_code(i32::from(self.safety_mode))
    }
}

impl SubPackage for MasterboardData {
    const TYPE: u8 = 3;

    fn walk(&mut self, w: &mut impl Walker, layout: Layout) {
        w.field(&mut self.digital_input_bits);
        w.field(&mut self.digital_output_bits);
        w.fields(&mut self.analog_input_range);
        w.fields(&mut self.analog_input);
        w.fields(&mut self.analog_output_domain);
        w.fields(&mut self.analog_output);
        w.field(&mut self.temperature);
        w.field(&mut self.robot_voltage_48v);
        w.field(&mut self.robot_current);
        w.field(&mut self.io_current);
        w.field(&mut self.safety_mode);
        w.field(&mut self.in_reduced_mode);
        // A flag byte, then the interface's block only when it says one is installed.
        let mut installed = self.euromap67.is_some();
        w.field(&mut installed);
        match (installed, &mut self.euromap67) {
            (true, slot) => {
                let euromap = slot.get_or_insert_with(Euromap67::default);
                w.field(&mut euromap.input_bits);
                w.field(&mut euromap.output_bits);
                w.field(&mut euromap.voltage);
                w.field(&mut euromap.current);
            }
            (false, slot) => *slot = None,
        }
        // "Used by Universal Robots software only".
        w.reserved(4);
        if layout.at_least(3, 3, 0) {
            w.field(&mut self.operational_mode_selector_input);
            w.field(&mut self.three_position_enabling_device_input);
        }
        // Reserved again, from CB3 3.10 and e-Series 5.4.
        if layout.since((3, 10), (5, 4)) {
            w.reserved(1);
        }
    }
}
