//! The general-purpose registers and the ranges reserved for fieldbus adapters.

use std::fmt;
use std::ops::RangeInclusive;

/// Which bank a register belongs to: the `input_*` registers clients write,
/// or the `output_*` registers URScript programs write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegisterBank {
    /// `input_bit_register_*`, `input_int_register_*`, `input_double_register_*`, `input_bit_registers*`.
    Input,
    /// `output_bit_register_*`, `output_int_register_*`, `output_double_register_*`, `output_bit_registers*`.
    Output,
}

/// What a register holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegisterKind {
    /// One boolean register (`*_bit_register_N`, N in 64..=127), `BOOL` on the wire.
    Bit,
    /// 32 boolean registers packed in a `UINT32` (`*_bit_registers0_to_31`, `*_bit_registers32_to_63`).
    BitWord,
    /// One integer register (`*_int_register_N`), `INT32` on the wire.
    Int,
    /// One double register (`*_double_register_N`), `DOUBLE` on the wire.
    Double,
}

impl RegisterKind {
    /// The registers of this kind that the controller reserves for fieldbus and PLC interfaces
    /// (EtherNet/IP, PROFINET, Modbus); for [`RegisterKind::BitWord`], the bits the words cover.
    #[must_use]
    pub const fn fieldbus_range(self) -> RangeInclusive<u8> {
        match self {
            RegisterKind::Bit | RegisterKind::BitWord => 0..=63,
            RegisterKind::Int | RegisterKind::Double => 0..=23,
        }
    }

    /// The registers of this kind meant for external RTDE clients; `None` for the packed
    /// words, which only cover the fieldbus bits.
    #[must_use]
    pub const fn external_range(self) -> Option<RangeInclusive<u8>> {
        match self {
            RegisterKind::Bit => Some(64..=127),
            RegisterKind::BitWord => None,
            RegisterKind::Int | RegisterKind::Double => Some(24..=47),
        }
    }
}

/// A general-purpose register, as a registry entry knows it.
///
/// ```
/// use rtde_fields::{lookup, Direction, RegisterKind};
///
/// let r = lookup(Direction::Input, "input_int_register_24").unwrap().register().unwrap();
/// assert_eq!((r.kind(), r.index()), (RegisterKind::Int, 24));
/// assert!(!r.is_reserved_for_fieldbus());
///
/// let r = lookup(Direction::Input, "input_int_register_23").unwrap().register().unwrap();
/// assert!(r.is_reserved_for_fieldbus());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Register {
    pub(crate) bank: RegisterBank,
    pub(crate) kind: RegisterKind,
    pub(crate) index: u8,
}

impl Register {
    /// The bank: input or output registers.
    #[must_use]
    pub const fn bank(&self) -> RegisterBank {
        self.bank
    }

    /// What the register holds.
    #[must_use]
    pub const fn kind(&self) -> RegisterKind {
        self.kind
    }

    /// The register number; for a packed word, its first bit (0 or 32).
    #[must_use]
    pub const fn index(&self) -> u8 {
        self.index
    }

    /// The register numbers this entry covers: one, or 32 for a packed word.
    #[must_use]
    pub const fn indices(&self) -> RangeInclusive<u8> {
        match self.kind {
            RegisterKind::BitWord => self.index..=self.index + 31,
            _ => self.index..=self.index,
        }
    }

    /// Whether this register lies in the range reserved for fieldbus and PLC interfaces
    /// (int and double 0..=23, bits 0..=63). Such a register may be held by an enabled
    /// EtherNet/IP, PROFINET or Modbus adapter; external clients should use the upper range.
    #[must_use]
    pub const fn is_reserved_for_fieldbus(&self) -> bool {
        *self.indices().end() <= *self.kind.fieldbus_range().end()
    }
}

impl fmt::Display for RegisterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RegisterKind::Bit => "bit",
            RegisterKind::BitWord => "packed bits",
            RegisterKind::Int => "int",
            RegisterKind::Double => "double",
        })
    }
}
