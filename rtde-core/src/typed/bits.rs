//! Flag words: robot status, safety status, and the 64-bit digital I/O words.

use std::fmt;

use super::TypedValue;
use crate::wire;

/// Declares the flag words: named bit getters, the raw bits, `Display` and `Debug` listing
/// the set flags. Bits without a name stay in `bits()`. Their conversions are written out
/// below. All are declared in one invocation, so the tests see every one of them.
macro_rules! flags {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident($raw:ty) {
            $($(#[$fmeta:meta])* $bit:literal => $getter:ident, $flag:ident;)*
        }
    )*) => {
        $(
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name($raw);

        impl $name {
            $(
                #[doc = concat!("Bit ", stringify!($bit), ", as a mask.")]
                pub const $flag: $raw = 1 << $bit;
            )*

            /// The flags from their raw word; unknown bits are kept.
            #[must_use]
            pub const fn from_bits(bits: $raw) -> Self {
                $name(bits)
            }

            /// The raw word, unknown bits included.
            #[must_use]
            pub const fn bits(self) -> $raw {
                self.0
            }

            /// Whether every bit of `mask` is set.
            #[must_use]
            pub const fn contains(self, mask: $raw) -> bool {
                self.0 & mask == mask
            }

            $(
                $(#[$fmeta])*
                #[must_use]
                pub const fn $getter(self) -> bool {
                    self.contains(Self::$flag)
                }
            )*
        }

        impl $name {
            /// The names of the set flags, in bit order, and the unknown bits set.
            fn names(self) -> (Vec<&'static str>, $raw) {
                let mut names = Vec::new();
                let mut rest = self.0;
                $(
                    if self.$getter() {
                        names.push(stringify!($flag));
                        rest &= !Self::$flag;
                    }
                )*
                (names, rest)
            }
        }

        impl fmt::Display for $name {
            /// The set flags by name, ` | ` between them (`POWER_ON | PROGRAM_RUNNING`),
            /// then any unknown bits in hex; `0` when none is set.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let (names, rest) = self.names();
                if names.is_empty() && rest == 0 {
                    return f.write_str("0");
                }
                let mut sep = "";
                for name in names {
                    write!(f, "{sep}{name}")?;
                    sep = " | ";
                }
                if rest != 0 {
                    write!(f, "{sep}{rest:#x}")?;
                }
                Ok(())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#x}", stringify!($name), self.0)?;
                let (names, _) = self.names();
                if !names.is_empty() {
                    write!(f, ": {}", names.join(" | "))?;
                }
                f.write_str(")")
            }
        }
        )*

        /// Every flag word, by name: the `Display` of each flag alone.
        #[cfg(test)]
        pub(super) fn displays() -> Vec<(&'static str, Vec<String>)> {
            vec![$((
                stringify!($name),
                vec![$($name::from_bits($name::$flag).to_string()),*],
            )),*]
        }
    };
}

flags! {
    /// The `robot_status_bits` output (`UINT32`, bits 0-3).
    pub struct RobotStatusBits(u32) {
        /// Bit 0: the arm is powered on.
        0 => is_power_on, POWER_ON;
        /// Bit 1: a program is running.
        1 => is_program_running, PROGRAM_RUNNING;
        /// Bit 2: the teach (freedrive) button is pressed.
        2 => is_teach_button_pressed, TEACH_BUTTON_PRESSED;
        /// Bit 3: the power button is pressed.
        3 => is_power_button_pressed, POWER_BUTTON_PRESSED;
    }

    /// The `safety_status_bits` output (`UINT32`, bits 0-11; bit 11 from e-Series 5.25.0 and
    /// PolyScope X 10.12.0, see the registry's source for the field).
    pub struct SafetyStatusBits(u32) {
        /// Bit 0: normal mode.
        0 => is_normal_mode, NORMAL_MODE;
        /// Bit 1: reduced mode.
        1 => is_reduced_mode, REDUCED_MODE;
        /// Bit 2: protective stop.
        2 => is_protective_stopped, PROTECTIVE_STOPPED;
        /// Bit 3: recovery mode.
        3 => is_recovery_mode, RECOVERY_MODE;
        /// Bit 4: safeguard stop.
        4 => is_safeguard_stopped, SAFEGUARD_STOPPED;
        /// Bit 5: system emergency stop.
        5 => is_system_emergency_stopped, SYSTEM_EMERGENCY_STOPPED;
        /// Bit 6: robot emergency stop.
        6 => is_robot_emergency_stopped, ROBOT_EMERGENCY_STOPPED;
        /// Bit 7: emergency stop.
        7 => is_emergency_stopped, EMERGENCY_STOPPED;
        /// Bit 8: violation.
        8 => is_violation, VIOLATION;
        /// Bit 9: fault.
        9 => is_fault, FAULT;
        /// Bit 10: stopped due to safety.
        10 => is_stopped_due_to_safety, STOPPED_DUE_TO_SAFETY;
        /// Bit 11: the three-position enabling (3PE) input is active; always clear on
        /// controllers older than e-Series 5.25.0 or PolyScope X 10.12.0.
        11 => is_3pe_input_active, THREE_PE_INPUT_ACTIVE;
    }
}

impl TypedValue for RobotStatusBits {
    type Wire = wire::UINT32;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        RobotStatusBits(raw)
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        self.0
    }
}

impl TypedValue for SafetyStatusBits {
    type Wire = wire::UINT32;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        SafetyStatusBits(raw)
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        self.0
    }
}

/// A 64-bit digital I/O word: `actual_digital_input_bits`, `actual_digital_output_bits`
/// (bits 0-7 standard, 8-15 configurable, 16-17 tool) and the
/// `actual_configurable_digital_*_bits` words (`UINT64`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DigitalBits(u64);

impl DigitalBits {
    /// The word from its raw bits.
    #[must_use]
    pub const fn from_bits(bits: u64) -> Self {
        DigitalBits(bits)
    }

    /// The raw bits.
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Bit `channel` of the word; `false` past bit 63.
    #[must_use]
    pub const fn get(self, channel: u32) -> bool {
        match 1u64.checked_shl(channel) {
            Some(mask) => self.0 & mask != 0,
            None => false,
        }
    }

    /// Standard digital I/O `n` (bit `n`, `n` in 0..8); `false` for any other `n`.
    #[must_use]
    pub const fn standard(self, n: u32) -> bool {
        n < 8 && self.get(n)
    }

    /// Configurable digital I/O `n` (bit `8 + n`, `n` in 0..8); `false` for any other `n`.
    #[must_use]
    pub const fn configurable(self, n: u32) -> bool {
        n < 8 && self.get(8 + n)
    }

    /// Tool digital I/O `n` (bit `16 + n`, `n` in 0..2); `false` for any other `n`.
    #[must_use]
    pub const fn tool(self, n: u32) -> bool {
        n < 2 && self.get(16 + n)
    }

    /// The word with bit `channel` set to `on`; unchanged past bit 63.
    #[must_use]
    pub const fn with(self, channel: u32, on: bool) -> Self {
        match 1u64.checked_shl(channel) {
            Some(mask) if on => DigitalBits(self.0 | mask),
            Some(mask) => DigitalBits(self.0 & !mask),
            None => self,
        }
    }
}

impl fmt::Debug for DigitalBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DigitalBits({:#b})", self.0)
    }
}

impl TypedValue for DigitalBits {
    type Wire = wire::UINT64;
    #[inline]
    fn from_raw(raw: u64) -> Self {
        DigitalBits(raw)
    }
    #[inline]
    fn to_raw(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_their_bits_and_keep_unknown_ones() {
        let s = RobotStatusBits::from_bits(0b1_0011);
        assert!(s.is_power_on() && s.is_program_running());
        assert!(!s.is_teach_button_pressed() && !s.is_power_button_pressed());
        assert_eq!(s.bits(), 0b1_0011);
        assert_eq!(
            format!("{s:?}"),
            "RobotStatusBits(0x13: POWER_ON | PROGRAM_RUNNING)"
        );
        let s = SafetyStatusBits::from_bits(1 << 10 | 1 << 2);
        assert!(s.is_stopped_due_to_safety() && s.is_protective_stopped());
        assert!(!s.is_3pe_input_active());
        let three_pe = SafetyStatusBits::from_bits(1 << 11);
        assert!(three_pe.is_3pe_input_active());
        assert_eq!(SafetyStatusBits::THREE_PE_INPUT_ACTIVE, 0x800);
        assert!(!s.is_normal_mode());
        assert_eq!(
            format!("{:?}", SafetyStatusBits::default()),
            "SafetyStatusBits(0x0)"
        );
        assert_eq!(s.to_string(), "PROTECTIVE_STOPPED | STOPPED_DUE_TO_SAFETY");
        assert_eq!(
            RobotStatusBits::from_bits(0b1_0001).to_string(),
            "POWER_ON | 0x10"
        );
        assert_eq!(
            RobotStatusBits::from_bits(1 << 31).to_string(),
            "0x80000000"
        );
        assert_eq!(SafetyStatusBits::default().to_string(), "0");
    }

    #[test]
    fn digital_channels() {
        let d = DigitalBits::from_bits(0)
            .with(3, true)
            .with(9, true)
            .with(17, true);
        assert!(d.standard(3) && !d.standard(2));
        assert!(d.configurable(1) && !d.configurable(9));
        assert!(d.tool(1) && !d.tool(0) && !d.tool(2));
        assert!(!d.standard(8) && !d.get(64) && !d.get(u32::MAX));
        assert_eq!(d.with(200, true), d);
        assert_eq!(d.with(3, false).bits(), (1 << 9) | (1 << 17));
    }
}
