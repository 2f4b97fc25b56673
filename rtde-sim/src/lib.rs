//! A Universal Robots RTDE controller simulator: it speaks the Real-Time Data Exchange
//! protocol (TCP port 30004 on a robot) as a controller of a chosen software version does,
//! streams a simulated robot, and injects the faults clients meet in the field.
//!
//! It runs in-process (tests, examples, benchmarks) or as the `rtde-sim` binary
//! (`cargo run -p rtde-sim -- --version 5.21.0 --port 30004`). Every byte goes through
//! [`rtde_core::protocol`].
//!
//! ```
//! use std::io::{Read, Write};
//! use std::net::TcpStream;
//! use rtde_core::protocol::{ClientMessage, ControllerMessage, FrameBuffer, ProtocolVersion};
//! use rtde_sim::Sim;
//!
//! // Unpaced: packages come as fast as we read them, with the same values.
//! let sim = Sim::builder().controller_version("5.21.0").deterministic().unpaced().start().unwrap();
//! let mut socket = TcpStream::connect(sim.addr()).unwrap();
//! socket.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
//! let v2 = ProtocolVersion::V2;
//! let mut frames = FrameBuffer::new();
//! let mut buf = [0u8; 256];
//! let mut send = |socket: &mut TcpStream, msg: ClientMessage<'_>| {
//!     let n = msg.encode(v2, &mut buf).unwrap();
//!     socket.write_all(&buf[..n]).unwrap();
//! };
//! let mut recv = |socket: &mut TcpStream, check: &mut dyn FnMut(ControllerMessage<'_>)| loop {
//!     if let Some(frame) = frames.next_frame().unwrap() {
//!         return check(ControllerMessage::decode(frame, v2).unwrap());
//!     }
//!     let n = socket.read(frames.spare()).unwrap();
//!     assert!(n > 0, "the simulator closed the connection");
//!     frames.commit(n);
//! };
//!
//! send(&mut socket, ClientMessage::RequestProtocolVersion { version: 2 });
//! recv(&mut socket, &mut |m| assert_eq!(m, ControllerMessage::ProtocolVersionReply { accepted: true }));
//! send(&mut socket, ClientMessage::SetupOutputs { frequency: Some(125.0), names: "timestamp,actual_q" });
//! recv(&mut socket, &mut |m| {
//!     assert_eq!(m, ControllerMessage::SetupOutputsReply { recipe_id: Some(1), types: "DOUBLE,VECTOR6D" })
//! });
//! send(&mut socket, ClientMessage::Start);
//! recv(&mut socket, &mut |m| assert_eq!(m, ControllerMessage::StartReply { accepted: true }));
//!
//! // 125 Hz on a 500 Hz controller: every 4th tick, so timestamps 0, 0.008, 0.016.
//! for tick in [0u32, 4, 8] {
//!     recv(&mut socket, &mut |m| {
//!         let ControllerMessage::DataPackage { recipe_id: Some(1), payload } = m else { panic!("{m:?}") };
//!         let timestamp = f64::from_be_bytes(payload[..8].try_into().unwrap());
//!         assert_eq!(timestamp, f64::from(tick) / 500.0);
//!     });
//! }
//! sim.shutdown().unwrap();
//! ```
//!
//! # What it simulates
//!
//! - **Handshake.** Protocol versions 1 and 2 ([`SimBuilder::v1_only`] refuses 2);
//!   GET_URCONTROL_VERSION, answered as often as asked; text messages in the negotiated
//!   format. A connection speaks v1 until it negotiates.
//! - **Setups.** Replies list the exact wire type names (`VECTOR6D`, …) in request order.
//!   A name the configured version lacks (per the registry: unknown, newer, or of another
//!   generation) is `NOT_FOUND`; an input held by another connection or by the fieldbus
//!   adapter ([`SimBuilder::fieldbus_adapter`]) is `IN_USE`. One trailing comma after the
//!   last name is tolerated.
//! - **Refusals.** A refused setup gets a TEXT_MESSAGE (level error) saying why, then its
//!   reply with recipe id 0 (v1 output replies carry no id). For per-name problems the
//!   reply lists every name's type or `NOT_FOUND`/`IN_USE`; for whole-request problems
//!   (a name list over 2048 bytes, no names, an output frequency outside
//!   `0 < f <= loop rate`, an output setup while streaming, no input recipe id left)
//!   the type list is empty. Nothing of a refused setup takes effect.
//! - **Recipes.** One output recipe per connection, replaced by each successful
//!   SETUP_OUTPUTS (only while paused); its ids count 1, 2, … and are sent in v2 data
//!   packages. Input recipes get ids 1 to 255 per connection; input setups are also
//!   accepted while streaming.
//! - **Streaming.** The control loop runs at 125 Hz (CB3) or 500 Hz (e-Series,
//!   PolyScope X); an output recipe at frequency `f` gets a package every
//!   `floor(loop rate / f)` ticks (the RTDE guide's rule), on ticks that are multiples of that number, so
//!   `timestamp` steps by exactly that many control periods (v1: every tick). START with
//!   no output recipe is refused (a text message says why, then the reply with 0), as the
//!   RTDE guide says ("this will fail if e.g. an output package has not been configured
//!   yet"; a client must subscribe to at least one output) and controllers up to 5.22 at
//!   least still do; PAUSE is always accepted. A paced connection that falls behind by up to 250 ms (its
//!   thread woke late on a busy machine) sends the missed packages at once, so pacing
//!   never makes a gap by itself; one further behind (its writes blocked by a client
//!   that reads too slowly) sends only the newest data, as a controller does, and the
//!   client sees a gap.
//! - **Time.** `timestamp` is `tick as f64 / loop rate`, never read from the wall clock;
//!   the wall clock only paces the ticks ([`SimBuilder::unpaced`] removes even that,
//!   [`SimBuilder::speed`] runs them faster or slower). All connections share one
//!   clock, as on a controller, unless [`SimBuilder::clock_per_connection`] gives each
//!   its own, started at tick 0 by its first START.
//! - **Inputs.** Input data packages take effect whether or not the connection's
//!   synchronisation is started: before any START, while streaming and while paused
//!   alike. The RTDE guide's START and PAUSE "start" and "pause sending output updates"
//!   and say nothing of inputs; ur_rtde's `RTDEIOInterface`, used on real robots to set
//!   digital outputs, sets up its input recipes and sends input packages without ever
//!   sending START, so controllers apply them. (UR's Python client declines to send
//!   inputs while not started; that is the client's choice, not the controller's.) Each
//!   input variable has one owner across connections, released when its connection
//!   closes; values stay. Packages for an unknown recipe id or of the wrong length are
//!   ignored, with one text message per connection.
//! - **Fields of unrecorded version.** A few fields have no recorded first version on a
//!   generation (`?` in the registry's data file, [`Field::since_is_recorded`] false).
//!   By default they are served as if every version of the generation had them (the
//!   registry's policy: let the controller decide); [`SimBuilder::refuse_unrecorded_fields`]
//!   (`--refuse-unrecorded` on both command lines) answers `NOT_FOUND` instead.
//! - **A stalled stream.** [`Sim::pause_stream`] holds every connection's output packages
//!   while the connections stay open, and [`Sim::resume_stream`] lets them go again, so a
//!   client's staleness deadline can be tested without a fault that ends the link.
//! - **Slow clients.** A client that leaves the simulator unable to write for longer than
//!   [`SimBuilder::stall_timeout`] is disconnected.
//! - **The robot.** See [`SimulatedRobot`] and [`Motion`]: joints move smoothly within
//!   limits, Cartesian values come from forward kinematics of the [`Arm`], inputs take
//!   effect, every output field of the registry gets a value of its type.
//! - **Faults.** See [`Fault`]: each is also a `--fault SPEC` flag of the `rtde-sim` and
//!   `rtde sim` command lines, so clients in any language meet them (the grammar is
//!   `Fault`'s [`FromStr`](std::str::FromStr) implementation: `skip-every=10`,
//!   `data-before-start-reply`, `slow-boot=5s,300ms`, `build=108318`, …).
//! - **The Dashboard server and the script ports** (opt-in: [`SimBuilder::dashboard`],
//!   [`SimBuilder::script_ports`]): a robot state machine ([`RobotState`]) behind a
//!   Dashboard server and the primary, secondary and real-time interfaces, visible in
//!   `robot_mode`, `safety_status`, `runtime_state` and the status bits; every program sent,
//!   the project's own included, runs on the URScript engine. See `docs/dashboard.md`.
//! - **Fleets.** [`SimBuilder::start_fleet`] serves many controllers from one process,
//!   each on its own port, with one clock thread streaming every paced connection of
//!   every robot: one wake-up per control-loop tick, not one per robot per period.
//!
//! # Serving other data
//!
//! [`SimBuilder::source`] replaces the simulated robot with any [`OutputSource`] (a
//! replayed recording, for instance); the protocol side stays the same. A source says
//! which fields it has ([`OutputSource::provides`]; others are `NOT_FOUND`), the highest
//! frequency it has data for ([`OutputSource::max_frequency`]; faster setups are
//! refused) and its name for the text messages that explain a refusal. The `rtde replay`
//! command of `rtde-cli` serves a recorded capture this way, with
//! [`SimBuilder::clock_per_connection`] and [`SimBuilder::speed`].
//!
//! [`Field::since_is_recorded`]: rtde_core::fields::Field::since_is_recorded

#![forbid(unsafe_code)]

mod acknowledge;
mod calibration_spec;
#[cfg(feature = "cli")]
pub mod cli;
mod clock;
mod connection;
mod control_loop;
mod controller;
mod dashboard;
mod fault;
mod fault_spec;
mod fleet;
mod io;
mod motion;
mod motion_faults;
mod own_program;

mod robot;
mod robot_program;
mod robot_state;
mod script_port;
pub mod script_program;
mod server;
mod service;
mod sim;
mod source;
mod state_report;
mod ticker;

pub use calibration_spec::calibration_of;
pub use controller::KnownProgram;
pub use fault::{Fault, Malformation, Trigger};
pub use fleet::Fleet;
pub use io::IoState;
pub use motion::{MAX_JOINT_ACCELERATION, MAX_JOINT_SPEED};
pub use own_program::state::{CommandProgramState, ServoProgramState};
pub use robot::{JOINT_POSITION_LIMIT, JOINT_SPEED_LIMIT, Motion, SimulatedRobot};
pub use robot_program::Program;
pub use robot_state::{PROTECTIVE_STOP_UNLOCK_DELAY, RobotState};
pub use rtde_kinematics::{Arm, Calibration};
pub use sim::{
    DEFAULT_CONTROLLER_VERSION, DEFAULT_STALL_TIMEOUT, Error, SHUTDOWN_TIMEOUT, Sim, SimBuilder,
    Stats,
};
pub use source::{OutputSource, Sample, Tick};
