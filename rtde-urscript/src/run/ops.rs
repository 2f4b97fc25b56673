//! The operators on each type, as the manual defines them: integers and floats mix (an
//! integer meets a float as a float), `/` of two integers is integer division (rounding
//! toward zero, as C++ does) and `%` its remainder, both refusing a zero divisor; `+` and
//! `-` of two poses add and subtract element-wise; `==` and `!=` compare any two values
//! (different types are unequal, except numbers, which compare by value); `<`, `<=`, `>`,
//! `>=` take numbers only; `and`, `or`, `xor`, `not` take booleans only.

use std::sync::Arc;

use super::Value;
use crate::ast::{BinaryOp, UnaryOp};

/// `op operand`.
pub(super) fn unary(op: UnaryOp, v: &Value) -> Result<Value, String> {
    match (op, v) {
        (UnaryOp::Neg, Value::Int(i)) => Ok(Value::Int(i.wrapping_neg())),
        (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnaryOp::Neg, Value::Pose(p)) => Ok(Value::Pose(p.map(|x| -x))),
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Neg, other) => Err(format!("cannot negate a {}", other.type_name())),
        (UnaryOp::Not, other) => Err(format!("`not` takes a bool, not a {}", other.type_name())),
    }
}

/// `lhs op rhs`, except `and` and `or`, which the compiled code short-circuits.
pub(super) fn binary(op: BinaryOp, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    use BinaryOp as B;
    match op {
        B::Eq => Ok(Value::Bool(equal(lhs, rhs))),
        B::Ne => Ok(Value::Bool(!equal(lhs, rhs))),
        B::And | B::Or | B::Xor => {
            let (Value::Bool(a), Value::Bool(b)) = (lhs, rhs) else {
                return Err(mismatch(op, lhs, rhs));
            };
            Ok(Value::Bool(match op {
                B::And => *a && *b,
                B::Or => *a || *b,
                _ => a ^ b,
            }))
        }
        B::Lt | B::Le | B::Gt | B::Ge => compare(op, lhs, rhs),
        B::Add | B::Sub | B::Mul | B::Div | B::Rem => arithmetic(op, lhs, rhs),
    }
}

fn mismatch(op: BinaryOp, lhs: &Value, rhs: &Value) -> String {
    format!(
        "`{}` is not defined for {} and {}",
        op.symbol(),
        lhs.type_name(),
        rhs.type_name()
    )
}

fn equal(lhs: &Value, rhs: &Value) -> bool {
    match (lhs, rhs) {
        (Value::Int(a), Value::Float(b)) | (Value::Float(b), Value::Int(a)) => f64::from(*a) == *b,
        (a, b) => a == b,
    }
}

fn compare(op: BinaryOp, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    let ordering = match (lhs, rhs) {
        (Value::Int(a), Value::Int(b)) => a.partial_cmp(b),
        _ => match (lhs.number(), rhs.number()) {
            (Ok(a), Ok(b)) => a.partial_cmp(&b),
            _ => return Err(mismatch(op, lhs, rhs)),
        },
    };
    let Some(o) = ordering else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(match op {
        BinaryOp::Lt => o.is_lt(),
        BinaryOp::Le => o.is_le(),
        BinaryOp::Gt => o.is_gt(),
        _ => o.is_ge(),
    }))
}

fn arithmetic(op: BinaryOp, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    use BinaryOp as B;
    match (lhs, rhs) {
        (Value::Int(a), Value::Int(b)) => integer(op, *a, *b),
        (Value::Pose(a), Value::Pose(b)) if matches!(op, B::Add | B::Sub) => {
            let sign = if op == B::Add { 1.0 } else { -1.0 };
            Ok(Value::Pose(std::array::from_fn(|i| a[i] + sign * b[i])))
        }
        _ => {
            let (Ok(a), Ok(b)) = (lhs.number(), rhs.number()) else {
                return Err(mismatch(op, lhs, rhs));
            };
            float(op, a, b).map(Value::Float)
        }
    }
}

fn integer(op: BinaryOp, a: i32, b: i32) -> Result<Value, String> {
    use BinaryOp as B;
    Ok(Value::Int(match op {
        B::Add => a.wrapping_add(b),
        B::Sub => a.wrapping_sub(b),
        B::Mul => a.wrapping_mul(b),
        B::Div | B::Rem if b == 0 => return Err("division by zero".into()),
        B::Div => a.wrapping_div(b),
        _ => a.wrapping_rem(b),
    }))
}

fn float(op: BinaryOp, a: f64, b: f64) -> Result<f64, String> {
    use BinaryOp as B;
    Ok(match op {
        B::Add => a + b,
        B::Sub => a - b,
        B::Mul => a * b,
        B::Div | B::Rem if b == 0.0 => return Err("division by zero".into()),
        B::Div => a / b,
        _ => a % b,
    })
}

/// `base[index]`: an element of a list or a pose, or a character of a string.
pub(super) fn index(base: &Value, index: &Value) -> Result<Value, String> {
    let i = index.int()?;
    let len = match base {
        Value::List(items) => items.len(),
        Value::Pose(_) => 6,
        Value::Str(s) => s.chars().count(),
        other => return Err(format!("a {} cannot be indexed", other.type_name())),
    };
    let at = position(i, len)?;
    Ok(match base {
        Value::List(items) => items[at].clone(),
        Value::Pose(p) => Value::Float(p[at]),
        Value::Str(s) => Value::str(&s.chars().nth(at).map(String::from).unwrap_or_default()),
        _ => unreachable!("refused above"),
    })
}

/// `base[index] = value`: lists keep their length and poses hold numbers.
pub(super) fn set_index(base: &mut Value, index: &Value, value: Value) -> Result<(), String> {
    let i = index.int()?;
    match base {
        Value::List(items) => {
            let at = position(i, items.len())?;
            Arc::make_mut(items)[at] = value;
        }
        Value::Pose(p) => {
            let at = position(i, 6)?;
            p[at] = value.number()?;
        }
        other => return Err(format!("a {} cannot be indexed", other.type_name())),
    }
    Ok(())
}

fn position(i: i32, len: usize) -> Result<usize, String> {
    usize::try_from(i)
        .ok()
        .filter(|&at| at < len)
        .ok_or_else(|| format!("index {i} out of range for length {len}"))
}

/// `base.field` of a struct.
pub(super) fn field(base: &Value, name: &str) -> Result<Value, String> {
    match base {
        Value::Struct(fields) => fields
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("the struct has no field `{name}`")),
        other => Err(format!("a {} has no fields", other.type_name())),
    }
}

/// `base.field = value`: a struct keeps its fields, their values change.
pub(super) fn set_field(base: &mut Value, name: &str, value: Value) -> Result<(), String> {
    match base {
        Value::Struct(fields) => {
            let slot = Arc::make_mut(fields)
                .iter_mut()
                .find(|(n, _)| &**n == name)
                .ok_or_else(|| format!("the struct has no field `{name}`"))?;
            slot.1 = value;
            Ok(())
        }
        other => Err(format!("a {} has no fields", other.type_name())),
    }
}
