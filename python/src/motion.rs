//! `rtde_rs.Robot`: rtde-robot's motion commands over the command program. Values are
//! checked by the Rust core before anything is sent; the robot's verdicts arrive as their
//! own exception classes; the GIL is released for every command and every wait.

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtde_core::ConnectOptions;
use rtde_kinematics::{Arm, compose};
use rtde_robot::motion::{
    ForceMode, ForceModeType, JointMove, LinearMove, MotionError, MotionOptions,
    MoveHandle as RustMoveHandle, ProgramSource, Reached, Robot as RustRobot, defaults,
};
use rtde_robot::script::{Ports, ScriptSender};

use crate::args::Vector6;
use crate::{args, enums, errors};

/// How often a wait for the robot looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// The deceleration (rad/s²) of the stop after Ctrl-C ends a blocking move, or a cancelled
/// task a move of `rtde_rs.aio` (`MOTION_DEFAULTS["interrupt_deceleration"]`): URScript's
/// `stopj` default, and ur_rtde's.
const INTERRUPT_DECELERATION: f64 = 2.0;

/// A waypoint of a path as ur_rtde writes it: six values, then speed, acceleration and
/// blend radius.
type Waypoint = [f64; 9];

/// A connection that runs the arm through the command program
/// (`rtde_command.script`): moves, speeds, stops, servoing, force and teach
/// mode, the TCP and the payload.
///
/// By default the program is sent through the script port (`send_program=True`): the
/// Dashboard server is asked first whether the robot is in remote control, powered, its
/// brakes released and not stopped, each refusal a `ScriptError` with nothing sent. With
/// `send_program=False` the program must already play (installed from the pendant, or
/// `Sim(program="command")`). `ports` names the Dashboard and script ports when they are
/// not the controller's (`Sim.ports` gives a simulator's).
///
/// Every value is checked before anything is sent (`BadArgumentError` naming the value
/// and its limit: NaN, beyond UR's joint and tool limits, out of reach, an acceleration of
/// 0). The robot's verdicts are `ProtectiveStopError`, `WatchdogError`,
/// `ProgramStoppedError` and `TargetUnreachableError` (all `MotionError`s), in the
/// controller's words. Ctrl-C during a blocking move stops the arm (`stop_j` at 2 rad/s²)
/// and raises `KeyboardInterrupt`.
///
/// Example:
///
/// ```python
/// with rtde_rs.Sim(program="command") as sim:
///     with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
///         reached = robot.move_j([0.3, -1.4, 1.4, -1.6, -1.5, 0.2])
///         print(reached["q"], reached["tcp_pose"])
/// ```
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Robot {
    /// None once closed. Commands clone the `Arc` and release the lock, so that a `stop_j`
    /// from one thread reaches the robot while another thread waits for a move.
    inner: RwLock<Option<Arc<RustRobot>>>,
    timeout: Duration,
    /// The arm the robot computes with (the controller's calibrated one when it could be
    /// read), kept for the forward kinematics after `close`.
    arm: Arm,
    /// Which arm that is, in words.
    kinematics: String,
    /// The TCP offset last set, for the forward kinematics.
    tcp: Mutex<[f64; 6]>,
}

/// A command under way: `wait()` for where it left the arm.
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct MoveHandle {
    inner: RustMoveHandle,
    timeout: Duration,
}

/// Where a move ended, and whether a stop cut it short there.
struct Ended {
    at: Reached,
    interrupted: bool,
}

/// `{"q", "tcp_pose", "interrupted"}`: a move a stop cut short is no error in Python, as
/// in ur_rtde, but says so.
fn ended(py: Python<'_>, e: Ended) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("q", e.at.q.to_vec())?;
    dict.set_item("tcp_pose", e.at.tcp_pose.to_vec())?;
    dict.set_item("interrupted", e.interrupted)?;
    Ok(dict)
}

/// The script sender's ports: the controller's, with those of `ports` instead.
fn sender_ports(py: Python<'_>, rtde: u16, ports: Option<HashMap<String, u16>>) -> PyResult<Ports> {
    let mut chosen = Ports {
        rtde,
        ..Ports::default()
    };
    for (name, port) in ports.unwrap_or_default() {
        match name.as_str() {
            "dashboard" => chosen.dashboard = port,
            "primary" => chosen.primary = port,
            "secondary" => chosen.secondary = port,
            "realtime" => chosen.realtime = port,
            "rtde" => chosen.rtde = port,
            other => {
                return Err(errors::bad(
                    py,
                    format!(
                        "ports: unknown port `{other}`: use dashboard, primary, secondary, \
                         realtime or rtde"
                    ),
                ));
            }
        }
    }
    Ok(chosen)
}

fn force_mode_type(py: Python<'_>, code: i64) -> PyResult<ForceModeType> {
    match code {
        1 => Ok(ForceModeType::PointToTcp),
        2 => Ok(ForceModeType::Simple),
        3 => Ok(ForceModeType::Motion),
        other => Err(errors::bad(
            py,
            format!("force mode type {other}: use 1 (point to TCP), 2 (simple) or 3 (motion)"),
        )),
    }
}

fn selection(py: Python<'_>, values: [i64; 6]) -> PyResult<[bool; 6]> {
    let mut out = [false; 6];
    for (i, v) in values.into_iter().enumerate() {
        out[i] = match v {
            0 => false,
            1 => true,
            other => {
                return Err(errors::bad(
                    py,
                    format!("selection vector [{i}] = {other}: use 0 or 1"),
                ));
            }
        };
    }
    Ok(out)
}

impl Robot {
    fn robot(&self, py: Python<'_>) -> PyResult<Arc<RustRobot>> {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| errors::closed(py, "robot's connection"))
    }

    /// Runs `f` on the robot without the GIL.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&RustRobot) -> Result<T, MotionError> + Send,
    ) -> PyResult<T> {
        let robot = self.robot(py)?;
        py.detach(move || f(&robot))
            .map_err(|e| errors::motion(py, e))
    }

    /// A move: waited for (the reached joints and pose as a dict), or a handle.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        asynchronous: bool,
        start: impl FnOnce(&RustRobot) -> Result<RustMoveHandle, MotionError> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.with(py, start)?;
        let handle = MoveHandle {
            inner: handle,
            timeout: self.timeout,
        };
        if asynchronous {
            return Ok(Bound::new(py, handle)?.into_any());
        }
        match handle.wait_for(py, self.timeout) {
            Ok(r) => Ok(ended(py, r)?.into_any()),
            Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
                // Ctrl-C during a blocking move: the caller will not see the arm again,
                // so the move must not go on without it.
                let _ = self.with(py, |r| r.stop_j(INTERRUPT_DECELERATION));
                Err(e)
            }
            Err(e) => Err(e),
        }
    }
}

#[pymethods]
impl Robot {
    /// Connects to `host`'s RTDE port, sends the command program (or, with
    /// `send_program=False`, attaches to the one playing) on the `layout`'s registers
    /// ("upper": int registers 30-39 and double registers 30-47, the default; "lower": 0-9
    /// and 0-17, which fieldbus adapters may own) and
    /// returns once it runs. The kinematics (the reach check of linear targets, forward and
    /// inverse kinematics) are the controller's calibrated arm, read off its primary
    /// interface (`ports["primary"]`, 30001), or `arm`'s nominal table when it cannot be
    /// read: `kinematics` says which. An `arm` named ("ur10e") that the controller says it
    /// is not is refused before anything moves; unnamed, the arm is the controller's.
    /// `timeout` bounds each blocking command (seconds).
    #[new]
    #[pyo3(signature = (
        host, *, port=30004, send_program=true, ports=None, layout="upper", arm=None,
        timeout=60.0,
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
    fn new(
        py: Python<'_>,
        host: &str,
        port: u16,
        send_program: bool,
        ports: Option<HashMap<String, u16>>,
        layout: &str,
        arm: Option<&str>,
        timeout: f64,
    ) -> PyResult<Self> {
        let timeout = args::seconds(py, "timeout", timeout)?;
        let layout = args::layout(py, layout)?;
        let mut options = MotionOptions::new()
            .layout(layout)
            .timeout(timeout)
            .connect_options(ConnectOptions::new().read_timeout(Some(Duration::from_secs(2))));
        if let Some(arm) = arm {
            options = options.arm(args::arm(py, arm)?);
        }
        let host = host.to_owned();
        let ports = sender_ports(py, port, ports)?;
        options = options.primary_port(Some(ports.primary));
        let robot = py
            .detach(move || {
                if send_program {
                    let ip: IpAddr = (host.as_str(), port)
                        .to_socket_addrs()
                        .map_err(|e| MotionError::Invalid(format!("host `{host}`: {e}")))?
                        .next()
                        .map(|a| a.ip())
                        .ok_or_else(|| MotionError::Invalid(format!("`{host}` has no address")))?;
                    options =
                        options.source(ProgramSource::Send(ScriptSender::new(ip).ports(ports)));
                }
                RustRobot::connect((host.as_str(), port), options)
            })
            .map_err(|e| errors::motion(py, e))?;
        Ok(Robot {
            arm: *robot.kinematics().arm(),
            kinematics: robot.kinematics().to_string(),
            inner: RwLock::new(Some(Arc::new(robot))),
            timeout,
            tcp: Mutex::new([0.0; 6]),
        })
    }

    /// Moves to joint positions `q` (rad) at `speed` (rad/s) and `acceleration` (rad/s²),
    /// blending within `blend` (m) into a next move. Returns `{"q", "tcp_pose"}` where the
    /// arm stopped, or with `asynchronous=True` a `MoveHandle` at once.
    #[pyo3(signature = (
        q, speed=defaults::JOINT_SPEED, acceleration=defaults::JOINT_ACCELERATION, blend=0.0, *,
        asynchronous=false,
    ))]
    fn move_j<'py>(
        &self,
        py: Python<'py>,
        q: Vector6,
        speed: f64,
        acceleration: f64,
        blend: f64,
        asynchronous: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let q = q.0;
        let target = JointMove::to(q)
            .speed(speed)
            .accel(acceleration)
            .blend(blend);
        self.finish(py, asynchronous, move |r| r.start_move_j(target))
    }

    /// Moves the TCP along a straight line to `pose` (m, rotation vector) at `speed` (m/s)
    /// and `acceleration` (m/s²); a pose out of the arm's reach is refused before sending.
    #[pyo3(signature = (
        pose, speed=defaults::TOOL_SPEED, acceleration=defaults::TOOL_ACCELERATION, blend=0.0, *,
        asynchronous=false,
    ))]
    fn move_l<'py>(
        &self,
        py: Python<'py>,
        pose: Vector6,
        speed: f64,
        acceleration: f64,
        blend: f64,
        asynchronous: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pose = pose.0;
        let target = LinearMove::to(pose)
            .speed(speed)
            .accel(acceleration)
            .blend(blend);
        self.finish(py, asynchronous, move |r| r.start_move_l(target))
    }

    /// Moves through joint waypoints, each `[q0..q5, speed, acceleration, blend]`, blending
    /// each into the next; every waypoint is checked before the first is sent.
    #[pyo3(signature = (path, *, asynchronous=false))]
    fn move_j_path<'py>(
        &self,
        py: Python<'py>,
        path: Vec<Waypoint>,
        asynchronous: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let path: Vec<JointMove> = path
            .iter()
            .map(|w| {
                let (q, rest) = split(w);
                JointMove::to(q)
                    .speed(rest[0])
                    .accel(rest[1])
                    .blend(rest[2])
            })
            .collect();
        self.finish(py, asynchronous, move |r| r.start_move_j_path(&path))
    }

    /// As `move_j_path`, through poses along straight lines.
    #[pyo3(signature = (path, *, asynchronous=false))]
    fn move_l_path<'py>(
        &self,
        py: Python<'py>,
        path: Vec<Waypoint>,
        asynchronous: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let path: Vec<LinearMove> = path
            .iter()
            .map(|w| {
                let (pose, rest) = split(w);
                LinearMove::to(pose)
                    .speed(rest[0])
                    .accel(rest[1])
                    .blend(rest[2])
            })
            .collect();
        self.finish(py, asynchronous, move |r| r.start_move_l_path(&path))
    }

    /// Accelerates the joints to `qd` (rad/s) and keeps them there until the next command.
    #[pyo3(signature = (qd, acceleration=defaults::SPEED_J_ACCELERATION))]
    fn speed_j(&self, py: Python<'_>, qd: Vector6, acceleration: f64) -> PyResult<()> {
        let qd = qd.0;
        self.with(py, move |r| r.speed_j(qd, acceleration))
    }

    /// Accelerates the TCP to `xd` (m/s, rad/s) and keeps it there until the next command.
    #[pyo3(signature = (xd, acceleration=defaults::SPEED_L_ACCELERATION))]
    fn speed_l(&self, py: Python<'_>, xd: Vector6, acceleration: f64) -> PyResult<()> {
        let xd = xd.0;
        self.with(py, move |r| r.speed_l(xd, acceleration))
    }

    /// Decelerates the joints to rest (rad/s²); returns once the arm rests. A move under
    /// way ends there, and its handle returns where the arm stopped.
    #[pyo3(signature = (deceleration=defaults::STOP_J_DECELERATION))]
    fn stop_j(&self, py: Python<'_>, deceleration: f64) -> PyResult<()> {
        self.with(py, move |r| r.stop_j(deceleration))
    }

    /// Decelerates the TCP to rest along its path (m/s²).
    #[pyo3(signature = (deceleration=defaults::STOP_DECELERATION))]
    fn stop_l(&self, py: Python<'_>, deceleration: f64) -> PyResult<()> {
        self.with(py, move |r| r.stop_l(deceleration))
    }

    /// One servo target (URScript `servoj`): send one per cycle.
    #[pyo3(signature = (
        q, time=defaults::SERVO_TIME, lookahead_time=defaults::SERVO_LOOKAHEAD,
        gain=defaults::SERVO_GAIN,
    ))]
    fn servo_j(
        &self,
        py: Python<'_>,
        q: Vector6,
        time: f64,
        lookahead_time: f64,
        gain: f64,
    ) -> PyResult<()> {
        let q = q.0;
        self.with(py, move |r| r.servo_j(q, time, lookahead_time, gain))
    }

    /// Ends servoing, decelerating at `deceleration` (rad/s²).
    #[pyo3(signature = (deceleration=defaults::STOP_DECELERATION))]
    fn servo_stop(&self, py: Python<'_>, deceleration: f64) -> PyResult<()> {
        self.with(py, move |r| r.servo_stop(deceleration))
    }

    /// Zeroes the force/torque sensor.
    fn zero_ft_sensor(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustRobot::zero_ft_sensor)
    }

    /// Sets the TCP offset from the flange; later linear targets and reach checks use it.
    fn set_tcp(&self, py: Python<'_>, offset: Vector6) -> PyResult<()> {
        let offset = offset.0;
        self.with(py, move |r| r.set_tcp(offset))?;
        *self.tcp.lock().unwrap_or_else(PoisonError::into_inner) = offset;
        Ok(())
    }

    /// The TCP offset last set with `set_tcp` (zero until then).
    /// Which arm the kinematics use: "the controller's calibrated UR5e table", or "the
    /// nominal UR5e table (why not the controller's)".
    #[getter]
    fn kinematics(&self) -> String {
        self.kinematics.clone()
    }

    #[getter]
    fn tcp_offset(&self) -> Vec<f64> {
        self.tcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .to_vec()
    }

    /// The TCP pose of joints `q` (the current joints when None) with `tcp_offset` (the
    /// one set with `set_tcp` when None), on the arm `kinematics` names; a zero offset
    /// gives the flange's pose.
    #[pyo3(signature = (q=None, tcp_offset=None))]
    fn forward_kinematics(
        &self,
        py: Python<'_>,
        q: Option<Vector6>,
        tcp_offset: Option<Vector6>,
    ) -> PyResult<Vec<f64>> {
        let q = q.map(|v| v.0);
        let tcp_offset = tcp_offset.map(|v| v.0);
        let q = match q {
            Some(q) => q,
            None => self.robot(py)?.state().q,
        };
        for (i, x) in q.iter().chain(tcp_offset.iter().flatten()).enumerate() {
            args::finite(py, &format!("value [{i}]"), *x)?;
        }
        let offset =
            tcp_offset.unwrap_or_else(|| *self.tcp.lock().unwrap_or_else(PoisonError::into_inner));
        Ok(compose(&self.arm.tcp_pose(&q), &offset).to_vec())
    }

    /// Sets the payload: `mass` (kg) and centre of gravity `cog` (m, flange frame).
    #[pyo3(signature = (mass, cog=[0.0, 0.0, 0.0]))]
    fn set_payload(&self, py: Python<'_>, mass: f64, cog: [f64; 3]) -> PyResult<()> {
        self.with(py, move |r| r.set_payload(mass, cog))
    }

    /// Starts teach mode: the arm can be moved by hand.
    fn teach_mode(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustRobot::teach_mode)
    }

    /// Ends teach mode.
    fn end_teach_mode(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustRobot::end_teach_mode)
    }

    /// Starts force mode (URScript `force_mode`): `task_frame` a pose, `selection` six 0/1
    /// (1: compliant axis), `wrench` (N, N·m), `type` 1, 2 or 3, `limits` (speeds on the
    /// compliant axes, deviations on the others).
    #[pyo3(signature = (task_frame, selection, wrench, r#type, limits))]
    fn force_mode(
        &self,
        py: Python<'_>,
        task_frame: Vector6,
        selection: [i64; 6],
        wrench: Vector6,
        r#type: i64,
        limits: Vector6,
    ) -> PyResult<()> {
        let task_frame = task_frame.0;
        let wrench = wrench.0;
        let limits = limits.0;
        let mode = ForceMode {
            task_frame,
            selection: self::selection(py, selection)?,
            wrench,
            kind: force_mode_type(py, r#type)?,
            limits,
        };
        self.with(py, move |r| r.force_mode(&mode))
    }

    /// Ends force mode.
    fn end_force_mode(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustRobot::end_force_mode)
    }

    /// The joint solution of the TCP `pose` nearest `near` (the current joints when None),
    /// with the TCP offset set; computed on the host (closed form). Out of reach raises
    /// `BadArgumentError`.
    #[pyo3(signature = (pose, near=None))]
    fn inverse_kinematics(
        &self,
        py: Python<'_>,
        pose: Vector6,
        near: Option<Vector6>,
    ) -> PyResult<Vec<f64>> {
        let pose = pose.0;
        let near = near.map(|v| v.0);
        self.with(py, move |r| r.inverse_kinematics(pose, near))
            .map(|q| q.to_vec())
    }

    /// The arm and the program as the last package said: `timestamp`, `q`, `qd`,
    /// `tcp_pose`, `progress` (0 to 1) of the move under way, `program` ("idle",
    /// "moving", "stopped"), `steady` (every joint slower than 1 mrad/s) and `playing`
    /// (the controller plays a program: false once it stopped, whoever stopped it).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.robot(py)?.state();
        let dict = PyDict::new(py);
        dict.set_item("timestamp", s.timestamp)?;
        dict.set_item("q", s.q.to_vec())?;
        dict.set_item("qd", s.qd.to_vec())?;
        dict.set_item("tcp_pose", s.tcp_pose.to_vec())?;
        dict.set_item("progress", s.progress)?;
        dict.set_item("program", enums::program_state_name(s.program))?;
        dict.set_item("steady", s.steady)?;
        dict.set_item("playing", s.playing)?;
        Ok(dict)
    }

    /// Whether the connection is open (until `close`).
    #[getter]
    fn is_open(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Carries on after the robot's verdict (a protective stop once unlocked, a watchdog
    /// stop, an unreachable target, a stopped program, a power cycle): closes this session
    /// and connects again with the same options, sending the command program again when
    /// `send_program` (it replaces the stopped one). Rust's `Robot::recover`; ur_rtde's
    /// `reuploadScript`. Raises the precondition's error (a protective stop not yet
    /// unlocked) with nothing moved; the robot is closed then.
    fn recover(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .inner
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let robot = taken.ok_or_else(|| errors::closed(py, "robot's connection"))?;
        let Ok(robot) = Arc::try_unwrap(robot) else {
            return Err(errors::bad(
                py,
                "a command in another thread still uses the robot: recover once it returns",
            ));
        };
        let recovered = py
            .detach(move || robot.recover())
            .map_err(|e| errors::motion(py, e))?;
        *self.inner.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(recovered));
        Ok(())
    }

    /// Stops changing the watchdog register (the program's watchdog then stops the
    /// robot, as it should when the client goes) and closes the connection. Closing twice
    /// does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .inner
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(robot) = taken else {
            return Ok(());
        };
        py.detach(move || match Arc::try_unwrap(robot) {
            Ok(robot) => robot.close(),
            // Another thread's command still holds it: the last one to finish drops it,
            // and dropping closes.
            Err(_) => Ok(()),
        })
        .map_err(|e| errors::motion(py, e))
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
    ) -> PyResult<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        format!("Robot({})", if self.is_open() { "open" } else { "closed" })
    }
}

fn split(w: &Waypoint) -> ([f64; 6], [f64; 3]) {
    let mut target = [0.0; 6];
    target.copy_from_slice(&w[..6]);
    (target, [w[6], w[7], w[8]])
}

impl MoveHandle {
    /// Waits without the GIL in slices of [`SIGNAL_CHECK`], so that Ctrl-C ends the wait.
    fn wait_for(&self, py: Python<'_>, timeout: Duration) -> PyResult<Ended> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(SIGNAL_CHECK);
            match py.detach(|| self.inner.wait_timeout(slice)) {
                Ok(at) => {
                    return Ok(Ended {
                        at,
                        interrupted: false,
                    });
                }
                Err(MotionError::Interrupted { at }) => {
                    return Ok(Ended {
                        at,
                        interrupted: true,
                    });
                }
                Err(MotionError::Timeout { .. }) if slice < left => py.check_signals()?,
                Err(MotionError::Timeout { seq, .. }) => {
                    let e = MotionError::Timeout {
                        seq,
                        waited: timeout,
                    };
                    return Err(errors::motion(py, e));
                }
                Err(e) => return Err(errors::motion(py, e)),
            }
        }
    }
}

#[pymethods]
impl MoveHandle {
    /// The command's sequence number.
    #[getter]
    fn seq(&self) -> i32 {
        self.inner.seq()
    }

    /// Whether the program has finished the command.
    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// The progress of the command, 0 to 1: for a path, of the whole path.
    fn progress(&self) -> f64 {
        self.inner.progress()
    }

    /// The index of the waypoint under way, for a path (0 for one command); the last once
    /// the path is done.
    fn waypoint(&self) -> usize {
        self.inner.waypoint()
    }

    /// Waits (without the GIL) for the command to finish, up to `timeout` seconds (the
    /// robot's timeout when None), and returns `{"q", "tcp_pose", "interrupted"}` where it
    /// left the arm (`interrupted` when a stop cut the move short there);
    /// the robot's verdicts raise their `MotionError`s. Ctrl-C ends the wait, not the move.
    #[pyo3(signature = (timeout=None))]
    fn wait<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyDict>> {
        let timeout = args::maybe_seconds(py, "timeout", timeout)?.unwrap_or(self.timeout);
        let r = self.wait_for(py, timeout)?;
        ended(py, r)
    }

    fn __repr__(&self) -> String {
        format!(
            "MoveHandle(seq={}, finished={})",
            self.inner.seq(),
            self.inner.is_finished()
        )
    }
}

/// The pose `p_from_to`, given in the frame `p_from`, in the base frame (URScript's
/// `pose_trans`).
#[pyfunction]
fn pose_trans(py: Python<'_>, p_from: Vector6, p_from_to: Vector6) -> PyResult<Vec<f64>> {
    let p_from = p_from.0;
    let p_from_to = p_from_to.0;
    for (i, x) in p_from.iter().chain(&p_from_to).enumerate() {
        args::finite(py, &format!("pose value [{i}]"), *x)?;
    }
    Ok(compose(&p_from, &p_from_to).to_vec())
}

/// `rtde_robot::motion::defaults` as a dict, which the ur_rtde layer's signatures read, so
/// that the table lives once.
fn motion_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let table = PyDict::new(py);
    for (name, value) in [
        ("joint_speed", defaults::JOINT_SPEED),
        ("joint_acceleration", defaults::JOINT_ACCELERATION),
        ("tool_speed", defaults::TOOL_SPEED),
        ("tool_acceleration", defaults::TOOL_ACCELERATION),
        ("speed_j_acceleration", defaults::SPEED_J_ACCELERATION),
        ("speed_l_acceleration", defaults::SPEED_L_ACCELERATION),
        ("stop_j_deceleration", defaults::STOP_J_DECELERATION),
        ("stop_deceleration", defaults::STOP_DECELERATION),
        ("servo_time", defaults::SERVO_TIME),
        ("servo_lookahead", defaults::SERVO_LOOKAHEAD),
        ("servo_gain", defaults::SERVO_GAIN),
        ("interrupt_deceleration", INTERRUPT_DECELERATION),
    ] {
        table.set_item(name, value)?;
    }
    Ok(table)
}

/// Adds the classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Robot>()?;
    m.add_class::<MoveHandle>()?;
    m.add_function(wrap_pyfunction!(pose_trans, m)?)?;
    m.add("MOTION_DEFAULTS", motion_defaults(m.py())?)?;
    Ok(())
}
