//! The controller's side of the protocol, without sockets: shared state (input ownership,
//! input values) and one [`Session`] per connection (protocol version, recipes,
//! running or paused), which turns each package a client sends into the packages a
//! controller sends back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rtde_core::fields::{
    Availability, ControllerVersion, Direction, Field, Generation, MAX_NAME_LIST_BYTES, lookup,
};
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, Frame, HEADER_LEN, MAX_PACKAGE_LEN, MessageLevel,
    ProtocolVersion, TextMessage, package_type,
};
use rtde_core::{RuntimeState, Value};
use rtde_robot_proto::primary::PrimaryMessage;

use crate::clock::Clock;
use crate::command_program::{CommandProgram, ProgramFaults};
use crate::fault::Fault;
use crate::io::IoState;
use crate::program::ServoProgram;
use crate::robot_program::Program;
use crate::robot_state::RobotState;
use crate::source::{OutputSource, Sample, Tick};
use crate::ticker::Ticker;
use rtde_kinematics::Arm;

/// The source name the simulator puts on its own text messages (protocol v2).
pub(crate) const TEXT_SOURCE: &str = "RTDE";

/// The simulator's configuration, fixed when it starts.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) version: ControllerVersion,
    pub(crate) generation: Generation,
    /// Control-loop ticks per second: 125 (CB3) or 500.
    pub(crate) loop_rate: u32,
    pub(crate) v1_only: bool,
    pub(crate) paced: bool,
    /// Paced connections start their own clock at tick 0 on their first START.
    pub(crate) clock_per_connection: bool,
    pub(crate) stall_timeout: Duration,
    pub(crate) faults: Vec<Fault>,
    /// When the simulator started: the controller's boot, for [`Fault::SlowBoot`].
    pub(crate) booted_at: Instant,
    /// Fields whose first version no source records are `NOT_FOUND`.
    pub(crate) refuse_unrecorded: bool,
    pub(crate) source: Arc<dyn OutputSource>,
    /// The clock thread a fleet shares; paced connections are streamed by it.
    pub(crate) ticker: Option<Arc<Ticker>>,
    /// What `get robot model` answers (`UR5`).
    pub(crate) robot_model: &'static str,
    /// The controller's clock: which tick is now, for the interfaces that stream on it.
    pub(crate) clock: Clock,
}

/// Who holds an input variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The connection with this id.
    Client(u64),
    /// An enabled fieldbus adapter (EtherNet/IP, PROFINET, Modbus).
    Fieldbus,
}

/// State every connection shares: the controller's inputs, who may write them, and the
/// robot program it runs on them.
#[derive(Debug, Default)]
pub(crate) struct Controller {
    pub(crate) io: IoState,
    owners: HashMap<&'static str, Owner>,
    program: Option<ProgramRun>,
    /// The robot's state machine, when the simulator models one (Dashboard server,
    /// script ports); without it the robot is always running, as before.
    pub(crate) robot: Option<RobotState>,
    /// [`Fault::ProtectiveStopAfter`]: how long a program plays before the stop.
    pub(crate) protective_stop_after: Option<Duration>,
    /// What a program started from a script port starts with.
    pub(crate) start: ProgramStart,
}

/// What a program started from a script port starts with: the simulator's arm, where it
/// stands, and the faults that stop the command program.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProgramStart {
    pub(crate) q: [f64; 6],
    pub(crate) arm: Arm,
    pub(crate) faults: ProgramFaults,
}

impl Default for ProgramStart {
    fn default() -> Self {
        ProgramStart {
            q: [0.0; 6],
            arm: Arm::UR5E,
            faults: ProgramFaults::default(),
        }
    }
}

/// The project's programs the simulator runs natively when a script port receives one
/// (see [`KNOWN_PROGRAMS`](crate::KNOWN_PROGRAMS)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnownProgram {
    /// `rtde_servo.script`: [`ServoProgram`].
    Servo,
    /// `rtde_command.script`: [`CommandProgram`], on the registers its text
    /// places.
    Command,
}

/// A robot program running on the controller, the name it was sent under, and the last
/// tick it ran.
#[derive(Debug)]
struct ProgramRun {
    program: Program,
    name: Option<String>,
    last_tick: Option<u64>,
}

/// The most ticks a program catches up in one go: a clock that jumped (a paused process)
/// restarts the program's count rather than stalling the connection.
const MAX_CATCH_UP_TICKS: u64 = 1000;

/// A catch-up longer than this many ticks means the simulator itself fell behind its clock
/// (a starved thread on a busy host): no client could have written during those ticks, so
/// they do not count against the client's watchdog. A decimated recipe's catch-up (at most
/// 125 Hz's four ticks on a 500 Hz loop) and a skipped package (its tick still runs) stay
/// below it.
const LATE_TICKS: u64 = 10;

impl ProgramRun {
    /// Runs the program through every tick up to `tick`, once each.
    fn advance(&mut self, io: &IoState, tick: u64, rate: u32) {
        let first = match self.last_tick {
            Some(last) if tick <= last => return,
            Some(last) if tick - last <= MAX_CATCH_UP_TICKS => last + 1,
            _ => tick,
        };
        let dt = 1.0 / f64::from(rate.max(1));
        let late = tick - first >= LATE_TICKS;
        for t in first..=tick {
            if late && t < tick {
                self.program.step_late(io, dt);
            } else {
                self.program.step(io, dt);
            }
        }
        self.last_tick = Some(tick);
    }
}

impl Controller {
    /// A controller whose enabled fieldbus adapter holds the reserved register ranges
    /// (int and double registers 0..=23, bit registers 0..=63).
    pub(crate) fn with_fieldbus(fieldbus: bool) -> Self {
        let mut c = Controller::default();
        if fieldbus {
            for f in rtde_core::fields::fields(Direction::Input) {
                if f.register().is_some_and(|r| r.is_reserved_for_fieldbus()) {
                    c.owners.insert(f.name(), Owner::Fieldbus);
                }
            }
        }
        c
    }

    /// Releases every input variable held by connection `id`.
    pub(crate) fn release(&mut self, id: u64) {
        self.owners.retain(|_, o| *o != Owner::Client(id));
    }

    pub(crate) fn install_program(&mut self, program: Program) {
        self.program = Some(ProgramRun {
            program,
            name: None,
            last_tick: None,
        });
    }

    /// Raises what is due on the robot: the protective stop of
    /// [`Fault::ProtectiveStopAfter`].
    pub(crate) fn update_robot(&mut self) {
        let (Some(robot), Some(after)) = (self.robot.as_mut(), self.protective_stop_after) else {
            return;
        };
        if robot.protective_stop_reason().is_none()
            && robot.playing_for().is_some_and(|t| t >= after)
        {
            robot.protective_stop(&format!(
                "the program played {after:?} (fault protective-stop-after)"
            ));
        }
    }

    /// Starts one of the project's programs from its `text`, replacing the one running, as
    /// a controller replaces its program with one sent to a script port.
    ///
    /// # Errors
    /// Why the program cannot run: a command program on registers no layout has.
    pub(crate) fn start_known_program(
        &mut self,
        kind: KnownProgram,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let ProgramStart { arm, faults, .. } = self.start;
        // The arm starts where it stands: no jump when a program takes it over.
        let q = self.program().map_or(self.start.q, Program::q);
        let program = match kind {
            KnownProgram::Servo => Program::Servo(ServoProgram::new(q)),
            KnownProgram::Command => {
                let layout = rtde_robot_proto::programs::command::layout_of(text).ok_or(
                    "its INT_BASE and DOUBLE_BASE lines place the registers where no layout \
                     of rtde-robot has them",
                )?;
                let program = CommandProgram::new(arm, q, layout).with_faults(faults);
                Program::Command(Box::new(program))
            }
        };
        self.install_program(program);
        if let Some(run) = &mut self.program {
            run.name = Some(name.to_owned());
        }
        Ok(())
    }

    /// A protective stop is the robot's, whoever raised it: one the command program meets
    /// (its fault flag) stops the robot's state machine, and one the robot meets (a fault,
    /// or [`Sim::protective_stop`](crate::Sim::protective_stop)) stops the program.
    fn share_protective_stop(&mut self, program_was_stopped: bool) {
        let (Some(robot), Some(run)) = (self.robot.as_mut(), self.program.as_mut()) else {
            return;
        };
        let Program::Command(program) = &mut run.program else {
            return;
        };
        let robot_stopped = robot.protective_stop_reason().is_some();
        if program.is_protective_stopped() && !program_was_stopped && !robot_stopped {
            robot.protective_stop("the command program's motion met a protective stop");
        } else if robot_stopped && !program.is_protective_stopped() {
            program.protective_stop("the robot is in a protective stop");
        }
    }

    /// One program state for every interface, whichever side changed it: a program that
    /// stopped itself (its watchdog, a handshake, an unreachable target, a fault) stops the
    /// robot's program, with the primary interface's `PROGRAM_XXX_STOPPED`; the robot's
    /// program stopped (the Dashboard's `stop`, a power-off, a restart of safety, `load`,
    /// a runtime exception) ends a program still running, and the arm stands where it was.
    /// A program that stopped itself stays, at rest, until another replaces it. A
    /// protective stop pauses the robot's program and is left as it is: both sides report
    /// it.
    pub(crate) fn share_program_state(&mut self) {
        let (Some(robot), Some(run)) = (self.robot.as_mut(), self.program.as_mut()) else {
            return;
        };
        if matches!(run.program, Program::Still(_)) {
            return;
        }
        match robot.program_state() {
            // A program that stopped itself brings the arm to rest and holds it there, and
            // stays to say why (`Sim::command_program`) until another replaces it.
            RuntimeState::Stopped if !run.program.has_stopped() => {
                let q = run.program.q();
                self.program = None;
                self.install_program(Program::Still(q));
            }
            RuntimeState::Playing if run.program.has_stopped() => {
                robot.stop_program();
                robot.tell_primary(PrimaryMessage::Key {
                    code: 0,
                    argument: 0,
                    title: "PROGRAM_XXX_STOPPED".into(),
                    text: run.name.clone().unwrap_or_default(),
                });
            }
            _ => {}
        }
    }

    /// Whether the program is a command program held by a protective stop.
    fn program_protective_stopped(&self) -> bool {
        matches!(
            self.program.as_ref().map(|run| &run.program),
            Some(Program::Command(p)) if p.is_protective_stopped()
        )
    }

    /// The robot program the controller runs, if any.
    pub(crate) fn program(&self) -> Option<&Program> {
        self.program.as_ref().map(|run| &run.program)
    }

    /// One cycle of the controller, up to `tick`: what is due on the robot, the program
    /// through every tick it has not run (once each, whoever asks: the controller's clock,
    /// or a connection sampling the tick), and the state every interface reports made one.
    pub(crate) fn tick(&mut self, tick: Tick) {
        self.update_robot();
        let was_stopped = self.program_protective_stopped();
        self.share_protective_stop(was_stopped);
        if let Some(run) = &mut self.program {
            run.advance(&self.io, tick.index(), tick.rate());
        }
        self.share_protective_stop(was_stopped);
        self.share_program_state();
    }

    /// Runs the program (if any) up to `tick`, then samples `source` at it into `out`.
    pub(crate) fn sample(
        &mut self,
        source: &dyn OutputSource,
        tick: Tick,
        fields: &[&'static Field],
        out: &mut [Value],
    ) -> Sample {
        self.tick(tick);
        let sample = match &mut self.program {
            Some(run) => source.sample_with_program(tick, fields, &self.io, &run.program, out),
            None => source.sample(tick, fields, &self.io, out),
        };
        if let Some(robot) = &self.robot {
            // The robot's state machine is the one state every interface reads: the
            // program's view of it (its runtime state, its protective stop) is shared into
            // it by `tick`, never reported beside it.
            for (field, slot) in fields.iter().zip(out.iter_mut()) {
                if let Some(v) = robot.output(field.name()) {
                    *slot = v;
                }
            }
        }
        sample
    }
}

/// Counters the simulator keeps for [`Stats`](crate::Stats).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) stalled: AtomicU64,
    pub(crate) data_packages: AtomicU64,
    pub(crate) input_packages: AtomicU64,
    /// Connections open now, with a condition variable signalled at every change.
    open: Mutex<u64>,
    open_changed: Condvar,
}

impl Counters {
    pub(crate) fn open(&self) -> u64 {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a connection in (`true`) or out, and wakes the waiters.
    pub(crate) fn count_open(&self, opened: bool) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        *open = if opened {
            *open + 1
        } else {
            open.saturating_sub(1)
        };
        self.open_changed.notify_all();
    }

    /// Waits until `n` connections are open; `false` if `timeout` passes first.
    pub(crate) fn wait_open(&self, n: u64, timeout: Duration) -> bool {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (open, _) = self
            .open_changed
            .wait_timeout_while(open, timeout, |open| *open != n)
            .unwrap_or_else(PoisonError::into_inner);
        *open == n
    }
}

/// Everything the simulator's threads share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: Config,
    controller: Mutex<Controller>,
    pub(crate) shutdown: AtomicBool,
    /// [`Sim::pause_stream`](crate::Sim::pause_stream): no output data package goes out.
    stream_held: AtomicBool,
    pub(crate) counters: Counters,
    /// A clone of every open connection's socket, to unblock its threads at shutdown.
    pub(crate) sockets: Mutex<HashMap<u64, std::net::TcpStream>>,
}

impl Shared {
    pub(crate) fn new(config: Config, controller: Controller) -> Self {
        Shared {
            config,
            controller: Mutex::new(controller),
            shutdown: AtomicBool::new(false),
            stream_held: AtomicBool::new(false),
            counters: Counters::default(),
            sockets: Mutex::new(HashMap::new()),
        }
    }

    /// The controller state. A thread that panicked while holding the lock cannot have
    /// left it half-updated in a way that matters to a simulator, so poisoning is ignored.
    pub(crate) fn controller(&self) -> MutexGuard<'_, Controller> {
        self.controller
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Holds every connection's output stream (`true`) or lets it go again.
    pub(crate) fn hold_stream(&self, held: bool) {
        self.stream_held.store(held, Ordering::Release);
    }

    pub(crate) fn is_stream_held(&self) -> bool {
        self.stream_held.load(Ordering::Acquire)
    }
}

/// An output recipe set up on a connection.
#[derive(Debug)]
pub(crate) struct OutputRecipe {
    /// The id sent in v2 data packages.
    pub(crate) id: u8,
    pub(crate) fields: Vec<&'static Field>,
    /// One package every `every` control-loop ticks.
    pub(crate) every: u64,
    /// The values of the last package, reused as the buffer for the next.
    pub(crate) values: Vec<Value>,
}

/// An input recipe set up on a connection.
#[derive(Debug)]
struct InputRecipe {
    fields: Vec<&'static Field>,
    payload_len: usize,
}

/// An encoded package to send, and what it answers.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The whole package, header included.
    pub(crate) bytes: Vec<u8>,
    /// For a reply, the type of the request it answers.
    pub(crate) reply_to: Option<u8>,
}

/// One connection's protocol state.
#[derive(Debug)]
pub(crate) struct Session {
    id: u64,
    version: ProtocolVersion,
    output: Option<OutputRecipe>,
    last_output_id: u8,
    inputs: HashMap<u8, InputRecipe>,
    next_input_id: u16,
    running: bool,
    warned_about_input: bool,
}

impl Session {
    /// A new connection, speaking protocol v1 until the client negotiates.
    pub(crate) fn new(id: u64) -> Self {
        Session {
            id,
            version: ProtocolVersion::V1,
            output: None,
            last_output_id: 0,
            inputs: HashMap::new(),
            next_input_id: 1,
            running: false,
            warned_about_input: false,
        }
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.version
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running
    }

    pub(crate) fn output(&self) -> Option<&OutputRecipe> {
        self.output.as_ref()
    }

    pub(crate) fn output_mut(&mut self) -> Option<&mut OutputRecipe> {
        self.output.as_mut()
    }

    /// Answers one package from the client, appending what to send to `out`.
    pub(crate) fn handle(&mut self, frame: Frame<'_>, shared: &Shared, out: &mut Vec<Outgoing>) {
        let msg = match ClientMessage::decode(frame, self.version) {
            Ok(msg) => msg,
            Err(e) => return self.undecodable(frame.kind, &e.to_string(), out),
        };
        match msg {
            ClientMessage::RequestProtocolVersion { version } => {
                let accepted = match ProtocolVersion::from_number(version) {
                    Some(ProtocolVersion::V2) if shared.config.v1_only => false,
                    Some(v) => {
                        self.version = v;
                        true
                    }
                    None => false,
                };
                self.reply(
                    frame.kind,
                    &ControllerMessage::ProtocolVersionReply { accepted },
                    out,
                );
            }
            ClientMessage::GetUrcontrolVersion => self.reply(
                frame.kind,
                &ControllerMessage::UrcontrolVersion(crate::fault::reported_version(
                    &shared.config.faults,
                    shared.config.version,
                )),
                out,
            ),
            ClientMessage::SetupOutputs { frequency, names } => {
                self.setup_outputs(frequency, names, shared, out);
            }
            ClientMessage::SetupInputs { names } => self.setup_inputs(names, shared, out),
            // The RTDE guide: START "will fail if e.g. an output package has not been
            // configured yet", and a client must subscribe to at least one output
            // (controller 5.22 still insists).
            ClientMessage::Start if self.output.is_none() => {
                self.text(
                    MessageLevel::Error,
                    "START refused: no output recipe is set up; send SETUP_OUTPUTS with at \
                     least one output first",
                    out,
                );
                self.reply(
                    frame.kind,
                    &ControllerMessage::StartReply { accepted: false },
                    out,
                );
            }
            ClientMessage::Start => {
                self.running = true;
                self.reply(
                    frame.kind,
                    &ControllerMessage::StartReply { accepted: true },
                    out,
                );
            }
            ClientMessage::Pause => {
                self.running = false;
                self.reply(
                    frame.kind,
                    &ControllerMessage::PauseReply { accepted: true },
                    out,
                );
            }
            ClientMessage::DataPackage { recipe_id, payload } => {
                self.input_data(recipe_id, payload, shared, out);
            }
            // A client's text goes to the controller's log; the simulator has none.
            ClientMessage::TextMessage(_) => {}
            // `ClientMessage` is non-exhaustive: a package type added to the codec later
            // is not something this controller knows.
            _ => self.text(
                MessageLevel::Warning,
                &format!("ignored {} package", package_type::name(frame.kind)),
                out,
            ),
        }
    }

    /// A package whose payload does not match its type: say so, and refuse what has a reply.
    fn undecodable(&mut self, kind: u8, why: &str, out: &mut Vec<Outgoing>) {
        match kind {
            package_type::DATA_PACKAGE => {
                if !self.warned_about_input {
                    self.warned_about_input = true;
                    self.text(MessageLevel::Error, why, out);
                }
            }
            package_type::TEXT_MESSAGE => {}
            package_type::SETUP_OUTPUTS | package_type::SETUP_INPUTS => {
                self.refuse_setup(kind, why, "", out);
            }
            _ => {
                self.text(MessageLevel::Error, why, out);
                let accepted = false;
                let reply = match kind {
                    package_type::REQUEST_PROTOCOL_VERSION => {
                        ControllerMessage::ProtocolVersionReply { accepted }
                    }
                    package_type::START => ControllerMessage::StartReply { accepted },
                    package_type::PAUSE => ControllerMessage::PauseReply { accepted },
                    // GET_URCONTROL_VERSION has no payload to get wrong.
                    _ => return,
                };
                self.reply(kind, &reply, out);
            }
        }
    }

    fn setup_outputs(
        &mut self,
        frequency: Option<f64>,
        names: &str,
        shared: &Shared,
        out: &mut Vec<Outgoing>,
    ) {
        const KIND: u8 = package_type::SETUP_OUTPUTS;
        let config = &shared.config;
        if self.running {
            return self.refuse_setup(
                KIND,
                "the output recipe cannot change while streaming; send PAUSE first",
                "",
                out,
            );
        }
        let names = match name_list(names) {
            Ok(names) => names,
            Err(why) => return self.refuse_setup(KIND, &why, "", out),
        };
        let loop_rate = f64::from(config.loop_rate);
        let every = match frequency {
            None => 1,
            // The RTDE guide's pacing rule, kept in one place for client and simulator.
            Some(f) if f.is_finite() && f > 0.0 && f <= loop_rate => {
                rtde_core::protocol::timing::ticks_per_package(loop_rate, f)
            }
            Some(f) => {
                let why = format!(
                    "output frequency {f} Hz is outside 0 < f <= {loop_rate} Hz, the range of {}",
                    config.generation
                );
                return self.refuse_setup(KIND, &why, "", out);
            }
        };
        // Kept apart from the decimation above: a source with data at one rate only (a
        // replayed recording) cannot serve a faster one.
        if let Some(max) = config.source.max_frequency() {
            let asked = frequency.unwrap_or(loop_rate);
            if asked > max * (1.0 + 1e-9) {
                let why = match frequency {
                    Some(f) => format!(
                        "output frequency {f} Hz is above the {max} Hz {} has data for",
                        config.source.name()
                    ),
                    None => format!(
                        "protocol v1 streams at the {loop_rate} Hz control-loop rate, above the \
                         {max} Hz {} has data for; use protocol v2 and ask for at most {max} Hz",
                        config.source.name()
                    ),
                };
                return self.refuse_setup(KIND, &why, "", out);
            }
        }
        let mut fields = Vec::with_capacity(names.len());
        let mut types = Vec::with_capacity(names.len());
        let mut problems = Vec::new();
        for name in &names {
            match resolve(Direction::Output, name, config) {
                Ok(f) if config.source.provides(f) => {
                    fields.push(f);
                    types.push(f.wire_type().as_str());
                }
                Ok(f) => {
                    problems.push(format!(
                        "`{}` is not provided by {}",
                        f.name(),
                        config.source.name()
                    ));
                    types.push(NOT_FOUND);
                }
                Err(why) => {
                    problems.push(why);
                    types.push(NOT_FOUND);
                }
            }
        }
        let types = types.join(",");
        if !problems.is_empty() {
            return self.refuse_setup(KIND, &problems.join("; "), &types, out);
        }
        let payload: usize = fields.iter().map(|f| f.wire_type().size()).sum();
        if HEADER_LEN + 1 + payload > MAX_PACKAGE_LEN {
            let why = format!(
                "a data package of this recipe would take {payload} bytes, more than a package holds"
            );
            return self.refuse_setup(KIND, &why, &types, out);
        }
        self.last_output_id = self.last_output_id.checked_add(1).unwrap_or(1);
        let id = self.last_output_id;
        let values = fields.iter().map(|f| Value::zero(f.wire_type())).collect();
        self.output = Some(OutputRecipe {
            id,
            fields,
            every,
            values,
        });
        let recipe_id = (self.version == ProtocolVersion::V2).then_some(id);
        self.reply(
            KIND,
            &ControllerMessage::SetupOutputsReply {
                recipe_id,
                types: &types,
            },
            out,
        );
    }

    fn setup_inputs(&mut self, names: &str, shared: &Shared, out: &mut Vec<Outgoing>) {
        const KIND: u8 = package_type::SETUP_INPUTS;
        let names = match name_list(names) {
            Ok(names) => names,
            Err(why) => return self.refuse_setup(KIND, &why, "", out),
        };
        let Ok(id) = u8::try_from(self.next_input_id) else {
            return self.refuse_setup(
                KIND,
                "every input recipe id (1 to 255) is taken on this connection",
                "",
                out,
            );
        };
        let mut controller = shared.controller();
        let mut fields = Vec::with_capacity(names.len());
        let mut types = Vec::with_capacity(names.len());
        let mut problems = Vec::new();
        for name in &names {
            match resolve(Direction::Input, name, &shared.config) {
                Ok(f) => match controller.owners.get(f.name()) {
                    Some(Owner::Client(other)) if *other != self.id => {
                        problems.push(format!("`{}` is in use by another RTDE client", f.name()));
                        types.push(IN_USE);
                    }
                    Some(Owner::Fieldbus) => {
                        problems.push(format!(
                            "`{}` is in use by an enabled fieldbus adapter (EtherNet/IP, PROFINET or Modbus)",
                            f.name()
                        ));
                        types.push(IN_USE);
                    }
                    _ => {
                        fields.push(f);
                        types.push(f.wire_type().as_str());
                    }
                },
                Err(why) => {
                    problems.push(why);
                    types.push(NOT_FOUND);
                }
            }
        }
        let types = types.join(",");
        if !problems.is_empty() {
            drop(controller);
            return self.refuse_setup(KIND, &problems.join("; "), &types, out);
        }
        for f in &fields {
            controller.owners.insert(f.name(), Owner::Client(self.id));
        }
        drop(controller);
        let payload_len = fields.iter().map(|f| f.wire_type().size()).sum();
        self.inputs.insert(
            id,
            InputRecipe {
                fields,
                payload_len,
            },
        );
        self.next_input_id += 1;
        self.reply(
            KIND,
            &ControllerMessage::SetupInputsReply {
                recipe_id: id,
                types: &types,
            },
            out,
        );
    }

    fn input_data(
        &mut self,
        recipe_id: u8,
        payload: &[u8],
        shared: &Shared,
        out: &mut Vec<Outgoing>,
    ) {
        let problem = match self.inputs.get(&recipe_id) {
            // Applied whether or not synchronisation is started: see the crate
            // documentation ("Inputs") for why.
            None => Some(format!(
                "ignored input data for recipe {recipe_id}, which is not set up on this connection"
            )),
            Some(r) if r.payload_len != payload.len() => Some(format!(
                "ignored input data for recipe {recipe_id}: {} bytes where the recipe takes {}",
                payload.len(),
                r.payload_len
            )),
            Some(r) => {
                let mut values = Vec::with_capacity(r.fields.len());
                let mut offset = 0;
                for f in &r.fields {
                    let t = f.wire_type();
                    let mut v = Value::zero(t);
                    // In bounds: the sizes add up to payload_len, checked above.
                    v.read_be(t, &payload[offset..]);
                    offset += t.size();
                    values.push((f.name(), v));
                }
                shared.controller().io.write(&values);
                shared
                    .counters
                    .input_packages
                    .fetch_add(1, Ordering::Relaxed);
                None
            }
        };
        // Once per connection: a client that gets this wrong does so at every cycle.
        if let Some(why) = problem
            && !self.warned_about_input
        {
            self.warned_about_input = true;
            self.text(MessageLevel::Error, &why, out);
        }
    }

    /// Refuses a setup: a text message saying why, then the reply with recipe id 0
    /// (where the reply has one) and `types` (one entry per name, or empty).
    fn refuse_setup(&mut self, kind: u8, why: &str, types: &str, out: &mut Vec<Outgoing>) {
        let what = if kind == package_type::SETUP_OUTPUTS {
            "output"
        } else {
            "input"
        };
        self.text(
            MessageLevel::Error,
            &format!("{what} setup refused: {why}"),
            out,
        );
        let reply = if kind == package_type::SETUP_OUTPUTS {
            ControllerMessage::SetupOutputsReply {
                recipe_id: (self.version == ProtocolVersion::V2).then_some(0),
                types,
            }
        } else {
            ControllerMessage::SetupInputsReply {
                recipe_id: 0,
                types,
            }
        };
        self.reply(kind, &reply, out);
    }

    fn reply(&self, request: u8, msg: &ControllerMessage<'_>, out: &mut Vec<Outgoing>) {
        if let Some(bytes) = encode(msg, self.version) {
            out.push(Outgoing {
                bytes,
                reply_to: Some(request),
            });
        }
    }

    /// Appends a text message in the connection's current protocol version.
    pub(crate) fn text(&self, level: MessageLevel, message: &str, out: &mut Vec<Outgoing>) {
        if let Some(bytes) = encode_text(level, message, TEXT_SOURCE, self.version) {
            out.push(Outgoing {
                bytes,
                reply_to: None,
            });
        }
    }
}

/// The setup-reply entry for a name the controller does not know.
const NOT_FOUND: &str = "NOT_FOUND";
/// The setup-reply entry for an input another client or a fieldbus holds.
const IN_USE: &str = "IN_USE";

/// Splits a setup's comma-separated names, tolerating one trailing comma.
fn name_list(names: &str) -> Result<Vec<&str>, String> {
    let trimmed = names.strip_suffix(',').unwrap_or(names);
    if trimmed.len() > MAX_NAME_LIST_BYTES {
        return Err(format!(
            "the variable names take {} bytes, more than the {MAX_NAME_LIST_BYTES} a setup may carry",
            trimmed.len()
        ));
    }
    if trimmed.is_empty() {
        return Err("the recipe names no variables".to_owned());
    }
    Ok(trimmed.split(',').collect())
}

/// The field a setup names, if the configured controller has it; else why not.
fn resolve(direction: Direction, name: &str, config: &Config) -> Result<&'static Field, String> {
    let version = config.version;
    let Some(f) = lookup(direction, name) else {
        return Err(format!("`{name}` is not an RTDE {direction} variable"));
    };
    match f.availability_on(version) {
        Availability::Available
            if config.refuse_unrecorded && !f.since_is_recorded(config.generation) =>
        {
            Err(format!(
                "`{name}`: no source records the first {} version with it, and this simulator \
                 refuses such fields",
                config.generation
            ))
        }
        Availability::Available => Ok(f),
        Availability::Since(min) => Err(format!(
            "`{name}` needs controller software {min} or later (this is {version})"
        )),
        Availability::NotOnGeneration(g) => Err(format!("`{name}` does not exist on {g}")),
        Availability::UnknownGeneration => Err(format!(
            "`{name}` is unknown to controller software {version}"
        )),
    }
}

/// Encodes a controller package; `None` only for a package the codec cannot encode,
/// which the simulator never builds (texts are cut to 255 bytes first).
pub(crate) fn encode(msg: &ControllerMessage<'_>, version: ProtocolVersion) -> Option<Vec<u8>> {
    let len = msg.encoded_len(version).ok()?;
    let mut bytes = vec![0; len];
    msg.encode(version, &mut bytes).ok()?;
    Some(bytes)
}

/// Encodes a text message, cutting the message and source to what v2 allows.
pub(crate) fn encode_text(
    level: MessageLevel,
    message: &str,
    source: &str,
    version: ProtocolVersion,
) -> Option<Vec<u8>> {
    let msg = ControllerMessage::TextMessage(TextMessage {
        level,
        message: truncate(message, 255).as_bytes(),
        source: match version {
            ProtocolVersion::V1 => &[],
            ProtocolVersion::V2 => truncate(source, 255).as_bytes(),
        },
    });
    encode(&msg, version)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_lists_tolerate_one_trailing_comma() {
        assert_eq!(name_list("a,b,").unwrap(), ["a", "b"]);
        assert_eq!(name_list("a,b").unwrap(), ["a", "b"]);
        assert_eq!(name_list("a,,").unwrap(), ["a", ""]);
        assert!(name_list("").is_err());
        assert!(name_list(",").is_err());
        let long = "x".repeat(MAX_NAME_LIST_BYTES);
        assert!(name_list(&long).is_ok());
        assert!(name_list(&format!("{long},")).is_ok());
        assert!(name_list(&format!("{long}y")).is_err());
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("abc", 255), "abc");
    }
}
