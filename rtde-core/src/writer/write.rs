//! One write as one input data package, built without I/O from the mask table.

use std::fmt;
use std::ops::RangeInclusive;

use rtde_fields::{Direction, Gate, Mask, RegisterBank, RegisterKind, WireType};

use crate::recipe::{InputRecipe, PayloadError, Recipe, RecipeSpec};

/// The input recipe a write goes through. Each group is a small recipe of its own, so that a
/// write carries only the inputs it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum IoGroup {
    /// `standard_digital_output_mask`, `standard_digital_output`.
    StandardDigitalOutputs,
    /// `configurable_digital_output_mask`, `configurable_digital_output`.
    ConfigurableDigitalOutputs,
    /// `tool_digital_output_mask`, `tool_digital_output`.
    ToolDigitalOutputs,
    /// `standard_analog_output_mask`, `standard_analog_output_type`, `standard_analog_output_0`,
    /// `standard_analog_output_1`: a value with its domain.
    AnalogOutputs,
    /// `standard_analog_output_mask`, `standard_analog_output_0`, `standard_analog_output_1`:
    /// a value in the domain the output already has. Without the type field in the
    /// recipe, no domain is sent at all, stale or not.
    AnalogOutputsKeepDomain,
    /// `speed_slider_mask`, `speed_slider_fraction`.
    SpeedSlider,
    /// `external_force_torque`: a wrench for the robot's force/torque interface (the robot
    /// program must have enabled it with `ft_rtde_input_enable`).
    ExternalForceTorque,
    /// `input_int_register_N`, N in 24..=47.
    IntRegister(u8),
    /// `input_double_register_N`, N in 24..=47.
    DoubleRegister(u8),
    /// `input_bit_register_N`, N in 64..=127.
    BitRegister(u8),
}

impl IoGroup {
    /// The fixed groups: every standard input but the registers.
    pub const STANDARD: [IoGroup; 6] = [
        IoGroup::StandardDigitalOutputs,
        IoGroup::ConfigurableDigitalOutputs,
        IoGroup::ToolDigitalOutputs,
        IoGroup::AnalogOutputs,
        IoGroup::AnalogOutputsKeepDomain,
        IoGroup::SpeedSlider,
    ];

    /// A write of this group with every mask clear: it changes nothing. Its spec is what
    /// the group is set up with.
    ///
    /// # Errors
    /// [`IoError::NotExternal`] for a register outside the external clients' range.
    pub fn empty_write(self) -> Result<IoWrite, IoError> {
        let names: &[&'static str] = match self {
            IoGroup::StandardDigitalOutputs => {
                &["standard_digital_output_mask", "standard_digital_output"]
            }
            IoGroup::ConfigurableDigitalOutputs => &[
                "configurable_digital_output_mask",
                "configurable_digital_output",
            ],
            IoGroup::ToolDigitalOutputs => &["tool_digital_output_mask", "tool_digital_output"],
            IoGroup::AnalogOutputs => &[
                "standard_analog_output_mask",
                "standard_analog_output_type",
                "standard_analog_output_0",
                "standard_analog_output_1",
            ],
            IoGroup::AnalogOutputsKeepDomain => &[
                "standard_analog_output_mask",
                "standard_analog_output_0",
                "standard_analog_output_1",
            ],
            IoGroup::SpeedSlider => &["speed_slider_mask", "speed_slider_fraction"],
            IoGroup::ExternalForceTorque => &["external_force_torque"],
            IoGroup::IntRegister(i) => return register_write(self, RegisterKind::Int, i),
            IoGroup::DoubleRegister(i) => return register_write(self, RegisterKind::Double, i),
            IoGroup::BitRegister(i) => return register_write(self, RegisterKind::Bit, i),
        };
        let mut w = IoWrite::new(self);
        for name in names {
            let field =
                rtde_fields::lookup(Direction::Input, name).ok_or(IoError::Registry(name))?;
            w.push(field.name(), field.wire_type());
        }
        Ok(w)
    }
}

impl fmt::Display for IoGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoGroup::StandardDigitalOutputs => f.write_str("standard digital outputs"),
            IoGroup::ConfigurableDigitalOutputs => f.write_str("configurable digital outputs"),
            IoGroup::ToolDigitalOutputs => f.write_str("tool digital outputs"),
            IoGroup::AnalogOutputs => f.write_str("analog outputs with their domain"),
            IoGroup::AnalogOutputsKeepDomain => f.write_str("analog outputs in their domain"),
            IoGroup::SpeedSlider => f.write_str("speed slider"),
            IoGroup::ExternalForceTorque => f.write_str("external force/torque"),
            IoGroup::IntRegister(i) => write!(f, "`input_int_register_{i}`"),
            IoGroup::DoubleRegister(i) => write!(f, "`input_double_register_{i}`"),
            IoGroup::BitRegister(i) => write!(f, "`input_bit_register_{i}`"),
        }
    }
}

/// What an analog output drives: a current or a voltage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnalogDomain {
    /// 4–20 mA (`standard_analog_output_type` bit clear).
    Current,
    /// 0–10 V (`standard_analog_output_type` bit set).
    Voltage,
}

/// Why a write could not be built; nothing was sent.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    /// The controller has no such output.
    #[error("there is no {what} {index}; the controller has {what}s 0..={last}")]
    NoSuchOutput {
        /// Which outputs.
        what: &'static str,
        /// The index asked for.
        index: u8,
        /// The last index there is.
        last: u8,
    },
    /// A register outside the range meant for external RTDE clients.
    #[error(
        "{kind} register {index} is not one of the external clients' registers {}..={}; \
         the others are reserved for fieldbus adapters",
        range.start(),
        range.end()
    )]
    NotExternal {
        /// The register kind.
        kind: RegisterKind,
        /// The index asked for.
        index: u8,
        /// The external range.
        range: RangeInclusive<u8>,
    },
    /// A value the field cannot take.
    #[error("{what} must be a finite number in 0..=1 (a fraction of its range), not {value}")]
    OutOfRange {
        /// What was set.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// A value that is not a finite number.
    #[error("{what} must be finite, not {value}")]
    NotFinite {
        /// What was set.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// The registry lacks a field the writer needs (a registry out of step with the writer).
    #[error("the registry has no input field `{0}`")]
    Registry(&'static str),
}

/// The most fields of any group (mask, type and two doubles), and the largest payload (a
/// wrench).
const MAX_FIELDS: usize = 4;
const MAX_PAYLOAD: usize = 48;

/// One input data package's worth of a write: the group it goes through and its values,
/// encoded, with masks that select only what the call changes.
///
/// It implements [`InputRecipe`] with the group's spec, so any driver can send it through
/// the input recipe set up for [`IoWrite::group`].
///
/// ```
/// use rtde_core::InputRecipe;
/// use rtde_core::writer::{AnalogDomain, IoWrite};
///
/// let w = IoWrite::analog_output(1, AnalogDomain::Voltage, 0.25).unwrap();
/// // Mask bit 1 only; type bit 1 set (voltage); output 0's slot stays zero and unselected.
/// assert_eq!(w.payload()[..2], [0b10, 0b10]);
/// assert_eq!(w.payload()[10..], 0.25f64.to_be_bytes());
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct IoWrite {
    group: IoGroup,
    names: [&'static str; MAX_FIELDS],
    types: [WireType; MAX_FIELDS],
    fields: usize,
    payload: [u8; MAX_PAYLOAD],
    size: usize,
}

impl fmt::Debug for IoWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoWrite")
            .field("group", &self.group)
            .field("names", &&self.names[..self.fields])
            .field("payload", &self.payload())
            .finish()
    }
}

impl IoWrite {
    fn new(group: IoGroup) -> Self {
        IoWrite {
            group,
            names: [""; MAX_FIELDS],
            types: [WireType::Uint8; MAX_FIELDS],
            fields: 0,
            payload: [0; MAX_PAYLOAD],
            size: 0,
        }
    }

    /// Appends a field whose value starts at zero.
    fn push(&mut self, name: &'static str, wire_type: WireType) {
        self.names[self.fields] = name;
        self.types[self.fields] = wire_type;
        self.fields += 1;
        self.size += wire_type.size();
    }

    /// The byte offset of a field of this write.
    fn offset_of(&self, name: &str) -> Option<usize> {
        let i = self.names[..self.fields].iter().position(|n| *n == name)?;
        Some(self.types[..i].iter().map(|t| t.size()).sum())
    }

    fn put_u8(&mut self, name: &str, value: u8) {
        if let Some(at) = self.offset_of(name) {
            self.payload[at] = value;
        }
    }

    fn put_bytes(&mut self, name: &str, bytes: &[u8]) {
        if let Some(at) = self.offset_of(name) {
            self.payload[at..at + bytes.len()].copy_from_slice(bytes);
        }
    }

    /// The group this write goes through.
    #[must_use]
    pub fn group(&self) -> IoGroup {
        self.group
    }

    /// The encoded values, in the group's field order: what the data package carries after
    /// its recipe id.
    #[must_use]
    pub fn payload(&self) -> &[u8] {
        &self.payload[..self.size]
    }

    /// Standard digital output `index` (0..=7) on or off.
    ///
    /// # Errors
    /// [`IoError::NoSuchOutput`] for an index the controller lacks.
    pub fn standard_digital_output(index: u8, on: bool) -> Result<IoWrite, IoError> {
        digital(
            IoGroup::StandardDigitalOutputs,
            "standard_digital_output",
            "standard digital output",
            index,
            on,
        )
    }

    /// Configurable digital output `index` (0..=7) on or off.
    ///
    /// # Errors
    /// [`IoError::NoSuchOutput`] for an index the controller lacks.
    pub fn configurable_digital_output(index: u8, on: bool) -> Result<IoWrite, IoError> {
        digital(
            IoGroup::ConfigurableDigitalOutputs,
            "configurable_digital_output",
            "configurable digital output",
            index,
            on,
        )
    }

    /// Tool digital output `index` (0 or 1) on or off.
    ///
    /// # Errors
    /// [`IoError::NoSuchOutput`] for an index the controller lacks.
    pub fn tool_digital_output(index: u8, on: bool) -> Result<IoWrite, IoError> {
        digital(
            IoGroup::ToolDigitalOutputs,
            "tool_digital_output",
            "tool digital output",
            index,
            on,
        )
    }

    /// Standard analog output `index` (0 or 1) at `ratio` of its range (0..=1), in `domain`.
    /// The domain is this call's, for this output only: the other output's is not selected.
    ///
    /// # Errors
    /// [`IoError::NoSuchOutput`], or [`IoError::OutOfRange`] for a ratio outside 0..=1.
    pub fn analog_output(index: u8, domain: AnalogDomain, ratio: f64) -> Result<IoWrite, IoError> {
        let (mut w, m) = analog(IoGroup::AnalogOutputs, index, ratio)?;
        let type_mask = mask_entry("standard_analog_output_type")?;
        let Gate::Whole { bit } = m.gate() else {
            return Err(IoError::Registry(m.value()));
        };
        // The type's bit `bit` belongs to this output; the mask gates no other.
        let voltage = u64::from(domain == AnalogDomain::Voltage) << bit;
        let types = type_mask.apply_bits(0, m.mask_bits(), voltage);
        w.put_u8(type_mask.value(), low_byte(types));
        Ok(w)
    }

    /// Standard analog output `index` (0 or 1) at `ratio` of its range (0..=1), in the
    /// domain the output already has (set on the pendant or by an earlier write): the
    /// package carries no domain at all.
    ///
    /// # Errors
    /// As [`IoWrite::analog_output`].
    pub fn analog_output_keep_domain(index: u8, ratio: f64) -> Result<IoWrite, IoError> {
        analog(IoGroup::AnalogOutputsKeepDomain, index, ratio).map(|(w, _)| w)
    }

    /// The speed slider at `fraction` (0..=1).
    ///
    /// # Errors
    /// [`IoError::OutOfRange`] for a fraction outside 0..=1.
    pub fn speed_slider(fraction: f64) -> Result<IoWrite, IoError> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(IoError::OutOfRange {
                what: "the speed slider",
                value: fraction,
            });
        }
        let m = mask_entry("speed_slider_fraction")?;
        let mut w = IoGroup::SpeedSlider.empty_write()?;
        w.put_bytes(
            m.mask(),
            &u32::try_from(m.mask_bits()).unwrap_or(1).to_be_bytes(),
        );
        w.put_bytes(m.value(), &fraction.to_be_bytes());
        Ok(w)
    }

    /// `external_force_torque`: force (N) and torque (Nm) for the robot's force/torque
    /// interface, which the robot program enables with `ft_rtde_input_enable`.
    ///
    /// # Errors
    /// [`IoError::NotFinite`] for a value that is not finite.
    pub fn external_force_torque(wrench: [f64; 6]) -> Result<IoWrite, IoError> {
        if let Some(&bad) = wrench.iter().find(|v| !v.is_finite()) {
            return Err(IoError::NotFinite {
                what: "the external wrench",
                value: bad,
            });
        }
        let mut w = IoGroup::ExternalForceTorque.empty_write()?;
        for (i, v) in wrench.iter().enumerate() {
            w.payload[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
        }
        Ok(w)
    }

    /// `input_int_register_{index}`, index in 24..=47.
    ///
    /// # Errors
    /// [`IoError::NotExternal`] outside 24..=47.
    pub fn int_register(index: u8, value: i32) -> Result<IoWrite, IoError> {
        let mut w = IoGroup::IntRegister(index).empty_write()?;
        w.payload[..4].copy_from_slice(&value.to_be_bytes());
        Ok(w)
    }

    /// `input_double_register_{index}`, index in 24..=47.
    ///
    /// # Errors
    /// [`IoError::NotExternal`] outside 24..=47.
    pub fn double_register(index: u8, value: f64) -> Result<IoWrite, IoError> {
        let mut w = IoGroup::DoubleRegister(index).empty_write()?;
        w.payload[..8].copy_from_slice(&value.to_be_bytes());
        Ok(w)
    }

    /// `input_bit_register_{index}`, index in 64..=127.
    ///
    /// # Errors
    /// [`IoError::NotExternal`] outside 64..=127.
    pub fn bit_register(index: u8, on: bool) -> Result<IoWrite, IoError> {
        let mut w = IoGroup::BitRegister(index).empty_write()?;
        w.payload[0] = u8::from(on);
        Ok(w)
    }
}

impl Recipe for IoWrite {
    fn spec(&self) -> RecipeSpec<'_> {
        RecipeSpec::new(
            Direction::Input,
            &self.names[..self.fields],
            &self.types[..self.fields],
        )
    }
}

impl InputRecipe for IoWrite {
    fn encode_into(&self, out: &mut [u8]) -> Result<usize, PayloadError> {
        let Some(out) = out.get_mut(..self.size) else {
            return Err(PayloadError::BufferTooSmall {
                needed: self.size,
                available: out.len(),
            });
        };
        out.copy_from_slice(self.payload());
        Ok(self.size)
    }
}

fn mask_entry(value: &'static str) -> Result<&'static Mask, IoError> {
    rtde_fields::mask_of(value).ok_or(IoError::Registry(value))
}

fn low_byte(bits: u64) -> u8 {
    u8::try_from(bits & 0xff).unwrap_or(0)
}

/// A per-bit digital write: mask and value select bit `index` only.
fn digital(
    group: IoGroup,
    value: &'static str,
    what: &'static str,
    index: u8,
    on: bool,
) -> Result<IoWrite, IoError> {
    let m = mask_entry(value)?;
    let Gate::PerBit { width } = m.gate() else {
        return Err(IoError::Registry(value));
    };
    if index >= width {
        return Err(IoError::NoSuchOutput {
            what,
            index,
            last: width - 1,
        });
    }
    let bit = 1u64 << index;
    let mut w = group.empty_write()?;
    w.put_u8(m.mask(), low_byte(bit));
    w.put_u8(
        m.value(),
        low_byte(m.apply_bits(0, bit, if on { bit } else { 0 })),
    );
    Ok(w)
}

/// An analog write's mask and value; the caller adds the domain where the group has one.
fn analog(group: IoGroup, index: u8, ratio: f64) -> Result<(IoWrite, &'static Mask), IoError> {
    let value = match index {
        0 => "standard_analog_output_0",
        1 => "standard_analog_output_1",
        _ => {
            return Err(IoError::NoSuchOutput {
                what: "standard analog output",
                index,
                last: 1,
            });
        }
    };
    if !(0.0..=1.0).contains(&ratio) {
        return Err(IoError::OutOfRange {
            what: "an analog output",
            value: ratio,
        });
    }
    let m = mask_entry(value)?;
    let mut w = group.empty_write()?;
    w.put_u8(m.mask(), low_byte(m.mask_bits()));
    w.put_bytes(m.value(), &ratio.to_be_bytes());
    Ok((w, m))
}

/// A write of one register, zero, after checking the index is an external client's.
fn register_write(group: IoGroup, kind: RegisterKind, index: u8) -> Result<IoWrite, IoError> {
    let range = kind.external_range().unwrap_or(0..=0);
    let field = rtde_fields::fields(Direction::Input)
        .iter()
        .find(|f| {
            f.register().is_some_and(|r| {
                r.bank() == RegisterBank::Input && r.kind() == kind && r.index() == index
            })
        })
        .filter(|_| range.contains(&index))
        .ok_or(IoError::NotExternal { kind, index, range })?;
    let mut w = IoWrite::new(group);
    w.push(field.name(), field.wire_type());
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_writes_select_one_bit() {
        for (write, mask_name) in [
            (
                IoWrite::standard_digital_output(7, true),
                "standard_digital_output_mask",
            ),
            (
                IoWrite::configurable_digital_output(7, true),
                "configurable_digital_output_mask",
            ),
        ] {
            let w = write.unwrap();
            assert_eq!(w.spec().names()[0], mask_name);
            assert_eq!(w.payload(), [0x80, 0x80]);
        }
        assert_eq!(
            IoWrite::standard_digital_output(2, false)
                .unwrap()
                .payload(),
            [0b100, 0]
        );
        assert_eq!(
            IoWrite::tool_digital_output(1, true).unwrap().payload(),
            [0b10, 0b10]
        );
        assert_eq!(
            IoWrite::tool_digital_output(2, true)
                .unwrap_err()
                .to_string(),
            "there is no tool digital output 2; the controller has tool digital outputs 0..=1"
        );
        assert!(IoWrite::standard_digital_output(8, true).is_err());
    }

    #[test]
    fn analog_writes_carry_their_own_domain_or_none() {
        let w = IoWrite::analog_output(0, AnalogDomain::Current, 0.75).unwrap();
        assert_eq!(w.spec().payload_size(), 18);
        assert_eq!(w.payload()[..2], [0b01, 0b00]);
        assert_eq!(w.payload()[2..10], 0.75f64.to_be_bytes());
        assert_eq!(w.payload()[10..], [0; 8]);
        let w = IoWrite::analog_output_keep_domain(1, 1.0).unwrap();
        assert_eq!(
            w.spec().names(),
            [
                "standard_analog_output_mask",
                "standard_analog_output_0",
                "standard_analog_output_1"
            ]
        );
        assert_eq!(w.payload()[0], 0b10);
        assert_eq!(w.payload()[9..], 1.0f64.to_be_bytes());
        for bad in [-0.1, 1.5, f64::NAN] {
            assert!(IoWrite::analog_output(0, AnalogDomain::Voltage, bad).is_err());
            assert!(IoWrite::speed_slider(bad).is_err());
        }
        assert!(IoWrite::analog_output_keep_domain(2, 0.5).is_err());
    }

    #[test]
    fn speed_slider_sets_bit_zero_of_its_mask() {
        let w = IoWrite::speed_slider(0.3).unwrap();
        assert_eq!(w.payload()[..4], [0, 0, 0, 1]);
        assert_eq!(w.payload()[4..], 0.3f64.to_be_bytes());
    }

    #[test]
    fn external_wrench_is_six_doubles_without_a_mask() {
        let w = IoWrite::external_force_torque([1.0, 2.0, 3.0, 0.1, 0.2, 0.3]).unwrap();
        assert_eq!(w.spec().names(), ["external_force_torque"]);
        assert_eq!(w.payload().len(), 48);
        assert_eq!(w.payload()[40..], 0.3f64.to_be_bytes());
        assert!(IoWrite::external_force_torque([f64::INFINITY; 6]).is_err());
    }

    #[test]
    fn registers_are_the_external_ones() {
        let w = IoWrite::int_register(47, -2).unwrap();
        assert_eq!(w.spec().names(), ["input_int_register_47"]);
        assert_eq!(w.payload(), (-2i32).to_be_bytes());
        assert_eq!(
            IoWrite::double_register(24, 0.5).unwrap().payload(),
            0.5f64.to_be_bytes()
        );
        assert_eq!(IoWrite::bit_register(127, true).unwrap().payload(), [1]);
        for err in [
            IoWrite::int_register(23, 0).unwrap_err(),
            IoWrite::double_register(48, 0.0).unwrap_err(),
            IoWrite::bit_register(63, true).unwrap_err(),
        ] {
            assert!(matches!(err, IoError::NotExternal { .. }), "{err}");
        }
        assert_eq!(
            IoWrite::int_register(3, 0).unwrap_err().to_string(),
            "int register 3 is not one of the external clients' registers 24..=47; \
             the others are reserved for fieldbus adapters"
        );
    }

    #[test]
    fn every_group_sets_up_a_valid_input_recipe() {
        let groups = IoGroup::STANDARD.into_iter().chain([
            IoGroup::IntRegister(24),
            IoGroup::DoubleRegister(47),
            IoGroup::BitRegister(64),
        ]);
        for g in groups {
            let w = g.empty_write().unwrap();
            let names = w.spec().names().to_vec();
            let dynamic =
                crate::DynamicRecipe::inputs(&names).unwrap_or_else(|e| panic!("{g}: {e}"));
            assert_eq!(dynamic.spec(), w.spec(), "{g}");
            assert!(
                w.payload().iter().all(|&b| b == 0),
                "{g}: an empty write changes nothing"
            );
        }
    }
}
