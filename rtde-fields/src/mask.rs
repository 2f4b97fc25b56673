//! The input masks: which mask gates which input value, and which of its bits.
//!
//! The controller applies a masked input value only where its mask selects it: bit 2 of
//! `standard_digital_output_mask` lets bit 2 of `standard_digital_output` through, and bit 0
//! of `speed_slider_mask` lets `speed_slider_fraction` through. The table lives in
//! `data/masks.tsv`, next to the fields.

use crate::generated;

/// How a mask selects the parts of its value that the controller applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// Bit `i` of the mask gates bit `i` of the value, for `i` below `width`.
    PerBit {
        /// How many bits of the value the mask covers.
        width: u8,
    },
    /// Bit `bit` of the mask gates the whole value.
    Whole {
        /// The mask bit.
        bit: u8,
    },
}

/// Where the controller reports a masked value once it applied it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadBack {
    pub(crate) field: &'static str,
    pub(crate) shift: Option<u8>,
}

impl ReadBack {
    /// The output field.
    #[must_use]
    pub const fn field(&self) -> &'static str {
        self.field
    }

    /// For bits, the output field's bit where the value's bit 0 lands; `None` when the
    /// output field is the value itself.
    #[must_use]
    pub const fn shift(&self) -> Option<u8> {
        self.shift
    }
}

/// One masked input value and the mask that gates it.
///
/// ```
/// use rtde_fields::{Gate, mask_of};
///
/// let m = mask_of("standard_analog_output_1").unwrap();
/// assert_eq!(m.mask(), "standard_analog_output_mask");
/// assert_eq!(m.gate(), Gate::Whole { bit: 1 });
/// assert_eq!(m.mask_bits(), 0b10);
/// assert_eq!(m.reads_back().unwrap().field(), "standard_analog_output1");
///
/// let m = mask_of("tool_digital_output").unwrap();
/// assert_eq!(m.mask_bits(), 0b11);
/// assert_eq!(m.reads_back().unwrap().shift(), Some(16));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mask {
    pub(crate) mask: &'static str,
    pub(crate) value: &'static str,
    pub(crate) gate: Gate,
    pub(crate) reads_back: Option<ReadBack>,
}

impl Mask {
    /// The mask's input field.
    #[must_use]
    pub const fn mask(&self) -> &'static str {
        self.mask
    }

    /// The gated input field.
    #[must_use]
    pub const fn value(&self) -> &'static str {
        self.value
    }

    /// How the mask gates the value.
    #[must_use]
    pub const fn gate(&self) -> Gate {
        self.gate
    }

    /// The bits of the mask that gate this value.
    #[must_use]
    pub const fn mask_bits(&self) -> u64 {
        match self.gate {
            Gate::PerBit { width } => low_bits(width),
            Gate::Whole { bit } => 1 << bit,
        }
    }

    /// Where the applied value shows in the outputs, if the guide names a place.
    #[must_use]
    pub const fn reads_back(&self) -> Option<ReadBack> {
        self.reads_back
    }

    /// What the controller holds after a client writes `value` under `mask`, when it held
    /// `old` before, as integers: for [`Gate::PerBit`] the selected bits of `value` and
    /// the others of `old`; for [`Gate::Whole`] `value` if the mask selects it, else `old`
    /// (for a value that is no integer, ask [`Mask::selects`]).
    ///
    /// ```
    /// use rtde_fields::mask_of;
    ///
    /// let m = mask_of("standard_digital_output").unwrap();
    /// assert_eq!(m.apply_bits(0b0000_0011, 0b0000_0100, 0b1111_0100), 0b0000_0111);
    /// ```
    #[must_use]
    pub const fn apply_bits(&self, old: u64, mask: u64, value: u64) -> u64 {
        match self.gate {
            Gate::PerBit { width } => {
                let selected = mask & low_bits(width);
                (old & !selected) | (value & selected)
            }
            Gate::Whole { .. } => {
                if self.selects(mask) {
                    value
                } else {
                    old
                }
            }
        }
    }

    /// Whether `mask` lets any part of the value through.
    #[must_use]
    pub const fn selects(&self, mask: u64) -> bool {
        mask & self.mask_bits() != 0
    }
}

const fn low_bits(width: u8) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// Every masked input value, in the guide's order.
///
/// ```
/// use rtde_fields::masks;
///
/// assert!(masks().iter().any(|m| m.value() == "speed_slider_fraction"));
/// ```
#[must_use]
pub fn masks() -> &'static [Mask] {
    &generated::MASKS
}

/// The mask entry of a masked input value, by its canonical name; `None` for a value no
/// mask gates.
#[must_use]
pub fn mask_of(value: &str) -> Option<&'static Mask> {
    generated::MASKS.iter().find(|m| m.value == value)
}

/// The values a mask gates, by the mask's canonical name; empty for a field that is no mask.
///
/// ```
/// use rtde_fields::masked_by;
///
/// let values: Vec<_> = masked_by("standard_analog_output_mask").map(|m| m.value()).collect();
/// assert_eq!(values, ["standard_analog_output_type", "standard_analog_output_0", "standard_analog_output_1"]);
/// ```
pub fn masked_by(mask: &str) -> impl Iterator<Item = &'static Mask> {
    generated::MASKS.iter().filter(move |m| m.mask == mask)
}

/// Whether `name` is an input mask.
#[must_use]
pub fn is_mask(name: &str) -> bool {
    generated::MASKS.iter().any(|m| m.mask == name)
}
