//! The Python exceptions: one class per kind of Rust error, each raised with the Rust
//! error's own message, and the details a program branches on as attributes.

use pyo3::PyErr;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use rtde_core::writer::WriteError;
use rtde_core::{Error, ErrorKind, Report};
use rtde_robot::dashboard::DashboardError;
use rtde_robot::motion::MotionError;
use rtde_robot::script::ScriptError;

/// The exception classes, in the order of [`CLASSES`].
#[derive(Clone, Copy)]
pub(crate) enum Class {
    Rtde,
    ConnectionLost,
    Timeout,
    Stale,
    SetupRefused,
    VersionTooOld,
    BadArgument,
    Recipe,
    Protocol,
    Realtime,
    Simulator,
    Motion,
    ProtectiveStop,
    Watchdog,
    ProgramStopped,
    TargetUnreachable,
    Script,
    Dashboard,
}

/// Each class: its name, the class of this table it derives from (by index), the built-in
/// class it also derives from (so that code catching `ValueError`, `ConnectionError`,
/// `TimeoutError` or `PermissionError` keeps working), and its docstring.
const CLASSES: [(&str, Option<usize>, &str, &str); 18] = [
    (
        "RtdeError",
        None,
        "Exception",
        "Base class of every error rtde_rs raises.",
    ),
    (
        "ConnectionLostError",
        Some(0),
        "ConnectionError",
        "The link to the controller failed: it could not be made, it broke, or the controller closed it.",
    ),
    (
        "RtdeTimeoutError",
        Some(0),
        "TimeoutError",
        "Nothing arrived within the timeout; the connection stays usable.",
    ),
    (
        "StaleError",
        Some(0),
        "Exception",
        "No package for the staleness limit: the robot went silent. Raised once per silence; \
         the next call waits again.",
    ),
    (
        "SetupRefusedError",
        Some(0),
        "Exception",
        "The controller refused a recipe (NOT_FOUND, IN_USE), the protocol, START or PAUSE.\n\n\
         Attributes: `not_found` and `in_use` (field names) and `owners` (for each IN_USE \
         field, its likely owner).",
    ),
    (
        "VersionTooOldError",
        Some(0),
        "Exception",
        "The controller (connected or declared) lacks fields or the frequency asked for; \
         nothing was sent.\n\nAttributes: `controller` (its version) and `fields` (pairs of a \
         name and the first version that has it, or None).",
    ),
    (
        "BadArgumentError",
        Some(0),
        "ValueError",
        "An argument no controller can take (a register index, an out-of-range or NaN value, \
         an unknown input recipe); nothing was sent.",
    ),
    (
        "RecipeError",
        Some(6),
        "ValueError",
        "A recipe the registry refuses: unknown names (with the closest known name), the \
         wrong direction, repeats; nothing was sent.",
    ),
    (
        "ProtocolError",
        Some(0),
        "Exception",
        "The controller's bytes were wrong: undecodable, unexpected, or disagreeing with the \
         recipe.",
    ),
    (
        "RealtimeError",
        Some(0),
        "PermissionError",
        "The operating system refused a real-time option (priority, CPU affinity); the \
         message says what to grant.",
    ),
    (
        "SimulatorError",
        Some(0),
        "Exception",
        "The simulator could not start or stop.",
    ),
    (
        "MotionError",
        Some(0),
        "RuntimeError",
        "The robot did not carry out a motion command: the base class of its verdicts \
         (protective stop, watchdog, program stopped, target unreachable), each with the \
         controller's words.",
    ),
    (
        "ProtectiveStopError",
        Some(11),
        "Exception",
        "The robot went into a protective stop during the command; the program stopped.",
    ),
    (
        "WatchdogError",
        Some(11),
        "Exception",
        "The command program's watchdog stopped the robot: the client's watchdog register \
         did not change in time.",
    ),
    (
        "ProgramStoppedError",
        Some(11),
        "Exception",
        "The command program is not running: stopped from the pendant or the Dashboard \
         server, a runtime error, or never started.",
    ),
    (
        "TargetUnreachableError",
        Some(11),
        "Exception",
        "A target, or a point on the way to it, had no joint solution; the program stopped.",
    ),
    (
        "ScriptError",
        Some(0),
        "RuntimeError",
        "A program sent to the script port did not start: a refused precondition (remote \
         control, power, brakes, a safety stop), a compile error, a runtime exception with \
         its line and column, or a protective stop.",
    ),
    (
        "DashboardError",
        Some(0),
        "RuntimeError",
        "The Dashboard server refused a command (its reply quoted: `Failed to execute: play`, \
         `File not found: pick.urp`), greeted as no Dashboard server does, or does not exist \
         (PolyScope X).\n\nAttributes: `command` and `reply` for a refusal, else None.",
    ),
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// Creates the classes (with `type(name, bases, namespace)`, which gives a class two
/// bases as a `class` statement does) and adds them to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let builtins = py.import("builtins")?;
    let type_ = builtins.getattr("type")?;
    let mut made: Vec<Py<PyType>> = Vec::with_capacity(CLASSES.len());
    for (name, parent, builtin, doc) in CLASSES {
        let builtin = builtins.getattr(builtin)?;
        let bases = match parent {
            Some(i) => PyTuple::new(py, [made[i].bind(py).clone().into_any(), builtin])?,
            None => PyTuple::new(py, [builtin])?,
        };
        let namespace = PyDict::new(py);
        namespace.set_item("__doc__", doc)?;
        namespace.set_item("__module__", "rtde_rs")?;
        let class = type_
            .call1((name, bases, namespace))?
            .cast_into::<PyType>()?;
        m.add(name, &class)?;
        made.push(class.unbind());
    }
    let _ = TYPES.set(py, made);
    Ok(())
}

/// An exception of `class` with `message`.
pub(crate) fn new(py: Python<'_>, class: Class, message: impl Into<String>) -> PyErr {
    match TYPES.get(py) {
        Some(types) => PyErr::from_type(types[class as usize].bind(py).clone(), message.into()),
        // Only before the module is initialised, which no caller can be.
        None => pyo3::exceptions::PyRuntimeError::new_err(message.into()),
    }
}

/// The Python exception of a Rust error, with its message and details.
pub(crate) fn rtde(py: Python<'_>, e: Error) -> PyErr {
    let message = Report(&e).to_string();
    match &e {
        Error::Stale { .. } => new(py, Class::Stale, message),
        Error::Timeout { .. } => new(py, Class::Timeout, message),
        Error::SetupRefused(refused) => {
            let err = new(py, Class::SetupRefused, message);
            let owners: Vec<(&str, String)> = refused
                .in_use_owners()
                .map(|(name, owner)| (name, owner.to_string()))
                .collect();
            let value = err.value(py);
            // Setting attributes on a fresh exception object cannot fail but for memory.
            let _ = value.setattr("not_found", refused.not_found().to_vec());
            let _ = value.setattr("in_use", refused.in_use().to_vec());
            let _ = value.setattr("owners", owners);
            err
        }
        Error::Unavailable(missing) => {
            let err = new(py, Class::VersionTooOld, message);
            let fields: Vec<(&str, Option<String>)> = missing
                .fields()
                .iter()
                .map(|f| (f.name(), f.needs().map(|v| v.to_string())))
                .collect();
            let value = err.value(py);
            let _ = value.setattr("controller", missing.controller().to_string());
            let _ = value.setattr("fields", fields);
            err
        }
        Error::FrequencyTooHigh { .. } | Error::FrequencyNotInV1 { .. } => {
            new(py, Class::VersionTooOld, message)
        }
        Error::Recipe(_) => new(py, Class::Recipe, message),
        Error::Realtime(_) => new(py, Class::Realtime, message),
        _ => match e.kind() {
            ErrorKind::Link => new(py, Class::ConnectionLost, message),
            ErrorKind::Refused => new(py, Class::SetupRefused, message),
            ErrorKind::Unsupported => new(py, Class::VersionTooOld, message),
            ErrorKind::Usage => new(py, Class::BadArgument, message),
            _ => new(py, Class::Protocol, message),
        },
    }
}

/// A recipe the registry refuses.
pub(crate) fn recipe(py: Python<'_>, e: &rtde_core::RecipeError) -> PyErr {
    new(py, Class::Recipe, Report(e).to_string())
}

/// A write that could not be built (a bad argument: nothing was sent) or failed.
pub(crate) fn write(py: Python<'_>, e: WriteError) -> PyErr {
    match e {
        WriteError::Client(e) => rtde(py, e),
        other => new(py, Class::BadArgument, Report(&other).to_string()),
    }
}

/// An argument refused here, before anything is sent.
pub(crate) fn bad(py: Python<'_>, message: impl Into<String>) -> PyErr {
    new(py, Class::BadArgument, message)
}

/// The simulator's error.
pub(crate) fn sim(py: Python<'_>, e: &rtde_sim::Error) -> PyErr {
    new(py, Class::Simulator, Report(e).to_string())
}

/// A motion command's error: a refusal before sending is a bad argument, the robot's
/// verdicts are their own classes, the link's errors those of the driver.
pub(crate) fn motion(py: Python<'_>, e: MotionError) -> PyErr {
    let message = Report(&e).to_string();
    match e {
        MotionError::Refused(_)
        | MotionError::Blend(_)
        | MotionError::OutOfReach(_)
        | MotionError::Invalid(_) => new(py, Class::BadArgument, message),
        MotionError::ProtectiveStop { .. } => new(py, Class::ProtectiveStop, message),
        MotionError::Watchdog { .. } => new(py, Class::Watchdog, message),
        MotionError::ProgramStopped { .. } => new(py, Class::ProgramStopped, message),
        MotionError::TargetUnreachable { .. } => new(py, Class::TargetUnreachable, message),
        MotionError::Timeout { .. } => new(py, Class::Timeout, message),
        MotionError::Rtde(e) => rtde(py, e),
        MotionError::Script(e) => script(py, &e),
        _ => new(py, Class::Motion, message),
    }
}

/// Sending a program failed (the Dashboard's answers to the precondition checks
/// included: the message says that they were the checks).
pub(crate) fn script(py: Python<'_>, e: &ScriptError) -> PyErr {
    new(py, Class::Script, Report(e).to_string())
}

/// A call on a connection this program closed (`close()`, `disconnect()`): the same class
/// as a lost link, so code that handles one handles both, but saying which it was.
pub(crate) fn closed(py: Python<'_>, what: &str) -> PyErr {
    new(
        py,
        Class::ConnectionLost,
        format!("the {what} was closed by this program (close() or disconnect()); connect again"),
    )
}

/// A Dashboard command's error.
pub(crate) fn dashboard(py: Python<'_>, e: DashboardError) -> PyErr {
    let message = Report(&e).to_string();
    match e {
        DashboardError::Connect { .. } | DashboardError::Closed { .. } | DashboardError::Io(_) => {
            new(py, Class::ConnectionLost, message)
        }
        DashboardError::Timeout { .. } => new(py, Class::Timeout, message),
        DashboardError::Unsupported { .. } => new(py, Class::VersionTooOld, message),
        DashboardError::InvalidArgument { .. } => new(py, Class::BadArgument, message),
        DashboardError::Refused { command, reply } => {
            let err = new(py, Class::Dashboard, message);
            let value = err.value(py);
            let _ = value.setattr("command", command);
            let _ = value.setattr("reply", reply);
            err
        }
        _ => {
            let err = new(py, Class::Dashboard, message);
            let value = err.value(py);
            let _ = value.setattr("command", py.None());
            let _ = value.setattr("reply", py.None());
            err
        }
    }
}
