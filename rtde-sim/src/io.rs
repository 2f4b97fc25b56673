//! The simulated controller's input state: what clients wrote, and what the masked writes
//! did to the robot's outputs.

use std::collections::HashMap;

use rtde_core::Value;

/// The controller's input state: the last value every client wrote to each input
/// variable, and what those writes did to the robot's outputs.
///
/// Values outlive the connection that wrote them, as on a controller. Masked values take
/// effect as `rtde_core::fields::masks()` says: only the bits (or the whole value) their mask
/// selects in the same package.
#[derive(Clone, Debug, Default)]
pub struct IoState {
    inputs: HashMap<&'static str, Value>,
    /// Each masked value as the controller applied it, by the value's name.
    applied: HashMap<&'static str, Value>,
    /// How many packages carried each input variable: an update, for `rtde_set_watchdog`,
    /// is a package with the variable, whether or not its value changed.
    updates: HashMap<&'static str, u64>,
}

impl IoState {
    /// How many packages have carried the input variable `name`.
    pub(crate) fn updates(&self, name: &str) -> u64 {
        self.updates.get(name).copied().unwrap_or(0)
    }

    /// The last value written to the input variable `name`, if any client wrote it.
    #[must_use]
    pub fn input(&self, name: &str) -> Option<&Value> {
        self.inputs.get(name)
    }

    /// The digital outputs as `actual_digital_output_bits` reports them: bits 0–7 the
    /// standard outputs, 8–15 the configurable outputs, 16–17 the tool outputs.
    #[must_use]
    pub fn digital_output_bits(&self) -> u64 {
        self.read_back_bits("actual_digital_output_bits")
    }

    /// The speed slider, as `target_speed_fraction` reports it: 1.0 until a client
    /// writes `speed_slider_fraction` with bit 0 of `speed_slider_mask` set; clamped to
    /// 0..=1.
    #[must_use]
    pub fn speed_fraction(&self) -> f64 {
        match self.applied.get("speed_slider_fraction") {
            Some(Value::Double(f)) => f.clamp(0.0, 1.0),
            _ => 1.0,
        }
    }

    /// Standard analog output `i` (0 or 1), as written through
    /// `standard_analog_output_0`/`_1` under `standard_analog_output_mask`.
    #[must_use]
    pub fn analog_output(&self, i: usize) -> f64 {
        let name = match i {
            0 => "standard_analog_output_0",
            1 => "standard_analog_output_1",
            _ => return 0.0,
        };
        match self.applied.get(name) {
            Some(Value::Double(v)) => *v,
            _ => 0.0,
        }
    }

    /// The analog output types (bit `i`: output `i` is a voltage output rather than a
    /// current output), as written through `standard_analog_output_type`.
    #[must_use]
    pub fn analog_output_types(&self) -> u8 {
        u8::try_from(self.applied_bits("standard_analog_output_type") & 0b11).unwrap_or(0)
    }

    /// The bits of an output field that masked inputs read back into (for instance
    /// `actual_digital_output_bits`), assembled from the mask table.
    #[must_use]
    pub fn read_back_bits(&self, output: &str) -> u64 {
        rtde_core::fields::masks()
            .iter()
            .filter_map(|m| Some((m, m.reads_back()?)))
            .filter(|(_, r)| r.field() == output)
            .filter_map(|(m, r)| Some(self.applied_bits(m.value()) << r.shift()?))
            .fold(0, |bits, b| bits | b)
    }

    /// Writes one package of input values by their field names, as a client's package
    /// would: for driving a [`Program`](crate::Program) without a connection (tests,
    /// benchmarks).
    ///
    /// ```
    /// use rtde_core::Value;
    /// use rtde_sim::IoState;
    ///
    /// let mut io = IoState::default();
    /// io.write_inputs(&[("input_int_register_30", Value::Int32(7))]).unwrap();
    /// assert_eq!(io.input("input_int_register_30"), Some(&Value::Int32(7)));
    /// assert!(io.write_inputs(&[("actual_q", Value::Int32(0))]).is_err());
    /// ```
    ///
    /// # Errors
    /// A name that is no input field (nothing is written then).
    pub fn write_inputs(&mut self, values: &[(&str, Value)]) -> Result<(), String> {
        let named = values
            .iter()
            .map(|(name, value)| {
                rtde_core::fields::lookup(rtde_core::fields::Direction::Input, name)
                    .map(|f| (f.name(), *value))
                    .ok_or_else(|| format!("`{name}` is no input field"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.write(&named);
        Ok(())
    }

    /// Stores one package's input values, then applies the masked ones where the
    /// package's masks select them.
    pub(crate) fn write(&mut self, values: &[(&'static str, Value)]) {
        for &(name, value) in values {
            self.inputs.insert(name, value);
            *self.updates.entry(name).or_default() += 1;
        }
        let written = |name: &str| values.iter().any(|(n, _)| *n == name);
        for m in rtde_core::fields::masks() {
            // A value takes effect when a package carries it, under the last mask written
            // (whichever recipe wrote it); a package without the value leaves the applied
            // one alone, so that a recipe without `standard_analog_output_type` keeps the
            // outputs' domains.
            if !written(m.value()) {
                continue;
            }
            let mask = self.u64_of(m.mask());
            let Some(&value) = self.inputs.get(m.value()) else {
                continue;
            };
            let applied = match value {
                Value::Double(v) if m.selects(mask) && v.is_finite() => value,
                Value::Double(_) => continue,
                Value::Uint8(v) => {
                    let old = self.applied_bits(m.value());
                    let new = m.apply_bits(old, mask, u64::from(v));
                    Value::Uint8(u8::try_from(new & 0xff).unwrap_or(0))
                }
                _ => continue,
            };
            self.applied.insert(m.value(), applied);
        }
    }

    fn applied_bits(&self, name: &str) -> u64 {
        match self.applied.get(name) {
            Some(Value::Uint8(v)) => u64::from(*v),
            _ => 0,
        }
    }

    fn u64_of(&self, name: &str) -> u64 {
        match self.inputs.get(name) {
            Some(Value::Bool(b)) => u64::from(*b),
            Some(Value::Uint8(v)) => u64::from(*v),
            Some(Value::Uint32(v)) => u64::from(*v),
            Some(Value::Uint64(v)) => *v,
            Some(Value::Int32(v)) => u64::from(v.cast_unsigned()),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_outputs_follow_their_masks() {
        let mut io = IoState::default();
        io.write(&[
            ("standard_digital_output_mask", Value::Uint8(0b0000_0101)),
            ("standard_digital_output", Value::Uint8(0b1111_1111)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b101);
        // Only bit 2 is masked now: bit 0 keeps its value.
        io.write(&[
            ("standard_digital_output_mask", Value::Uint8(0b0000_0100)),
            ("standard_digital_output", Value::Uint8(0)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b001);
        io.write(&[
            ("tool_digital_output_mask", Value::Uint8(0b11)),
            ("tool_digital_output", Value::Uint8(0b10)),
            ("configurable_digital_output_mask", Value::Uint8(0xff)),
            ("configurable_digital_output", Value::Uint8(0x81)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b10_1000_0001_0000_0001);
    }

    #[test]
    fn speed_slider_needs_its_mask() {
        let mut io = IoState::default();
        io.write(&[("speed_slider_fraction", Value::Double(0.25))]);
        assert_eq!(io.speed_fraction(), 1.0);
        io.write(&[
            ("speed_slider_mask", Value::Uint32(1)),
            ("speed_slider_fraction", Value::Double(0.25)),
        ]);
        assert_eq!(io.speed_fraction(), 0.25);
        io.write(&[("speed_slider_fraction", Value::Double(7.0))]);
        assert_eq!(io.speed_fraction(), 1.0);
    }

    #[test]
    fn analog_outputs_follow_their_mask() {
        let mut io = IoState::default();
        io.write(&[
            ("standard_analog_output_mask", Value::Uint8(0b10)),
            ("standard_analog_output_type", Value::Uint8(0b11)),
            ("standard_analog_output_0", Value::Double(0.3)),
            ("standard_analog_output_1", Value::Double(0.7)),
        ]);
        assert_eq!(io.analog_output(0), 0.0);
        assert_eq!(io.analog_output(1), 0.7);
        assert_eq!(io.analog_output_types(), 0b10);
    }
}
