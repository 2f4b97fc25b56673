//! `rtde_rs`, rtde for Python: the extension module `rtde_rs._rtde_rs`.
//!
//! A thin layer: rtde-core does the work (checked recipes, decoding, the background
//! driver, the typed writer, the control kit) and rtde-sim simulates the controller; this
//! crate converts types, maps each Rust error to its Python class with the same message,
//! and releases the GIL around every call that waits or touches a socket. The Python
//! package around it (`python/rtde_rs/`) adds the ur_rtde-compatible classes.

#![forbid(unsafe_code)]

mod args;
mod client;
mod control;
mod dashboard;
mod enums;
mod errors;
mod lifecycle;
mod motion;
mod pump;
mod sim;
mod values;

use pyo3::prelude::*;

/// Universal Robots RTDE on a Rust core.
#[pymodule]
fn _rtde_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    enums::register(m)?;
    client::register(m)?;
    m.add_class::<sim::Sim>()?;
    control::register(m)?;
    m.add_class::<dashboard::Dashboard>()?;
    motion::register(m)?;
    m.add_function(wrap_pyfunction!(field_names, m)?)?;
    m.add_function(wrap_pyfunction!(panic_for_test, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The `safety_status_bits` masks the ur_rtde layer tests (isProtectiveStopped).
    m.add(
        "SAFETY_PROTECTIVE_STOPPED",
        rtde_core::SafetyStatusBits::PROTECTIVE_STOPPED,
    )?;
    m.add(
        "SAFETY_EMERGENCY_STOPPED",
        rtde_core::SafetyStatusBits::EMERGENCY_STOPPED,
    )?;
    Ok(())
}

/// Every output field name the registry knows (`direction="output"`), or every input
/// field name (`direction="input"`).
#[pyfunction]
#[pyo3(signature = (direction="output"))]
fn field_names(py: Python<'_>, direction: &str) -> PyResult<Vec<&'static str>> {
    let direction = match direction {
        "output" => rtde_core::fields::Direction::Output,
        "input" => rtde_core::fields::Direction::Input,
        other => {
            return Err(errors::bad(
                py,
                format!("direction `{other}`: use \"output\" or \"input\""),
            ));
        }
    };
    Ok(rtde_core::fields::all_fields()
        .filter(|f| f.direction() == direction)
        .map(rtde_core::fields::Field::name)
        .collect())
}

/// Panics in Rust: the test suite's proof that a panic reaches Python as an exception
/// (pyo3's `PanicException`) and never aborts the interpreter.
#[pyfunction]
#[pyo3(name = "_panic_for_test")]
fn panic_for_test(message: &str) {
    panic!("{message}");
}
