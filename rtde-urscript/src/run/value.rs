//! URScript's values, and how `to_str` and `textmsg` print them.
//!
//! Lists and poses are values, not references: assigning one, passing it or returning it
//! copies it (the manual's arrays are value types; writing `b = a` and then `b[0] = 1`
//! leaves `a` alone). The copy is deferred until one side is written ([`Arc::make_mut`]),
//! so passing joint positions around costs a count, not an allocation.

use std::fmt;
use std::sync::Arc;

/// A URScript value.
///
/// ```
/// use rtde_urscript::run::Value;
///
/// assert_eq!(Value::Float(0.5).to_string(), "0.5");
/// assert_eq!(Value::Pose([0.1, 0.0, 0.3, 0.0, 3.14159, 0.0]).to_string(), "p[0.1, 0, 0.3, 0, 3.14159, 0]");
/// assert_eq!(Value::list(vec![Value::Int(1), Value::Bool(true)]).to_string(), "[1, True]");
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    /// What a function that returns nothing gives, and a variable not yet assigned holds.
    #[default]
    None,
    /// `True` or `False`.
    Bool(bool),
    /// A 32-bit signed integer; arithmetic wraps around on overflow (two's complement), as
    /// the controller's C++ runtime does: the manual gives the range but no overflow error.
    Int(i32),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Str(Arc<str>),
    /// A pose `p[x, y, z, rx, ry, rz]`.
    Pose([f64; 6]),
    /// A list (an array): fixed length once made, elements assigned in place.
    List(Arc<Vec<Value>>),
    /// A struct's fields in the order written (PolyScope X).
    Struct(Arc<Vec<(Arc<str>, Value)>>),
    /// A thread handle, as `run` gives it.
    Thread(u32),
}

impl Value {
    /// A list of these values.
    #[must_use]
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    /// A string value.
    #[must_use]
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    /// The type's name as error messages give it.
    #[must_use]
    pub const fn type_name(&self) -> &'static str {
        match self {
            Value::None => "nothing",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Pose(_) => "pose",
            Value::List(_) => "list",
            Value::Struct(_) => "struct",
            Value::Thread(_) => "thread",
        }
    }

    /// The number, an integer widened to a float.
    ///
    /// # Errors
    /// A message naming the type when the value is not a number.
    pub fn number(&self) -> Result<f64, String> {
        match self {
            Value::Int(i) => Ok(f64::from(*i)),
            Value::Float(f) => Ok(*f),
            other => Err(format!("expected a number, got {}", other.type_name())),
        }
    }

    /// The integer; a float is refused (the manual's integer parameters).
    ///
    /// # Errors
    /// A message naming the type when the value is not an integer.
    pub fn int(&self) -> Result<i32, String> {
        match self {
            Value::Int(i) => Ok(*i),
            other => Err(format!("expected an integer, got {}", other.type_name())),
        }
    }

    /// The boolean.
    ///
    /// # Errors
    /// A message naming the type when the value is not a boolean.
    pub fn bool(&self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(*b),
            other => Err(format!("expected a boolean, got {}", other.type_name())),
        }
    }

    /// Six numbers from a pose or a list of six numbers (joint positions, speeds, a
    /// wrench).
    ///
    /// ```
    /// use rtde_urscript::run::Value;
    ///
    /// let q = Value::list(vec![Value::Int(0), Value::Float(-1.57), Value::Int(0), Value::Int(0), Value::Int(0), Value::Int(0)]);
    /// assert_eq!(q.six(), Ok([0.0, -1.57, 0.0, 0.0, 0.0, 0.0]));
    /// assert!(Value::Int(3).six().is_err());
    /// ```
    ///
    /// # Errors
    /// A message when the value is not a pose or a list of six numbers.
    pub fn six(&self) -> Result<[f64; 6], String> {
        match self {
            Value::Pose(p) => Ok(*p),
            Value::List(items) if items.len() == 6 => {
                let mut out = [0.0; 6];
                for (o, v) in out.iter_mut().zip(items.iter()) {
                    *o = v.number()?;
                }
                Ok(out)
            }
            other => Err(format!(
                "expected a pose or a list of 6 numbers, got {}",
                other.describe()
            )),
        }
    }

    /// The value's type, with a list's length.
    fn describe(&self) -> String {
        match self {
            Value::List(items) => format!("a list of {}", items.len()),
            other => other.type_name().to_owned(),
        }
    }

    /// Six floats as a list value (joint positions, speeds).
    #[must_use]
    pub fn floats(values: [f64; 6]) -> Value {
        Value::list(values.iter().map(|v| Value::Float(*v)).collect())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("None"),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write_float(f, *x),
            Value::Str(s) => f.write_str(s),
            Value::Pose(p) => {
                f.write_str("p")?;
                write_items(f, p.iter().map(|x| Value::Float(*x)))
            }
            Value::List(items) => write_items(f, items.iter().cloned()),
            Value::Struct(fields) => {
                f.write_str("struct(")?;
                for (i, (name, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}={v}")?;
                }
                f.write_str(")")
            }
            Value::Thread(id) => write!(f, "thread {id}"),
        }
    }
}

fn write_items(f: &mut fmt::Formatter<'_>, items: impl Iterator<Item = Value>) -> fmt::Result {
    f.write_str("[")?;
    for (i, v) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{v}")?;
    }
    f.write_str("]")
}

/// A float as the controller's C++ stream prints it (six significant digits, `%g`):
/// `3.14159`, `0.5`, `2`, `1e-07`.
fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if !x.is_finite() {
        return f.write_str(if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        });
    }
    if x == 0.0 {
        return f.write_str("0");
    }
    // A finite nonzero f64's decimal exponent is within ±324.
    #[allow(clippy::cast_possible_truncation)]
    let exponent = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exponent) {
        let text = format!("{x:.5e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return write!(f, "{}e{sign}{:02}", trim(mantissa), exp.abs());
    }
    let decimals = usize::try_from(5 - exponent).unwrap_or(0);
    f.write_str(trim(&format!("{x:.decimals$}")))
}

fn trim(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}
