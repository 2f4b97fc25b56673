//! The compiled form: one instruction list for the whole script, each function an entry
//! point into it, every variable a slot (a local's place in its frame, or a global's
//! index) resolved once, so running looks nothing up by name.

use super::{Value, pure::PureFn};
use crate::Span;
use crate::ast::{BinaryOp, UnaryOp};

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Var {
    /// A slot of the running function's frame.
    Local(u16),
    /// A global.
    Global(u32),
}

/// One instruction of the stack machine.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    Const(u32),
    Load(Var),
    Store(Var),
    /// Stack: index, value.
    StoreIndex(Var),
    /// Stack: value; the field's name is a constant.
    StoreField(Var, u32),
    List(u32),
    Pose,
    /// The field names are constants from this index on; the values are on the stack.
    Struct {
        names: u32,
        count: u32,
    },
    Unary(UnaryOp),
    Binary(BinaryOp),
    Index,
    Field(u32),
    /// Stack: counter, end, step; pushes whether the range goes on.
    RangeGoesOn,
    Jump(u32),
    JumpIfFalse(u32),
    /// `and`/`or`: checks the top is a bool, jumps keeping it when it decides the result,
    /// otherwise drops it.
    ShortCircuit {
        on: bool,
        to: u32,
    },
    Pop,
    Call(u32),
    Pure(PureFn, u8),
    Host(&'static str, u8),
    Sync,
    Sleep,
    StepTime,
    Return,
    Run(u32),
    Kill,
    Join,
    EnterCritical,
    ExitCritical,
    Halt,
}

/// A function, thread or the top-level program, as compiled.
#[derive(Clone, Debug)]
pub(super) struct Function {
    pub(super) name: String,
    pub(super) params: u16,
    /// The names of its frame's slots, parameters first.
    pub(super) locals: Vec<String>,
    pub(super) entry: u32,
}

/// A compiled script.
#[derive(Clone, Debug, Default)]
pub(super) struct Code {
    pub(super) ops: Vec<Op>,
    /// Where each instruction comes from, for runtime errors.
    pub(super) spans: Vec<Span>,
    pub(super) constants: Vec<Value>,
    pub(super) functions: Vec<Function>,
    pub(super) globals: Vec<String>,
    /// The function the program starts in.
    pub(super) main: u32,
}
