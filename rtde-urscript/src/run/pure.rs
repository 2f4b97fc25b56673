//! The built-ins that need no robot: math, lists, strings, conversions and pose math,
//! computed in the engine. Pose math goes through `rtde-kinematics` and
//! `rtde_core::rotation`, the workspace's one place for rotations.

use std::sync::Arc;

use rtde_core::rotation::{matrix_of_rotation_vector, rotation_vector_of_matrix};
use rtde_kinematics::{compose, invert, matrix_of, mul3, pose_of, transpose3};

use super::Value;

/// A pure built-in: its arguments in parameter order, defaults filled in.
pub(crate) type PureFn = fn(&[Value]) -> Result<Value, String>;

/// The longest list `make_list` makes and the longest string `str_cat` builds: a script
/// cannot exhaust the simulator's memory.
pub const MAX_LENGTH: usize = 1 << 20;

/// The pure built-in of this name, if it is one.
pub(super) fn lookup(name: &str) -> Option<PureFn> {
    Some(match name {
        "sin" => |a| math(a, f64::sin),
        "cos" => |a| math(a, f64::cos),
        "tan" => |a| math(a, f64::tan),
        "asin" => |a| domain(a, f64::asin),
        "acos" => |a| domain(a, f64::acos),
        "atan" => |a| math(a, f64::atan),
        "sqrt" => |a| domain(a, f64::sqrt),
        "d2r" => |a| math(a, f64::to_radians),
        "r2d" => |a| math(a, f64::to_degrees),
        "atan2" => |a| Ok(Value::Float(num(a, 0)?.atan2(num(a, 1)?))),
        "pow" => |a| checked(num(a, 0)?.powf(num(a, 1)?)),
        "log" => |a| checked(num(a, 1)?.log(num(a, 0)?)),
        "floor" => |a| to_int(num(a, 0)?.floor()),
        "ceil" => |a| to_int(num(a, 0)?.ceil()),
        "norm" => norm,
        "normalize" => normalize,
        "length" | "get_list_length" => length,
        "make_list" => make_list,
        "to_str" => |a| Ok(Value::str(&arg(a, 0).to_string())),
        "to_num" => to_num,
        "str_cat" => str_cat,
        "str_len" => |a| length(a),
        "str_empty" => |a| Ok(Value::Bool(text(a, 0)?.is_empty())),
        "str_at" => |a| super::ops::index(arg(a, 0), arg(a, 1)),
        "str_sub" => str_sub,
        "str_find" => str_find,
        "binary_list_to_integer" => binary_list_to_integer,
        "integer_to_binary_list" => |a| {
            let x = arg(a, 0).int()?;
            Ok(Value::list(
                (0..32).map(|i| Value::Bool(x >> i & 1 == 1)).collect(),
            ))
        },
        "pose_trans" => |a| Ok(Value::Pose(compose(&pose(a, 0)?, &pose(a, 1)?))),
        "pose_inv" => |a| Ok(Value::Pose(invert(&pose(a, 0)?))),
        "pose_add" => |a| pose_add(pose(a, 0)?, pose(a, 1)?, 1.0),
        "pose_sub" => |a| pose_add(pose(a, 0)?, pose(a, 1)?, -1.0),
        "point_dist" => |a| Ok(Value::Float(distance(&pose(a, 0)?, &pose(a, 1)?))),
        "pose_dist" => pose_dist,
        "interpolate_pose" => interpolate_pose,
        _ => return None,
    })
}

fn arg(a: &[Value], i: usize) -> &Value {
    a.get(i).unwrap_or(&Value::None)
}

fn num(a: &[Value], i: usize) -> Result<f64, String> {
    arg(a, i).number()
}

fn text(a: &[Value], i: usize) -> Result<&str, String> {
    match arg(a, i) {
        Value::Str(s) => Ok(s),
        other => Err(format!("expected a string, got {}", other.type_name())),
    }
}

fn pose(a: &[Value], i: usize) -> Result<[f64; 6], String> {
    arg(a, i).six()
}

fn math(a: &[Value], f: fn(f64) -> f64) -> Result<Value, String> {
    Ok(Value::Float(f(num(a, 0)?)))
}

/// A function defined on part of the line (`sqrt` of a negative number, `acos` of 2):
/// outside it is a runtime error, as on the controller, rather than NaN.
fn domain(a: &[Value], f: fn(f64) -> f64) -> Result<Value, String> {
    checked(f(num(a, 0)?))
}

fn checked(x: f64) -> Result<Value, String> {
    if x.is_nan() {
        Err("math domain error".into())
    } else {
        Ok(Value::Float(x))
    }
}

fn to_int(x: f64) -> Result<Value, String> {
    if x.is_finite() && x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX) {
        // Integral and within range, checked above.
        #[allow(clippy::cast_possible_truncation)]
        Ok(Value::Int(x as i32))
    } else {
        Err(format!("{x} is beyond a 32-bit integer"))
    }
}

fn numbers(v: &Value) -> Result<Vec<f64>, String> {
    match v {
        Value::Pose(p) => Ok(p.to_vec()),
        Value::List(items) => items.iter().map(Value::number).collect(),
        other => Err(format!(
            "expected a list or a pose, got {}",
            other.type_name()
        )),
    }
}

fn norm(a: &[Value]) -> Result<Value, String> {
    match arg(a, 0) {
        Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        v => Ok(Value::Float(
            numbers(v)?.iter().map(|x| x * x).sum::<f64>().sqrt(),
        )),
    }
}

fn normalize(a: &[Value]) -> Result<Value, String> {
    let v = numbers(arg(a, 0))?;
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n == 0.0 {
        return Err("cannot normalize a zero vector".into());
    }
    Ok(Value::list(v.iter().map(|x| Value::Float(x / n)).collect()))
}

fn length(a: &[Value]) -> Result<Value, String> {
    let n = match arg(a, 0) {
        Value::List(items) => items.len(),
        Value::Str(s) => s.chars().count(),
        Value::Pose(_) => 6,
        other => return Err(format!("a {} has no length", other.type_name())),
    };
    Ok(Value::Int(i32::try_from(n).unwrap_or(i32::MAX)))
}

fn make_list(a: &[Value]) -> Result<Value, String> {
    let n = arg(a, 0).int()?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_LENGTH)
        .ok_or_else(|| format!("a list of {n} elements is not possible (0 to {MAX_LENGTH})"))?;
    Ok(Value::List(Arc::new(vec![arg(a, 1).clone(); n])))
}

fn to_num(a: &[Value]) -> Result<Value, String> {
    let s = text(a, 0)?.trim();
    if let Ok(i) = s.parse::<i32>() {
        return Ok(Value::Int(i));
    }
    s.parse::<f64>()
        .map(Value::Float)
        .map_err(|_| format!("`{s}` is not a number"))
}

fn str_cat(a: &[Value]) -> Result<Value, String> {
    let s = format!("{}{}", arg(a, 0), arg(a, 1));
    if s.len() > MAX_LENGTH {
        return Err(format!("a string longer than {MAX_LENGTH} bytes"));
    }
    Ok(Value::str(&s))
}

fn str_sub(a: &[Value]) -> Result<Value, String> {
    let chars: Vec<char> = text(a, 0)?.chars().collect();
    let start = usize::try_from(arg(a, 1).int()?).map_err(|_| "negative index".to_owned())?;
    let len = usize::try_from(arg(a, 2).int()?).map_err(|_| "negative length".to_owned())?;
    if start > chars.len() {
        return Err(format!(
            "index {start} out of range for length {}",
            chars.len()
        ));
    }
    let end = if len == 0 {
        chars.len()
    } else {
        (start + len).min(chars.len())
    };
    Ok(Value::str(&chars[start..end].iter().collect::<String>()))
}

fn str_find(a: &[Value]) -> Result<Value, String> {
    let chars: Vec<char> = text(a, 0)?.chars().collect();
    let target: Vec<char> = text(a, 1)?.chars().collect();
    let from = usize::try_from(arg(a, 2).int()?).unwrap_or(0);
    let found = (from..=chars.len().saturating_sub(target.len()))
        .find(|&i| chars.get(i..i + target.len()) == Some(&target[..]));
    Ok(Value::Int(
        found.map_or(-1, |i| i32::try_from(i).unwrap_or(-1)),
    ))
}

fn binary_list_to_integer(a: &[Value]) -> Result<Value, String> {
    let Value::List(items) = arg(a, 0) else {
        return Err("expected a list of booleans".into());
    };
    let mut x: i32 = 0;
    for (i, b) in items.iter().enumerate().take(32) {
        if b.bool()? {
            x |= 1 << i;
        }
    }
    Ok(Value::Int(x))
}

/// `pose_add` (sign 1): positions added, rotations composed `R1·R2`; `pose_sub`
/// (sign −1): positions subtracted, rotation `R2⁻¹·R1`, as the manual defines them.
fn pose_add(p1: [f64; 6], p2: [f64; 6], sign: f64) -> Result<Value, String> {
    let (r1, _) = matrix_of(&p1);
    let (r2, _) = matrix_of(&p2);
    let r = if sign > 0.0 {
        mul3(&r1, &r2)
    } else {
        mul3(&transpose3(&r2), &r1)
    };
    let p = [
        p1[0] + sign * p2[0],
        p1[1] + sign * p2[1],
        p1[2] + sign * p2[2],
    ];
    Ok(Value::Pose(pose_of(&r, &p)))
}

fn distance(a: &[f64; 6], b: &[f64; 6]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The rotation from `a`'s orientation to `b`'s, as a rotation vector in `a`'s frame.
fn relative_rotation(a: &[f64; 6], b: &[f64; 6]) -> [f64; 3] {
    let ra = matrix_of_rotation_vector([a[3], a[4], a[5]]);
    let rb = matrix_of_rotation_vector([b[3], b[4], b[5]]);
    rotation_vector_of_matrix(&mul3(&transpose3(&ra), &rb))
}

/// `pose_dist`: the distance between the positions combined with the angle between the
/// orientations, `sqrt(d² + θ²)` (the manual calls it a combined distance without giving
/// the formula; this one is not checked against a controller).
fn pose_dist(a: &[Value]) -> Result<Value, String> {
    let (p, q) = (pose(a, 0)?, pose(a, 1)?);
    let v = relative_rotation(&p, &q);
    let angle = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    Ok(Value::Float(
        (distance(&p, &q).powi(2) + angle * angle).sqrt(),
    ))
}

/// `interpolate_pose(p_from, p_to, alpha)`: the position on the straight line, the
/// orientation turned by `alpha` of the way about the single axis between them.
fn interpolate_pose(a: &[Value]) -> Result<Value, String> {
    let (p, q, alpha) = (pose(a, 0)?, pose(a, 1)?, num(a, 2)?);
    let v = relative_rotation(&p, &q).map(|x| x * alpha);
    let turned = compose(
        &[0.0, 0.0, 0.0, p[3], p[4], p[5]],
        &[0.0, 0.0, 0.0, v[0], v[1], v[2]],
    );
    Ok(Value::Pose(std::array::from_fn(|i| {
        if i < 3 {
            p[i] + alpha * (q[i] - p[i])
        } else {
            turned[i]
        }
    })))
}
