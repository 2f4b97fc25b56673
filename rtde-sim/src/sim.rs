//! The simulator's handle and its builder.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::Value;
use rtde_core::fields::{ControllerVersion, Direction, ParseVersionError, lookup};

use crate::clock::Clock;
use crate::controller::{Config, Controller, KnownProgram, ProgramStart, Shared};
use crate::fault::Fault;
use crate::io::IoState;
use crate::motion_faults::MotionFaults;
use crate::own_program;
use crate::own_program::state::{CommandProgramState, ServoProgramState};
use crate::robot::{Motion, SimulatedRobot};
use crate::robot_program::Program;
use crate::robot_state::RobotState;
use crate::script_program::ScriptProgram;
use crate::server::accept_loop;
use crate::service;
use crate::source::OutputSource;
use crate::ticker::Ticker;
use rtde_kinematics::{Arm, Calibration};
use rtde_robot_proto::ports::{Ports, READ_ONLY_OFFSET, ScriptPort};
use rtde_robot_proto::programs::command::CommandLayout;

/// The controller version a simulator reports unless told otherwise.
pub const DEFAULT_CONTROLLER_VERSION: ControllerVersion = ControllerVersion::new(5, 21, 0, 0);

/// How long a client that stops reading may keep the simulator's send buffer full
/// before the simulator drops it, unless told otherwise.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(1);

/// The slowest [`SimBuilder::speed`]: a thousandth of real time.
const MIN_SPEED: f64 = 1e-3;
/// The fastest [`SimBuilder::speed`]: a thousand times real time.
const MAX_SPEED: f64 = 1e3;

/// How long [`Sim::shutdown`] waits for the simulator's threads.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// A running RTDE controller simulator, serving on [`Sim::addr`] until it is shut down
/// or dropped.
///
/// See the [crate documentation](crate) for what it simulates.
pub struct Sim {
    addr: SocketAddr,
    seed: u64,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// The Dashboard server's address, when it serves one.
    dashboard: Option<SocketAddr>,
    /// The script ports' addresses (primary, secondary, real-time), when it serves them.
    script: Option<[SocketAddr; 3]>,
    /// Their read-only copies' addresses.
    read_only: Option<[SocketAddr; 3]>,
    /// The acceptors of the other services (Dashboard, script ports) and their addresses.
    services: Vec<(SocketAddr, JoinHandle<()>)>,
    /// The controller's own control loop, when it runs a program or the robot's state
    /// machine: they go on whoever is connected.
    control_loop: Option<JoinHandle<()>>,
    /// Disconnects when the last thread exits. In a mutex so that `Sim` is `Sync`.
    alive: Mutex<Option<mpsc::Receiver<()>>>,
}

impl fmt::Debug for Sim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sim")
            .field("addr", &self.addr)
            .field("controller_version", &self.shared.config.version)
            .field("seed", &self.seed)
            .field("running", &self.acceptor.is_some())
            .finish_non_exhaustive()
    }
}

impl Sim {
    /// A builder with the defaults: controller 5.21.0, `127.0.0.1:0`, protocol v1 and v2,
    /// paced at the control-loop rate, a UR5e moving by [`Motion::DEFAULT`] with seeded
    /// noise (a random seed), no fieldbus adapter, no faults.
    #[must_use]
    pub fn builder() -> SimBuilder {
        SimBuilder::default()
    }

    /// The address the simulator listens on (with the actual port when bound to port 0).
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The controller version the simulator reports.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.shared.config.version
    }

    /// The control-loop rate in hertz: 125 on CB3, 500 on e-Series and PolyScope X.
    #[must_use]
    pub fn loop_rate(&self) -> u32 {
        self.shared.config.loop_rate
    }

    /// The noise seed of the simulated robot; pass it to [`SimBuilder::seed`] to
    /// reproduce this run's values.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Counters of what the simulator has done so far.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        Stats {
            connections_accepted: c.accepted.load(Ordering::Relaxed),
            connections_open: c.open(),
            stalled_clients_dropped: c.stalled.load(Ordering::Relaxed),
            script_port_messages_skipped: c.script_port_skipped.load(Ordering::Relaxed),
            data_packages_sent: c.data_packages.load(Ordering::Relaxed),
            input_packages_applied: c.input_packages.load(Ordering::Relaxed),
        }
    }

    /// Waits until exactly `n` connections are open, at most `timeout`; returns whether
    /// they are. A connection counts as closed once the simulator has released its
    /// inputs, so a test can wait for a client's disconnect to take effect.
    #[must_use]
    pub fn wait_for_connections(&self, n: u64, timeout: Duration) -> bool {
        self.shared.counters.wait_open(n, timeout)
    }

    /// A snapshot of the controller's input state: what clients have written.
    #[must_use]
    pub fn io(&self) -> IoState {
        self.shared.controller().io.clone()
    }

    /// A snapshot of rtde's servo program ([`SimBuilder::servo_program`], or sent to a
    /// script port), if it runs: its joints, its handshake and why it stopped.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().servo_program().start().unwrap();
    /// let program = sim.program().unwrap();
    /// assert_eq!(program.ticks(), 0); // nothing streamed yet
    /// ```
    #[must_use]
    pub fn program(&self) -> Option<ServoProgramState> {
        self.shared.controller().servo_program()
    }

    /// A snapshot of rtde's command program ([`SimBuilder::command_program`], or sent to a
    /// script port), if it runs: its joints, its handshake, the modes it was given and why
    /// it stopped.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().command_program().start().unwrap();
    /// let program = sim.command_program().unwrap();
    /// assert_eq!(program.handshake(), (0, 0)); // no command taken yet
    /// ```
    #[must_use]
    pub fn command_program(&self) -> Option<CommandProgramState> {
        self.shared.controller().command_program()
    }

    /// A snapshot of the URScript program the simulator runs, if any (rtde's own, or a
    /// client's): its joints, its outputs, its messages and how it stands (ended, or failed
    /// with its runtime error).
    ///
    /// ```
    /// use rtde_robot_proto::programs::servo;
    ///
    /// let sim = rtde_sim::Sim::builder().servo_program().start().unwrap();
    /// let program = sim.script_program().unwrap();
    /// assert_eq!(program.ticks(), 0); // nothing streamed yet
    /// assert!(program.output(&format!("output_int_register_{}", servo::ACK_REGISTER)).is_none());
    /// ```
    #[must_use]
    pub fn script_program(&self) -> Option<ScriptProgram> {
        match self.shared.controller().program() {
            Some(Program::Script(p)) => Some((**p).clone()),
            _ => None,
        }
    }

    /// The arm, as the controller computes with it: the model, with its calibration
    /// ([`SimBuilder::calibration`]) if it has one.
    #[must_use]
    pub fn arm(&self) -> Arm {
        self.shared.controller().start.arm
    }

    /// The Dashboard server's address ([`SimBuilder::dashboard`]), if it serves one.
    #[must_use]
    pub fn dashboard_addr(&self) -> Option<SocketAddr> {
        self.dashboard
    }

    /// The address of a script port's read-only copy (30011–30013 on a controller): the
    /// same stream, no programs taken.
    ///
    /// ```
    /// use rtde_robot_proto::ports::ScriptPort;
    ///
    /// let sim = rtde_sim::Sim::builder().script_ports().start().unwrap();
    /// assert!(sim.read_only_addr(ScriptPort::Primary).is_some());
    /// ```
    #[must_use]
    pub fn read_only_addr(&self, port: ScriptPort) -> Option<SocketAddr> {
        let [primary, secondary, realtime] = self.read_only?;
        Some(match port {
            ScriptPort::Primary => primary,
            ScriptPort::Secondary => secondary,
            ScriptPort::RealTime => realtime,
        })
    }

    /// The address of a script port ([`SimBuilder::script_ports`]), if it serves them.
    #[must_use]
    pub fn script_addr(&self, port: ScriptPort) -> Option<SocketAddr> {
        let [primary, secondary, realtime] = self.script?;
        Some(match port {
            ScriptPort::Primary => primary,
            ScriptPort::Secondary => secondary,
            ScriptPort::RealTime => realtime,
        })
    }

    /// The [`Ports`] rtde-robot's `ScriptSender` uses to reach this
    /// simulator: its Dashboard server, script ports and RTDE port; `None` unless it
    /// serves both ([`SimBuilder::dashboard`], [`SimBuilder::script_ports`]).
    #[must_use]
    pub fn script_sender_ports(&self) -> Option<Ports> {
        let [primary, secondary, realtime] = self.script?;
        Some(Ports {
            dashboard: self.dashboard?.port(),
            primary: primary.port(),
            secondary: secondary.port(),
            realtime: realtime.port(),
            rtde: self.addr.port(),
        })
    }

    /// A snapshot of the robot's state machine ([`SimBuilder::robot_state`]), if it
    /// models one.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
    /// assert_eq!(sim.robot_state().unwrap().robot_mode(), rtde_core::RobotMode::PowerOff);
    /// ```
    #[must_use]
    pub fn robot_state(&self) -> Option<RobotState> {
        self.shared.controller().robot.clone()
    }

    /// Raises a protective stop now, as a collision does: the safety status becomes
    /// protective stop and a playing program pauses. Nothing happens without a robot
    /// state machine.
    pub fn protective_stop(&self, reason: &str) {
        if let Some(robot) = self.shared.controller().robot.as_mut() {
            robot.protective_stop(reason);
        }
    }

    /// Switches the controller to remote control (`true`) or local control, as the
    /// pendant's switch does. In local control an e-Series Dashboard server refuses the
    /// commands that act on the robot.
    pub fn set_remote_control(&self, on: bool) {
        if let Some(robot) = self.shared.controller().robot.as_mut() {
            robot.set_remote_control(on);
        }
    }

    /// Holds the output stream of every connection, as a controller whose stream stalls
    /// does: connections stay open, requests are answered and inputs applied, but no
    /// output data package goes out until [`Sim::resume_stream`]. A client with a
    /// staleness deadline sees its stream go stale; what was sent before comes first.
    ///
    /// The clock goes on: when the stream resumes, the ticks it was held for are not
    /// sent, as after a PAUSE and a START (the client's timestamps jump over them, and it
    /// counts them as skipped). A connection that STARTs while the stream is held begins
    /// when it resumes.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, Recipe};
    /// use rtde_sim::Sim;
    ///
    /// let sim = Sim::builder().start().unwrap();
    /// let options = ConnectOptions::new().read_timeout(Some(Duration::from_millis(100)));
    /// let mut client = Client::connect(sim.addr(), options).unwrap();
    /// let mut outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    /// client.setup_outputs(outputs.spec(), 125.0).unwrap();
    /// client.start().unwrap();
    /// // A busy host may hold a package past the short timeout: give it 50 of them.
    /// let flowing = |c: &mut Client, o: &mut DynamicRecipe| (0..50).any(|_| c.recv_into(o).is_ok());
    /// assert!(flowing(&mut client, &mut outputs));
    ///
    /// sim.pause_stream();
    /// // At most what was already on its way, then nothing.
    /// let silence = (0..100).find_map(|_| client.recv_into(&mut outputs).err());
    /// assert!(matches!(silence, Some(Error::Timeout { .. })), "{silence:?}");
    ///
    /// sim.resume_stream();
    /// assert!(flowing(&mut client, &mut outputs));
    /// # sim.shutdown().unwrap();
    /// ```
    pub fn pause_stream(&self) {
        self.shared.hold_stream(true);
    }

    /// Lets the output stream held by [`Sim::pause_stream`] go again: each streaming
    /// connection sends from the next tick its recipe is due at (within a tenth of a
    /// second, paced: a held connection looks again that often).
    pub fn resume_stream(&self) {
        self.shared.hold_stream(false);
    }

    /// Stops the simulator: closes the listener and every connection and joins all its
    /// threads, waiting at most [`SHUTDOWN_TIMEOUT`].
    ///
    /// Dropping the handle does the same and ignores the outcome. This blocks the calling
    /// thread while the simulator's threads end; in async code, await `Sim::shutdown_async`
    /// (feature `tokio`) instead.
    ///
    /// # Errors
    /// [`Error::ShutdownTimeout`] when some thread had not finished in time; it is left
    /// running detached.
    pub fn shutdown(mut self) -> Result<(), Error> {
        self.stop()
    }

    /// [`Sim::shutdown`] for async code (feature `tokio`): the same stop, awaited instead
    /// of blocking the caller's thread.
    ///
    /// The simulator runs on threads of its own, and its shutdown joins them; only a
    /// thread can wait for that. [`Sim::shutdown`] waits on the caller's: in a task, it
    /// stalls the runtime's worker (the only one of a current-thread runtime, as in
    /// `#[tokio::test]`), and a task the simulator waits for (the client's connection, a
    /// task that feeds an [`OutputSource`](crate::OutputSource)) cannot run until the
    /// [`SHUTDOWN_TIMEOUT`] has passed. This one waits on tokio's blocking pool, so the
    /// runtime goes on meanwhile. Dropped before it ends, it still shuts the simulator
    /// down (the stop is under way on the pool).
    ///
    /// ```
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// runtime.block_on(async {
    ///     let sim = rtde_sim::Sim::builder().start().unwrap();
    ///     // … a client on this runtime uses it …
    ///     sim.shutdown_async().await.unwrap();
    /// });
    /// ```
    ///
    /// # Errors
    /// As [`Sim::shutdown`].
    ///
    /// # Panics
    /// Outside a tokio runtime, as `tokio::task::spawn_blocking` does.
    #[cfg(feature = "tokio")]
    pub async fn shutdown_async(self) -> Result<(), Error> {
        match tokio::task::spawn_blocking(move || self.shutdown()).await {
            Ok(stopped) => stopped,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: the runtime shut down before its pool ran the stop (this task
            // goes with it, so no caller sees this). The `Sim` was dropped, which stops
            // it as dropping one does.
            Err(_) => Ok(()),
        }
    }

    fn stop(&mut self) -> Result<(), Error> {
        let Some(acceptor) = self.acceptor.take() else {
            return Ok(());
        };
        self.shared.shutdown.store(true, Ordering::Release);
        // Wake the acceptors, blocked in accept(), with a connection of our own.
        let _ = TcpStream::connect_timeout(&wake_address(self.addr), Duration::from_secs(1));
        for (addr, _) in &self.services {
            let _ = TcpStream::connect_timeout(&wake_address(*addr), Duration::from_secs(1));
        }
        // Wake every connection, whether waiting for a package or blocked in a write.
        for socket in self
            .shared
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
        {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
        // Every thread holds a sender; the channel disconnects when the last one exits.
        let alive = self
            .alive
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let finished = match alive {
            Some(alive) => matches!(
                alive.recv_timeout(SHUTDOWN_TIMEOUT),
                Err(RecvTimeoutError::Disconnected)
            ),
            None => true,
        };
        if !finished {
            return Err(Error::ShutdownTimeout(SHUTDOWN_TIMEOUT));
        }
        // All finished: these joins return at once. A panicked thread has nothing to report.
        let _ = acceptor.join();
        for (_, service) in self.services.drain(..) {
            let _ = service.join();
        }
        if let Some(control_loop) = self.control_loop.take() {
            let _ = control_loop.join();
        }
        let connections = std::mem::take(
            &mut *self
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for c in connections {
            let _ = c.join();
        }
        Ok(())
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A loopback address that reaches a listener bound to `addr`.
fn wake_address(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// Counters of a simulator's activity, from [`Sim::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Connections accepted since the start.
    pub connections_accepted: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// RTDE connections dropped because the client stopped reading for longer than the
    /// stall timeout.
    pub stalled_clients_dropped: u64,
    /// Robot state, real-time and robot messages the script ports (30001–30003) left out
    /// for a client whose buffers were full. A client that does not read keeps its
    /// connection, and the programs it sends run: ur_rtde's script client sends on 30003
    /// and never reads.
    pub script_port_messages_skipped: u64,
    /// Output data packages sent, over all connections.
    pub data_packages_sent: u64,
    /// Input data packages applied, over all connections: each one a client sent for a
    /// recipe it had set up, with the recipe's size. Two packages within one control tick
    /// are both counted, though only the later one can be read back in the outputs.
    pub input_packages_applied: u64,
}

/// Why a simulator could not start or stop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The controller version is not `major.minor[.bugfix[.build]]`.
    #[error("invalid controller version `{text}`")]
    InvalidVersion {
        /// The text given.
        text: String,
        /// What is wrong with it.
        source: ParseVersionError,
    },
    /// The controller version's major number is no controller generation (3, 5 or 10).
    #[error(
        "controller version {0} belongs to no generation: use 3.x (CB3), 5.x (e-Series) or 10.x (PolyScope X)"
    )]
    UnknownGeneration(ControllerVersion),
    /// A clock speed outside 0.001 to 1000 times real time.
    #[error("invalid speed {0}: the clock runs at 0.001 to 1000 times real time")]
    InvalidSpeed(f64),
    /// The motion would leave the joint limits.
    #[error("invalid motion: {0}")]
    InvalidMotion(String),
    /// A fixed output value names no output field, or has another wire type.
    #[error("invalid output value for `{field}`: {why}")]
    InvalidOutputValue {
        /// The field name given.
        field: String,
        /// What is wrong.
        why: String,
    },
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A fleet on consecutive ports from `first` would pass port 65535.
    #[error("{robots} robots from port {first} would pass port 65535")]
    FleetPorts {
        /// The first robot's port.
        first: u16,
        /// The number of robots asked for.
        robots: u16,
    },
    /// A thread could not be started.
    #[error("cannot start the simulator's thread")]
    Spawn(#[source] std::io::Error),
    /// A Dashboard server was asked of a simulated PolyScope X, which has none.
    #[error("controller {0} runs PolyScope X, which has no Dashboard server")]
    NoDashboard(ControllerVersion),
    /// One of rtde's own programs does not compile on the URScript engine: a fault of
    /// this crate, not of its caller.
    #[error("rtde's own program does not run: line {line}, column {column}: {text}")]
    OwnProgram {
        /// The line of the first compile error.
        line: u32,
        /// Its column.
        column: u32,
        /// What is wrong.
        text: String,
    },
    /// Some thread had not finished when the shutdown timeout passed.
    #[error("the simulator's threads did not stop within {0:?}")]
    ShutdownTimeout(Duration),
}

/// Configures and starts a [`Sim`]; from [`Sim::builder`].
///
/// ```
/// use rtde_sim::{Arm, Motion, Sim};
///
/// let sim = Sim::builder()
///     .controller_version("3.15.8")
///     .arm(Arm::UR5)
///     .motion(Motion::still([0.0; 6]))
///     .deterministic()
///     .unpaced()
///     .start()
///     .unwrap();
/// assert_eq!(sim.loop_rate(), 125);
/// assert!(sim.addr().ip().is_loopback());
/// ```
#[derive(Debug)]
pub struct SimBuilder {
    version: String,
    pub(crate) bind: SocketAddr,
    v1_only: bool,
    fieldbus: bool,
    paced: bool,
    speed: f64,
    clock_per_connection: bool,
    stall_timeout: Duration,
    faults: Vec<Fault>,
    refuse_unrecorded: bool,
    arm: Arm,
    calibration: Option<Calibration>,
    motion: Motion,
    pub(crate) seed: Option<u64>,
    noise: bool,
    fixed: Vec<(String, Value)>,
    source: Option<Arc<dyn OutputSource>>,
    servo_program: bool,
    robot_state: bool,
    dashboard: Option<SocketAddr>,
    script_ports: Option<[SocketAddr; 3]>,
    local_control: bool,
    unlock_delay: Option<Duration>,
    command_program: Option<CommandLayout>,
}

impl Default for SimBuilder {
    fn default() -> Self {
        SimBuilder {
            version: DEFAULT_CONTROLLER_VERSION.to_string(),
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            v1_only: false,
            fieldbus: false,
            paced: true,
            speed: 1.0,
            clock_per_connection: false,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            faults: Vec::new(),
            refuse_unrecorded: false,
            arm: Arm::UR5E,
            calibration: None,
            motion: Motion::DEFAULT,
            seed: None,
            noise: true,
            fixed: Vec::new(),
            source: None,
            servo_program: false,
            robot_state: false,
            dashboard: None,
            script_ports: None,
            local_control: false,
            unlock_delay: None,
            command_program: None,
        }
    }
}

impl SimBuilder {
    /// The controller software version to simulate, like `"5.21.0"` or `"3.15.8.106339"`.
    /// It decides the generation (3.x CB3, 5.x e-Series, 10.x PolyScope X), hence the
    /// control-loop rate (125 or 500 Hz) and the highest output frequency, and which
    /// fields exist (others are `NOT_FOUND`). Checked by [`SimBuilder::start`].
    #[must_use]
    pub fn controller_version(mut self, version: &str) -> Self {
        version.clone_into(&mut self.version);
        self
    }

    /// The address to listen on; `127.0.0.1:0` (loopback, any free port) by default.
    #[must_use]
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Behave as a controller that speaks only protocol v1: a request for v2 is refused,
    /// and the client is expected to fall back to v1.
    #[must_use]
    pub fn v1_only(mut self) -> Self {
        self.v1_only = true;
        self
    }

    /// Behave as a controller with an enabled fieldbus adapter (EtherNet/IP, PROFINET or
    /// Modbus): it holds the input registers reserved for fieldbuses (int and double
    /// registers 0–23, bit registers 0–63, and the packed bit words), so a client asking
    /// for one gets `IN_USE`.
    #[must_use]
    pub fn fieldbus_adapter(mut self) -> Self {
        self.fieldbus = true;
        self
    }

    /// Stream as fast as each client reads instead of at the control-loop rate.
    ///
    /// Values are unchanged: each connection has its own simulated clock that starts at
    /// tick 0 and advances by the recipe's decimation per package, so `timestamp` still
    /// steps by exactly one output period. For tests that need no real time, and for
    /// throughput benchmarks.
    #[must_use]
    pub fn unpaced(mut self) -> Self {
        self.paced = false;
        self
    }

    /// Run the paced clock `factor` times as fast as the wall clock (0.001 to 1000; 1 by
    /// default): at 2.0 a 500 Hz controller ticks every millisecond, and a 125 Hz recipe
    /// gets 250 packages a wall-clock second, each `timestamp` still one simulated 8 ms
    /// after the last. For replaying a recording faster or slower than it was made.
    /// Checked by [`SimBuilder::start`]; unused when [`SimBuilder::unpaced`].
    #[must_use]
    pub fn speed(mut self, factor: f64) -> Self {
        self.speed = factor;
        self
    }

    /// Give each connection a paced clock of its own, started at tick 0 by its first
    /// START (as an unpaced connection's), instead of the one controller clock all
    /// connections share. Every client then sees the [`OutputSource`] from its beginning:
    /// what a replayed recording needs. A PAUSE does not stop the clock.
    #[must_use]
    pub fn clock_per_connection(mut self) -> Self {
        self.clock_per_connection = true;
        self
    }

    /// How long an RTDE client may leave the simulator unable to write (its send buffer
    /// full because the client stopped reading) before the connection is dropped;
    /// [`DEFAULT_STALL_TIMEOUT`] by default. The script ports keep such a client (see
    /// [`Stats::script_port_messages_skipped`]).
    #[must_use]
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// Injects a fault on every connection; may be called more than once.
    #[must_use]
    pub fn fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }

    /// The arm model whose kinematics turn joints into poses; [`Arm::UR5E`] by default.
    #[must_use]
    pub fn arm(mut self, arm: Arm) -> Self {
        self.arm = arm;
        self
    }

    /// Gives the arm a factory calibration, as every real arm has: `actual_TCP_pose` and
    /// every pose the controller computes come from the calibrated table, the primary
    /// interface's kinematics info carries it, and its configuration data the model's
    /// nominal one. None by default: the arm is exactly its model.
    ///
    /// ```
    /// use rtde_sim::{Arm, Calibration, Sim};
    ///
    /// let sim = Sim::builder().calibration(Calibration::random(42)).start().unwrap();
    /// assert_ne!(sim.arm(), Arm::UR5E);
    /// assert_eq!(sim.arm(), Arm::UR5E.calibrated(&Calibration::random(42)));
    /// ```
    #[must_use]
    pub fn calibration(mut self, calibration: Calibration) -> Self {
        self.calibration = Some(calibration);
        self
    }

    /// The arm as the controller computes with it: the model, calibrated.
    fn calibrated_arm(&self) -> Arm {
        self.calibration
            .map_or(self.arm, |calibration| self.arm.calibrated(&calibration))
    }

    /// How the joints move; [`Motion::DEFAULT`] by default. Checked against the joint
    /// limits by [`SimBuilder::start`].
    #[must_use]
    pub fn motion(mut self, motion: Motion) -> Self {
        self.motion = motion;
        self
    }

    /// The seed of the measurement noise: with a fixed seed every value of a run is
    /// reproducible exactly. Random (and reported by [`Sim::seed`]) by default.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Whether `actual_*` values carry measurement noise (on by default): `actual_q`
    /// within 2e-5 rad of `target_q`, `actual_qd` within 1e-4 rad/s of `target_qd`,
    /// currents within 0.02 A, forces within 0.5 N, voltages within 0.05 V.
    #[must_use]
    pub fn noise(mut self, noise: bool) -> Self {
        self.noise = noise;
        self
    }

    /// Deterministic mode: seed 0 and no noise, so `actual_q` is exactly the
    /// [`Motion`] law at `timestamp` and every value can be computed by a test.
    #[must_use]
    pub fn deterministic(self) -> Self {
        self.seed(0).noise(false)
    }

    /// Streams `value` for output field `field` at every tick, overriding the model
    /// (`robot_mode`, say). Checked by [`SimBuilder::start`].
    #[must_use]
    pub fn output_value(mut self, field: &str, value: Value) -> Self {
        self.fixed.push((field.to_owned(), value));
        self
    }

    /// Streams values from `source` instead of the simulated robot (a replayed
    /// recording, say). The robot's settings (arm, motion, seed, noise, output values)
    /// are then unused.
    #[must_use]
    pub fn source(mut self, source: impl OutputSource) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// Answers `NOT_FOUND` for fields whose first version on the configured generation no
    /// source records (`?` in the registry's data file; [`Field::since_is_recorded`]
    /// is `false`), instead of the default policy, which serves them as if every version
    /// of the generation had them.
    ///
    /// The default lets a client use such a field (`tool_digital_output` on e-Series, say)
    /// and leaves the verdict to the real controller; this switch plays the other side, a
    /// controller too old to have it, so a client's handling of that refusal can be tested.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().refuse_unrecorded_fields().start().unwrap();
    /// # drop(sim);
    /// ```
    ///
    /// [`Field::since_is_recorded`]: rtde_core::fields::Field::since_is_recorded
    #[must_use]
    pub fn refuse_unrecorded_fields(mut self) -> Self {
        self.refuse_unrecorded = true;
        self
    }

    /// Runs the repository's URScript template `rtde_servo.script` on the simulated
    /// robot's URScript engine, as if it were started on the pendant: the joints follow
    /// the waypoints of rtde-robot's control-loop handshake (targets in
    /// `input_double_register_24..=29`), one per cycle, within velocity and acceleration
    /// limits and stretched by the speed slider; the program stops the robot when the
    /// watchdog register stops changing or a waypoint id skips, says why in a text message,
    /// and reports it in `output_int_register_25` ([`Sim::program`] reads it).
    ///
    /// The program runs on the ticks the simulator streams (with a client receiving
    /// outputs), on the shared clock: leave pacing on.
    ///
    /// ```
    /// use rtde_sim::Sim;
    ///
    /// let sim = Sim::builder().servo_program().start().unwrap();
    /// assert!(sim.script_program().is_some());
    /// ```
    #[must_use]
    pub fn servo_program(mut self) -> Self {
        self.servo_program = true;
        self
    }

    /// Models the robot's state machine (see [`RobotState`]): the arm starts powered off,
    /// and `robot_mode`, `safety_mode`, `safety_status`, `runtime_state`,
    /// `robot_status_bits` and `safety_status_bits` report its state instead of a robot
    /// that is always running. Implied by [`SimBuilder::dashboard`].
    #[must_use]
    pub fn robot_state(mut self) -> Self {
        self.robot_state = true;
        self
    }

    /// Serves a Dashboard server on the RTDE address's IP and a free port
    /// ([`Sim::dashboard_addr`] says which), acting on the robot's state machine
    /// ([`SimBuilder::robot_state`]). A simulated PolyScope X (10.x) has none:
    /// [`SimBuilder::start`] refuses.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().dashboard().start().unwrap();
    /// assert!(sim.dashboard_addr().unwrap().ip().is_loopback());
    /// ```
    #[must_use]
    pub fn dashboard(mut self) -> Self {
        self.dashboard = Some(SocketAddr::new(self.bind.ip(), 0));
        self.robot_state = true;
        self
    }

    /// [`SimBuilder::dashboard`] on this address (port 29999 on a controller).
    #[must_use]
    pub fn dashboard_on(mut self, addr: SocketAddr) -> Self {
        self.dashboard = Some(addr);
        self.robot_state = true;
        self
    }

    /// Serves the script ports (primary, secondary and real-time interfaces: 30001–30003
    /// on a controller, and their read-only copies, 30011–30013:
    /// [`Sim::read_only_addr`]) on the RTDE address's IP and free ports ([`Sim::script_addr`]),
    /// with the robot's state machine ([`SimBuilder::robot_state`]). A program that
    /// runs on the URScript engine ([`ScriptProgram`](crate::script_program::ScriptProgram)),
    /// rtde's own included. The primary interface sends the version message,
    /// runtime exceptions ([`Fault::RuntimeException`]) and protective stops.
    ///
    /// ```
    /// use rtde_robot_proto::ports::ScriptPort;
    ///
    /// let sim = rtde_sim::Sim::builder().script_ports().start().unwrap();
    /// assert!(sim.script_addr(ScriptPort::Secondary).is_some());
    /// ```
    #[must_use]
    pub fn script_ports(mut self) -> Self {
        let any = SocketAddr::new(self.bind.ip(), 0);
        self.script_ports = Some([any; 3]);
        self.robot_state = true;
        self
    }

    /// [`SimBuilder::script_ports`] on `first`'s port and the next two, as a controller's
    /// 30001–30003 (port 0: three free ports).
    ///
    /// ```
    /// use rtde_robot_proto::ports::ScriptPort;
    ///
    /// let any = "127.0.0.1:0".parse().unwrap();
    /// let sim = rtde_sim::Sim::builder().script_ports_from(any).start().unwrap();
    /// assert_ne!(sim.script_addr(ScriptPort::RealTime).unwrap().port(), 0);
    /// ```
    #[must_use]
    pub fn script_ports_from(self, first: SocketAddr) -> Self {
        let at = |i: u16| match first.port() {
            0 => first,
            port => SocketAddr::new(first.ip(), port.saturating_add(i)),
        };
        self.script_ports_on(at(0), at(1), at(2))
    }

    /// [`SimBuilder::script_ports`] on these addresses (primary, secondary, real-time); the
    /// read-only copies ten ports up (free ports for port 0).
    #[must_use]
    pub fn script_ports_on(
        mut self,
        primary: SocketAddr,
        secondary: SocketAddr,
        realtime: SocketAddr,
    ) -> Self {
        self.script_ports = Some([primary, secondary, realtime]);
        self.robot_state = true;
        self
    }

    /// Starts the controller in local control: an e-Series Dashboard server refuses the
    /// commands that act on the robot until [`Sim::set_remote_control`] switches it.
    #[must_use]
    pub fn local_control(mut self) -> Self {
        self.local_control = true;
        self
    }

    /// How long after a protective stop the Dashboard server refuses to unlock it; 5 s,
    /// as on controllers, unless told otherwise (a test need not wait that long).
    #[must_use]
    pub fn protective_stop_unlock_delay(mut self, delay: Duration) -> Self {
        self.unlock_delay = Some(delay);
        self
    }

    /// Runs the behaviour of the repository's command program `rtde_command.script`
    /// on the simulated robot, as if it were started on the pendant, on the registers of
    /// [`CommandLayout::UPPER`]: `move_j`, `move_l` (with blends), the speed modes, the
    /// stops, servoing, and the configuration commands, with the program's handshake and
    /// watchdog; its text runs on the URScript engine, as any program does. The faults
    /// [`Fault::ProtectiveStopMidMove`] and [`Fault::RuntimeStopMidMove`] stop it, as they
    /// stop any program. It replaces [`SimBuilder::servo_program`]: the controller runs one
    /// program.
    ///
    /// ```
    /// let sim = rtde_sim::Sim::builder().command_program().start().unwrap();
    /// assert!(sim.script_program().is_some());
    /// ```
    #[must_use]
    pub fn command_program(self) -> Self {
        self.command_program_on(CommandLayout::UPPER)
    }

    /// As [`SimBuilder::command_program`], on the registers of `layout`.
    #[must_use]
    pub fn command_program_on(mut self, layout: CommandLayout) -> Self {
        self.command_program = Some(layout);
        self.servo_program = false;
        self
    }

    /// Binds the listener and starts serving.
    ///
    /// # Errors
    /// An invalid controller version, motion or output value, an address that cannot be
    /// bound, or a thread that cannot be started.
    pub fn start(self) -> Result<Sim, Error> {
        let seed = self.seed.unwrap_or_else(random_seed);
        self.start_robot(self.bind, seed, None)
    }

    /// The checked version, loop rate and speed.
    pub(crate) fn checked(&self) -> Result<(ControllerVersion, u32, u64), Error> {
        let version: ControllerVersion =
            self.version
                .parse()
                .map_err(|source| Error::InvalidVersion {
                    text: self.version.clone(),
                    source,
                })?;
        let generation = version
            .generation()
            .ok_or(Error::UnknownGeneration(version))?;
        self.motion.check().map_err(Error::InvalidMotion)?;
        if !(self.speed.is_finite() && (MIN_SPEED..=MAX_SPEED).contains(&self.speed)) {
            return Err(Error::InvalidSpeed(self.speed));
        }
        // Within 1e-3..=1e3 (checked above): 1e3..=1e9 millionths, no truncation.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let speed_ppm = (self.speed * 1e6).round() as u64;
        // 125 or 500: the highest output frequency is the control-loop rate.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let loop_rate = generation.max_frequency() as u32;
        Ok((version, loop_rate, speed_ppm))
    }

    /// Starts one simulator on `bind`; in a fleet, on the fleet's clock and clock thread.
    pub(crate) fn start_robot(
        &self,
        bind: SocketAddr,
        seed: u64,
        fleet: Option<(Clock, Arc<Ticker>)>,
    ) -> Result<Sim, Error> {
        let (version, loop_rate, speed_ppm) = self.checked()?;
        let arm = self.calibrated_arm();
        let generation = version
            .generation()
            .ok_or(Error::UnknownGeneration(version))?;
        let source = self.output_source(arm, seed)?;
        let (clock, ticker) = match fleet {
            Some((clock, ticker)) => (clock, Some(ticker)),
            None => (Clock::new(loop_rate, speed_ppm), None),
        };
        let config = Config {
            version,
            generation,
            loop_rate,
            v1_only: self.v1_only,
            paced: self.paced,
            clock_per_connection: self.clock_per_connection,
            stall_timeout: self.stall_timeout.max(Duration::from_millis(1)),
            faults: self.faults.clone(),
            booted_at: Instant::now(),
            refuse_unrecorded: self.refuse_unrecorded,
            source,
            ticker,
            robot_model: robot_model(self.arm.name),
            clock,
        };
        if self.dashboard.is_some() && generation == rtde_core::fields::Generation::PolyScopeX {
            return Err(Error::NoDashboard(version));
        }
        let listener =
            TcpListener::bind(bind).map_err(|source| Error::Bind { addr: bind, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| Error::Bind { addr: bind, source })?;
        let controller = self.starting_controller(arm, version)?;
        let shared = Arc::new(Shared::new(config, controller));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let (alive_tx, alive_rx) = mpsc::channel();
        let services_alive = alive_tx.clone();
        let acceptor = {
            let (shared, connections) = (Arc::clone(&shared), Arc::clone(&connections));
            thread::Builder::new()
                .name("rtde-sim-accept".into())
                .spawn(move || {
                    accept_loop(&listener, &shared, clock, &connections, &alive_tx);
                    drop(alive_tx);
                })
                .map_err(Error::Spawn)?
        };
        let mut sim = Sim {
            addr,
            seed,
            shared,
            acceptor: Some(acceptor),
            connections,
            dashboard: None,
            script: None,
            read_only: None,
            services: Vec::new(),
            control_loop: None,
            alive: Mutex::new(Some(alive_rx)),
        };
        self.serve(&mut sim, clock, services_alive)?;
        Ok(sim)
    }

    /// Where the outputs come from: the source given, or a simulated robot with the
    /// outputs fixed on it.
    fn output_source(&self, arm: Arm, seed: u64) -> Result<Arc<dyn OutputSource>, Error> {
        Ok(match &self.source {
            Some(source) => Arc::clone(source),
            None => {
                let mut robot = SimulatedRobot::new(arm, self.motion)
                    .with_seed(seed)
                    .with_noise(self.noise);
                for (name, value) in &self.fixed {
                    let field = lookup(Direction::Output, name).ok_or_else(|| {
                        Error::InvalidOutputValue {
                            field: name.clone(),
                            why: "no output field has this name".into(),
                        }
                    })?;
                    if value.wire_type() != field.wire_type() {
                        return Err(Error::InvalidOutputValue {
                            field: name.clone(),
                            why: format!(
                                "the field is {} on the wire; the value is {}",
                                field.wire_type(),
                                value.wire_type()
                            ),
                        });
                    }
                    robot = robot.with_fixed(field.name(), *value);
                }
                Arc::new(robot)
            }
        })
    }

    /// The controller the simulator starts with: its fieldbus, the program it runs (and
    /// starts script ports' programs with), and the robot's state machine.
    fn starting_controller(
        &self,
        arm: Arm,
        version: ControllerVersion,
    ) -> Result<Controller, Error> {
        let mut controller = Controller::with_fieldbus(self.fieldbus);
        let start = self.motion.position(0.0);
        let own = if let Some(layout) = self.command_program {
            Some((KnownProgram::Command, own_program::command_text(layout)))
        } else {
            self.servo_program
                .then(|| (KnownProgram::Servo, own_program::servo_text()))
        };
        if let Some((kind, text)) = own {
            let program = ScriptProgram::compile(&text, version, arm, start)
                .map_err(|(line, column, text)| Error::OwnProgram { line, column, text })?;
            controller.start_program(Program::Script(Box::new(program)), kind.name(), &text);
        }
        controller.motion_faults = MotionFaults::of(&self.faults);
        controller.start = ProgramStart { q: start, arm };
        if self.robot_state {
            let mut robot = RobotState::default();
            robot.set_remote_control(!self.local_control);
            if let Some(delay) = self.unlock_delay {
                robot.set_unlock_delay(delay);
            }
            if controller.program().is_some() {
                // A program the simulator starts with was started on the pendant: the
                // robot is powered on, its brakes released, the program playing.
                robot.power_on();
                robot.brake_release();
                robot.start_program();
            } else {
                // The joints move only when a program moves them.
                controller.install_program(Program::Still(start));
            }
            controller.robot = Some(robot);
            controller.protective_stop_after = self.faults.iter().rev().find_map(|f| match f {
                Fault::ProtectiveStopAfter(d) => Some(*d),
                _ => None,
            });
        }
        Ok(controller)
    }

    /// Starts the threads besides the RTDE acceptor: the control loop and the other
    /// interfaces; each holds a clone of `services_alive`.
    fn serve(
        &self,
        sim: &mut Sim,
        clock: Clock,
        services_alive: mpsc::Sender<()>,
    ) -> Result<(), Error> {
        // Unpaced, there is no wall clock to run on: each connection's ticks run the
        // program, as before.
        let runs_a_program = self.command_program.is_some() || self.servo_program;
        if self.paced && (runs_a_program || self.robot_state) {
            let thread =
                crate::control_loop::spawn(Arc::clone(&sim.shared), clock, services_alive.clone())
                    .map_err(Error::Spawn)?;
            sim.control_loop = Some(thread);
        }
        if let Some(bind) = self.dashboard {
            let (listener, bound) = service::bind(bind)?;
            let thread = service::spawn(
                "dashboard",
                listener,
                &sim.shared,
                &sim.connections,
                &services_alive,
                crate::dashboard::serve,
            )
            .map_err(Error::Spawn)?;
            sim.dashboard = Some(bound);
            sim.services.push((bound, thread));
        }
        if let Some(binds) = self.script_ports {
            use crate::script_port as port;
            let handlers: [(&str, service::Handler); 3] = [
                ("primary", port::serve_primary),
                ("secondary", port::serve_secondary),
                ("realtime", port::serve_realtime),
            ];
            sim.script = Some(sim.serve_each(binds, handlers, &services_alive)?);
            // The read-only copies, ten ports up (30011–30013), or on free ports.
            let copies = binds.map(|bind| match bind.port() {
                0 => bind,
                n => SocketAddr::new(bind.ip(), n.saturating_add(READ_ONLY_OFFSET)),
            });
            let handlers: [(&str, service::Handler); 3] = [
                ("primary-ro", port::serve_primary_read_only),
                ("secondary-ro", port::serve_secondary_read_only),
                ("realtime-ro", port::serve_realtime_read_only),
            ];
            sim.read_only = Some(sim.serve_each(copies, handlers, &services_alive)?);
        }
        Ok(())
    }
}

impl Sim {
    /// Serves each of `binds` with its handler; the addresses bound.
    fn serve_each(
        &mut self,
        binds: [SocketAddr; 3],
        handlers: [(&str, service::Handler); 3],
        alive: &mpsc::Sender<()>,
    ) -> Result<[SocketAddr; 3], Error> {
        let mut bound = binds;
        for ((bind, slot), (name, handler)) in binds.iter().zip(bound.iter_mut()).zip(handlers) {
            let (listener, addr) = service::bind(*bind)?;
            let thread = service::spawn(
                name,
                listener,
                &self.shared,
                &self.connections,
                alive,
                handler,
            )
            .map_err(Error::Spawn)?;
            *slot = addr;
            self.services.push((addr, thread));
        }
        Ok(bound)
    }
}

/// What `get robot model` answers for an arm: the model without the e-Series `e`.
fn robot_model(arm: &'static str) -> &'static str {
    arm.strip_suffix('e').unwrap_or(arm)
}

/// A seed that differs between runs: the time and the process id, mixed.
pub(crate) fn random_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    #[allow(clippy::cast_possible_truncation)] // only the low bits vary anyway
    let nanos = nanos as u64;
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}
