//! Arguments from Python checked before anything is sent, with messages that say what
//! was wrong: a negative index, a NaN, a duration that is no duration.

use std::time::Duration;

use pyo3::prelude::*;
use rtde_robot::motion::CommandLayout;

use crate::errors;

/// An index into the controller's outputs or registers (0..=255).
pub(crate) fn index(py: Python<'_>, what: &str, index: i64) -> PyResult<u8> {
    u8::try_from(index).map_err(|_| {
        let why = if index < 0 {
            "is negative"
        } else {
            "is above 255"
        };
        errors::bad(py, format!("{what} index {index} {why}"))
    })
}

/// A duration in seconds: finite and above zero.
pub(crate) fn seconds(py: Python<'_>, what: &str, seconds: f64) -> PyResult<Duration> {
    if seconds.is_finite() && seconds > 0.0 {
        Duration::try_from_secs_f64(seconds).map_err(|e| errors::bad(py, format!("{what}: {e}")))
    } else {
        Err(errors::bad(
            py,
            format!("{what} must be a finite number of seconds above zero, not {seconds}"),
        ))
    }
}

/// An optional duration in seconds (`None`: no limit).
pub(crate) fn maybe_seconds(
    py: Python<'_>,
    what: &str,
    value: Option<f64>,
) -> PyResult<Option<Duration>> {
    value.map(|s| seconds(py, what, s)).transpose()
}

/// A finite number.
pub(crate) fn finite(py: Python<'_>, what: &str, value: f64) -> PyResult<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(errors::bad(
            py,
            format!("{what} must be a finite number, not {value}"),
        ))
    }
}

/// An inclusive register range given as `(first, last)`.
pub(crate) fn registers(
    py: Python<'_>,
    what: &str,
    range: Option<(i64, i64)>,
) -> PyResult<Option<std::ops::RangeInclusive<u8>>> {
    let Some((first, last)) = range else {
        return Ok(None);
    };
    let (first, last) = (index(py, what, first)?, index(py, what, last)?);
    if first > last {
        return Err(errors::bad(
            py,
            format!("{what} ({first}, {last}): the first register is after the last"),
        ));
    }
    Ok(Some(first..=last))
}

/// An arm by its model name (`ur5e`, in any case).
pub(crate) fn arm(py: Python<'_>, name: &str) -> PyResult<rtde_sim::Arm> {
    rtde_sim::Arm::named(name).ok_or_else(|| {
        let names: Vec<&str> = rtde_sim::Arm::ALL.iter().map(|a| a.name).collect();
        errors::bad(
            py,
            format!("unknown arm `{name}`: use {}", names.join(", ")),
        )
    })
}

/// A command layout by its name.
pub(crate) fn layout(py: Python<'_>, name: &str) -> PyResult<CommandLayout> {
    match name {
        "upper" => Ok(CommandLayout::UPPER),
        "lower" => Ok(CommandLayout::LOWER),
        other => Err(errors::bad(
            py,
            format!("layout `{other}`: use \"upper\" or \"lower\""),
        )),
    }
}

/// A service's port as Python gives it: `False`/`None` off, `True` on a free port, a
/// number that port (the robot's own, say: 29999 for the Dashboard server).
pub(crate) fn port_choice(
    py: Python<'_>,
    name: &str,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<u16>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(on) = value.cast::<pyo3::types::PyBool>() {
        return Ok(on.is_true().then_some(0));
    }
    match value.extract::<u16>() {
        Ok(port) => Ok(Some(port)),
        Err(_) => Err(errors::bad(
            py,
            format!("{name} must be True, False or a port number (0 to 65535), not {value}"),
        )),
    }
}

/// Six numbers as Python gives them: a list, a tuple, or a numpy array of any float dtype
/// and any shape that holds six values (`(6,)`, `(1, 6)`, `(6, 1)`): an array's values in
/// order.
pub(crate) struct Vector6(pub(crate) [f64; 6]);

impl<'a, 'py> FromPyObject<'a, 'py> for Vector6 {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(ravel) = obj.getattr("ravel") {
            return Ok(Vector6(ravel.call0()?.extract()?));
        }
        Ok(Vector6(obj.extract()?))
    }
}
