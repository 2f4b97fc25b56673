//! The tool flange: tool data (sub-package 2) on every generation, and on e-Series its
//! communication (11) and output modes (12).

use rtde_core::ToolMode;

use super::{Layout, SubPackage};
use crate::wire::Walker;

/// Tool data: the tool flange's analog inputs, power and mode.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolData {
    /// The analog inputs' ranges (CB3 names them 2 and 3).
    pub analog_input_range: [u8; 2],
    /// The analog inputs, in volts or amperes as their ranges say.
    pub analog_input: [f64; 2],
    /// The tool's supply voltage, in volts.
    pub voltage_48v: f32,
    /// The voltage the tool output supplies: 0, 12 or 24.
    pub output_voltage: u8,
    /// The tool's current, in amperes.
    pub current: f32,
    /// The tool's temperature, in °C.
    pub temperature: f32,
    /// The tool's mode's code ([`ToolMode`]).
    pub tool_mode: u8,
}

impl ToolData {
    /// The tool's mode, typed.
    #[must_use]
    pub fn mode(&self) -> ToolMode {
        ToolMode::from_code(u32::from(self.tool_mode))
    }
}

impl SubPackage for ToolData {
    const TYPE: u8 = 2;

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.fields(&mut self.analog_input_range);
        w.fields(&mut self.analog_input);
        w.field(&mut self.voltage_48v);
        w.field(&mut self.output_voltage);
        w.field(&mut self.current);
        w.field(&mut self.temperature);
        w.field(&mut self.tool_mode);
    }
}

/// Tool communication info (e-Series): the tool's RS-485 settings.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolCommunicationInfo {
    /// Tool communication is enabled.
    pub enabled: bool,
    /// The baud rate.
    pub baud_rate: i32,
    /// The parity: 0 none, 1 odd, 2 even.
    pub parity: i32,
    /// The stop bits.
    pub stop_bits: i32,
    /// The receive idle time, in characters.
    pub rx_idle_chars: f32,
    /// The transmit idle time, in characters.
    pub tx_idle_chars: f32,
}

impl SubPackage for ToolCommunicationInfo {
    const TYPE: u8 = 11;

    fn sent_by(layout: Layout) -> bool {
        layout.is_e_series()
    }

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.field(&mut self.enabled);
        w.field(&mut self.baud_rate);
        w.field(&mut self.parity);
        w.field(&mut self.stop_bits);
        w.field(&mut self.rx_idle_chars);
        w.field(&mut self.tx_idle_chars);
    }
}

/// Tool mode info (e-Series): how the tool's outputs drive.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolModeInfo {
    /// The output mode.
    pub output_mode: u8,
    /// Each digital output's mode.
    pub digital_output_mode: [u8; 2],
}

impl SubPackage for ToolModeInfo {
    const TYPE: u8 = 12;

    fn sent_by(layout: Layout) -> bool {
        layout.is_e_series()
    }

    fn walk(&mut self, w: &mut impl Walker, _: Layout) {
        w.field(&mut self.output_mode);
        w.fields(&mut self.digital_output_mode);
    }
}
