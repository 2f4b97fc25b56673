//! `rtde_rs.ServoLoop`: rtde-core's control kit from Python. Per package, a Python
//! function gets the state and returns the joint target, which goes out in the same cycle
//! with the watchdog and the waypoint handshake; the kit counts the deadlines missed.
//! Also ur_rtde's `initPeriod` / `servoJ` / `waitPeriod` idiom over the same program.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::{Client, ConnectOptions, Error, RtdeRecipe};
use rtde_robot::control::{ControlLoop, Handshake as RustHandshake, LoopStats};

use crate::lifecycle::lock;
use crate::{args, enums, errors, lifecycle};

/// What the Python function sees each cycle.
#[derive(RtdeRecipe, Clone, Copy)]
struct State {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_qd: [f64; 6],
    target_q: [f64; 6],
}

/// The joint target: the registers the servo program (rtde_servo.script and the
/// simulator's `program="servo"`) reads, rtde_robot::control::layout::TARGET_REGISTERS.
#[derive(RtdeRecipe)]
#[rtde(input)]
struct Waypoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

/// The waypoint handshake as the Python function sees it in one cycle: `advance()` moves
/// on to the next waypoint only once the robot has taken the current one (and returns
/// whether it did); return the new target then, else the current one again.
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Handshake {
    inner: Mutex<RustHandshake>,
}

#[pymethods]
impl Handshake {
    /// The id of the waypoint being sent (0 before the first).
    #[getter]
    fn current(&self) -> i32 {
        lock(&self.inner).current()
    }

    /// The id of the last waypoint the robot reported taken.
    #[getter]
    fn acked(&self) -> i32 {
        lock(&self.inner).acked()
    }

    /// Whether the robot has taken the current waypoint.
    #[getter]
    fn ready(&self) -> bool {
        lock(&self.inner).ready()
    }

    /// Moves on to the next waypoint if the robot took the current one.
    fn advance(&self) -> bool {
        lock(&self.inner).advance()
    }
}

/// The loop's parts that a cycle uses, behind one lock (cycles run one at a time).
struct Parts {
    control: ControlLoop<State, Waypoint>,
    receiver: Receiver,
    sender: Sender,
    /// The last target sent, repeated when the function returns None.
    last: [f64; 6],
}

/// A control loop over the servo program of rtde_robot::control (on a real robot,
/// rtde_servo.script; in the simulator, `Sim(program="servo")`).
///
/// `run(f, cycles)`: for each output package, `f(state, handshake)` gets the state (a
/// dict: timestamp, actual_q, actual_qd, target_q) and returns the joint target (six
/// floats, or None to hold the last one), sent in the same cycle; returns the loop's
/// counts (cycles, misses: commands that left after the next package had arrived).
///
/// ur_rtde's idiom: `t = loop.init_period(); loop.servo_j(q); loop.wait_period(t)`.
///
/// Example:
///
/// ```python
/// with rtde_rs.Sim(program="servo") as sim, rtde_rs.ServoLoop(sim.host, port=sim.port) as loop:
///     home = loop.run(lambda s, h: s["actual_q"], cycles=1)   # hold still
/// ```
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct ServoLoop {
    parts: Mutex<Option<Parts>>,
    background: Mutex<Option<Background>>,
    period: Duration,
    timeout: Duration,
}

/// Reports a Python error from inside a cycle once the cycle is over.
type Held = Option<PyErr>;

#[pymethods]
impl ServoLoop {
    // The port is RTDE_PORT, written out so that `help()` shows it.
    #[new]
    #[pyo3(signature = (host, *, port=30004, frequency=None, timeout=1.0, connect_timeout=5.0))]
    fn new(
        py: Python<'_>,
        host: String,
        port: u16,
        frequency: Option<f64>,
        timeout: f64,
        connect_timeout: f64,
    ) -> PyResult<Self> {
        let timeout = args::seconds(py, "timeout", timeout)?;
        let options = ConnectOptions::new()
            .connect_timeout(args::seconds(py, "connect_timeout", connect_timeout)?)
            .read_timeout(Some(timeout));
        if let Some(f) = frequency {
            args::finite(py, "the frequency", f)?;
        }
        let (parts, background, frequency) = py
            .detach(move || {
                let mut client = Client::connect((host.as_str(), port), options)?;
                let frequency = frequency.unwrap_or_else(|| client.max_frequency());
                let control = ControlLoop::<State, Waypoint>::setup(&mut client, frequency)?;
                client.start()?;
                let background = client.spawn(SpawnOptions::new().name("rtde_rs-servo"))?;
                let parts = Parts {
                    control,
                    receiver: background.receiver(),
                    sender: background.sender(),
                    last: [0.0; 6],
                };
                Ok::<_, Error>((parts, background, frequency))
            })
            .map_err(|e| errors::rtde(py, e))?;
        Ok(ServoLoop {
            parts: Mutex::new(Some(parts)),
            background: Mutex::new(Some(background)),
            period: Duration::from_secs_f64(1.0 / frequency),
            timeout,
        })
    }

    /// Runs `cycles` cycles of `f(state, handshake) -> target or None`; returns the
    /// counts. An exception in `f` ends the loop (the cycle sends the last target again)
    /// and is raised here.
    fn run<'py>(&self, py: Python<'py>, f: Py<PyAny>, cycles: u64) -> PyResult<Bound<'py, PyDict>> {
        for _ in 0..cycles {
            self.cycle(py, |py, state, handshake| {
                let state_dict = PyDict::new(py);
                state_dict.set_item("timestamp", state.timestamp)?;
                state_dict.set_item("actual_q", state.actual_q.to_vec())?;
                state_dict.set_item("actual_qd", state.actual_qd.to_vec())?;
                state_dict.set_item("target_q", state.target_q.to_vec())?;
                let target = f.call1(py, (state_dict, handshake))?;
                if target.is_none(py) {
                    return Ok(None);
                }
                Ok(Some(target.extract::<[f64; 6]>(py)?))
            })?;
            py.check_signals()?;
        }
        self.stats(py)
    }

    /// ur_rtde's `initPeriod`: the start of a cycle, for `wait_period`.
    fn init_period(&self) -> f64 {
        epoch().elapsed().as_secs_f64()
    }

    /// ur_rtde's `waitPeriod`: sleeps (without the GIL) until one period after `t`.
    fn wait_period(&self, py: Python<'_>, t: f64) -> PyResult<()> {
        let t = args::finite(py, "the cycle start", t)?;
        let due = epoch() + Duration::from_secs_f64(t.max(0.0)) + self.period;
        py.detach(|| {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        });
        Ok(())
    }

    /// ur_rtde's `servoJ` over the servo program: one cycle that hands the robot `q` as
    /// the next waypoint (as soon as it took the current one). Returns True.
    fn servo_j(&self, py: Python<'_>, q: [f64; 6]) -> PyResult<bool> {
        for x in q {
            args::finite(py, "a joint target", x)?;
        }
        self.cycle(py, |_, _, handshake| {
            handshake.get().advance();
            Ok(Some(q))
        })?;
        Ok(true)
    }

    /// The counts: cycles, misses, misses_behind, max_response (seconds), events_dropped.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // A cycle holds the parts while it calls Python: wait for them without the GIL.
        let stats: Option<LoopStats> =
            py.detach(|| lock(&self.parts).as_ref().map(|p| p.control.stats()));
        let Some(stats) = stats else {
            return Err(errors::closed(py, "control loop"));
        };
        let dict = PyDict::new(py);
        dict.set_item("cycles", stats.cycles)?;
        dict.set_item("misses", stats.misses)?;
        dict.set_item("misses_behind", stats.misses_behind)?;
        dict.set_item("max_response", stats.max_response.as_secs_f64())?;
        dict.set_item("events_dropped", stats.events_dropped)?;
        Ok(dict)
    }

    /// The servo program's status in the last package (a `ProgramStatus`), or None
    /// before the first cycle.
    #[getter]
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let status = py.detach(|| {
            lock(&self.parts)
                .as_ref()
                .and_then(|p| p.control.status())
                .map(rtde_robot::control::ProgramStatus::to_register)
        });
        match (status, enums::class_named(py, "ProgramStatus")) {
            (Some(s), Some(class)) => Ok(Some(enums::member(py, &class, i64::from(s))?)),
            (Some(s), None) => Ok(Some(s.into_pyobject(py)?.into_any())),
            (None, _) => Ok(None),
        }
    }

    /// Pauses, closes the connection and joins the reader thread.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| lock(&self.parts).take());
        let Some(background) = lock(&self.background).take() else {
            return Ok(());
        };
        lifecycle::close_background(py, background)
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
        lifecycle::exit(self.close(py), exc_type)
    }
}

impl ServoLoop {
    /// One cycle of the kit, without the GIL but for the call of `decide`.
    fn cycle(
        &self,
        py: Python<'_>,
        decide: impl Fn(Python<'_>, &State, Bound<'_, Handshake>) -> PyResult<Option<[f64; 6]>>
        + Send
        + Sync,
    ) -> PyResult<()> {
        let timeout = self.timeout;
        let (result, held) = py.detach(|| {
            let mut guard = lock(&self.parts);
            let Some(parts) = guard.as_mut() else {
                return (Ok(Closed::Yes), None);
            };
            let mut held: Held = None;
            let last = parts.last;
            let mut sent = last;
            let Parts {
                control,
                receiver,
                sender,
                ..
            } = parts;
            let result =
                control.cycle_background(receiver, sender, Some(timeout), |state, handshake| {
                    let decided = Python::attach(|py| {
                        let shared = Bound::new(
                            py,
                            Handshake {
                                inner: Mutex::new(*handshake),
                            },
                        )?;
                        let target = decide(py, state, shared.clone())?;
                        *handshake = *lock(&shared.get().inner);
                        if let Some(q) = target {
                            for x in q {
                                args::finite(py, "a joint target", x)?;
                            }
                        }
                        Ok(target)
                    });
                    match decided {
                        Ok(Some(q)) => sent = q,
                        Ok(None) => {}
                        Err(e) => held = Some(e),
                    }
                    Waypoint { q: sent }
                });
            parts.last = sent;
            (result.map(|_| Closed::No), held)
        });
        if let Some(e) = held {
            return Err(e);
        }
        match result {
            Ok(Closed::No) => Ok(()),
            // Closed by this program, not lost: the error says which.
            Ok(Closed::Yes) => Err(errors::closed(py, "control loop")),
            Err(e) => Err(errors::rtde(py, e)),
        }
    }
}

/// Whether a cycle found the loop closed by `close()`.
enum Closed {
    Yes,
    No,
}

/// The clock `init_period` counts from.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Adds the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ServoLoop>()?;
    m.add_class::<Handshake>()?;
    Ok(())
}
