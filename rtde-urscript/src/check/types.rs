//! The types an expression's text shows without running it: literals, operators on them,
//! and what built-in functions return. Anything else is [`Type::Any`].

use crate::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::builtins::{self, Type};

/// The type of an expression, where the text shows it.
pub(super) fn type_of(e: &Expr) -> Type {
    match &e.kind {
        ExprKind::Int(_) => Type::Int,
        ExprKind::Float(_) => Type::Number,
        ExprKind::Bool(_) => Type::Bool,
        ExprKind::Str(_) => Type::Str,
        ExprKind::List(_) => Type::List,
        ExprKind::Pose(_) => Type::Pose,
        ExprKind::Struct(_) => Type::Struct,
        ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => Type::Bool,
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => match type_of(operand) {
            t @ (Type::Int | Type::Number | Type::Pose | Type::List) => t,
            _ => Type::Any,
        },
        ExprKind::Binary { op, lhs, rhs } => binary(*op, type_of(lhs), type_of(rhs)),
        // A user function that shadows a built-in is not known here: its result is Any.
        ExprKind::Call(call) => {
            builtins::lookup(&call.callee.name).map_or(Type::Any, |b| b.returns)
        }
        ExprKind::Name(_) | ExprKind::Run(_) | ExprKind::Index { .. } | ExprKind::Field { .. } => {
            Type::Any
        }
    }
}

fn binary(op: BinaryOp, lhs: Type, rhs: Type) -> Type {
    use BinaryOp as B;
    match op {
        B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge | B::And | B::Or | B::Xor => Type::Bool,
        B::Add | B::Sub | B::Mul | B::Div | B::Rem => match (lhs, rhs) {
            (Type::Int, Type::Int) if op != B::Div => Type::Int,
            (Type::Int | Type::Number, Type::Int | Type::Number) => Type::Number,
            _ => Type::Any,
        },
    }
}

/// Why an arithmetic operator refuses its operands, if the text shows it will: strings,
/// booleans and structs have no arithmetic.
pub(super) fn refused_operand(op: BinaryOp, lhs: Type, rhs: Type) -> Option<Type> {
    use BinaryOp as B;
    if !matches!(op, B::Add | B::Sub | B::Mul | B::Div | B::Rem) {
        return None;
    }
    [lhs, rhs]
        .into_iter()
        .find(|t| matches!(t, Type::Str | Type::Bool | Type::Struct | Type::Nothing))
}
