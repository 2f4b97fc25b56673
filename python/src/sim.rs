//! `rtde_rs.Sim`: rtde-sim's simulator in-process, with the options of `rtde sim`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtde_sim::{Fault, Fleet, Motion, Sim as RustSim, SimBuilder};

use crate::lifecycle::lock;
use crate::{args, errors, lifecycle, values};

/// The simulator running: one controller, or a fleet of them.
enum Running {
    // Boxed: a controller's state is far larger than a fleet's handle.
    One(Box<RustSim>),
    Fleet(Fleet),
}

impl Running {
    /// The first (or only) controller.
    fn first(&self) -> Option<&RustSim> {
        match self {
            Running::One(sim) => Some(sim),
            Running::Fleet(fleet) => fleet.robot(0),
        }
    }
}

/// The arm's factory calibration from `spec` ("random:SEED" or a calibration file).
fn with_calibration(
    py: Python<'_>,
    builder: SimBuilder,
    spec: Option<&str>,
) -> PyResult<SimBuilder> {
    let Some(spec) = spec else {
        return Ok(builder);
    };
    let calibration =
        rtde_sim::calibration_of(spec).map_err(|e| errors::bad(py, format!("calibration: {e}")))?;
    Ok(builder.calibration(calibration))
}

/// The `--fault` specs.
fn with_faults(py: Python<'_>, mut builder: SimBuilder, specs: &[String]) -> PyResult<SimBuilder> {
    for spec in specs {
        let fault: Fault = spec
            .parse()
            .map_err(|e| errors::bad(py, format!("fault `{spec}`: {e}")))?;
        builder = builder.fault(fault);
    }
    Ok(builder)
}

/// The arm held `still` at these joints, and the clock's `speed`.
fn with_motion(
    py: Python<'_>,
    mut builder: SimBuilder,
    still: Option<[f64; 6]>,
    speed: Option<f64>,
) -> PyResult<SimBuilder> {
    if let Some(q) = still {
        for x in q {
            args::finite(py, "a joint position", x)?;
        }
        builder = builder.motion(Motion::still(q));
    }
    if let Some(factor) = speed {
        builder = builder.speed(args::finite(py, "the clock's speed", factor)?);
    }
    Ok(builder)
}

/// The robot program to run, `servo` or `command` (on the register `layout`).
fn with_program(
    py: Python<'_>,
    builder: SimBuilder,
    program: Option<&str>,
    layout: &str,
) -> PyResult<SimBuilder> {
    match program {
        None => Ok(builder),
        Some("servo") => Ok(builder.servo_program()),
        Some("command") => Ok(builder.command_program_on(args::layout(py, layout)?)),
        Some(other) => Err(errors::bad(
            py,
            format!("program `{other}`: the simulator runs `servo` or `command`"),
        )),
    }
}

/// The Dashboard Server's port and the first script port, on `ip`.
fn with_ports(
    py: Python<'_>,
    mut builder: SimBuilder,
    ip: IpAddr,
    dashboard: Option<&Bound<'_, PyAny>>,
    script_ports: Option<&Bound<'_, PyAny>>,
) -> PyResult<SimBuilder> {
    if let Some(port) = args::port_choice(py, "dashboard", dashboard)? {
        builder = builder.dashboard_on(SocketAddr::new(ip, port));
    }
    if let Some(first) = args::port_choice(py, "script_ports", script_ports)? {
        builder = builder.script_ports_from(SocketAddr::new(ip, first));
    }
    Ok(builder)
}

/// A simulated Universal Robots controller in this process, serving RTDE on
/// `127.0.0.1` at a free port (or `host` and `port`): test against it without URSim,
/// Docker or a robot.
///
/// The options are those of `rtde sim`: the controller `version` to play (3.x CB3 at
/// 125 Hz, 5.x e-Series and 10.x at 500 Hz), the `arm` (any UR model: ur5e, ur10, ur20, ...),
/// `deterministic` values or a noise `seed`, `unpaced` streaming, `v1_only` (refuse
/// protocol 2), `fieldbus` (hold registers 0-23 as an enabled adapter does),
/// `faults` (the `--fault` specs: "skip-every=10", "close-mid-frame=data:50", ...),
/// `refuse_unrecorded`, `calibration` ("random:SEED" or a calibration file: the arm's
/// factory calibration, which its primary interface publishes), `program="servo"` (run
/// the servo program of rtde_robot::control) and `robots` (a fleet on consecutive free ports); and the library's `still` (the arm
/// holds these joints) and `speed` (the clock runs this many times as fast as the wall
/// clock: 0.25 gives a busy test four times the slack).
///
/// Example:
///
/// ```python
/// with rtde_rs.Sim(version="3.15.8", arm="ur5") as sim:
///     print(sim.port, sim.loop_rate)   # a CB3 at 125 Hz
/// ```
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Sim {
    running: Mutex<Option<Running>>,
}

#[pymethods]
impl Sim {
    #[new]
    #[pyo3(signature = (
        version="5.21.0", arm="ur5e", *, deterministic=false, seed=None, unpaced=false,
        v1_only=false, fieldbus=false, faults=None, refuse_unrecorded=false,
        program=None, robots=1, still=None, speed=None, host="127.0.0.1", port=0,
        dashboard=None, script_ports=None, layout="upper", local_control=false,
        unlock_delay=None, calibration=None,
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
    #[allow(clippy::fn_params_excessive_bools)] // the switches of `rtde sim`
    fn new(
        py: Python<'_>,
        version: &str,
        arm: &str,
        deterministic: bool,
        seed: Option<u64>,
        unpaced: bool,
        v1_only: bool,
        fieldbus: bool,
        faults: Option<Vec<String>>,
        refuse_unrecorded: bool,
        program: Option<&str>,
        robots: u16,
        still: Option<[f64; 6]>,
        speed: Option<f64>,
        host: &str,
        port: u16,
        dashboard: Option<&Bound<'_, PyAny>>,
        script_ports: Option<&Bound<'_, PyAny>>,
        layout: &str,
        local_control: bool,
        unlock_delay: Option<f64>,
        calibration: Option<&str>,
    ) -> PyResult<Self> {
        let ip: IpAddr = host
            .parse()
            .map_err(|e| errors::bad(py, format!("host `{host}`: {e} (give an IP address)")))?;
        let arm = args::arm(py, arm)?;
        let mut builder = RustSim::builder()
            .controller_version(version)
            .bind(SocketAddr::new(ip, port))
            .arm(arm);
        builder = with_calibration(py, builder, calibration)?;
        if deterministic {
            builder = builder.deterministic();
        }
        if let Some(seed) = seed {
            builder = builder.seed(seed);
        }
        if unpaced {
            builder = builder.unpaced();
        }
        if v1_only {
            builder = builder.v1_only();
        }
        if fieldbus {
            builder = builder.fieldbus_adapter();
        }
        if refuse_unrecorded {
            builder = builder.refuse_unrecorded_fields();
        }
        builder = with_faults(py, builder, faults.as_deref().unwrap_or_default())?;
        builder = with_motion(py, builder, still, speed)?;
        builder = with_program(py, builder, program, layout)?;
        builder = with_ports(py, builder, ip, dashboard, script_ports)?;
        if local_control {
            builder = builder.local_control();
        }
        if let Some(delay) = args::maybe_seconds(py, "unlock_delay", unlock_delay)? {
            builder = builder.protective_stop_unlock_delay(delay);
        }
        if robots == 0 {
            return Err(errors::bad(py, "robots must be at least 1"));
        }
        let running = py
            .detach(move || {
                if robots > 1 {
                    builder.start_fleet(robots).map(Running::Fleet)
                } else {
                    builder.start().map(|sim| Running::One(Box::new(sim)))
                }
            })
            .map_err(|e| errors::sim(py, &e))?;
        Ok(Sim {
            running: Mutex::new(Some(running)),
        })
    }

    /// The address to connect to: "127.0.0.1".
    #[getter]
    fn host(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |s| s.addr().ip().to_string())
    }

    /// The port of the first (or only) controller.
    #[getter]
    fn port(&self, py: Python<'_>) -> PyResult<u16> {
        self.with(py, |s| s.addr().port())
    }

    /// Every controller's (host, port), in order: one, or the fleet's.
    #[getter]
    fn addrs(&self, py: Python<'_>) -> PyResult<Vec<(String, u16)>> {
        match lock(&self.running).as_ref() {
            Some(Running::One(sim)) => Ok(vec![(sim.addr().ip().to_string(), sim.addr().port())]),
            Some(Running::Fleet(fleet)) => Ok(fleet
                .addrs()
                .map(|a| (a.ip().to_string(), a.port()))
                .collect()),
            None => Err(stopped(py)),
        }
    }

    /// The controller version it plays, e.g. "5.21.0".
    #[getter]
    fn controller_version(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |s| s.controller_version().to_string())
    }

    /// Its control-loop rate in hertz: 125 (CB3) or 500.
    #[getter]
    fn loop_rate(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, RustSim::loop_rate)
    }

    /// The noise seed, to reproduce a run's values.
    #[getter]
    fn seed(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, RustSim::seed)
    }

    /// The value a client last wrote to input field `name`, or None.
    fn input<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = self.with(py, |s| s.io().input(name).copied())?;
        value.map(|v| values::plain(py, v)).transpose()
    }

    /// `actual_digital_output_bits` as the writes left it: standard outputs in bits 0-7,
    /// configurable in 8-15, tool in 16-17.
    fn digital_output_bits(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| s.io().digital_output_bits())
    }

    /// The speed slider's fraction (1.0 until a client sets it).
    fn speed_fraction(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |s| s.io().speed_fraction())
    }

    /// Standard analog output `index`'s value.
    fn analog_output(&self, py: Python<'_>, index: usize) -> PyResult<f64> {
        self.with(py, |s| s.io().analog_output(index))
    }

    /// `standard_analog_output_type`'s bits: bit i set when output i is a voltage.
    fn analog_output_types(&self, py: Python<'_>) -> PyResult<u8> {
        self.with(py, |s| s.io().analog_output_types())
    }

    /// Counters: connections accepted and open, data packages sent, input packages
    /// applied, stalled clients dropped.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.with(py, RustSim::stats)?;
        let dict = PyDict::new(py);
        dict.set_item("connections_accepted", stats.connections_accepted)?;
        dict.set_item("connections_open", stats.connections_open)?;
        dict.set_item("stalled_clients_dropped", stats.stalled_clients_dropped)?;
        dict.set_item("data_packages_sent", stats.data_packages_sent)?;
        dict.set_item("input_packages_applied", stats.input_packages_applied)?;
        Ok(dict)
    }

    /// Waits until exactly `n` connections are open, at most `timeout` seconds; returns
    /// whether they are.
    fn wait_for_connections(&self, py: Python<'_>, n: u64, timeout: f64) -> PyResult<bool> {
        let timeout = args::seconds(py, "timeout", timeout)?;
        let guard = lock(&self.running);
        let Some(sim) = guard.as_ref().and_then(Running::first) else {
            return Err(stopped(py));
        };
        Ok(py.detach(|| sim.wait_for_connections(n, timeout)))
    }

    /// Holds every connection's output stream (a stalled controller); `resume_stream`
    /// lets it go again.
    fn pause_stream(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustSim::pause_stream)
    }

    /// Lets the stream held by `pause_stream` go again.
    fn resume_stream(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustSim::resume_stream)
    }

    /// The servo program's state (with `program="servo"`): its joints `q`, the waypoint it
    /// acknowledged, its `status` and the ticks it ran; None without a program.
    fn program<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(program) = self.with(py, RustSim::program)? else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("q", program.q().to_vec())?;
        dict.set_item("acked", program.acked())?;
        let status = program.status().to_register();
        let status = match crate::enums::class_named(py, "ProgramStatus") {
            Some(class) => crate::enums::member(py, &class, i64::from(status))?,
            None => status.into_pyobject(py)?.into_any(),
        };
        dict.set_item("status", status)?;
        dict.set_item("ticks", program.ticks())?;
        Ok(Some(dict))
    }

    /// The Dashboard server's port (with `dashboard=True`), else None.
    #[getter]
    fn dashboard_port(&self, py: Python<'_>) -> PyResult<Option<u16>> {
        self.with(py, |s| s.dashboard_addr().map(|a| a.port()))
    }

    /// The ports `Robot(..., ports=sim.ports)` sends the command program through: the
    /// Dashboard server's, the script ports' and RTDE's (with `dashboard=True` and
    /// `script_ports=True`), else None.
    #[getter]
    fn ports<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(ports) = self.with(py, RustSim::script_sender_ports)? else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("dashboard", ports.dashboard)?;
        dict.set_item("primary", ports.primary)?;
        dict.set_item("secondary", ports.secondary)?;
        dict.set_item("realtime", ports.realtime)?;
        dict.set_item("rtde", ports.rtde)?;
        Ok(Some(dict))
    }

    /// Raises a protective stop now, as a collision does (with `dashboard`, `script_ports`
    /// or `program="command"`: a robot state machine).
    #[pyo3(signature = (reason="a collision"))]
    fn protective_stop(&self, py: Python<'_>, reason: &str) -> PyResult<()> {
        self.with(py, |s| s.protective_stop(reason))
    }

    /// Switches the controller to remote control (True) or local control, as the
    /// pendant's switch does.
    fn set_remote_control(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.with(py, |s| s.set_remote_control(on))
    }

    /// The robot's state machine (with `dashboard` or `script_ports`): `robot_mode`,
    /// `safety_status`, `safety_mode`, `program_state`, `loaded_program`,
    /// `remote_control`, `log` (the lines `addToLog` added), `popup`; None without one.
    fn robot_state<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(robot) = self.with(py, RustSim::robot_state)? else {
            return Ok(None);
        };
        let named = |class: &str, code: i64| -> PyResult<Bound<'py, PyAny>> {
            match crate::enums::class_named(py, class) {
                Some(class) => crate::enums::member(py, &class, code),
                None => Ok(code.into_pyobject(py)?.into_any()),
            }
        };
        let dict = PyDict::new(py);
        dict.set_item(
            "robot_mode",
            named("RobotMode", i64::from(robot.robot_mode().code()))?,
        )?;
        dict.set_item(
            "safety_status",
            named("SafetyStatus", i64::from(robot.safety_status().code()))?,
        )?;
        dict.set_item(
            "safety_mode",
            named("SafetyMode", i64::from(robot.safety_mode().code()))?,
        )?;
        dict.set_item(
            "program_state",
            named("RuntimeState", i64::from(robot.program_state().code()))?,
        )?;
        dict.set_item("loaded_program", robot.loaded_program())?;
        dict.set_item("remote_control", robot.is_in_remote_control())?;
        dict.set_item("log", robot.log().to_vec())?;
        dict.set_item("popup", robot.popup())?;
        Ok(Some(dict))
    }

    /// The command program's state (with `program="command"`, or once one was sent):
    /// its joints `q` and `tcp_pose`, the `tcp_offset` and `payload` (mass, cog) it was
    /// given, `teach_mode`, `force_mode` (whether on), its `state` ("idle", "moving",
    /// "stopped"), the `handshake` (commands taken, finished), `protective_stopped`, the
    /// `ticks` it ran and its `messages`; None without one.
    fn command_program<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(program) = self.with(py, RustSim::command_program)? else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("q", program.q().to_vec())?;
        dict.set_item("qd", program.qd().to_vec())?;
        dict.set_item("tcp_pose", program.tcp_pose().to_vec())?;
        dict.set_item("tcp_offset", program.tcp_offset().to_vec())?;
        let (mass, cog) = program.payload();
        dict.set_item("payload", (mass, cog.to_vec()))?;
        dict.set_item("teach_mode", program.in_teach_mode())?;
        dict.set_item("force_mode", program.in_force_mode())?;
        dict.set_item("state", crate::enums::program_state_name(program.state()))?;
        dict.set_item("handshake", program.handshake())?;
        dict.set_item("protective_stopped", program.is_protective_stopped())?;
        dict.set_item("ticks", program.ticks())?;
        dict.set_item("messages", program.messages().to_vec())?;
        Ok(Some(dict))
    }

    /// Stops the simulator: closes every connection and joins its threads.
    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let Some(running) = lock(&self.running).take() else {
            return Ok(());
        };
        py.detach(move || match running {
            Running::One(sim) => sim.shutdown(),
            Running::Fleet(fleet) => fleet.shutdown(),
        })
        .map_err(|e| errors::sim(py, &e))
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (exc_type, _exc, _tb))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        lifecycle::exit(self.shutdown(py), exc_type)
    }

    fn __repr__(&self) -> String {
        match lock(&self.running).as_ref().and_then(Running::first) {
            Some(sim) => format!(
                "<rtde_rs.Sim controller {} on {}>",
                sim.controller_version(),
                sim.addr()
            ),
            None => "<rtde_rs.Sim stopped>".to_owned(),
        }
    }
}

impl Sim {
    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&RustSim) -> T) -> PyResult<T> {
        match lock(&self.running).as_ref().and_then(Running::first) {
            Some(sim) => Ok(f(sim)),
            None => Err(stopped(py)),
        }
    }
}

fn stopped(py: Python<'_>) -> PyErr {
    errors::new(py, errors::Class::Simulator, "the simulator was shut down")
}
