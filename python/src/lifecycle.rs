//! What every Python object over a Rust handle does the same way: take its lock, close its
//! driver, and leave a `with` block.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use rtde_core::background::Background;

use crate::errors;

/// The handle's lock. Every critical section of these objects is a copy or a swap, so a
/// panic in one leaves the data whole: a poisoned lock is taken as it is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Closes a background driver without the GIL. A lost link was told by the calls that met
/// it; closing it is done, not an error.
pub(crate) fn close_background(py: Python<'_>, background: Background) -> PyResult<()> {
    match py.detach(move || background.close()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == rtde_core::ErrorKind::Link => Ok(()),
        Err(e) => Err(errors::rtde(py, e)),
    }
}

/// What `__exit__` returns after closing: the close's error, unless an exception is already
/// on its way out of the block (that one is the one to see). The exception is never
/// swallowed.
pub(crate) fn exit(closed: PyResult<()>, exc_type: &Bound<'_, PyAny>) -> PyResult<bool> {
    if exc_type.is_none() {
        closed?;
    }
    Ok(false)
}
