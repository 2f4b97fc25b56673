//! The tokio driver of the motion session (feature `tokio`): rtde-core's async RTDE
//! driver, a keeper task that reads every package and changes the watchdog register, and
//! callers that await a notification. The rules are the [`Session`]'s and the checks the
//! [`Plan`]'s, as for the blocking [`Robot`](super::Robot).

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use rtde_core::Pose;
use rtde_core::session::InputHandle;
use rtde_core::tokio::{AsyncClient, Packages};
use rtde_robot_proto::programs::command::CommandLayout;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::motion::command::{ForceMode, JointMove, LinearMove};
use crate::motion::error::MotionError;
use crate::motion::kinematics::Kinematics;
use crate::motion::options::{MotionOptions, NOT_PLAYING, prepare};
use crate::motion::plan::{Kind, Order, Plan};
use crate::motion::recipes::{Registers, Written, observe, specs};
use crate::motion::session::{Reached, RobotState, Sent, Session, said_in};

/// What the handles, the commands and the keeper task share.
#[derive(Debug)]
struct Link {
    session: Mutex<Session>,
    /// Every package, and the end of the link.
    changed: Notify,
    client: AsyncClient,
    input: InputHandle,
    layout: CommandLayout,
    /// Held from reading the registers to their write, so that no write overtakes a newer
    /// one: the keeper's and the commands'.
    writing: tokio::sync::Mutex<()>,
    /// The controller's text messages so far.
    texts: Mutex<Vec<String>>,
    timeout: Duration,
}

impl Link {
    fn lock(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The program's words for why it stopped, or `fallback`.
    fn said(&self, fallback: &str) -> String {
        let drained = self.client.text_messages().into_iter().map(|t| t.message);
        let mut texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        texts.extend(drained);
        said_in(&texts, fallback)
    }

    /// Writes the session's registers as they are now.
    async fn write(
        &self,
        registers: impl FnOnce(&mut Session) -> Registers,
    ) -> Result<(), MotionError> {
        let _writing = self.writing.lock().await;
        let registers = registers(&mut self.lock());
        let written = Written::new(self.layout, registers);
        Ok(self.client.send(&self.input, &written).await?)
    }

    /// Waits, up to `timeout`, until `step` is ready with the session locked.
    async fn wait_for<T>(
        &self,
        timeout: Duration,
        mut step: impl FnMut(&mut Session) -> Poll<Result<T, MotionError>>,
        timed_out: impl FnOnce(&Session) -> MotionError,
    ) -> Result<T, MotionError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Registered before the check, so that no package between the two is missed.
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            if let Poll::Ready(outcome) = step(&mut self.lock()) {
                return outcome;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(timed_out(&self.lock()));
            }
        }
    }

    /// Writes a command once the program took the one before (`after`, the one before it
    /// in its order, if any: [`Session::poll_command`]); its sequence number.
    ///
    /// Dropped once the session has taken the command, the keeper writes it with the
    /// next package: a command is never half sent.
    async fn command(
        &self,
        registers: Registers,
        after: Option<Sent>,
    ) -> Result<Sent, MotionError> {
        let said = |fallback: &str| self.said(fallback);
        let seq = self
            .wait_for(
                self.timeout,
                |session| {
                    session
                        .poll_command(registers, after, &said)
                        .map(|r| r.map(|(seq, _)| seq))
                },
                |session| session.timeout(None, self.timeout),
            )
            .await?;
        self.write(|session| session.registers()).await?;
        Ok(seq)
    }

    async fn wait_done(
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
        .await
    }
}

/// A robot running the command program, on tokio: [`Robot`](super::Robot)'s commands as
/// futures, with the same names, checks, outcomes and errors. Commands that return a
/// handle (`start_*`) return an [`AsyncMoveHandle`], which is awaited for where the
/// command left the arm.
///
/// Reading the arm's kinematics off the controller and sending the command program
/// ([`ProgramSource::Send`](super::ProgramSource::Send)) block on their sockets, so
/// [`AsyncRobot::connect`] runs them on tokio's blocking pool; everything after is
/// async. The runtime needs its I/O and time drivers (`enable_all`).
///
/// ```
/// use rtde_robot::motion::{AsyncRobot, JointMove, LinearMove, MotionOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sim = rtde_sim::Sim::builder().command_program().deterministic().start()?;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let robot = AsyncRobot::connect(sim.addr(), MotionOptions::new()).await?;
/// let home = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
/// let reached = robot.move_j(JointMove::to(home).speed(1.0).accel(2.0)).await?;
/// let mut below = reached.tcp_pose;
/// below[2] -= 0.05;
/// let handle = robot.start_move_l(LinearMove::to(below)).await?;
/// let _progress = robot.state().progress; // readable while the move runs
/// let down = handle.await?;
/// assert!((down.tcp_pose[2] - below[2]).abs() < 1e-6);
/// robot.close().await?;
/// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct AsyncRobot {
    link: Arc<Link>,
    plan: Plan,
    /// Where and how it connected, for [`AsyncRobot::recover`].
    addr: SocketAddr,
    options: MotionOptions,
    keeper: JoinHandle<()>,
    connection: JoinHandle<Result<(), rtde_core::Error>>,
}

/// A command under way on an [`AsyncRobot`]: awaited (or [`AsyncMoveHandle::wait`]), where
/// it left the arm, as [`MoveHandle::wait`](super::MoveHandle::wait) says.
#[derive(Debug)]
pub struct AsyncMoveHandle {
    link: Arc<Link>,
    /// The first command of its order (a path's first waypoint); `seq` is the last.
    first: i32,
    seq: Sent,
    /// Whether the wait is also for the arm to rest (moves and stops).
    until_still: bool,
}

impl AsyncMoveHandle {
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

    /// Waits for the command to finish, up to the connection's timeout. Cancel-safe.
    ///
    /// # Errors
    /// As [`MoveHandle::wait`](super::MoveHandle::wait).
    pub async fn wait(self) -> Result<Reached, MotionError> {
        let timeout = self.link.timeout;
        self.wait_timeout(timeout).await
    }

    /// As [`AsyncMoveHandle::wait`], up to `timeout`.
    ///
    /// # Errors
    /// As [`MoveHandle::wait`](super::MoveHandle::wait).
    pub async fn wait_timeout(&self, timeout: Duration) -> Result<Reached, MotionError> {
        self.link
            .wait_done(self.seq, self.until_still, timeout)
            .await
    }
}

impl IntoFuture for AsyncMoveHandle {
    type Output = Result<Reached, MotionError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.wait())
    }
}

impl AsyncRobot {
    /// Connects to the controller at `addr` (RTDE's port, 30004), sets up the layout's
    /// recipes, and attaches to the command program; as [`Robot::connect`](super::Robot::connect).
    ///
    /// # Errors
    /// As [`Robot::connect`](super::Robot::connect).
    pub async fn connect(
        addr: impl tokio::net::ToSocketAddrs,
        options: MotionOptions,
    ) -> Result<AsyncRobot, MotionError> {
        let addr = tokio::net::lookup_host(addr)
            .await
            .map_err(|e| MotionError::Invalid(format!("the controller's address: {e}")))?
            .next()
            .ok_or_else(|| {
                MotionError::Invalid("the controller's address resolves to none".into())
            })?;
        let kinematics = {
            let options = options.clone();
            tokio::task::spawn_blocking(move || prepare(addr, &options))
                .await
                .map_err(|e| MotionError::Invalid(format!("preparing the session: {e}")))??
        };
        let (client, connection) = rtde_core::tokio::connect(addr, options.rtde().clone()).await?;
        let connection = tokio::spawn(connection);
        let layout = options.layout_in_use();
        let (outputs, inputs) = specs(layout);
        let frequency = client.with_session(rtde_core::session::Session::max_frequency);
        client.setup_outputs(outputs, frequency).await?;
        let input = client.setup_inputs(inputs).await?;
        let mut packages = client.packages(64)?;
        client.start().await?;
        let first = tokio::time::timeout(Duration::from_secs(2), packages.recv())
            .await
            .map_err(|_| rtde_core::Error::Timeout {
                after: Duration::from_secs(2),
                waiting_for: rtde_core::protocol::package_type::DATA_PACKAGE,
                mid_frame: false,
            })?;
        let first = observe(layout, first?)?;
        let session = Session::new(first);
        let playing = session.is_playing();
        let link = Arc::new(Link {
            session: Mutex::new(session),
            changed: Notify::new(),
            client,
            input,
            layout,
            writing: tokio::sync::Mutex::new(()),
            texts: Mutex::new(Vec::new()),
            timeout: options.command_timeout(),
        });
        let keeper = tokio::spawn(keep(Arc::clone(&link), packages));
        let robot = AsyncRobot {
            link,
            plan: Plan::new(kinematics),
            addr,
            options,
            keeper,
            connection,
        };
        if !playing {
            let message = robot.link.said(NOT_PLAYING);
            robot.close().await?;
            return Err(MotionError::ProgramStopped { message });
        }
        Ok(robot)
    }

    /// Closes this session and connects again with the same options; as
    /// [`Robot::recover`](super::Robot::recover).
    ///
    /// # Errors
    /// As [`AsyncRobot::connect`].
    pub async fn recover(self) -> Result<AsyncRobot, MotionError> {
        let (addr, options) = (self.addr, self.options.clone());
        // The session is over whatever it says on the way out: its verdict is known.
        let _ = self.close().await;
        AsyncRobot::connect(addr, options).await
    }

    /// The arm the robot computes poses with; as [`Robot::kinematics`](super::Robot::kinematics).
    #[must_use]
    pub fn kinematics(&self) -> &Kinematics {
        self.plan.kinematics()
    }

    /// The arm and the program as the last package said.
    #[must_use]
    pub fn state(&self) -> RobotState {
        self.link.lock().state()
    }

    /// As [`Robot::inverse_kinematics`](super::Robot::inverse_kinematics).
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

    /// As [`Robot::move_j`](super::Robot::move_j).
    ///
    /// # Errors
    /// As [`Robot::move_j`](super::Robot::move_j).
    pub async fn move_j(&self, target: JointMove) -> Result<Reached, MotionError> {
        self.start_move_j(target).await?.await
    }

    /// As [`Robot::start_move_j`](super::Robot::start_move_j).
    ///
    /// # Errors
    /// As [`Robot::start_move_j`](super::Robot::start_move_j).
    pub async fn start_move_j(&self, target: JointMove) -> Result<AsyncMoveHandle, MotionError> {
        self.start(Plan::move_j(&target)?).await
    }

    /// As [`Robot::move_l`](super::Robot::move_l).
    ///
    /// # Errors
    /// As [`Robot::move_l`](super::Robot::move_l).
    pub async fn move_l(&self, target: LinearMove) -> Result<Reached, MotionError> {
        self.start_move_l(target).await?.await
    }

    /// As [`Robot::start_move_l`](super::Robot::start_move_l).
    ///
    /// # Errors
    /// As [`Robot::start_move_l`](super::Robot::start_move_l).
    pub async fn start_move_l(&self, target: LinearMove) -> Result<AsyncMoveHandle, MotionError> {
        let order = self.plan.move_l(&target, &self.state().q)?;
        self.start(order).await
    }

    /// As [`Robot::move_j_path`](super::Robot::move_j_path).
    ///
    /// # Errors
    /// As [`Robot::move_j_path`](super::Robot::move_j_path).
    pub async fn move_j_path(&self, path: &[JointMove]) -> Result<Reached, MotionError> {
        self.start_move_j_path(path).await?.await
    }

    /// As [`Robot::start_move_j_path`](super::Robot::start_move_j_path).
    ///
    /// # Errors
    /// As [`Robot::start_move_j_path`](super::Robot::start_move_j_path).
    pub async fn start_move_j_path(
        &self,
        path: &[JointMove],
    ) -> Result<AsyncMoveHandle, MotionError> {
        let order = self.plan.move_j_path(path, &self.state().tcp_pose)?;
        self.start(order).await
    }

    /// As [`Robot::move_l_path`](super::Robot::move_l_path).
    ///
    /// # Errors
    /// As [`Robot::move_l_path`](super::Robot::move_l_path).
    pub async fn move_l_path(&self, path: &[LinearMove]) -> Result<Reached, MotionError> {
        self.start_move_l_path(path).await?.await
    }

    /// As [`Robot::start_move_l_path`](super::Robot::start_move_l_path).
    ///
    /// # Errors
    /// As [`Robot::start_move_l_path`](super::Robot::start_move_l_path).
    pub async fn start_move_l_path(
        &self,
        path: &[LinearMove],
    ) -> Result<AsyncMoveHandle, MotionError> {
        let now = self.state();
        let order = self.plan.move_l_path(path, &now.tcp_pose, &now.q)?;
        self.start(order).await
    }

    /// Writes an order's commands, each once the program took the one before; a handle
    /// on the last.
    async fn start(&self, order: Order) -> Result<AsyncMoveHandle, MotionError> {
        self.link.lock().begin(order.kind);
        let mut seqs = None;
        for registers in order.registers {
            let after = seqs.map(|(_, last)| last);
            let seq = self.link.command(registers, after).await?;
            seqs = Some(seqs.map_or((seq.seq, seq), |(first, _)| (first, seq)));
        }
        let (first, seq) = seqs.unwrap_or_default();
        Ok(AsyncMoveHandle {
            link: Arc::clone(&self.link),
            first,
            seq,
            until_still: order.kind.waits_until_still(),
        })
    }

    /// Writes an order and waits for its outcome.
    async fn run(&self, order: Order) -> Result<(), MotionError> {
        let kind = order.kind;
        self.start(order).await?.await?;
        if let Kind::Tcp(offset) = kind {
            self.plan.adopt_tcp(offset);
        }
        Ok(())
    }

    /// As [`Robot::speed_j`](super::Robot::speed_j).
    ///
    /// # Errors
    /// As [`Robot::speed_j`](super::Robot::speed_j).
    pub async fn speed_j(&self, qd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        self.run(Plan::speed_j(qd, accel)?).await
    }

    /// As [`Robot::speed_l`](super::Robot::speed_l).
    ///
    /// # Errors
    /// As [`Robot::speed_l`](super::Robot::speed_l).
    pub async fn speed_l(&self, xd: [f64; 6], accel: f64) -> Result<(), MotionError> {
        self.run(Plan::speed_l(xd, accel)?).await
    }

    /// As [`Robot::stop_j`](super::Robot::stop_j).
    ///
    /// # Errors
    /// As [`Robot::stop_j`](super::Robot::stop_j).
    pub async fn stop_j(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::stop_j(decel)?).await
    }

    /// As [`Robot::stop_l`](super::Robot::stop_l).
    ///
    /// # Errors
    /// As [`Robot::stop_l`](super::Robot::stop_l).
    pub async fn stop_l(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::stop_l(decel)?).await
    }

    /// As [`Robot::servo_j`](super::Robot::servo_j).
    ///
    /// # Errors
    /// As [`Robot::servo_j`](super::Robot::servo_j).
    pub async fn servo_j(
        &self,
        q: [f64; 6],
        time: f64,
        lookahead: f64,
        gain: f64,
    ) -> Result<(), MotionError> {
        self.run(Plan::servo_j(q, time, lookahead, gain)?).await
    }

    /// As [`Robot::servo_stop`](super::Robot::servo_stop).
    ///
    /// # Errors
    /// As [`Robot::servo_stop`](super::Robot::servo_stop).
    pub async fn servo_stop(&self, decel: f64) -> Result<(), MotionError> {
        self.run(Plan::servo_stop(decel)?).await
    }

    /// As [`Robot::zero_ft_sensor`](super::Robot::zero_ft_sensor).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub async fn zero_ft_sensor(&self) -> Result<(), MotionError> {
        self.run(Plan::zero_ft_sensor()).await
    }

    /// As [`Robot::set_tcp`](super::Robot::set_tcp).
    ///
    /// # Errors
    /// As [`Robot::set_tcp`](super::Robot::set_tcp).
    pub async fn set_tcp(&self, offset: impl Into<Pose>) -> Result<(), MotionError> {
        self.run(Plan::set_tcp(offset.into().to_array())?).await
    }

    /// As [`Robot::set_payload`](super::Robot::set_payload).
    ///
    /// # Errors
    /// As [`Robot::set_payload`](super::Robot::set_payload).
    pub async fn set_payload(&self, mass: f64, cog: [f64; 3]) -> Result<(), MotionError> {
        self.run(Plan::set_payload(mass, cog)?).await
    }

    /// As [`Robot::teach_mode`](super::Robot::teach_mode).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub async fn teach_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::teach_mode()).await
    }

    /// As [`Robot::end_teach_mode`](super::Robot::end_teach_mode).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub async fn end_teach_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::end_teach_mode()).await
    }

    /// As [`Robot::force_mode`](super::Robot::force_mode).
    ///
    /// # Errors
    /// As [`Robot::force_mode`](super::Robot::force_mode).
    pub async fn force_mode(&self, mode: &ForceMode) -> Result<(), MotionError> {
        self.run(Plan::force_mode(mode)?).await
    }

    /// As [`Robot::end_force_mode`](super::Robot::end_force_mode).
    ///
    /// # Errors
    /// The robot's verdicts.
    pub async fn end_force_mode(&self) -> Result<(), MotionError> {
        self.run(Plan::end_force_mode()).await
    }

    /// Stops a motion under way and waits until the arm is at rest, then stops the keeper
    /// and closes the connection; as [`Robot::close`](super::Robot::close). Handles then
    /// return at once.
    ///
    /// Dropping an `AsyncRobot` without it stops the keeper and the connection task
    /// without waiting: the program's watchdog then stops the arm.
    ///
    /// # Errors
    /// As [`Robot::close`](super::Robot::close).
    pub async fn close(mut self) -> Result<(), MotionError> {
        let withdrawn = self.link.lock().withdraw_before_close();
        if let Some(registers) = withdrawn {
            let _ = self.link.write(|_| registers).await;
        }
        if self.link.lock().begin_close() {
            let _ = self.stop_j(super::defaults::STOP_J_DECELERATION).await;
        }
        self.link.lock().close();
        self.link.changed.notify_waiters();
        self.keeper.abort();
        let closed = self.link.client.close().await;
        // The task ends once the client closed it; its own error says no more than that.
        let _ = (&mut self.connection).await;
        Ok(closed?)
    }
}

impl Drop for AsyncRobot {
    fn drop(&mut self) {
        self.link.lock().close();
        self.link.changed.notify_waiters();
        self.keeper.abort();
        self.connection.abort();
    }
}

/// The keeper: every package updates the session the handles read, and the watchdog
/// register changes with it.
async fn keep(link: Arc<Link>, mut packages: Packages) {
    loop {
        let outcome = match packages.recv().await.and_then(|p| observe(link.layout, p)) {
            Ok(o) => link.write(|session| session.on_package(o)).await,
            Err(e) => Err(e.into()),
        };
        if let Err(e) = outcome {
            link.lock().on_end(rtde_core::Report(&e).to_string());
            link.changed.notify_waiters();
            return;
        }
        link.changed.notify_waiters();
    }
}
