//! The blocking driver of the motion session: a background RTDE driver, a keeper thread
//! that reads every package and changes the watchdog register, and callers that wait on a
//! condition variable. The rules are the [`Session`]'s and the checks the [`Plan`]'s.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::session::InputHandle;
use rtde_core::{Client, Pose};
use rtde_robot_proto::programs::command::CommandLayout;

use crate::motion::command::{ForceMode, JointMove, LinearMove};
use crate::motion::error::MotionError;
use crate::motion::kinematics::Kinematics;
use crate::motion::options::{MotionOptions, NOT_PLAYING, prepare};
use crate::motion::plan::{Kind, Order, Plan};
use crate::motion::recipes::{Registers, Written, observe, specs};
use crate::motion::session::{Reached, RobotState, Sent, Session, said_in};

/// What the handles and the keeper share.
#[derive(Debug)]
struct Link {
    session: Mutex<Session>,
    changed: Condvar,
    sender: Sender,
    input: InputHandle,
    layout: CommandLayout,
    background: Mutex<Option<Background>>,
    /// The controller's text messages so far; apart from `session`, which is locked while
    /// they are read.
    texts: Mutex<Vec<String>>,
    timeout: Duration,
}

impl Link {
    fn lock(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn send(&self, registers: Registers) -> Result<(), rtde_core::Error> {
        self.sender
            .send(&self.input, &Written::new(self.layout, registers))
    }

    /// The program's words for why it stopped, among the controller's text messages so
    /// far, or `fallback`.
    fn said(&self, fallback: &str) -> String {
        let drained: Vec<String> = self
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|b| b.text_messages().into_iter().map(|t| t.message).collect())
            .unwrap_or_default();
        let mut texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        texts.extend(drained);
        said_in(&texts, fallback)
    }

    /// Waits, up to `timeout`, until `step` is ready with the session locked.
    fn wait_for<T>(
        &self,
        timeout: Duration,
        mut step: impl FnMut(&mut Session) -> Poll<Result<T, MotionError>>,
        timed_out: impl FnOnce(&Session) -> MotionError,
    ) -> Result<T, MotionError> {
        let deadline = Instant::now() + timeout;
        let mut session = self.lock();
        loop {
            if let Poll::Ready(outcome) = step(&mut session) {
                return outcome;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(timed_out(&session));
            }
            session = self
                .changed
                .wait_timeout(session, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Writes a command once the program took the one before (`after`, the one before it
    /// in its order, if any: [`Session::poll_command`]); its sequence number.
    fn command(&self, registers: Registers, after: Option<Sent>) -> Result<Sent, MotionError> {
        let said = |fallback: &str| self.said(fallback);
        self.wait_for(
            self.timeout,
            |session| match session.poll_command(registers, after, &said) {
                // Under the lock: the keeper's next write carries the same command.
                Poll::Ready(Ok((seq, registers))) => {
                    Poll::Ready(self.send(registers).map(|()| seq).map_err(Into::into))
                }
                other => other.map(|r| r.map(|(seq, _)| seq)),
            },
            |session| session.timeout(None, self.timeout),
        )
    }

    /// Waits for command `seq`'s outcome ([`Session::poll_done`]).
    fn wait_done(
        &self,
        seq: Sent,
        until_still: bool,
        timeout: Duration,
    ) -> Result<Reached, MotionError> {
        let said = |fallback: &str| self.said(fallback);
        self.wait_for(
            timeout,
            |session| session.poll_done(seq, until_still, &said),
            |session| session.timeout(Some(seq.seq), timeout),
        )
    }
}

/// A robot running the command program, driven by typed commands; see the
/// [module](crate::motion) documentation. `AsyncRobot` (feature `tokio`) is the same
/// on tokio.
#[derive(Debug)]
pub struct Robot {
    link: Arc<Link>,
    plan: Plan,
    /// Where and how it connected, for [`Robot::recover`].
    addr: SocketAddr,
    options: MotionOptions,
    stop: Arc<AtomicBool>,
    keeper: Option<JoinHandle<()>>,
}

/// A command under way: [`MoveHandle::wait`] for where it left the arm.
#[derive(Debug)]
pub struct MoveHandle {
    link: Arc<Link>,
    /// The first command of its order (a path's first waypoint); `seq` is the last.
    first: i32,
    seq: Sent,
    /// Whether `wait` also waits for the arm to rest (moves and stops).
    until_still: bool,
}

impl MoveHandle {
    /// The command's sequence number.
    #[must_use]
    pub fn seq(&self) -> i32 {
        self.seq.seq
    }

    /// Whether the program has finished the command.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.link.lock().is_finished(self.seq)
    }

    /// The progress of the command, 0 to 1: for a path, of the whole path (two of four
    /// waypoints done and the third halfway is 0.625).
    ///
    /// ```
    /// use rtde_robot::motion::{JointMove, MotionOptions, Robot};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let sim = rtde_sim::Sim::builder().command_program().deterministic().start()?;
    /// let robot = Robot::connect(sim.addr(), MotionOptions::new())?;
    /// let path = [0.3, 0.6].map(|s| JointMove::to([s, -1.57, 1.57, -1.57, -1.57, 0.0]));
    /// let handle = robot.start_move_j_path(&path)?;
    /// while !handle.is_finished() {
    ///     // Which waypoint is under way, and how far the whole path is.
    ///     let (_waypoint, _progress) = (handle.waypoint(), handle.progress());
    ///     std::thread::sleep(std::time::Duration::from_millis(10));
    /// }
    /// assert_eq!((handle.waypoint(), handle.progress()), (1, 1.0));
    /// handle.wait()?;
    /// robot.close()?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn progress(&self) -> f64 {
        self.link.lock().progress_of(self.first, self.seq).1
    }

    /// The index of the waypoint under way, for a path (0 for one command); the last once
    /// the path is done.
    #[must_use]
    pub fn waypoint(&self) -> usize {
        self.link.lock().progress_of(self.first, self.seq).0
    }

    /// Waits for the command to finish, up to the connection's timeout.
    ///
    /// # Errors
    /// [`MotionError::ProtectiveStop`], [`MotionError::Watchdog`],
    /// [`MotionError::ProgramStopped`], [`MotionError::TargetUnreachable`] in the
    /// controller's words; [`MotionError::Interrupted`] for a move a stop cut short;
    /// [`MotionError::Closed`] after [`Robot::close`]; [`MotionError::Timeout`].
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
        let plan = Plan::new(prepare(addr, &options)?);
        let mut client = Client::connect(addr, options.rtde().clone())?;
        let frequency = client.max_frequency();
        let layout = options.layout_in_use();
        let (outputs, inputs) = specs(layout);
        client.setup_outputs(outputs, frequency)?;
        let input = client.setup_inputs(inputs)?;
        client.start()?;
        let background =
            client.spawn(SpawnOptions::new().name("rtde-motion").queue_capacity(64))?;
        let mut receiver = background.receiver();
        let first = observe(layout, receiver.recv(Some(Duration::from_secs(2)))?)?;
        let session = Session::new(first);
        let playing = session.is_playing();
        let link = Arc::new(Link {
            session: Mutex::new(session),
            changed: Condvar::new(),
            sender: background.sender(),
            input,
            layout,
            background: Mutex::new(Some(background)),
            texts: Mutex::new(Vec::new()),
            timeout: options.command_timeout(),
        });
        let robot = Robot::with_keeper(link, receiver, plan, addr, options);
        if !playing {
            let message = robot.link.said(NOT_PLAYING);
            robot.close()?;
            return Err(MotionError::ProgramStopped { message });
        }
        Ok(robot)
    }

    fn with_keeper(
        link: Arc<Link>,
        receiver: Receiver,
        plan: Plan,
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
            plan,
            addr,
            options,
            stop,
            keeper,
        }
    }

    /// Carries on after the robot's verdict (a protective stop once unlocked, a watchdog
    /// stop, an unreachable target, a stopped program) or a lost link: closes this session
    /// and connects again to the same controller with the same options, sending the
    /// command program again with [`ProgramSource::Send`](super::ProgramSource::Send) (it replaces the stopped one)
    /// or attaching to the one playing with [`ProgramSource::Installed`](super::ProgramSource::Installed). ur_rtde's
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
        self.plan.kinematics()
    }

    /// The arm and the program as the last package said.
    #[must_use]
    pub fn state(&self) -> RobotState {
        self.link.lock().state()
    }

    /// The joint solution of the TCP pose `pose` nearest `near` (the current joints when
    /// `None`), with the TCP offset given to [`Robot::set_tcp`]: ur_rtde's
    /// `getInverseKinematics`, computed on the host.
    ///
    /// # Errors
    /// [`MotionError::OutOfReach`].
    pub fn inverse_kinematics(
        &self,
        pose: impl Into<Pose>,
        near: Option<[f64; 6]>,
    ) -> Result<[f64; 6], MotionError> {
        let near = near.unwrap_or_else(|| self.state().q);
        self.plan.inverse_kinematics(&pose.into().to_array(), &near)
    }

    /// Moves to joint positions, blocking until the arm is there.
    ///
    /// # Errors
    /// A refusal naming the value and its limit, with nothing sent; the robot's verdicts of
    /// [`MoveHandle::wait`].
    pub fn move_j(&self, target: JointMove) -> Result<Reached, MotionError> {
        self.start_move_j(target)?.wait()
    }

    /// Starts a move to joint positions and returns its handle once the program took it.
    ///
    /// # Errors
    /// As [`Robot::move_j`], for what happens before the program takes the command.
    pub fn start_move_j(&self, target: JointMove) -> Result<MoveHandle, MotionError> {
        self.start(Plan::move_j(&target)?)
    }

    /// Moves the TCP along a straight line to a pose, blocking until it is there.
    ///
    /// # Errors
    /// As [`Robot::move_j`]; [`MotionError::OutOfReach`] for a target no joint vector
    /// reaches, with nothing sent.
    pub fn move_l(&self, target: LinearMove) -> Result<Reached, MotionError> {
        self.start_move_l(target)?.wait()
    }

    /// Starts a straight-line move and returns its handle once the program took it.
    ///
    /// # Errors
    /// As [`Robot::move_l`].
    pub fn start_move_l(&self, target: LinearMove) -> Result<MoveHandle, MotionError> {
        self.start(self.plan.move_l(&target, &self.state().q)?)
    }

    /// Moves through joint waypoints, each blending into the next within its blend
    /// radius, blocking until the last is reached.
    ///
    /// # Errors
    /// As [`Robot::move_j`]; every waypoint is checked before the first is sent.
    pub fn move_j_path(&self, path: &[JointMove]) -> Result<Reached, MotionError> {
        self.start_move_j_path(path)?.wait()
    }

    /// Hands joint waypoints to the program and returns a handle on the last. Each
    /// waypoint is written once the program took the one before (when that one started),
    /// so this returns when the last but one has started.
    ///
    /// # Errors
    /// As [`Robot::move_j_path`].
    pub fn start_move_j_path(&self, path: &[JointMove]) -> Result<MoveHandle, MotionError> {
        self.start(self.plan.move_j_path(path, &self.state().tcp_pose)?)
    }

    /// Moves the TCP through straight lines between poses, blending within each blend
    /// radius, blocking until the last is reached.
    ///
    /// # Errors
    /// As [`Robot::move_l`]; every waypoint is checked before the first is sent.
    pub fn move_l_path(&self, path: &[LinearMove]) -> Result<Reached, MotionError> {
        self.start_move_l_path(path)?.wait()
    }

    /// As [`Robot::start_move_j_path`], for straight lines.
    ///
    /// # Errors
    /// As [`Robot::move_l_path`].
    pub fn start_move_l_path(&self, path: &[LinearMove]) -> Result<MoveHandle, MotionError> {
        let now = self.state();
        self.start(self.plan.move_l_path(path, &now.tcp_pose, &now.q)?)
    }

    /// Writes an order's commands, each once the program took the one before; a handle
    /// on the last.
    fn start(&self, order: Order) -> Result<MoveHandle, MotionError> {
        self.link.lock().begin(order.kind);
        let mut seqs = None;
        for registers in order.registers {
            let after = seqs.map(|(_, last)| last);
            let seq = self.link.command(registers, after)?;
            seqs = Some(seqs.map_or((seq.seq, seq), |(first, _)| (first, seq)));
        }
        let (first, seq) = seqs.unwrap_or_default();
        Ok(MoveHandle {
            link: Arc::clone(&self.link),
            first,
            seq,
            until_still: order.kind.waits_until_still(),
        })
    }

    /// Writes an order and waits for its outcome.
    fn run(&self, order: Order) -> Result<(), MotionError> {
        let kind = order.kind;
        self.start(order)?.wait()?;
        if let Kind::Tcp(offset) = kind {
            self.plan.adopt_tcp(offset);
        }
        Ok(())
    }

    /// Accelerates the joints to `qd` (rad/s) and keeps them there until another
    /// command; returns once the program took it.
    ///
    /// # Errors
    /// A refusal (`qd` beyond ±π rad/s, an acceleration of 0 or above 40 rad/s²); the
    /// robot's verdicts.
    pub fn speed_j(&self, qd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        self.run(Plan::speed_j(qd, accel)?)
    }

    /// Accelerates the TCP to `xd` (m/s, rad/s) and keeps it there until another command.
    ///
    /// # Errors
    /// As [`Robot::speed_j`], with the tool limits.
    pub fn speed_l(&self, xd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        self.run(Plan::speed_l(xd, accel)?)
    }

    /// Decelerates the joints to rest at `decel` (rad/s²); returns once the arm rests. The
    /// moves under way, if any, end there: their handles return
    /// [`MotionError::Interrupted`] with where the arm stopped.
    ///
    /// # Errors
    /// A refusal of the deceleration; the robot's verdicts.
    pub fn stop_j(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::stop_j(decel)?)
    }

    /// Decelerates the TCP to rest at `decel` (m/s²), along its path.
    ///
    /// # Errors
    /// As [`Robot::stop_j`], with the tool limit.
    pub fn stop_l(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::stop_l(decel)?)
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
        self.run(Plan::servo_j(q, time, lookahead, gain)?)
    }

    /// Ends servoing, decelerating at `decel` (rad/s²).
    ///
    /// # Errors
    /// As [`Robot::stop_j`].
    pub fn servo_stop(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::servo_stop(decel)?)
    }

    /// Zeroes the force/torque sensor (URScript `zero_ftsensor`).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn zero_ft_sensor(&self) -> Result<(), MotionError> {
        self.run(Plan::zero_ft_sensor())
    }

    /// Sets the TCP offset from the flange; later `move_l` targets and reach checks use it.
    ///
    /// # Errors
    /// A refusal of a component beyond ±2 m (or ±2π rad); the robot's verdicts.
    pub fn set_tcp(&self, offset: impl Into<Pose>) -> Result<(), MotionError> {
        self.run(Plan::set_tcp(offset.into().to_array())?)
    }

    /// Sets the payload: mass (kg) and centre of gravity (m, in the flange frame).
    ///
    /// # Errors
    /// A refusal of the mass or a coordinate; the robot's verdicts.
    pub fn set_payload(&self, mass: f64, cog: [f64; 3]) -> Result<(), MotionError> {
        self.run(Plan::set_payload(mass, cog)?)
    }

    /// Starts teach mode (the arm can be moved by hand).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn teach_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::teach_mode())
    }

    /// Ends teach mode.
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn end_teach_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::end_teach_mode())
    }

    /// Starts force mode.
    ///
    /// # Errors
    /// A refusal of a value; the robot's verdicts.
    pub fn force_mode(&self, mode: &ForceMode) -> Result<(), MotionError> {
        self.run(Plan::force_mode(mode)?)
    }

    /// Ends force mode.
    ///
    /// # Errors
    /// The robot's verdicts.
    pub fn end_force_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::end_force_mode())
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
    /// let handle = robot.start_move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]))?;
    /// robot.close()?; // the arm is at rest when this returns
    /// assert!(matches!(handle.wait(), Err(MotionError::Closed)));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A link error while pausing. A stop the program could not take (it had already
    /// stopped) is no error: the arm is at rest either way.
    pub fn close(mut self) -> Result<(), MotionError> {
        let withdrawn = self.link.lock().withdraw_before_close();
        if let Some(registers) = withdrawn {
            let _ = self.link.send(registers);
        }
        // A command sent and not finished may be a move the program has yet to take.
        if self.link.lock().begin_close() {
            let _ = self.stop_j(super::defaults::STOP_J_DECELERATION);
        }
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result<(), MotionError> {
        self.link.lock().close();
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

/// The keeper: every package updates the session the handles read, and the watchdog
/// register changes with it.
fn keep(link: &Link, mut receiver: Receiver, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let observed = match receiver.recv(Some(Duration::from_millis(100))) {
            Ok(payload) => observe(link.layout, payload),
            Err(rtde_core::Error::Timeout { .. } | rtde_core::Error::Stale { .. }) => continue,
            Err(e) => Err(e),
        };
        let mut session = link.lock();
        let outcome = observed.and_then(|o| link.send(session.on_package(o)));
        if let Err(e) = outcome {
            session.on_end(rtde_core::Report(&e).to_string());
        }
        let ended = session.has_ended();
        drop(session);
        link.changed.notify_all();
        if ended {
            return;
        }
    }
}
