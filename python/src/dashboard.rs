//! `rtde_rs.Dashboard`: rtde-robot's blocking Dashboard client (port 29999). Each command
//! is refused before sending when the controller's version lacks it, and a reply other
//! than the command's success reply raises `DashboardError` quoting the controller.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rtde_core::RobotMode;
use rtde_core::fields::ControllerVersion;
use rtde_robot::dashboard::{
    Command, Dashboard as RustDashboard, DashboardOptions, MODE_POLL, ModeWait, OperationalMode,
    Reply, UserRole,
};

use crate::lifecycle::lock;
use crate::{args, enums, errors};

/// A connection to a controller's Dashboard server (port 29999), blocking; the GIL is
/// released while a command waits for its reply.
///
/// Replies come typed: `robot_mode()` a `RobotMode`, `safety_status()` a `SafetyStatus`,
/// `program_state()` a `(RuntimeState, program or None)` pair, `running()` a bool,
/// versions as strings with their build number ("5.21.0.0"); the commands that act return None. `execute("brake release")`
/// sends any command by its words and returns its typed reply (an acting command's
/// reply text). A command the controller's version lacks raises `VersionTooOldError`
/// with nothing sent; a refusal (`Failed to execute: play`) raises `DashboardError` with
/// the controller's words.
///
/// Example:
///
/// ```python
/// with rtde_rs.Sim(dashboard=True) as sim:
///     dashboard = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
///     dashboard.power_on()
///     dashboard.brake_release()
///     print(dashboard.robot_mode())       # RobotMode.RUNNING (once the brakes are off)
/// ```
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Dashboard {
    inner: Mutex<RustDashboard>,
}

/// A reply as a Python value.
fn reply_to_py(py: Python<'_>, reply: Reply) -> PyResult<Bound<'_, PyAny>> {
    let named = |class: &str, code: i64| -> PyResult<Bound<'_, PyAny>> {
        match enums::class_named(py, class) {
            Some(class) => enums::member(py, &class, code),
            None => Ok(code.into_pyobject(py)?.into_any()),
        }
    };
    Ok(match reply {
        Reply::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Reply::RobotMode(m) => named("RobotMode", i64::from(m.code()))?,
        Reply::SafetyMode(m) => named("SafetyMode", i64::from(m.code()))?,
        Reply::SafetyStatus(s) => named("SafetyStatus", i64::from(s.code()))?,
        Reply::ProgramState(p) => {
            let state = named("RuntimeState", i64::from(p.state.code()))?;
            PyTuple::new(py, [state, p.program.into_pyobject(py)?.into_any()])?.into_any()
        }
        Reply::LoadedProgram(p) => p.into_pyobject(py)?.into_any(),
        Reply::OperationalMode(m) => m.map(OperationalMode::as_str).into_pyobject(py)?.into_any(),
        Reply::UserRole(r) => r.as_str().into_pyobject(py)?.into_any(),
        // With its build number, as the controller prints it ("5.21.0.0").
        Reply::Version(v) => format!("{}.{}.{}.{}", v.major, v.minor, v.bugfix, v.build)
            .into_pyobject(py)?
            .into_any(),
        other => other.to_string().into_pyobject(py)?.into_any(),
    })
}

impl Dashboard {
    /// Sends `command` without the GIL.
    fn run(&self, py: Python<'_>, command: Command) -> PyResult<Reply> {
        py.detach(|| lock(&self.inner).execute(&command))
            .map_err(|e| errors::dashboard(py, e))
    }
}

#[pymethods]
impl Dashboard {
    /// Connects to `host`'s Dashboard server and learns the controller's version (the
    /// declared `controller`, or `PolyscopeVersion`'s reply). `timeout` bounds each reply
    /// and `connect_timeout` the connection (seconds); with `reconnect`, a command after a
    /// broken link reconnects first. `rtde_port` is asked for the version when the
    /// connection is refused, to say whether the controller runs PolyScope X (None: never).
    #[new]
    #[pyo3(signature = (
        host, port=29999, *, timeout=5.0, connect_timeout=5.0, reconnect=true, controller=None,
        rtde_port=Some(30004),
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
    fn new(
        py: Python<'_>,
        host: &str,
        port: u16,
        timeout: f64,
        connect_timeout: f64,
        reconnect: bool,
        controller: Option<&str>,
        rtde_port: Option<u16>,
    ) -> PyResult<Self> {
        let mut options = DashboardOptions::new()
            .timeout(args::seconds(py, "timeout", timeout)?)
            .connect_timeout(args::seconds(py, "connect_timeout", connect_timeout)?)
            .reconnect(reconnect)
            .rtde_port(rtde_port);
        if let Some(version) = controller {
            let version: ControllerVersion = version
                .parse()
                .map_err(|e| errors::bad(py, format!("controller version `{version}`: {e}")))?;
            options = options.controller_version(version);
        }
        let host = host.to_owned();
        let dashboard = py
            .detach(move || RustDashboard::connect((host.as_str(), port), options))
            .map_err(|e| errors::dashboard(py, e))?;
        Ok(Dashboard {
            inner: Mutex::new(dashboard),
        })
    }

    /// The controller's software version, as a string ("5.21.0").
    #[getter]
    fn controller_version(&self) -> String {
        lock(&self.inner).controller_version().to_string()
    }

    /// Whether the connection is open (it closes on a timeout, `quit`, or the server
    /// closing it).
    fn is_connected(&self) -> bool {
        lock(&self.inner).is_connected()
    }

    /// Closes the connection and opens a new one.
    fn reconnect(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| lock(&self.inner).reconnect())
            .map_err(|e| errors::dashboard(py, e))
    }

    /// Closes the connection without `quit`.
    fn disconnect(&self, py: Python<'_>) {
        py.detach(|| lock(&self.inner).disconnect());
    }

    /// `quit`: the server says `Disconnected` and closes the connection.
    fn quit(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| lock(&self.inner).quit())
            .map_err(|e| errors::dashboard(py, e))
    }

    /// Sends a command by its words (`"load pick.urp"`, `"brake release"`) and returns
    /// its typed reply; an unknown command raises `BadArgumentError` listing the commands.
    fn execute<'py>(&self, py: Python<'py>, command: &str) -> PyResult<Bound<'py, PyAny>> {
        let command: Command =
            command
                .parse()
                .map_err(|e: rtde_robot::dashboard::ParseCommandError| {
                    errors::bad(py, e.to_string())
                })?;
        let reply = self.run(py, command)?;
        reply_to_py(py, reply)
    }

    /// `load <program>`: loads a program file (`Loading program: …`).
    fn load(&self, py: Python<'_>, program: &str) -> PyResult<()> {
        self.run(py, Command::Load(program.into())).map(drop)
    }

    /// `play`: starts the loaded program.
    fn play(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::Play).map(drop)
    }

    /// `stop`: stops the program.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::Stop).map(drop)
    }

    /// `pause`: pauses the program.
    fn pause(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::Pause).map(drop)
    }

    /// `shutdown`: shuts the controller down.
    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::Shutdown).map(drop)
    }

    /// `running`: whether a program runs.
    fn running<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::Running)?;
        reply_to_py(py, reply)
    }

    /// `robotmode`: the robot's mode.
    fn robot_mode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::RobotMode)?;
        reply_to_py(py, reply)
    }

    /// Asks `robotmode` until the robot is in `mode` (a `RobotMode`), for at most `timeout`
    /// seconds: powering on and releasing the brakes take seconds, and their commands
    /// return at once. The GIL is released between questions and Ctrl-C ends the wait.
    /// Raises `DashboardError` saying where the robot is when the time runs out.
    #[pyo3(signature = (mode, timeout = 30.0))]
    fn wait_for_robot_mode(&self, py: Python<'_>, mode: i32, timeout: f64) -> PyResult<()> {
        let wanted = RobotMode::from_code(mode);
        if let RobotMode::Unknown(code) = wanted {
            return Err(errors::bad(py, format!("{code} is no robot mode")));
        }
        // Rust's own wait would hold the thread until its end; this loop lets Ctrl-C in
        // between questions, by the same rule.
        let wait = ModeWait::new(wanted, args::seconds(py, "timeout", timeout)?);
        loop {
            let last = py
                .detach(|| lock(&self.inner).robot_mode())
                .map_err(|e| errors::dashboard(py, e))?;
            if let Some(end) = wait.after(last) {
                return end.map_err(|e| errors::dashboard(py, e));
            }
            py.detach(|| std::thread::sleep(MODE_POLL));
            py.check_signals()?;
        }
    }

    /// `get loaded program`: the loaded program's path, if any.
    fn loaded_program<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GetLoadedProgram)?;
        reply_to_py(py, reply)
    }

    /// `popup <text>`: shows a popup on the pendant.
    fn popup(&self, py: Python<'_>, text: &str) -> PyResult<()> {
        self.run(py, Command::Popup(text.into())).map(drop)
    }

    /// `close popup`.
    fn close_popup(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::ClosePopup).map(drop)
    }

    /// `addToLog <text>`: adds a line to the controller's log.
    fn add_to_log(&self, py: Python<'_>, text: &str) -> PyResult<()> {
        self.run(py, Command::AddToLog(text.into())).map(drop)
    }

    /// `isProgramSaved`: whether the loaded program is saved.
    fn is_program_saved<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::IsProgramSaved)?;
        reply_to_py(py, reply)
    }

    /// `programState`: the program's state and name.
    fn program_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::ProgramState)?;
        reply_to_py(py, reply)
    }

    /// `PolyscopeVersion`: the controller's software version.
    fn polyscope_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::PolyscopeVersion)?;
        reply_to_py(py, reply)
    }

    /// `version` (e-Series): the controller's software version.
    fn software_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::Version)?;
        reply_to_py(py, reply)
    }

    /// `setUserRole <role>` (CB3).
    fn set_user_role(&self, py: Python<'_>, role: &str) -> PyResult<()> {
        let role: UserRole = role.parse().map_err(|e| errors::bad(py, e))?;
        self.run(py, Command::SetUserRole(role)).map(drop)
    }

    /// `getUserRole` (CB3).
    fn user_role<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GetUserRole)?;
        reply_to_py(py, reply)
    }

    /// `set operational mode <mode>` (e-Series).
    fn set_operational_mode(&self, py: Python<'_>, mode: &str) -> PyResult<()> {
        let mode: OperationalMode = mode.parse().map_err(|e| errors::bad(py, e))?;
        self.run(py, Command::SetOperationalMode(mode)).map(drop)
    }

    /// `get operational mode` (e-Series 5.6): `None` when none is set.
    fn operational_mode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GetOperationalMode)?;
        reply_to_py(py, reply)
    }

    /// `clear operational mode` (e-Series).
    fn clear_operational_mode(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::ClearOperationalMode).map(drop)
    }

    /// `power on`: the arm ends in idle, brakes engaged.
    fn power_on(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::PowerOn).map(drop)
    }

    /// `power off`.
    fn power_off(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::PowerOff).map(drop)
    }

    /// `brake release`: the arm ends in running.
    fn brake_release(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::BrakeRelease).map(drop)
    }

    /// `safetymode` (superseded by `safetystatus`).
    fn safety_mode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::SafetyMode)?;
        reply_to_py(py, reply)
    }

    /// `safetystatus`.
    fn safety_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::SafetyStatus)?;
        reply_to_py(py, reply)
    }

    /// `unlock protective stop`: refused until 5 s after the stop.
    fn unlock_protective_stop(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::UnlockProtectiveStop).map(drop)
    }

    /// `close safety popup`.
    fn close_safety_popup(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::CloseSafetyPopup).map(drop)
    }

    /// `load installation <file>`.
    fn load_installation(&self, py: Python<'_>, file: &str) -> PyResult<()> {
        self.run(py, Command::LoadInstallation(file.into()))
            .map(drop)
    }

    /// `restart safety`: after a fault or violation; the arm ends powered off.
    fn restart_safety(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::RestartSafety).map(drop)
    }

    /// `is in remote control` (e-Series 5.6).
    fn is_in_remote_control<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::IsInRemoteControl)?;
        reply_to_py(py, reply)
    }

    /// `get serial number`.
    fn serial_number<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GetSerialNumber)?;
        reply_to_py(py, reply)
    }

    /// `get robot model` (`UR5`, `UR10`…).
    fn robot_model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GetRobotModel)?;
        reply_to_py(py, reply)
    }

    /// `generate flight report <type>`: the controller's answer (the report's id).
    fn generate_flight_report<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GenerateFlightReport(kind.into()))?;
        reply_to_py(py, reply)
    }

    /// `generate support file <directory>`: the controller's answer (the file's name).
    fn generate_support_file<'py>(
        &self,
        py: Python<'py>,
        directory: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.run(py, Command::GenerateSupportFile(directory.into()))?;
        reply_to_py(py, reply)
    }

    /// `saveLog`.
    fn save_log(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Command::SaveLog).map(drop)
    }
    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _type: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) {
        self.disconnect(py);
    }

    fn __repr__(&self) -> String {
        let d = lock(&self.inner);
        format!(
            "Dashboard(controller {}, {})",
            d.controller_version(),
            if d.is_connected() {
                "connected"
            } else {
                "disconnected"
            }
        )
    }
}
