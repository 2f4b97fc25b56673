//! The `#[rtde(…)]` attribute vocabulary.

use std::fmt;

use syn::{Ident, Path};

/// One attribute key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Symbol(pub(crate) &'static str);

/// The attribute's own name: `#[rtde(…)]`.
pub(crate) const RTDE: Symbol = Symbol("rtde");
/// `#[rtde(input)]` on the struct: an input recipe.
pub(crate) const INPUT: Symbol = Symbol("input");
/// `#[rtde(output)]` on the struct: an output recipe (the default).
pub(crate) const OUTPUT: Symbol = Symbol("output");
/// `#[rtde(min_controller = "5.4")]` on the struct, once per generation.
pub(crate) const MIN_CONTROLLER: Symbol = Symbol("min_controller");
/// `#[rtde(name = "actual_TCP_pose")]` on a field.
pub(crate) const NAME: Symbol = Symbol("name");
/// `#[rtde(registers = "input_double_register_24..=29")]` on an array field: one element per register.
pub(crate) const REGISTERS: Symbol = Symbol("registers");
/// `#[rtde(allow_fieldbus_registers)]` on a field or the struct.
pub(crate) const ALLOW_FIELDBUS_REGISTERS: Symbol = Symbol("allow_fieldbus_registers");
/// `#[rtde(flatten)]` on a field whose type is itself a recipe: its fields are included.
pub(crate) const FLATTEN: Symbol = Symbol("flatten");
/// `#[rtde(crate = "…")]` on the struct.
pub(crate) const CRATE: Symbol = Symbol("crate");

/// The keys accepted on the struct.
pub(crate) const CONTAINER_KEYS: [Symbol; 5] = [
    INPUT,
    OUTPUT,
    MIN_CONTROLLER,
    ALLOW_FIELDBUS_REGISTERS,
    CRATE,
];
/// The keys accepted on a field.
pub(crate) const FIELD_KEYS: [Symbol; 4] = [NAME, REGISTERS, FLATTEN, ALLOW_FIELDBUS_REGISTERS];

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
