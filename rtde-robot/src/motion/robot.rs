//! The motion API's connection: a background RTDE driver, a keeper thread that reads every
//! package and changes the watchdog register, and the commands, each written once the
//! program took the one before.

use std::collections::VecDeque;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::session::InputHandle;
use rtde_core::{Client, ConnectOptions, StaticRecipe};
use rtde_kinematics::{Arm, compose, invert};
use rtde_robot_proto::ports::ScriptPort;
use rtde_robot_proto::programs::command::{
    Command, CommandLayout, Failure, ProgramState, int_in, int_out,
};

use crate::motion::command::{self, ForceMode, JointMove, LinearMove};
use crate::motion::error::MotionError;
use crate::motion::kinematics::Kinematics;
use crate::motion::limits;
use crate::motion::recipes::{
    LowerCommand, LowerState, Observed, Registers, UpperCommand, UpperState, observe,
};
use crate::script::{Program, ScriptSender};
use rtde_robot_proto::programs::command::command_program;

/// `runtime_state` PLAYING.
const PLAYING: u32 = 2;
/// `safety_mode` PROTECTIVE_STOP.
const PROTECTIVE_STOP: i32 = 3;
/// Below this joint speed (rad/s) on every joint the arm is steady.
pub const STEADY_SPEED: f64 = 1e-3;

/// Where the command program comes from.
///
/// ```no_run
/// use rtde_robot::motion::{MotionOptions, ProgramSource, Robot};
/// use rtde_robot::script::ScriptSender;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let host = "192.168.1.10".parse()?; // an example address
/// let send = ProgramSource::Send(ScriptSender::new(host));
/// let robot = Robot::connect((host, 30004), MotionOptions::new().source(send))?;
/// # let _ = robot; Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum ProgramSource {
    /// Attach to the command program already running on the controller: installed from
    /// the pendant (`rtde_command.script`, its header says how) and playing, or
    /// the simulator's `SimBuilder::command_program`.
    #[default]
    Installed,
    /// Send the command program, on the registers of the layout in use
    /// ([`command_program`](super::command_program)), through this sender (which checks
    /// remote control and the robot's state through the Dashboard server first), wait
    /// until it plays, then attach.
    Send(ScriptSender),
}

/// How [`Robot::connect`] connects.
///
/// ```
/// use rtde_robot_proto::programs::command::CommandLayout;
/// use rtde_robot::motion::{Arm, MotionOptions};
/// let options = MotionOptions::new().arm(Arm::UR10E).layout(CommandLayout::LOWER);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct MotionOptions {
    layout: CommandLayout,
    arm: Option<Arm>,
    primary_port: Option<u16>,
    source: ProgramSource,
    connect: ConnectOptions,
    timeout: Duration,
}

impl Default for MotionOptions {
    fn default() -> Self {
        MotionOptions {
            layout: CommandLayout::UPPER,
            arm: None,
            primary_port: Some(ScriptPort::Primary.default_port()),
            source: ProgramSource::Installed,
            connect: ConnectOptions::new().read_timeout(Some(Duration::from_secs(2))),
            timeout: Duration::from_secs(60),
        }
    }
}

impl MotionOptions {
    /// The defaults: the upper register range, a UR5e, the installed program, 60 s per
    /// command.
    #[must_use]
    pub fn new() -> Self {
        MotionOptions::default()
    }

    /// The registers the program uses.
    #[must_use]
    pub fn layout(mut self, layout: CommandLayout) -> Self {
        self.layout = layout;
        self
    }

    /// The arm, named: [`Robot::connect`] refuses a controller whose primary interface
    /// says it is another model, and computes with this model's nominal table when the
    /// controller's calibration cannot be read. Unnamed (the default), the arm is the
    /// controller's, or a UR5e when it cannot be read.
    #[must_use]
    pub fn arm(mut self, arm: Arm) -> Self {
        self.arm = Some(arm);
        self
    }

    /// Where to read the controller's calibrated kinematics: its primary interface's
    /// port on the same host (30001 by default), or `None` to compute with the nominal
    /// table of [`arm`](Self::arm). [`Robot::kinematics`] says which it uses.
    #[must_use]
    pub fn primary_port(mut self, port: Option<u16>) -> Self {
        self.primary_port = port;
        self
    }

    /// Where the program comes from.
    #[must_use]
    pub fn source(mut self, source: ProgramSource) -> Self {
        self.source = source;
        self
    }

    /// The RTDE connection's options.
    #[must_use]
    pub fn connect_options(mut self, options: ConnectOptions) -> Self {
        self.connect = options;
        self
    }

    /// How long a blocking command, or [`MoveHandle::wait`], waits for the robot.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// Where a command left the arm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    /// `actual_q`, rad.
    pub q: [f64; 6],
    /// `actual_TCP_pose`.
    pub tcp_pose: [f64; 6],
}

/// The arm and the program as the last package said.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotState {
    /// The controller's `timestamp`, s.
    pub timestamp: f64,
    /// `actual_q`.
    pub q: [f64; 6],
    /// `actual_qd`.
    pub qd: [f64; 6],
    /// `actual_TCP_pose`.
    pub tcp_pose: [f64; 6],
    /// The current move's progress, 0 to 1.
    pub progress: f64,
    /// The program's state.
    pub program: ProgramState,
    /// Whether every joint is slower than [`STEADY_SPEED`].
    pub steady: bool,
}

/// What the handles and the keeper share.
#[derive(Debug)]
struct Link {
    state: Mutex<LinkState>,
    changed: Condvar,
    sender: Sender,
    input: InputHandle,
    layout: CommandLayout,
    background: Mutex<Option<Background>>,
    /// The controller's text messages so far; apart from `state`, which is locked while
    /// they are read.
    texts: Mutex<Vec<String>>,
    timeout: Duration,
}

#[derive(Debug)]
struct LinkState {
    registers: Registers,
    watchdog: i32,
    last_seq: i32,
    observed: Observed,
    ended: Option<String>,
    /// [`Robot::close`] (or the drop) has begun: nothing more is sent or waited for.
    closed: bool,
    /// The commands [`Robot::close`] cut short (sent, not finished when it stopped the arm).
    cut_short: Option<std::ops::RangeInclusive<i32>>,
    /// The moves a stop cut short: sent, not finished when the stop was sent.
    interrupted: Vec<std::ops::RangeInclusive<i32>>,
    /// Where each command finished, newest last: a handle's result is its own, kept after
    /// later commands. At most [`FINISHED_KEPT`].
    finished: VecDeque<Finished>,
    /// The last command whose end is recorded in `finished`.
    recorded: i32,
}

/// Where a command finished.
#[derive(Clone, Copy, Debug)]
struct Finished {
    seq: i32,
    /// The package in which the program's DONE register reached it, or, while the arm
    /// still moved on its own then (a stop decelerating, the last move settling), the
    /// first package with the arm still.
    reached: Reached,
    /// Whether `reached` is final: the arm was still, or a newer command moved it.
    settled: bool,
}

/// How many finished commands' ends are kept for their handles.
const FINISHED_KEPT: usize = 1024;

impl LinkState {
    /// Records where the commands up to the program's DONE register finished, from the
    /// package `o`.
    fn record_finished(&mut self, o: &Observed) {
        let done = o.ints[usize::from(int_out::DONE)];
        let accepted = o.ints[usize::from(int_out::ACCEPTED)];
        let moving = o.ints[usize::from(int_out::STATE)] == ProgramState::Moving.to_register();
        let reached = Reached {
            q: o.q,
            tcp_pose: o.tcp_pose,
        };
        // The arm moves on its own (no newer command than the finished ones moves it): the
        // ends are where it comes to rest.
        let settled = !(moving && accepted <= done);
        for last in self.finished.iter_mut().rev() {
            if last.settled {
                break;
            }
            last.reached = reached;
            last.settled = settled;
        }
        while self.recorded < done {
            let seq = self.recorded.wrapping_add(1);
            if self.finished.len() == FINISHED_KEPT {
                self.finished.pop_front();
            }
            self.finished.push_back(Finished {
                seq,
                reached,
                settled,
            });
            self.recorded = seq;
        }
    }

    /// Where command `seq` finished, once final (or at once, without `until_still`).
    fn finished(&self, seq: i32, until_still: bool) -> Option<Reached> {
        self.finished
            .iter()
            .rev()
            .find(|f| f.seq == seq && (f.settled || !until_still))
            .map(|f| f.reached)
    }
}

impl Link {
    fn lock(&self) -> MutexGuard<'_, LinkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn send(&self, registers: &Registers) -> Result<(), rtde_core::Error> {
        if self.layout == CommandLayout::LOWER {
            self.sender
                .send(&self.input, &LowerCommand::from(*registers))
        } else {
            self.sender
                .send(&self.input, &UpperCommand::from(*registers))
        }
    }

    /// The controller's text messages so far.
    fn texts(&self) -> Vec<String> {
        let drained: Vec<String> = self
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|b| b.text_messages().into_iter().map(|t| t.message).collect())
            .unwrap_or_default();
        let mut texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        texts.extend(drained);
        texts.clone()
    }

    /// The program's words for why it stopped, or `fallback`.
    fn said(&self, fallback: &str) -> String {
        self.texts()
            .into_iter()
            .rev()
            .find(|t| t.contains("rtde_command"))
            .unwrap_or_else(|| fallback.to_owned())
    }

    /// The robot's verdict on the state `o`: an error once the program cannot go on.
    fn verdict(&self, o: &Observed) -> Option<MotionError> {
        if o.safety_mode == PROTECTIVE_STOP {
            return Some(MotionError::ProtectiveStop {
                message: self.said("safety_mode is PROTECTIVE_STOP"),
            });
        }
        let failure = Failure::from_register(o.ints[usize::from(int_out::FAILURE)]);
        let stopped = o.runtime_state != PLAYING
            || ProgramState::from_register(o.ints[usize::from(int_out::STATE)])
                == ProgramState::Stopped;
        if !stopped {
            return None;
        }
        let message = self.said(&failure.to_string());
        Some(match failure {
            Failure::Watchdog => MotionError::Watchdog { message },
            Failure::Unreachable => MotionError::TargetUnreachable { message },
            Failure::None if o.runtime_state == PLAYING => return None,
            Failure::None => MotionError::ProgramStopped {
                message: self.said("runtime_state is STOPPED"),
            },
            _ => MotionError::ProgramStopped { message },
        })
    }

    /// Writes a command once the program took the one before; its sequence number.
    fn command(&self, mut registers: Registers) -> Result<i32, MotionError> {
        let deadline = Instant::now() + self.timeout;
        let mut state = self.lock();
        loop {
            if state.closed {
                return Err(MotionError::Closed);
            }
            if let Some(e) = &state.ended {
                return Err(MotionError::ProgramStopped {
                    message: format!("the RTDE link ended: {e}"),
                });
            }
            let observed = state.observed;
            if observed.ints[usize::from(int_out::ACCEPTED)] == state.last_seq {
                break;
            }
            if let Some(e) = self.verdict(&observed) {
                return Err(e);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(MotionError::Timeout {
                    seq: state.last_seq,
                    waited: self.timeout,
                });
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let seq = state.last_seq.wrapping_add(1);
        registers.ints[usize::from(int_in::SEQUENCE)] = seq;
        registers.ints[usize::from(int_in::WATCHDOG)] = state.watchdog;
        state.registers = registers;
        state.last_seq = seq;
        // Under the lock: the keeper's next write carries the same command.
        self.send(&registers)?;
        Ok(seq)
    }

    /// Waits until command `seq` is finished, and with `until_still` until the program's
    /// motion has ended too (a move stopped by `stop_j` ends where the arm rests); where
    /// the arm is then.
    fn wait_done(
        &self,
        seq: i32,
        until_still: bool,
        timeout: Duration,
    ) -> Result<Reached, MotionError> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            if state
                .cut_short
                .as_ref()
                .is_some_and(|cut| cut.contains(&seq))
            {
                return Err(MotionError::Closed);
            }
            if let Some(reached) = state.finished(seq, until_still) {
                return if state.interrupted.iter().any(|r| r.contains(&seq)) {
                    Err(MotionError::Interrupted { at: reached })
                } else {
                    Ok(reached)
                };
            }
            let o = state.observed;
            let (accepted, done) = (
                o.ints[usize::from(int_out::ACCEPTED)],
                o.ints[usize::from(int_out::DONE)],
            );
            let moving = o.ints[usize::from(int_out::STATE)] == ProgramState::Moving.to_register();
            // Older than the ends kept: where the arm is once it is still.
            let forgotten = state.finished.front().is_some_and(|f| seq < f.seq);
            if forgotten && accepted >= seq && done >= seq && !(until_still && moving) {
                return Ok(Reached {
                    q: o.q,
                    tcp_pose: o.tcp_pose,
                });
            }
            if let Some(e) = self.verdict(&o) {
                return Err(e);
            }
            if state.closed {
                return Err(MotionError::Closed);
            }
            if let Some(e) = &state.ended {
                return Err(MotionError::ProgramStopped {
                    message: format!("the RTDE link ended: {e}"),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(MotionError::Timeout {
                    seq,
                    waited: timeout,
                });
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A robot running the command program, driven by typed commands; see the
/// [module](crate::motion) documentation.
#[derive(Debug)]
pub struct Robot {
    link: Arc<Link>,
    kinematics: Kinematics,
    /// Where and how it connected, for [`Robot::recover`].
    addr: SocketAddr,
    options: MotionOptions,
    tcp: Mutex<[f64; 6]>,
    stop: Arc<AtomicBool>,
    keeper: Option<JoinHandle<()>>,
}

/// A command under way: [`MoveHandle::wait`] for where it left the arm.
#[derive(Debug)]
pub struct MoveHandle {
    link: Arc<Link>,
    seq: i32,
    /// Whether `wait` also waits for the arm to rest (moves and stops).
    until_still: bool,
}

impl MoveHandle {
    /// The command's sequence number.
    #[must_use]
    pub fn seq(&self) -> i32 {
        self.seq
    }

    /// Whether the program has finished the command.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.link.lock().observed.ints[usize::from(int_out::DONE)] >= self.seq
    }

    /// The progress of the move under way, 0 to 1.
    #[must_use]
    pub fn progress(&self) -> f64 {
        self.link.lock().observed.progress
    }

    /// Waits for the command to finish, up to the connection's timeout.
    ///
    /// # Errors
    /// [`MotionError::ProtectiveStop`], [`MotionError::Watchdog`],
    /// [`MotionError::ProgramStopped`], [`MotionError::TargetUnreachable`] in the
    /// controller's words; [`MotionError::Timeout`].
    pub fn wait(self) -> Result<Reached, MotionError> {
        self.link
            .wait_done(self.seq, self.until_still, self.link.timeout)
    }

    /// As [`MoveHandle::wait`], up to `timeout`.
    ///
    /// # Errors
    /// As [`MoveHandle::wait`].
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Reached, MotionError> {
        self.link.wait_done(self.seq, self.until_still, timeout)
    }
}

impl Robot {
    /// Connects to the controller at `addr` (RTDE's port, 30004), sets up the layout's
    /// recipes, and attaches to the command program.
    ///
    /// # Errors
    /// [`MotionError::Script`] when the program was to be sent and did not start (each
    /// refused precondition, compile error or runtime exception is its own error);
    /// [`MotionError::Rtde`] when the link or a recipe fails (another client holding the
    /// registers is named); [`MotionError::ProgramStopped`] when no program is playing.
    pub fn connect(addr: impl ToSocketAddrs, options: MotionOptions) -> Result<Robot, MotionError> {
        let addr = addr
            .to_socket_addrs()
            .map_err(|e| MotionError::Invalid(format!("the controller's address: {e}")))?
            .next()
            .ok_or_else(|| {
                MotionError::Invalid("the controller's address resolves to none".into())
            })?;
        let kinematics = kinematics_of(addr, &options)?;
        if let ProgramSource::Send(sender) = &options.source {
            let program = Program::new(&command_program(options.layout))
                .map_err(|e| MotionError::Invalid(e.to_string()))?;
            sender.send(&program)?;
        }
        let mut client = Client::connect(addr, options.connect.clone())?;
        let frequency = client.max_frequency();
        let layout = options.layout;
        let (outputs, inputs) = if layout == CommandLayout::LOWER {
            (LowerState::SPEC, LowerCommand::SPEC)
        } else {
            (UpperState::SPEC, UpperCommand::SPEC)
        };
        client.setup_outputs(outputs, frequency)?;
        let input = client.setup_inputs(inputs)?;
        client.start()?;
        let background =
            client.spawn(SpawnOptions::new().name("rtde-motion").queue_capacity(64))?;
        let mut receiver = background.receiver();
        let first = observe(layout, receiver.recv(Some(Duration::from_secs(2)))?)?;
        let accepted = first.ints[usize::from(int_out::ACCEPTED)];
        let mut registers = Registers::default();
        registers.ints[usize::from(int_in::SEQUENCE)] = accepted;
        let link = Arc::new(Link {
            state: Mutex::new(LinkState {
                registers,
                watchdog: 0,
                last_seq: accepted,
                observed: first,
                ended: None,
                closed: false,
                cut_short: None,
                interrupted: Vec::new(),
                finished: VecDeque::new(),
                recorded: accepted,
            }),
            changed: Condvar::new(),
            sender: background.sender(),
            input,
            layout,
            background: Mutex::new(Some(background)),
            texts: Mutex::new(Vec::new()),
            timeout: options.timeout,
        });
        if first.runtime_state != PLAYING {
            let robot = Robot::with_keeper(link, receiver, kinematics, addr, options);
            let message = robot.link.said(
                "runtime_state is not PLAYING: start rtde_command.script on the pendant first",
            );
            robot.close()?;
            return Err(MotionError::ProgramStopped { message });
        }
        Ok(Robot::with_keeper(
            link, receiver, kinematics, addr, options,
        ))
    }

    fn with_keeper(
        link: Arc<Link>,
        receiver: Receiver,
        kinematics: Kinematics,
        addr: SocketAddr,
        options: MotionOptions,
    ) -> Robot {
        let stop = Arc::new(AtomicBool::new(false));
        let keeper = {
            let (link, stop) = (Arc::clone(&link), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("rtde-motion-keeper".into())
                .spawn(move || keep(&link, receiver, &stop))
                .ok()
        };
        Robot {
            link,
            kinematics,
            addr,
            options,
            tcp: Mutex::new([0.0; 6]),
            stop,
            keeper,
        }
    }

    /// Carries on after the robot's verdict (a protective stop once unlocked, a watchdog
    /// stop, an unreachable target, a stopped program) or a lost link: closes this session
    /// and connects again to the same controller with the same options, sending the
    /// command program again with [`ProgramSource::Send`] (it replaces the stopped one)
    /// or attaching to the one playing with [`ProgramSource::Installed`]. ur_rtde's
    /// `reconnect` and `reuploadScript` in one call.
    ///
    /// ```
    /// use rtde_robot::motion::{JointMove, MotionError, MotionOptions, Robot};
    ///
    /// # fn main() -> Result<(), MotionError> {
    /// let sim = rtde_sim::Sim::builder().command_program().controller_version("3.15.8").start().unwrap();
    /// let robot = Robot::connect(sim.addr(), MotionOptions::new())?;
    /// // Whatever stopped the session, the same options start the next one.
    /// let robot = robot.recover()?;
    /// robot.move_j(JointMove::to([0.1, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(2.0))?;
    /// robot.close()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Robot::connect`]: a precondition the controller still fails (a protective stop
    /// not yet unlocked) is its own error, and nothing moves.
    pub fn recover(self) -> Result<Robot, MotionError> {
        let (addr, options) = (self.addr, self.options.clone());
        // The session is over whatever it says on the way out: its verdict is known.
        let _ = self.close();
        Robot::connect(addr, options)
    }

    /// The arm the robot computes poses with, and whether it is the controller's
    /// calibrated one or a nominal table (and why).
    ///
    /// ```
    /// use rtde_robot::motion::{Kinematics, MotionOptions, Robot};
    ///
    /// let sim = rtde_sim::Sim::builder()
    ///     .command_program()
    ///     .controller_version("3.15.8")
    ///     .start()
    ///     .unwrap();
    /// // This simulator serves no primary interface: the nominal table, and why.
    /// let options = MotionOptions::new().arm(rtde_sim::Arm::UR5);
    /// let robot = Robot::connect(sim.addr(), options.primary_port(Some(1))).unwrap();
    /// assert!(matches!(robot.kinematics(), Kinematics::Nominal { .. }));
    /// assert!(robot.kinematics().to_string().starts_with("the nominal UR5 table"));
    /// robot.close().unwrap();
    /// ```
    #[must_use]
    pub fn kinematics(&self) -> &Kinematics {
        &self.kinematics
    }

    /// The arm and the program as the last package said.
    #[must_use]
    pub fn state(&self) -> RobotState {
        let o = self.link.lock().observed;
        RobotState {
            timestamp: o.timestamp,
            q: o.q,
            qd: o.qd,
            tcp_pose: o.tcp_pose,
            progress: o.progress,
            program: ProgramState::from_register(o.ints[usize::from(int_out::STATE)]),
            steady: o.qd.iter().all(|v| v.abs() < STEADY_SPEED),
        }
    }

    /// The joint solution of the TCP pose `pose` nearest `near` (the current joints when
    /// `None`), with the TCP offset given to [`Robot::set_tcp`]: ur_rtde's
    /// `getInverseKinematics`, computed on the host.
    ///
    /// # Errors
    /// [`MotionError::OutOfReach`].
    pub fn inverse_kinematics(
        &self,
        pose: &[f64; 6],
        near: Option<[f64; 6]>,
    ) -> Result<[f64; 6], MotionError> {
        let near = near.unwrap_or_else(|| self.state().q);
        let flange = compose(pose, &invert(&self.tcp()));
        Ok(self.kinematics.arm().inverse_nearest(&flange, &near)?)
    }

    fn tcp(&self) -> [f64; 6] {
        *self.tcp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves to joint positions, blocking until the arm is there.
    ///
    /// # Errors
    /// A refusal naming the value and its limit, with nothing sent; the robot's verdicts of
    /// [`MoveHandle::wait`].
    pub fn move_j(&self, target: JointMove) -> Result<Reached, MotionError> {
        self.move_j_async(target)?.wait()
    }

    /// Starts a move to joint positions and returns at once.
    ///
    /// # Errors
    /// As [`Robot::move_j`], for what happens before the program takes the command.
    pub fn move_j_async(&self, target: JointMove) -> Result<MoveHandle, MotionError> {
        target.check()?;
        self.handle(target.registers())
    }

    /// Moves the TCP along a straight line to a pose, blocking until it is there.
    ///
    /// # Errors
    /// As [`Robot::move_j`]; [`MotionError::OutOfReach`] for a target no joint vector
    /// reaches, with nothing sent.
    pub fn move_l(&self, target: LinearMove) -> Result<Reached, MotionError> {
        self.move_l_async(target)?.wait()
    }

    /// Starts a straight-line move and returns at once.
    ///
    /// # Errors
    /// As [`Robot::move_l`].
    pub fn move_l_async(&self, target: LinearMove) -> Result<MoveHandle, MotionError> {
        self.check_linear(&target)?;
        self.handle(target.registers())
    }

    fn check_linear(&self, target: &LinearMove) -> Result<(), MotionError> {
        target.check()?;
        self.inverse_kinematics(&target.pose, None).map(|_| ())
    }

    /// Moves through joint waypoints, each blending into the next within its blend
    /// radius, blocking until the last is reached.
    ///
    /// # Errors
    /// As [`Robot::move_j`]; every waypoint is checked before the first is sent.
    pub fn move_j_path(&self, path: &[JointMove]) -> Result<Reached, MotionError> {
        self.move_j_path_async(path)?.wait()
    }

    /// Hands joint waypoints to the program and returns a handle on the last. Each
    /// waypoint is written once the program took the one before (when that one started),
    /// so this returns when the last but one has started.
    ///
    /// # Errors
    /// As [`Robot::move_j_path`].
    pub fn move_j_path_async(&self, path: &[JointMove]) -> Result<MoveHandle, MotionError> {
        path.iter().try_for_each(JointMove::check)?;
        let tcp = self.tcp();
        let arm = self.kinematics.arm();
        let points: Vec<([f64; 3], f64)> = path
            .iter()
            .map(|m| (position(&compose(&arm.tcp_pose(&m.q), &tcp)), m.blend))
            .collect();
        limits::check_blends(position(&self.state().tcp_pose), &points)?;
        self.path(path.iter().map(JointMove::registers))
    }

    /// Moves the TCP through straight lines between poses, blending within each blend
    /// radius, blocking until the last is reached.
    ///
    /// # Errors
    /// As [`Robot::move_l`]; every waypoint is checked before the first is sent.
    pub fn move_l_path(&self, path: &[LinearMove]) -> Result<Reached, MotionError> {
        self.move_l_path_async(path)?.wait()
    }

    /// As [`Robot::move_j_path_async`], for straight lines.
    ///
    /// # Errors
    /// As [`Robot::move_l_path`].
    pub fn move_l_path_async(&self, path: &[LinearMove]) -> Result<MoveHandle, MotionError> {
        path.iter().try_for_each(|m| self.check_linear(m))?;
        let points: Vec<([f64; 3], f64)> =
            path.iter().map(|m| (position(&m.pose), m.blend)).collect();
        limits::check_blends(position(&self.state().tcp_pose), &points)?;
        self.path(path.iter().map(LinearMove::registers))
    }

    fn path(&self, registers: impl Iterator<Item = Registers>) -> Result<MoveHandle, MotionError> {
        let mut last = None;
        for r in registers {
            last = Some(self.link.command(r)?);
        }
        let seq = last.ok_or_else(|| MotionError::Invalid("a path needs a waypoint".into()))?;
        Ok(MoveHandle {
            link: Arc::clone(&self.link),
            seq,
            until_still: true,
        })
    }

    fn handle(&self, registers: Registers) -> Result<MoveHandle, MotionError> {
        let seq = self.link.command(registers)?;
        Ok(MoveHandle {
            link: Arc::clone(&self.link),
            seq,
            until_still: true,
        })
    }

    /// Sends a command that finishes when the program takes it, and waits for that.
    fn run(&self, command: Command, doubles: &[f64]) -> Result<(), MotionError> {
        self.run_registers(command::registers(command, doubles))
    }

    fn run_registers(&self, registers: Registers) -> Result<(), MotionError> {
        let mut handle = self.handle(registers)?;
        handle.until_still = false;
        handle.wait().map(|_| ())
    }

    /// Sends a stop and waits until the arm rests.
    /// Sends a stop and waits for the arm to rest. The moves it cuts short (sent, not
    /// finished) end [`MotionError::Interrupted`] where the arm came to rest.
    fn run_stop(&self, command: Command, decel: f64) -> Result<(), MotionError> {
        {
            let mut state = self.link.lock();
            let done = state.observed.ints[usize::from(int_out::DONE)];
            let (from, to) = (done.wrapping_add(1), state.last_seq);
            if from <= to {
                state.interrupted.push(from..=to);
            }
        }
        self.handle(command::registers(command, &[decel]))?
            .wait()
            .map(|_| ())
    }

    /// Accelerates the joints to `qd` (rad/s) and keeps them there until another
    /// command; returns once the program took it.
    ///
    /// # Errors
    /// A refusal (`qd` beyond ±π rad/s, an acceleration of 0 or above 40 rad/s²); the
    /// robot's verdicts.
    pub fn speed_j(&self, qd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        limits::JOINT_VELOCITY.check_all(&qd)?;
        limits::JOINT_ACCELERATION.check(accel, None)?;
        self.run(
            Command::SpeedJ,
            &[qd[0], qd[1], qd[2], qd[3], qd[4], qd[5], accel],
        )
    }

    /// Accelerates the TCP to `xd` (m/s, rad/s) and keeps it there until another command.
    ///
    /// # Errors
    /// As [`Robot::speed_j`], with the tool limits.
    pub fn speed_l(&self, xd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        limits::TOOL_VELOCITY.check_all(&xd)?;
        limits::TOOL_ACCELERATION.check(accel, None)?;
        self.run(
            Command::SpeedL,
            &[xd[0], xd[1], xd[2], xd[3], xd[4], xd[5], accel],
        )
    }

    /// Decelerates the joints to rest at `decel` (rad/s²); returns once the arm rests. The
    /// move under way, if any, ends there: its handle returns where the arm stopped.
    ///
    /// # Errors
    /// A refusal of the deceleration; the robot's verdicts.
    pub fn stop_j(&self, decel: f64) -> Result<(), MotionError> {
        limits::JOINT_ACCELERATION.check(decel, None)?;
        self.run_stop(Command::StopJ, decel)
    }

    /// Decelerates the TCP to rest at `decel` (m/s²), along its path.
    ///
    /// # Errors
    /// As [`Robot::stop_j`], with the tool limit.
    pub fn stop_l(&self, decel: f64) -> Result<(), MotionError> {
        limits::TOOL_ACCELERATION.check(decel, None)?;
        self.run_stop(Command::StopL, decel)
    }

    /// One servo target: the joints track `q` (URScript `servoj` with `time`,
    /// `lookahead` and `gain`); send one per cycle. Returns once the program took it.
    ///
    /// # Errors
    /// A refusal of a value; the robot's verdicts.
    pub fn servo_j(
        &self,
        q: [f64; 6],
        time: f64,
        lookahead: f64,
        gain: f64,
    ) -> Result<(), MotionError> {
        limits::JOINT_POSITION.check_all(&q)?;
        limits::SERVO_TIME.check(time, None)?;
        limits::SERVO_LOOKAHEAD.check(lookahead, None)?;
        limits::SERVO_GAIN.check(gain, None)?;
        self.run(
            Command::ServoJ,
            &[q[0], q[1], q[2], q[3], q[4], q[5], time, lookahead, gain],
        )
    }

    /// Ends servoing, decelerating at `decel` (rad/s²).
    ///
    /// # Errors
    /// As [`Robot::stop_j`].
    pub fn servo_stop(&self, decel: f64) -> Result<(), MotionError> {
        limits::JOINT_ACCELERATION.check(decel, None)?;
        self.run_stop(Command::ServoStop, decel)
    }

    /// Zeroes the force/torque sensor (URScript `zero_ftsensor`).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn zero_ft_sensor(&self) -> Result<(), MotionError> {
        self.run(Command::ZeroFtSensor, &[])
    }

    /// Sets the TCP offset from the flange; later `move_l` targets and reach checks use it.
    ///
    /// # Errors
    /// A refusal of a component beyond ±2 m (or ±2π rad); the robot's verdicts.
    pub fn set_tcp(&self, offset: [f64; 6]) -> Result<(), MotionError> {
        limits::OFFSET.check_all(&offset[..3])?;
        limits::POSE.check_all(&offset[3..])?;
        self.run(Command::SetTcp, &offset)?;
        *self.tcp.lock().unwrap_or_else(PoisonError::into_inner) = offset;
        Ok(())
    }

    /// Sets the payload: mass (kg) and centre of gravity (m, in the flange frame).
    ///
    /// # Errors
    /// A refusal of the mass or a coordinate; the robot's verdicts.
    pub fn set_payload(&self, mass: f64, cog: [f64; 3]) -> Result<(), MotionError> {
        limits::PAYLOAD_MASS.check(mass, None)?;
        limits::OFFSET.check_all(&cog)?;
        self.run(Command::SetPayload, &[mass, cog[0], cog[1], cog[2]])
    }

    /// Starts teach mode (the arm can be moved by hand).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn teach_mode(&self) -> Result<(), MotionError> {
        self.run(Command::TeachMode, &[])
    }

    /// Ends teach mode.
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn end_teach_mode(&self) -> Result<(), MotionError> {
        self.run(Command::EndTeachMode, &[])
    }

    /// Starts force mode.
    ///
    /// # Errors
    /// A refusal of a value; the robot's verdicts.
    pub fn force_mode(&self, mode: &ForceMode) -> Result<(), MotionError> {
        mode.check()?;
        self.run_registers(mode.registers())
    }

    /// Ends force mode.
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn end_force_mode(&self) -> Result<(), MotionError> {
        self.run(Command::EndForceMode, &[])
    }

    /// Stops a motion under way ([`Robot::stop_j`] at
    /// [`STOP_J_DECELERATION`](super::defaults::STOP_J_DECELERATION)) and waits
    /// until the arm is at rest, then stops the keeper (the program's watchdog then stops
    /// the program, as it should when the client goes) and closes the connection. A
    /// handle's [`wait`](MoveHandle::wait) then returns at once: [`MotionError::Closed`] for
    /// a command close cut short (sent, not finished), as for any not finished by then.
    ///
    /// ```
    /// use rtde_robot::motion::{JointMove, MotionError, MotionOptions, Robot};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let cb3 = rtde_sim::Sim::builder().controller_version("3.15.8"); // a 400 ms watchdog
    /// let sim = cb3.command_program().deterministic().start()?;
    /// let robot = Robot::connect(sim.addr(), MotionOptions::new())?;
    /// let handle = robot.move_j_async(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]))?;
    /// robot.close()?; // the arm is at rest when this returns
    /// assert!(matches!(handle.wait(), Err(MotionError::Closed)));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A link error while pausing. A stop the program could not take (it had already
    /// stopped) is no error: the arm is at rest either way.
    pub fn close(mut self) -> Result<(), MotionError> {
        // A command sent and not finished may be a move the program has yet to take.
        let busy = {
            let mut state = self.link.lock();
            let done = state.observed.ints[usize::from(int_out::DONE)];
            let moving =
                ProgramState::from_register(state.observed.ints[usize::from(int_out::STATE)])
                    == ProgramState::Moving;
            let busy = state.last_seq > done || moving;
            if busy {
                state.cut_short = Some(done.saturating_add(1)..=state.last_seq);
            }
            busy
        };
        if busy {
            let _ = self.stop_j(super::defaults::STOP_J_DECELERATION);
        }
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result<(), MotionError> {
        self.link.lock().closed = true;
        self.link.changed.notify_all();
        self.stop.store(true, Ordering::Release);
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        let background = self
            .link
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(b) = background {
            b.close()?;
        }
        Ok(())
    }
}

impl Drop for Robot {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

/// The keeper: every package updates the state the handles read, and the watchdog register
/// changes with it.
fn keep(link: &Link, mut receiver: Receiver, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let observed = match receiver.recv(Some(Duration::from_millis(100))) {
            Ok(payload) => observe(link.layout, payload),
            Err(rtde_core::Error::Timeout { .. } | rtde_core::Error::Stale { .. }) => continue,
            Err(e) => Err(e),
        };
        let mut state = link.lock();
        match observed {
            Ok(o) => {
                state.observed = o;
                state.record_finished(&o);
                state.watchdog = state.watchdog.wrapping_add(1);
                let watchdog = state.watchdog;
                state.registers.ints[usize::from(int_in::WATCHDOG)] = watchdog;
                let registers = state.registers;
                if let Err(e) = link.send(&registers) {
                    state.ended = Some(e.to_string());
                }
            }
            Err(e) => state.ended = Some(e.to_string()),
        }
        let ended = state.ended.is_some();
        drop(state);
        link.changed.notify_all();
        if ended {
            return;
        }
    }
}

/// A pose's position.
fn position(pose: &[f64; 6]) -> [f64; 3] {
    [pose[0], pose[1], pose[2]]
}

/// The arm a robot computes with: the controller's calibrated one, read off its primary
/// interface, which must be the model named if one is; else the named model's nominal
/// table, or a UR5e's.
fn kinematics_of(addr: SocketAddr, options: &MotionOptions) -> Result<Kinematics, MotionError> {
    let fallback = options.arm.unwrap_or(Arm::UR5E);
    let unnamed = if options.arm.is_none() {
        "; no arm named (MotionOptions::arm), so a UR5e is assumed"
    } else {
        ""
    };
    let kinematics = match options.primary_port {
        Some(port) => Kinematics::read(SocketAddr::new(addr.ip(), port), fallback),
        None => Kinematics::Nominal {
            arm: fallback,
            why: "reading the controller's calibration was turned off".into(),
        },
    };
    match (kinematics, options.arm) {
        (Kinematics::Calibrated(controller), Some(named)) if controller.name != named.name => {
            Err(MotionError::Invalid(format!(
                "the controller's arm is a {}, not the {} named (MotionOptions::arm): name the \
                 right one, or none to use the controller's",
                controller.name, named.name
            )))
        }
        (Kinematics::Nominal { arm, why }, _) => Ok(Kinematics::Nominal {
            arm,
            why: format!("{why}{unnamed}"),
        }),
        (kinematics, _) => Ok(kinematics),
    }
}
