//! `rtde_rs.Client`: a connection over rtde-core's background driver. A reader thread
//! (Rust, never holding the GIL) drains the socket; Python takes the latest package, every
//! package in order, or many at once into numpy.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::fields::{ControllerVersion, WireType};
use rtde_core::writer::{AnalogDomain, IoConfig, IoWriter, WriteError};
use rtde_core::{
    Client as RustClient, ConnectOptions, DynamicRecipe, Error, InputHandle, ReconnectPolicy, Value,
};
use rtde_core::{DropReason, DroppedField};

use crate::lifecycle::lock;
use crate::pump::Pump;
use crate::values::Layout;
use crate::{args, errors, lifecycle};

/// How many queued packages a bulk read takes under one lock of the queue: the reader
/// thread waits at most this many decodes to queue the next package.
const BATCH: usize = 256;

/// The longest a wait runs without looking for Ctrl-C (`KeyboardInterrupt`).
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Why connecting failed, sorted out once the GIL is back.
enum Failure {
    Rtde(Error),
    Write(WriteError),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Rtde(e)
    }
}

impl From<WriteError> for Failure {
    fn from(e: WriteError) -> Self {
        Failure::Write(e)
    }
}

impl Failure {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Rtde(e) => errors::rtde(py, e),
            Failure::Write(e) => errors::write(py, e),
        }
    }
}

/// An input recipe set up at connect, sent by `Client.send` with exactly its fields.
#[derive(Debug)]
struct InputSlot {
    /// Its fields and their wire types, in recipe order: read with the GIL held, so
    /// outside the lock a send holds across its write.
    fields: Vec<(&'static str, WireType)>,
    /// The same names, sorted, to match a dict's keys.
    sorted: Vec<&'static str>,
    recipe: Mutex<DynamicRecipe>,
    handle: InputHandle,
}

impl InputSlot {
    fn new((recipe, handle): (DynamicRecipe, InputHandle)) -> Self {
        let fields: Vec<_> = recipe
            .fields()
            .iter()
            .map(|f| (f.name(), f.wire_type()))
            .collect();
        let mut sorted: Vec<_> = fields.iter().map(|(n, _)| *n).collect();
        sorted.sort_unstable();
        InputSlot {
            fields,
            sorted,
            recipe: Mutex::new(recipe),
            handle,
        }
    }
}

/// The output recipe of `fields`, checked against the `controller` version if one is given.
fn output_recipe(
    py: Python<'_>,
    fields: &[String],
    controller: Option<String>,
) -> PyResult<DynamicRecipe> {
    let outputs = DynamicRecipe::outputs(fields).map_err(|e| errors::recipe(py, &e))?;
    if let Some(version) = controller {
        let version: ControllerVersion = version
            .parse()
            .map_err(|e| errors::bad(py, format!("controller version `{version}`: {e}")))?;
        outputs
            .check_available_on(version)
            .map_err(|e| errors::rtde(py, e))?;
    }
    Ok(outputs)
}

/// One input recipe per group of names.
fn input_recipes(py: Python<'_>, inputs: Vec<InputNames>) -> PyResult<Vec<DynamicRecipe>> {
    let mut input_recipes = Vec::with_capacity(inputs.len());
    for names in inputs {
        let names = names.into_names();
        input_recipes.push(DynamicRecipe::inputs(&names).map_err(|e| errors::recipe(py, &e))?);
    }
    Ok(input_recipes)
}

/// The standard I/O (if `io`) and the registers asked for, as ranges.
fn io_config(
    py: Python<'_>,
    io: bool,
    int_registers: Option<(i64, i64)>,
    double_registers: Option<(i64, i64)>,
    bit_registers: Option<(i64, i64)>,
) -> PyResult<IoConfig> {
    let mut config = if io {
        IoConfig::standard()
    } else {
        IoConfig::new()
    };
    if let Some(r) = args::registers(py, "int_registers", int_registers)? {
        config = config.int_registers(r);
    }
    if let Some(r) = args::registers(py, "double_registers", double_registers)? {
        config = config.double_registers(r);
    }
    if let Some(r) = args::registers(py, "bit_registers", bit_registers)? {
        config = config.bit_registers(r);
    }
    Ok(config)
}

/// The reader thread's options.
fn spawn_options(
    py: Python<'_>,
    queue: usize,
    reconnect: Option<ReconnectPolicy>,
    staleness: Option<f64>,
    staleness_grace: f64,
    realtime_priority: Option<u8>,
    cpu: Option<usize>,
) -> PyResult<SpawnOptions> {
    let mut spawn = SpawnOptions::new()
        .name("rtde_rs-reader")
        .queue_capacity(queue);
    if let Some(policy) = reconnect {
        spawn = spawn.reconnect(policy);
    }
    if let Some(limit) = args::maybe_seconds(py, "staleness", staleness)? {
        spawn = spawn.staleness(
            limit,
            args::seconds(py, "staleness_grace", staleness_grace)?,
        );
    }
    if let Some(priority) = realtime_priority {
        spawn = spawn.realtime_priority(priority);
    }
    if let Some(cpu) = cpu {
        spawn = spawn.cpu_affinity(cpu);
    }
    Ok(spawn)
}

/// What connecting asks for, all checked before the connection is made.
struct Plan {
    addr: (String, u16),
    outputs: DynamicRecipe,
    frequency: Option<f64>,
    drop_unavailable: bool,
    inputs: Vec<DynamicRecipe>,
    io: Option<IoConfig>,
    connect: ConnectOptions,
    spawn: SpawnOptions,
}

/// What connecting made.
struct Connected {
    background: Background,
    outputs: DynamicRecipe,
    writer: Option<IoWriter>,
    inputs: Vec<(DynamicRecipe, InputHandle)>,
    frequency: f64,
    dropped: Vec<DroppedField>,
}

impl Plan {
    /// Connects, sets everything up, starts, and hands the link to the reader thread.
    fn run(mut self) -> Result<Connected, Failure> {
        let mut client = RustClient::connect((self.addr.0.as_str(), self.addr.1), self.connect)?;
        let frequency = self.frequency.unwrap_or_else(|| client.max_frequency());
        let dropped = if self.drop_unavailable {
            client.setup_outputs_dropping_unavailable(&mut self.outputs, frequency)?
        } else {
            client.setup_outputs(rtde_core::Recipe::spec(&self.outputs), frequency)?;
            Vec::new()
        };
        let writer = match &self.io {
            Some(config) => Some(IoWriter::setup(&mut client, config)?),
            None => None,
        };
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for recipe in self.inputs {
            let handle = client.setup_inputs(rtde_core::Recipe::spec(&recipe))?;
            inputs.push((recipe, handle));
        }
        client.start()?;
        let background = client.spawn(self.spawn)?;
        Ok(Connected {
            background,
            outputs: self.outputs,
            writer,
            inputs,
            frequency,
            dropped,
        })
    }
}

/// A connection to a controller's RTDE interface (port 30004), streaming `fields` at
/// `frequency` hertz (the controller's maximum by default: 500 on e-Series, 125 on CB3).
///
/// The fields are checked against the registry before anything is sent: an unknown name
/// raises `RecipeError` with the closest known name; a field the controller (the
/// connected one, or the version declared with `controller=`) lacks raises
/// `VersionTooOldError` with the version that has it; an input another writer holds
/// raises `SetupRefusedError` naming its likely owner.
///
/// A reader thread of its own drains the socket continuously and never takes the GIL;
/// every call that waits releases it.
///
/// Reading:
///   - `latest()`: the newest package as a dict, at once (None before the first);
///   - `recv(timeout=None)`, or iterating: every package in order;
///   - `read(n)` / `drain()`: many packages at once, one numpy array per field;
///   - `getter(name)`: a callable for one field's newest value (the fastest way).
///
/// Writing: the typed setters (`set_standard_digital_output`, `set_speed_slider`, ...;
/// with `io=True` and the register ranges), and `send(dict)` for the input recipes given
/// in `inputs`.
///
/// Example:
///
/// ```python
/// import rtde_rs
/// with rtde_rs.Sim() as sim, rtde_rs.Client(sim.host, ["timestamp", "actual_q"], port=sim.port) as robot:
///     first = robot.recv(timeout=1.0)
///     block = robot.read(100)            # {"timestamp": (100,), "actual_q": (100, 6)}
///     print(robot.latest()["actual_q"])
/// ```
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Client {
    background: Mutex<Option<Background>>,
    /// The in-order receiver: locked only with the GIL released; shared with an event
    /// loop's pump ([`Pump`]).
    ordered: Arc<Mutex<Receiver>>,
    /// The latest-package receiver: locked for a copy, never across a Python call.
    newest: Mutex<Receiver>,
    sender: Sender,
    writer: Option<IoWriter>,
    inputs: Vec<InputSlot>,
    pub(crate) layout: Layout,
    frequency: f64,
    controller: ControllerVersion,
    /// The fields `drop_unavailable` left out, and why.
    dropped: Vec<DroppedField>,
    /// An error a bulk read met after it had rows to return: raised by the next call.
    held: Mutex<Option<Error>>,
}

#[pymethods]
impl Client {
    // The port is RTDE_PORT, written out so that `help()` shows it.
    #[new]
    #[pyo3(signature = (
        host, fields, frequency=None, *, port=30004, drop_unavailable=false,
        inputs=None, io=false,
        int_registers=None, double_registers=None, bit_registers=None, controller=None,
        reconnect=None, staleness=None, staleness_grace=2.0, queue=1024,
        connect_timeout=5.0, read_timeout=1.0, realtime_priority=None, cpu=None,
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
    fn new(
        py: Python<'_>,
        host: String,
        fields: Vec<String>,
        frequency: Option<f64>,
        port: u16,
        drop_unavailable: bool,
        inputs: Option<Vec<InputNames>>,
        io: bool,
        int_registers: Option<(i64, i64)>,
        double_registers: Option<(i64, i64)>,
        bit_registers: Option<(i64, i64)>,
        controller: Option<String>,
        reconnect: Option<u32>,
        staleness: Option<f64>,
        staleness_grace: f64,
        queue: usize,
        connect_timeout: f64,
        read_timeout: f64,
        realtime_priority: Option<u8>,
        cpu: Option<usize>,
    ) -> PyResult<Self> {
        let outputs = output_recipe(py, &fields, controller)?;
        if let Some(f) = frequency {
            args::finite(py, "the frequency", f)?;
        }
        let input_recipes = input_recipes(py, inputs.unwrap_or_default())?;
        let config = io_config(py, io, int_registers, double_registers, bit_registers)?;
        let policy = reconnect.map(|attempts| ReconnectPolicy::new().attempts(attempts));
        let mut connect = ConnectOptions::new()
            .connect_timeout(args::seconds(py, "connect_timeout", connect_timeout)?)
            .read_timeout(Some(args::seconds(py, "read_timeout", read_timeout)?));
        if let Some(policy) = policy {
            connect = connect.reconnect(policy);
        }
        let spawn = spawn_options(
            py,
            queue,
            policy,
            staleness,
            staleness_grace,
            realtime_priority,
            cpu,
        )?;
        let plan = Plan {
            addr: (host, port),
            outputs,
            frequency,
            drop_unavailable,
            inputs: input_recipes,
            io: (!config.groups().is_empty()).then_some(config),
            connect,
            spawn,
        };
        let connected = py.detach(move || plan.run()).map_err(|f| f.into_py(py))?;
        let layout = Layout::new(py, &connected.outputs);
        let background = connected.background;
        Ok(Client {
            ordered: Arc::new(Mutex::new(background.receiver())),
            newest: Mutex::new(background.receiver()),
            sender: background.sender(),
            controller: background.controller_version(),
            background: Mutex::new(Some(background)),
            writer: connected.writer,
            inputs: connected.inputs.into_iter().map(InputSlot::new).collect(),
            layout,
            frequency: connected.frequency,
            dropped: connected.dropped,
            held: Mutex::new(None),
        })
    }

    /// The output fields, in recipe order (canonical names: `actual_TCP_pose`).
    #[getter]
    fn fields(&self) -> Vec<&'static str> {
        self.layout.slots.iter().map(|s| s.name).collect()
    }

    /// The fields left out by `drop_unavailable=True`: (name, why) pairs.
    #[getter]
    fn dropped(&self) -> Vec<(&'static str, String)> {
        self.dropped
            .iter()
            .map(|d| {
                let why = match d.reason {
                    DropReason::NotOnThisVersion(Some(v)) => format!("requires {v}"),
                    DropReason::NotOnThisVersion(None) => "not on this controller".to_owned(),
                    _ => "the controller answered NOT_FOUND".to_owned(),
                };
                (d.name, why)
            })
            .collect()
    }

    /// The output frequency set up, in hertz.
    #[getter]
    fn frequency(&self) -> f64 {
        self.frequency
    }

    /// The controller's software version, e.g. "5.21.0".
    #[getter]
    fn controller_version(&self) -> String {
        self.controller.to_string()
    }

    /// The newest package as a dict of field name to value, at once; None before the
    /// first. Never waits for a package.
    fn latest<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let copied = {
            let mut receiver = lock(&self.newest);
            receiver.latest().map(|p| p.map(<[u8]>::to_vec))
        };
        match copied.map_err(|e| errors::rtde(py, e))? {
            Some(payload) => Ok(Some(self.layout.to_dict(py, &payload)?)),
            None => Ok(None),
        }
    }

    /// A callable that returns the newest value of one output field (a float, an int, a
    /// list of six): what a loop that polls one field calls, at the cost of one copy.
    /// Raises `RtdeError` when called before the first package. With `typed=False`, codes
    /// come as plain ints instead of enum members (`RobotMode`).
    #[pyo3(signature = (name, typed=true))]
    fn getter(slf: Bound<'_, Self>, name: &str, typed: bool) -> PyResult<Getter> {
        let py = slf.py();
        let this = slf.get();
        let Some(index) = this.layout.position(name) else {
            return Err(errors::bad(
                py,
                format!(
                    "`{name}` is not an output field of this connection's recipe ({})",
                    this.fields().join(", ")
                ),
            ));
        };
        let receiver = lock(&this.newest).clone();
        Ok(Getter {
            client: slf.clone().unbind(),
            index,
            typed,
            receiver: Mutex::new(receiver),
        })
    }

    /// The next package in order as a dict, waiting up to `timeout` seconds (None: until
    /// one comes). Raises `RtdeTimeoutError` when none came, `StaleError` once per
    /// silence with a staleness limit, `ConnectionLostError` when the link is gone.
    #[pyo3(signature = (timeout=None))]
    fn recv<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyDict>> {
        self.raise_held(py)?;
        let timeout = args::maybe_seconds(py, "timeout", timeout)?;
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let payload = self.wait(py, deadline, timeout, |r, wait| {
            r.recv(Some(wait)).map(<[u8]>::to_vec)
        })?;
        self.layout.to_dict(py, &payload)
    }

    /// Up to `n` packages in order as numpy arrays: a dict of field name to an array with
    /// one row per package (`(n,)` for a scalar, `(n, 6)` float64 for a vector). Waits
    /// until `n` have come, or `timeout` seconds have passed (then fewer rows come back).
    /// An error after some rows returns the rows; the next call raises it.
    #[pyo3(signature = (n, timeout=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.raise_held(py)?;
        let timeout = args::maybe_seconds(py, "timeout", timeout)?;
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut columns = self.layout.columns(n);
        let mut rows = 0;
        while rows < n {
            let step = py.detach(|| {
                let mut receiver = lock(&self.ordered);
                let slice = Instant::now() + SIGNAL_CHECK;
                let until = deadline.map_or(slice, |d| d.min(slice));
                while rows < n {
                    // The backlog in batches under one lock each, then one package at a
                    // time as they arrive.
                    let batch = (n - rows).min(BATCH);
                    let layout = &self.layout;
                    let taken = receiver.recv_queued(batch, |p| layout.push(&mut columns, p))?;
                    rows += taken;
                    if taken > 0 {
                        continue;
                    }
                    let wait = until.saturating_duration_since(Instant::now());
                    match receiver.recv(Some(wait.max(Duration::from_nanos(1)))) {
                        Ok(payload) => {
                            self.layout.push(&mut columns, payload);
                            rows += 1;
                        }
                        Err(e) if e.is_timeout() => return Ok(()),
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            });
            match step {
                Ok(()) => {}
                Err(e) if rows > 0 => {
                    *lock(&self.held) = Some(e);
                    break;
                }
                Err(e) => return Err(errors::rtde(py, e)),
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            py.check_signals()?;
        }
        self.layout.to_arrays(py, columns)
    }

    /// Every package already queued, without waiting, as `read` returns them.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.raise_held(py)?;
        let (columns, end) = py.detach(|| {
            let mut receiver = lock(&self.ordered);
            let mut columns = self.layout.columns(0);
            let layout = &self.layout;
            loop {
                match receiver.recv_queued(BATCH, |p| layout.push(&mut columns, p)) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => return (columns, Some(e)),
                }
            }
            // A silence the staleness limit reports, once the queue is empty.
            match receiver.recv(Some(Duration::ZERO)) {
                Ok(payload) => {
                    self.layout.push(&mut columns, payload);
                    (columns, None)
                }
                Err(e) if e.is_timeout() => (columns, None),
                Err(e) => (columns, Some(e)),
            }
        });
        if let Some(e) = end {
            *lock(&self.held) = Some(e);
        }
        self.layout.to_arrays(py, columns)
    }

    /// The packages in order for an event loop, taken by a thread that never holds the
    /// GIL, at most `ahead` of the loop (`rtde_rs.aio.Client` iterates through it).
    fn _pump(slf: Bound<'_, Self>, ahead: usize) -> PyResult<Pump> {
        let receiver = Arc::clone(&slf.get().ordered);
        Pump::start(slf.unbind(), receiver, ahead).map_err(PyErr::from)
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.recv(py, None)
    }

    /// Sends one input package through the input recipe (given in `inputs`) whose fields
    /// are exactly the keys of `values`: `robot.send({"input_int_register_24": 7})`.
    fn send(&self, py: Python<'_>, values: &Bound<'_, PyDict>) -> PyResult<()> {
        let mut keys: Vec<String> = values.keys().extract()?;
        keys.sort();
        let slot = self
            .inputs
            .iter()
            .find(|s| s.sorted == keys)
            .ok_or_else(|| {
                errors::bad(
                    py,
                    format!(
                        "no input recipe of this connection has exactly the fields {keys:?}; \
                         give it in `inputs` when connecting"
                    ),
                )
            })?;
        let mut typed = Vec::with_capacity(keys.len());
        for (name, wire) in &slot.fields {
            let value = values
                .get_item(name)?
                .ok_or_else(|| errors::bad(py, *name))?;
            typed.push((*name, input_value(py, name, *wire, &value)?));
        }
        py.detach(|| {
            let mut recipe = lock(&slot.recipe);
            for (name, value) in typed {
                // The value was made for the field's own wire type.
                let _ = recipe.set(name, value);
            }
            self.sender.send(&slot.handle, &*recipe)
        })
        .map_err(|e| errors::rtde(py, e))
    }

    /// Standard digital output `index` (0..7) on or off; the others keep theirs.
    fn set_standard_digital_output(&self, py: Python<'_>, index: i64, on: bool) -> PyResult<()> {
        let index = args::index(py, "standard digital output", index)?;
        self.write(py, |w, s| w.standard_digital_output(s, index, on))
    }

    /// Configurable digital output `index` (0..7) on or off.
    fn set_configurable_digital_output(
        &self,
        py: Python<'_>,
        index: i64,
        on: bool,
    ) -> PyResult<()> {
        let index = args::index(py, "configurable digital output", index)?;
        self.write(py, |w, s| w.configurable_digital_output(s, index, on))
    }

    /// Tool digital output `index` (0 or 1) on or off.
    fn set_tool_digital_output(&self, py: Python<'_>, index: i64, on: bool) -> PyResult<()> {
        let index = args::index(py, "tool digital output", index)?;
        self.write(py, |w, s| w.tool_digital_output(s, index, on))
    }

    /// Standard analog output `index` (0 or 1) at `ratio` (0..1) of its range, as a
    /// "voltage" (0-10 V) or a "current" (4-20 mA), or in the domain it has (None).
    #[pyo3(signature = (index, ratio, domain=None))]
    fn set_analog_output(
        &self,
        py: Python<'_>,
        index: i64,
        ratio: f64,
        domain: Option<&str>,
    ) -> PyResult<()> {
        let index = args::index(py, "standard analog output", index)?;
        let domain = match domain {
            None => None,
            Some(d) if d.eq_ignore_ascii_case("voltage") => Some(AnalogDomain::Voltage),
            Some(d) if d.eq_ignore_ascii_case("current") => Some(AnalogDomain::Current),
            Some(d) => {
                return Err(errors::bad(
                    py,
                    format!("analog domain `{d}`: use \"voltage\", \"current\" or None"),
                ));
            }
        };
        self.write(py, |w, s| match domain {
            Some(domain) => w.analog_output(s, index, domain, ratio),
            None => w.analog_output_keep_domain(s, index, ratio),
        })
    }

    /// The speed slider at `fraction` (0..1).
    fn set_speed_slider(&self, py: Python<'_>, fraction: f64) -> PyResult<()> {
        self.write(py, |w, s| w.speed_slider(s, fraction))
    }

    /// `input_int_register_{index}` (24..47, set up with `int_registers`).
    fn set_int_register(&self, py: Python<'_>, index: i64, value: i32) -> PyResult<()> {
        let index = args::index(py, "int register", index)?;
        self.write(py, |w, s| w.int_register(s, index, value))
    }

    /// `input_double_register_{index}` (24..47, set up with `double_registers`).
    fn set_double_register(&self, py: Python<'_>, index: i64, value: f64) -> PyResult<()> {
        let index = args::index(py, "double register", index)?;
        let value = args::finite(py, "a double register's value", value)?;
        self.write(py, |w, s| w.double_register(s, index, value))
    }

    /// `input_bit_register_{index}` (64..127, set up with `bit_registers`).
    fn set_bit_register(&self, py: Python<'_>, index: i64, on: bool) -> PyResult<()> {
        let index = args::index(py, "bit register", index)?;
        self.write(py, |w, s| w.bit_register(s, index, on))
    }

    /// The counters: received, skipped (by the controller), lost (while the link was
    /// down), overflowed (the in-order queue was full), and the rest of rtde-core's
    /// `Stats`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.with_background(py, Background::stats)?;
        let dict = PyDict::new(py);
        for (k, v) in [
            ("received", stats.received),
            ("skipped", stats.skipped),
            ("lost", stats.lost),
            ("overflowed", stats.overflowed),
            ("discarded", stats.discarded),
            ("superseded", stats.superseded),
            ("reconnects", stats.reconnects),
            ("texts_dropped", stats.texts_dropped),
            ("events_dropped", stats.events_dropped),
            ("unknown_packages", stats.unknown_packages),
        ] {
            dict.set_item(k, v)?;
        }
        Ok(dict)
    }

    /// What the connection is doing: "running", "reconnecting", "closed", ...
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<String> {
        self.with_background(py, |b| b.state().to_string())
    }

    /// Whether no package came for the staleness limit (see `staleness`).
    #[getter]
    fn is_stale(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_background(py, Background::is_stale)
    }

    /// Whether the connection has ended (closed, or lost and not brought back).
    #[getter]
    fn is_closed(&self) -> bool {
        lock(&self.background)
            .as_ref()
            .is_none_or(Background::is_closed)
    }

    /// The events since the last call (state changes, lost links, reconnections), oldest
    /// first, as text.
    fn events(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_background(py, |b| {
            b.events().iter().map(|e| format!("{e:?}")).collect()
        })
    }

    /// The controller's text messages since the last call, oldest first.
    fn text_messages(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_background(py, |b| {
            b.text_messages().iter().map(ToString::to_string).collect()
        })
    }

    /// Pauses the stream, closes the connection and joins the reader thread. Safe to call
    /// twice; every call after it raises `ConnectionLostError`, saying the connection was
    /// closed by this program.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
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

    fn __repr__(&self) -> String {
        format!(
            "<rtde_rs.Client {} fields at {} Hz, controller {}>",
            self.layout.slots.len(),
            self.frequency,
            self.controller
        )
    }
}

impl Client {
    /// Raises the error a bulk read held back.
    fn raise_held(&self, py: Python<'_>) -> PyResult<()> {
        match lock(&self.held).take() {
            Some(e) => Err(errors::rtde(py, e)),
            None => Ok(()),
        }
    }

    /// Waits on the in-order receiver in slices, looking for Ctrl-C between them.
    fn wait<T: Send>(
        &self,
        py: Python<'_>,
        deadline: Option<Instant>,
        timeout: Option<Duration>,
        mut f: impl FnMut(&mut Receiver, Duration) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        loop {
            let result = py.detach(|| {
                let slice = Instant::now() + SIGNAL_CHECK;
                let until = deadline.map_or(slice, |d| d.min(slice));
                let wait = until.saturating_duration_since(Instant::now());
                f(&mut lock(&self.ordered), wait.max(Duration::from_nanos(1)))
            });
            match result {
                Ok(v) => return Ok(v),
                Err(e) if e.is_timeout() => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        let e = match e {
                            Error::Timeout {
                                waiting_for,
                                mid_frame,
                                ..
                            } => Error::Timeout {
                                after: timeout.unwrap_or_default(),
                                waiting_for,
                                mid_frame,
                            },
                            other => other,
                        };
                        return Err(errors::rtde(py, e));
                    }
                    py.check_signals()?;
                }
                Err(e) => return Err(errors::rtde(py, e)),
            }
        }
    }

    fn with_background<T>(&self, py: Python<'_>, f: impl FnOnce(&Background) -> T) -> PyResult<T> {
        match lock(&self.background).as_ref() {
            Some(b) => Ok(f(b)),
            None => Err(errors::closed(py, "connection")),
        }
    }

    /// One typed write through the writer, without the GIL.
    fn write(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&IoWriter, &mut Sender) -> Result<(), WriteError> + Send,
    ) -> PyResult<()> {
        let Some(writer) = &self.writer else {
            return Err(errors::bad(
                py,
                "this connection set up no writer: connect with io=True (and the register \
                 ranges it writes)",
            ));
        };
        let mut sender = self.sender.clone();
        py.detach(|| f(writer, &mut sender))
            .map_err(|e| errors::write(py, e))
    }
}

/// One input recipe's names: a single field or a list of them.
#[derive(FromPyObject)]
pub(crate) enum InputNames {
    One(String),
    Many(Vec<String>),
}

impl InputNames {
    fn into_names(self) -> Vec<String> {
        match self {
            InputNames::One(name) => vec![name],
            InputNames::Many(names) => names,
        }
    }
}

/// A Python value for an input field of `wire` type, checked: in range, finite.
fn input_value(
    py: Python<'_>,
    name: &str,
    wire: WireType,
    value: &Bound<'_, PyAny>,
) -> PyResult<Value> {
    let wrong =
        |what: &str| errors::bad(py, format!("`{name}` takes {what} ({wire}), not {value}"));
    let int = || -> PyResult<i128> { value.extract::<i128>().map_err(|_| wrong("an int")) };
    let float = || -> PyResult<f64> {
        let v: f64 = value.extract().map_err(|_| wrong("a number"))?;
        args::finite(py, name, v)
    };
    let six = || -> PyResult<[f64; 6]> {
        let v: [f64; 6] = value.extract().map_err(|_| wrong("six numbers"))?;
        for x in v {
            args::finite(py, name, x)?;
        }
        Ok(v)
    };
    let fit = |v: i128| wrong(&format!("an int in range; {v} does not fit"));
    Ok(match wire {
        WireType::Bool => Value::Bool(value.extract().map_err(|_| wrong("a bool"))?),
        WireType::Uint8 => {
            let v = int()?;
            Value::Uint8(u8::try_from(v).map_err(|_| fit(v))?)
        }
        WireType::Uint32 => {
            let v = int()?;
            Value::Uint32(u32::try_from(v).map_err(|_| fit(v))?)
        }
        WireType::Uint64 => {
            let v = int()?;
            Value::Uint64(u64::try_from(v).map_err(|_| fit(v))?)
        }
        WireType::Int32 => {
            let v = int()?;
            Value::Int32(i32::try_from(v).map_err(|_| fit(v))?)
        }
        WireType::Double => Value::Double(float()?),
        WireType::Vector6d => Value::Vector6d(six()?),
        WireType::Vector3d => {
            let v: [f64; 3] = value.extract().map_err(|_| wrong("three numbers"))?;
            for x in v {
                args::finite(py, name, x)?;
            }
            Value::Vector3d(v)
        }
        WireType::Vector6Int32 => {
            Value::Vector6Int32(value.extract().map_err(|_| wrong("six ints"))?)
        }
        WireType::Vector6Uint32 => {
            Value::Vector6Uint32(value.extract().map_err(|_| wrong("six ints"))?)
        }
    })
}

/// The newest value of one output field, as a callable: `q = robot.getter("actual_q")`,
/// then `q()` in a loop. Holds a receiver of its own, so callers on several threads do
/// not wait on one another's copies.
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Getter {
    client: Py<Client>,
    index: usize,
    typed: bool,
    receiver: Mutex<Receiver>,
}

#[pymethods]
impl Getter {
    fn __call__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.get();
        let slot = &client.layout.slots[self.index];
        let value = {
            let mut receiver = lock(&self.receiver);
            match receiver.latest() {
                Ok(Some(payload)) => Ok(slot.value(payload)),
                Ok(None) => Err(None),
                Err(e) => Err(Some(e)),
            }
        };
        match value {
            Ok(v) if self.typed => slot.to_py(py, v),
            Ok(v) => crate::values::plain(py, v),
            Err(Some(e)) => Err(errors::rtde(py, e)),
            Err(None) => Err(errors::new(
                py,
                errors::Class::Rtde,
                format!(
                    "no package has arrived yet, so `{}` has no value",
                    slot.name
                ),
            )),
        }
    }

    /// The field this getter reads.
    #[getter]
    fn name(&self) -> &'static str {
        self.client.get().layout.slots[self.index].name
    }

    fn __repr__(&self) -> String {
        format!("<rtde_rs.Getter {}>", self.name())
    }
}

/// Adds the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Client>()?;
    m.add_class::<Getter>()?;
    Ok(())
}
