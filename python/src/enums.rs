//! The mode and state codes as Python `IntEnum`s, built from rtde-core's own code tables
//! (`rtde_core::code_names`), so that the names and values are written in one place.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use rtde_robot::control::ProgramStatus;

/// Each enum: its Python name, and a field that carries it (whose code table it takes).
const ENUMS: [(&str, &str); 6] = [
    ("RobotMode", "robot_mode"),
    ("SafetyMode", "safety_mode"),
    ("SafetyStatus", "safety_status"),
    ("RuntimeState", "runtime_state"),
    ("JointMode", "joint_mode"),
    ("ToolMode", "tool_mode"),
];

/// The classes, by name; built once, at import.
static CLASSES: PyOnceLock<Vec<(&'static str, Py<PyAny>)>> = PyOnceLock::new();

/// The member names of a code table: the UR names without the prefix they all share
/// (`ROBOT_MODE_POWER_ON` becomes `RobotMode.POWER_ON`).
fn member_names(codes: &[(i64, &'static str)]) -> Vec<(String, i64)> {
    let first = codes.first().map_or("", |(_, n)| n);
    let mut prefix = first.rfind('_').map_or("", |i| &first[..=i]);
    while !prefix.is_empty() && !codes.iter().all(|(_, n)| n.starts_with(prefix)) {
        prefix = prefix[..prefix.len() - 1]
            .rfind('_')
            .map_or("", |i| &prefix[..=i]);
    }
    codes
        .iter()
        .map(|(code, name)| (name[prefix.len()..].to_owned(), *code))
        .collect()
}

/// Creates the enums and adds them to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let enum_module = py.import("enum")?;
    let int_enum = enum_module.getattr("IntEnum")?;
    // Printed by name (`RobotMode.RUNNING`), as an Enum is: since Python 3.11 an IntEnum
    // prints as its number, and `print(dashboard.robot_mode())` said `7`.
    // And formatted as printed: Python 3.9's `Enum.__format__` formats a member of an int
    // enum as its number unless `__str__` is the class's own.
    let by_name = enum_module.getattr("Enum")?.getattr("__str__")?;
    let formatted = py.eval(c"lambda self, spec: format(str(self), spec)", None, None)?;
    let mut made = Vec::new();
    let mut add = |name: &'static str, members: Vec<(String, i64)>, doc: String| {
        let kwargs = PyDict::new(py);
        kwargs.set_item("module", "rtde_rs")?;
        let class = int_enum.call((name, members), Some(&kwargs))?;
        class.setattr("__doc__", doc)?;
        class.setattr("__str__", &by_name)?;
        class.setattr("__format__", &formatted)?;
        m.add(name, &class)?;
        made.push((name, class.unbind()));
        PyResult::Ok(())
    };
    for (name, field) in ENUMS {
        let codes = rtde_core::code_names(field).unwrap_or(&[]);
        add(
            name,
            member_names(codes),
            format!(
                "The codes of `{field}` (and the fields of the same type), as Universal \
                 Robots documents them. A code no member has is returned as a plain int."
            ),
        )?;
    }
    let statuses = [
        ProgramStatus::Waiting,
        ProgramStatus::Running,
        ProgramStatus::WatchdogStopped,
        ProgramStatus::HandshakeStopped,
    ];
    add(
        "ProgramStatus",
        statuses
            .iter()
            .map(|s| {
                (
                    program_status_name(*s).to_owned(),
                    i64::from(s.to_register()),
                )
            })
            .collect(),
        "What the servo program reports in `output_int_register_25` (rtde_robot::control)."
            .to_owned(),
    )?;
    let _ = CLASSES.set(py, made);
    Ok(())
}

fn program_status_name(status: ProgramStatus) -> &'static str {
    match status {
        ProgramStatus::Waiting => "WAITING",
        ProgramStatus::Running => "RUNNING",
        ProgramStatus::WatchdogStopped => "WATCHDOG_STOPPED",
        ProgramStatus::HandshakeStopped => "HANDSHAKE_STOPPED",
        _ => "UNKNOWN",
    }
}

/// The enum class a field's values belong to, if any: by the typed value rtde-core gives
/// the field (`[JointMode; 6]` carries `JointMode`s).
pub(crate) fn class_for_field(py: Python<'_>, field: &str) -> Option<Py<PyAny>> {
    let carried = rtde_core::fields::typed_value(field)?;
    let element = carried
        .strip_prefix('[')
        .and_then(|t| t.split(';').next())
        .unwrap_or(carried);
    class_named(py, element)
}

/// An enum class by its name.
pub(crate) fn class_named(py: Python<'_>, name: &str) -> Option<Py<PyAny>> {
    CLASSES
        .get(py)?
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| c.clone_ref(py))
}

/// A code as a member of `class`, or the plain int when no member has it.
pub(crate) fn member<'py>(
    py: Python<'py>,
    class: &Py<PyAny>,
    code: i64,
) -> PyResult<Bound<'py, PyAny>> {
    match class.bind(py).call1((code,)) {
        Ok(m) => Ok(m),
        Err(_) => Ok(code.into_pyobject(py)?.into_any()),
    }
}

/// A command program's state, as Python reads it.
pub(crate) fn program_state_name(state: rtde_robot::motion::ProgramState) -> String {
    match state {
        rtde_robot::motion::ProgramState::Idle => "idle".to_owned(),
        rtde_robot::motion::ProgramState::Moving => "moving".to_owned(),
        rtde_robot::motion::ProgramState::Stopped => "stopped".to_owned(),
        rtde_robot::motion::ProgramState::Unknown(v) => format!("unknown ({v})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_prefix_goes_and_nothing_else() {
        let names = member_names(&[
            (3, "ROBOT_MODE_POWER_OFF"),
            (4, "ROBOT_MODE_POWER_ON"),
            (5, "ROBOT_MODE_IDLE"),
        ]);
        let names: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["POWER_OFF", "POWER_ON", "IDLE"]);
        let names = member_names(&[(1, "STOPPED"), (2, "PLAYING")]);
        assert_eq!(names[0].0, "STOPPED");
    }
}
