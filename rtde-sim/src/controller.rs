//! The controller every connection shares, without sockets: its inputs and who may write
//! them, the robot program it runs on them, and the simulator's configuration and counters.
//! Each connection's own protocol state is in [`connection`](crate::connection).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rtde_core::fields::{ControllerVersion, Direction, Field, Generation};
use rtde_core::{RuntimeState, Value};
use rtde_robot_proto::primary::PrimaryMessage;

use crate::clock::Clock;
use crate::fault::Fault;
use crate::io::IoState;
use crate::motion_faults::{DueFault, MotionFaults};
use crate::own_program::Own;
use crate::own_program::state::{CommandProgramState, ServoProgramState};
use crate::robot_program::Program;
use crate::robot_state::RobotState;
use crate::script_program::ScriptProgram;
use crate::source::{OutputSource, Sample, Tick};
use crate::ticker::Ticker;
use rtde_kinematics::Arm;

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
    /// [`Fault::ProtectiveStopMidMove`] and [`Fault::RuntimeStopMidMove`]: how long the arm
    /// moves, under any program, before the stop.
    pub(crate) motion_faults: MotionFaults,
    /// What a program started from a script port starts with.
    pub(crate) start: ProgramStart,
}

/// What a program started from a script port starts with: the simulator's arm and where it
/// stands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProgramStart {
    pub(crate) q: [f64; 6],
    pub(crate) arm: Arm,
}

impl Default for ProgramStart {
    fn default() -> Self {
        ProgramStart {
            q: [0.0; 6],
            arm: Arm::UR5E,
        }
    }
}

/// The project's programs, which [`SimBuilder::command_program`](crate::SimBuilder::command_program)
/// and [`SimBuilder::servo_program`](crate::SimBuilder::servo_program) start as if from the
/// pendant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnownProgram {
    /// `rtde_servo.script`.
    Servo,
    /// `rtde_command.script`, on the registers its text places.
    Command,
}

impl KnownProgram {
    /// The program's name, as its file names it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            KnownProgram::Servo => "rtde_servo",
            KnownProgram::Command => "rtde_command",
        }
    }
}

/// A robot program running on the controller, the name it was sent under, and the last
/// tick it ran.
#[derive(Debug)]
struct ProgramRun {
    program: Program,
    name: Option<String>,
    /// Which of rtde's own programs it is, if it is one.
    own: Option<Own>,
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
    /// Runs the program through every tick up to `tick`, once each; `paused`, it holds
    /// through them instead. The ticks the arm moves count toward `faults`; the first that
    /// comes due ends the run there.
    fn advance(
        &mut self,
        io: &IoState,
        tick: u64,
        rate: u32,
        paused: bool,
        faults: &mut MotionFaults,
    ) -> Option<DueFault> {
        let first = match self.last_tick {
            Some(last) if tick <= last => return None,
            Some(last) if tick - last <= MAX_CATCH_UP_TICKS => last + 1,
            _ => tick,
        };
        let dt = 1.0 / f64::from(rate.max(1));
        let late = tick - first >= LATE_TICKS;
        for t in first..=tick {
            if paused {
                self.program.hold();
            } else if late && t < tick {
                self.program.step_late(io, dt);
            } else {
                self.program.step(io, dt);
            }
            let moving = !paused && self.program.qd().iter().any(|v| *v != 0.0);
            if let Some(due) = faults.count(moving, dt) {
                self.last_tick = Some(t);
                return Some(due);
            }
        }
        self.last_tick = Some(tick);
        None
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

    /// Who holds the input variable `name`, if anyone.
    pub(crate) fn owner(&self, name: &str) -> Option<Owner> {
        self.owners.get(name).copied()
    }

    /// Gives the input variable `name` to connection `id`.
    pub(crate) fn hold(&mut self, name: &'static str, id: u64) {
        self.owners.insert(name, Owner::Client(id));
    }

    /// Releases every input variable held by connection `id`.
    pub(crate) fn release(&mut self, id: u64) {
        self.owners.retain(|_, o| *o != Owner::Client(id));
    }

    /// Puts `program` in the slot, unnamed: the arm standing, or a program the simulator
    /// starts with ([`Controller::start_program`] names those).
    pub(crate) fn install_program(&mut self, program: Program) {
        self.program = Some(ProgramRun {
            program,
            name: None,
            own: None,
            last_tick: None,
        });
    }

    /// Starts `program`, which runs the text `text`, named `name`.
    pub(crate) fn start_program(&mut self, program: Program, name: &str, text: &str) {
        self.install_program(program);
        if let Some(run) = &mut self.program {
            run.name = Some(name.to_owned());
            run.own = Own::of_text(text);
        }
    }

    /// A snapshot of rtde's command program, if it runs.
    pub(crate) fn command_program(&self) -> Option<CommandProgramState> {
        let run = self.program.as_ref()?;
        let Some(Own::Command(layout)) = run.own else {
            return None;
        };
        let robot_stopped = self
            .robot
            .as_ref()
            .is_some_and(|r| r.protective_stop_reason().is_some());
        CommandProgramState::of(&run.program, layout, robot_stopped)
    }

    /// A snapshot of rtde's servo program, if it runs.
    pub(crate) fn servo_program(&self) -> Option<ServoProgramState> {
        let run = self.program.as_ref()?;
        (run.own == Some(Own::Servo))
            .then(|| ServoProgramState::of(&run.program))
            .flatten()
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

    /// Starts a client's own URScript program, checked against the controller's version.
    ///
    /// # Errors
    /// The first compile error, as the controller reports it: its line, its column and
    /// its text.
    pub(crate) fn start_script_program(
        &mut self,
        name: &str,
        text: &str,
        version: ControllerVersion,
    ) -> Result<(), (u32, u32, String)> {
        let q = self.program().map_or(self.start.q, Program::q);
        let program = ScriptProgram::compile(text, version, self.start.arm, q)?;
        self.start_program(Program::Script(Box::new(program)), name, text);
        Ok(())
    }

    /// A fault of [`MotionFaults`] come due, on whatever program runs: a protective stop
    /// is the robot's (it pauses the program, and stops rtde's command program), or the
    /// program's own without a robot state machine; a runtime stop ends the program, with
    /// a message that names it.
    fn raise(&mut self, due: DueFault) {
        let Some(run) = self.program.as_mut() else {
            return;
        };
        match due {
            DueFault::ProtectiveStop => {
                let reason = "the simulator's fault flag (a collision mid-move)";
                match self.robot.as_mut() {
                    Some(robot) => robot.protective_stop(reason),
                    None => run.program.protective_stop(reason),
                }
            }
            DueFault::RuntimeStop => {
                let name = run.name.as_deref().unwrap_or("the program");
                run.program.runtime_stop(&format!(
                    "{name}: the program was stopped (the simulator's fault flag)"
                ));
            }
        }
    }

    /// A protective stop is the robot's, whoever raised it: one a script meets (a line the
    /// arm cannot follow) or asks for (`protective_stop()`) stops the robot's state
    /// machine, which pauses the program; one the robot meets (a fault, or
    /// [`Sim::protective_stop`](crate::Sim::protective_stop)) pauses it likewise.
    fn share_protective_stop(&mut self) {
        let (Some(robot), Some(run)) = (self.robot.as_mut(), self.program.as_mut()) else {
            return;
        };
        if let Program::Script(script) = &mut run.program
            && let Some(why) = script.take_protective_stop()
        {
            robot.protective_stop(&why);
        }
    }

    /// A script's RTDE watchdog (`rtde_set_watchdog(…, "pause")`) pauses the robot's
    /// program, as the Dashboard's `pause` does: `play` goes on. Without the robot's state
    /// machine nothing could play it again, so the program stops.
    fn share_pause(&mut self) {
        let Some(run) = self.program.as_mut() else {
            return;
        };
        let Program::Script(script) = &mut run.program else {
            return;
        };
        let Some(why) = script.take_pause() else {
            return;
        };
        match self.robot.as_mut() {
            Some(robot) => {
                // A program the robot does not play (already paused or stopping) stays so.
                let _ = robot.pause();
            }
            None => script.runtime_stop(&format!(
                "{why}; with no robot state machine to play it again, it stopped"
            )),
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
                if let Program::Script(p) = &run.program
                    && let rtde_urscript::run::State::Failed(e) = p.state()
                {
                    robot.tell_primary(PrimaryMessage::RuntimeException {
                        line: i32::try_from(e.span.line).unwrap_or(i32::MAX),
                        column: i32::try_from(e.span.column).unwrap_or(i32::MAX),
                        text: format!("runtime_exception: {}", e.message),
                    });
                }
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

    /// The robot program the controller runs, if any.
    pub(crate) fn program(&self) -> Option<&Program> {
        self.program.as_ref().map(|run| &run.program)
    }

    /// One cycle of the controller, up to `tick`: what is due on the robot, the program
    /// through every tick it has not run (once each, whoever asks: the controller's clock,
    /// or a connection sampling the tick), and the state every interface reports made one.
    pub(crate) fn tick(&mut self, tick: Tick) {
        self.update_robot();
        self.share_protective_stop();
        self.share_pause();
        let paused = self
            .robot
            .as_ref()
            .is_some_and(|r| r.program_state() == RuntimeState::Paused);
        let due = self.program.as_mut().and_then(|run| {
            run.advance(
                &self.io,
                tick.index(),
                tick.rate(),
                paused,
                &mut self.motion_faults,
            )
        });
        if let Some(due) = due {
            self.raise(due);
        }
        self.share_protective_stop();
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
    pub(crate) script_port_skipped: AtomicU64,
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
