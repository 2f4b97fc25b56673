//! A thin, blocking RTDE client over [`std::net::TcpStream`].
//!
//! [`Client`] owns the socket, frames the byte stream with [`protocol`](crate::protocol),
//! matches requests to replies and applies timeouts. Its conversation with a controller:
//!
//! 1. [`Client::connect`] negotiates protocol v2 (v1 when the controller refuses it) and reads
//!    the controller's version;
//! 2. [`Client::setup_outputs`] and [`Client::setup_inputs`] check each recipe against the
//!    registry *for that version* and send it; the controller's answer is checked too;
//! 3. [`Client::start`], then [`Client::recv`] (or [`Client::recv_into`],
//!    [`Client::recv_as`]) for each output package and [`Client::send`] for inputs; after
//!    setup neither allocates;
//! 4. [`Client::pause`] and [`Client::start`] again to resume; [`Client::close`] at the end.
//!
//! **Keep reading.** The controller sends every output package at the recipe's frequency and
//! does not wait: a client that stops calling [`Client::recv`] fills the socket's buffers, and
//! the controller then drops the connection. Read on a thread of its own if the work per
//! package can take longer than the period, or ask for a lower frequency.
//!
//! **After an error.** Refusals, the checks made before sending, and errors while receiving
//! data (a timeout, a package that does not fit the recipe) leave the connection usable. A
//! broken link, bytes that cannot be framed, or any failure while a reply is due (requests
//! and replies are then out of step) lose it: later calls return
//! [`Error::ConnectionLost`], and the way on is [`Client::reconnect`] (or, with
//! [`ConnectOptions::reconnect`], the client reconnects by itself).
//!
//! # Every package, or the latest
//!
//! | | [`Client::recv`] (and [`recv_into`](Client::recv_into), [`recv_as`](Client::recv_as)) | [`Client::recv_latest`] (and [`recv_latest_into`](Client::recv_latest_into)) |
//! | --- | --- | --- |
//! | returns | the next package, in the order sent; each exactly once | the newest package that has arrived; waits only when none has |
//! | packages that arrived before it | returned by later calls | dropped, counted in [`Stats::superseded`] |
//! | for | logging, recording, anything that integrates over time | control loops that act on the current state and run slower than the stream |
//! | if the caller is slow | packages queue in the socket until the controller drops the connection | the queue is emptied at every call |
//!
//! Both modes count the same losses, kept apart by cause in [`Stats`]: packages the
//! controller skipped ([`Stats::skipped`], from the recipe's `timestamp`), packages lost while
//! the link was down ([`Stats::lost`]), packages dropped while waiting for a reply
//! ([`Stats::discarded`]) and, in the latest-only mode, packages replaced by a newer one
//! ([`Stats::superseded`]). With a `timestamp` in the recipe nothing is lost silently:
//! `received + superseded + discarded + skipped + lost` is every package the controller was
//! due to send while streaming. The two modes can be mixed call by call.
//!
//! # Reconnection
//!
//! [`Client::reconnect`] connects again to the same address and replays what was negotiated:
//! the output recipe at the same frequency (the same SETUP_OUTPUTS bytes), every input
//! recipe in the order it was set up, and START when outputs were streaming. Each recipe is
//! first checked again against the (possibly different) controller's version; a field the
//! controller lost is an [`Error::Unavailable`] (or the controller's `NOT_FOUND`,
//! [`Error::SetupRefused`]) naming it. [`InputHandle`]s stay valid: the client sends with the
//! id the new connection assigned. [`Stats`] carry on across reconnections; the packages
//! lost while the link was down are counted in [`Stats::lost`], from the recipe's
//! `timestamp` when it has one (estimated from the clock otherwise).
//!
//! With [`ConnectOptions::reconnect`], a link that fails while receiving or sending is
//! reconnected within the call, with bounded, backed-off attempts: the call then returns the
//! next package (or sends the package) as if nothing had happened, and the events below tell
//! what did. A read timeout is no failed link: it is returned, and the connection stays.
//!
//! # Watching the connection
//!
//! [`Client::state`] says what the connection is doing ([`State`]: negotiating, connected,
//! running, paused, reconnecting, closed), and [`Client::events`] drains a bounded queue of
//! what changed ([`Event`]: each new state, a lost link, failed attempts, a reconnection,
//! the packages lost across it). Events come only with state changes, so the queue costs
//! nothing on the receive path; set [`ConnectOptions::event_capacity`] to 0 to keep none.
//!
//! ```
//! # use rtde_core::client::{Event, State};
//! # fn watch(client: &mut rtde_core::Client) {
//! for event in client.events() {
//!     match event {
//!         Event::State(State::Reconnecting) => eprintln!("link lost; reconnecting"),
//!         Event::Reconnected(r) => eprintln!("back after {:?} ({} attempts)", r.took, r.attempts),
//!         Event::PackagesLost { count, .. } => eprintln!("{count} packages lost meanwhile"),
//!         _ => {}
//!     }
//! }
//! # }
//! ```
//!
//! # Example
//!
//! ```
//! use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let addr = fake_controller::start();
//!
//! let mut client = Client::connect(addr, ConnectOptions::new())?;
//! let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"])?;
//! client.setup_outputs(outputs.spec(), 125.0)?;
//! client.start()?;
//! for _ in 0..3 {
//!     client.recv_into(&mut outputs)?;
//!     println!("{:?}", outputs.get("actual_q"));
//! }
//! assert_eq!(client.stats().received, 3);
//! client.close()?;
//! # Ok(())
//! # }
//! # mod fake_controller {
//! #     use std::{io::{Read, Write}, net::{SocketAddr, TcpListener}};
//! #     use rtde_core::protocol::{ClientMessage as C, ControllerMessage as M, FrameBuffer, ProtocolVersion::V2};
//! #     /// Plays a controller that accepts everything and sends three packages after START.
//! #     pub fn start() -> SocketAddr {
//! #         let listener = TcpListener::bind("127.0.0.1:0").unwrap();
//! #         let addr = listener.local_addr().unwrap();
//! #         std::thread::spawn(move || {
//! #             let (mut s, _) = listener.accept().unwrap();
//! #             let (mut frames, mut out) = (FrameBuffer::new(), [0u8; 1024]);
//! #             let mut send = |s: &mut std::net::TcpStream, m: M| { let n = m.encode(V2, &mut out).unwrap(); s.write_all(&out[..n]).unwrap() };
//! #             loop {
//! #                 let Some(frame) = frames.next_frame().unwrap() else {
//! #                     let n = s.read(frames.spare()).unwrap();
//! #                     if n == 0 { return } frames.commit(n); continue;
//! #                 };
//! #                 match C::decode(frame, V2).unwrap() {
//! #                     C::RequestProtocolVersion { .. } => send(&mut s, M::ProtocolVersionReply { accepted: true }),
//! #                     C::GetUrcontrolVersion => send(&mut s, M::UrcontrolVersion("3.15.8".parse().unwrap())),
//! #                     C::SetupOutputs { .. } => send(&mut s, M::SetupOutputsReply { recipe_id: Some(1), types: "DOUBLE,VECTOR6D" }),
//! #                     C::Start => {
//! #                         send(&mut s, M::StartReply { accepted: true });
//! #                         for i in 0..3u8 { send(&mut s, M::DataPackage { recipe_id: Some(1), payload: &[i; 56] }) }
//! #                     }
//! #                     C::Pause => send(&mut s, M::PauseReply { accepted: true }),
//! #                     _ => {}
//! #                 }
//! #             }
//! #         });
//! #         addr
//! #     }
//! # }
//! ```

mod bounded;
mod events;
mod gaps;
mod options;
mod reconnect;
mod setup;
mod texts;
mod tolerant;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rtde_fields::{ControllerVersion, Direction, Generation};

use crate::error::Error;
use crate::protocol::{
    ClientMessage, ControllerMessage, DecodeError, DecodeErrorKind, Frame, FrameBuffer,
    MAX_PACKAGE_LEN, ProtocolVersion, TextMessage, finish_input_data_package, package_type as ty,
};
use crate::recipe::{FromPayload, InputRecipe, OutputRecipe, PayloadError, RecipeSpec};

use bounded::BoundedQueue;
pub use events::{Event, Reconnection, State};
use gaps::GapCounter;
pub use options::{ConnectOptions, ReconnectPolicy};
use setup::SetUp;
pub use texts::ControllerText;
pub use tolerant::{DropReason, DroppedField};

/// The controller's RTDE port.
pub const RTDE_PORT: u16 = 30004;

/// Counters of what a client received, skipped and dropped, over every connection it made
/// (they carry on across reconnections).
///
/// While outputs stream, every package the controller was due to send ends up in exactly one
/// of `received`, `superseded`, `discarded`, `skipped` and `lost` (`skipped`, and `lost`
/// exactly, need a `timestamp` in the recipe).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Output data packages delivered by [`Client::recv`], [`Client::recv_latest`] and their
    /// helpers.
    pub received: u64,
    /// Output packages the controller skipped, counted from the recipe's `timestamp`
    /// (see [`Client::counts_gaps`]); the controller skips packages when it is overloaded.
    /// A package refused with [`Error::WrongRecipeId`] or [`Error::WrongLength`] leaves the
    /// same hole in the timestamps and is counted here too.
    pub skipped: u64,
    /// Output data packages that arrived while the client waited for a reply (after a
    /// PAUSE request, say) and were dropped.
    pub discarded: u64,
    /// Output data packages [`Client::recv_latest`] dropped because a newer one had
    /// arrived: the caller's choice, not a loss on the link.
    pub superseded: u64,
    /// Output packages lost while the link was down, between the last package received
    /// before a reconnection and the first one after it: from the recipe's `timestamp`, or
    /// estimated from the clock without one (see [`Event::PackagesLost`]).
    pub lost: u64,
    /// Successful reconnections.
    pub reconnects: u64,
    /// Text messages dropped because the queue was full
    /// ([`ConnectOptions::text_message_capacity`]).
    pub texts_dropped: u64,
    /// Events dropped because the queue was full ([`ConnectOptions::event_capacity`]).
    pub events_dropped: u64,
    /// Packages of a type the RTDE guide does not define (an ASCII letter this crate does
    /// not know), skipped whole: a newer controller may send them, and they are no reason to
    /// drop the link. Bytes that cannot start a package at all still lose the connection.
    pub unknown_packages: u64,
}

/// An input recipe set up on a connection, for [`Client::send`].
///
/// Only valid on the client that returned it; it stays valid across reconnections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputHandle {
    client: u64,
    index: usize,
}

/// The output recipe as set up.
#[derive(Debug)]
struct Outputs {
    recipe_id: Option<u8>,
    recipe: SetUp,
    frequency: f64,
}

/// One input recipe as set up.
#[derive(Debug)]
struct Inputs {
    recipe_id: u8,
    recipe: SetUp,
}

/// Where streaming stood when the link was lost: to count what the gap cost.
#[derive(Clone, Copy, Debug)]
struct Resume {
    /// The `timestamp` of the last package received.
    timestamp: Option<f64>,
    /// When the last package was received.
    at: Option<Instant>,
    /// The controller's version then: another version means a restarted controller, whose
    /// clock (and `timestamp`) started again.
    controller: ControllerVersion,
    /// When the reconnection finished (START acknowledged).
    resumed_at: Option<Instant>,
}

impl Resume {
    /// How far, at least, a continuing controller clock advanced between the last package
    /// before the gap and the first after it, in seconds: that first package was sent after
    /// START, and the last one before the gap before it was received. Less a tolerance for
    /// the START round trip, the control-loop tick and the two clocks' disagreement.
    fn min_clock_advance(&self) -> f64 {
        const TOLERANCE: f64 = 0.25;
        match (self.at, self.resumed_at) {
            (Some(at), Some(resumed)) => {
                (resumed.saturating_duration_since(at).as_secs_f64() - TOLERANCE).max(0.0)
            }
            _ => 0.0,
        }
    }
}

/// Tells handles of different clients apart.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A connection to a controller's RTDE interface. See the [module](self) documentation.
pub struct Client {
    stream: TcpStream,
    /// Every address the controller's address resolved to, for reconnecting.
    addrs: Vec<SocketAddr>,
    peer: SocketAddr,
    options: ConnectOptions,
    serial: u64,
    frames: FrameBuffer,
    /// Every package is encoded here; input packages are encoded in place.
    out: Box<[u8]>,
    protocol: ProtocolVersion,
    controller: ControllerVersion,
    /// The read timeout the socket has now.
    socket_timeout: Option<Duration>,
    outputs: Option<Outputs>,
    inputs: Vec<Inputs>,
    /// Outputs were started and not paused since: what a reconnection restores.
    running: bool,
    /// Outputs were started at least once (tells [`State::Paused`] from
    /// [`State::Connected`]).
    started: bool,
    /// An earlier error left the stream out of step or closed.
    lost: bool,
    state: State,
    events: BoundedQueue<Event>,
    texts: BoundedQueue<ControllerText>,
    stats: Stats,
    gaps: GapCounter,
    /// When the last output package was received.
    last_data_at: Option<Instant>,
    /// Set by a reconnection while streaming; taken by the first package after it.
    resume: Option<Resume>,
    /// The newest package [`Client::recv_latest`] found; reserved at setup.
    latest: Vec<u8>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .field("state", &self.state)
            .field("protocol", &self.protocol)
            .field("controller", &self.controller)
            .field("outputs", &self.outputs)
            .field("inputs", &self.inputs)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to a controller, negotiates the protocol version (v2, or v1 when the
    /// controller refuses v2) and reads the controller's version.
    ///
    /// Each resolved address is tried in turn within the connect timeout. `TCP_NODELAY` is
    /// set: packages are small and late ones are useless. Text messages and stray data
    /// packages that arrive during the handshake (controllers send some while booting) are
    /// kept or counted, not mistaken for replies.
    ///
    /// ```no_run
    /// use rtde_core::{Client, ConnectOptions, RTDE_PORT};
    ///
    /// let client = Client::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new())?;
    /// println!("{} over {}", client.controller_version(), client.protocol_version());
    /// # Ok::<(), rtde_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Resolve`], [`Error::Connect`], a link error during the handshake,
    /// [`Error::ProtocolRefused`], or [`Error::Misuse`] for a zero timeout.
    pub fn connect<A: ToSocketAddrs>(addr: A, options: ConnectOptions) -> Result<Client, Error> {
        if options.get_connect_timeout().is_zero()
            || options.get_read_timeout().is_some_and(|t| t.is_zero())
            || options.get_write_timeout().is_some_and(|t| t.is_zero())
        {
            return Err(Error::Misuse(
                "a timeout of zero is not a timeout; use `None` to wait forever",
            ));
        }
        let addrs: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|source| Error::Resolve { source })?
            .collect();
        let (stream, peer) = open(&addrs, &options)?;
        let mut client = Client {
            stream,
            addrs,
            peer,
            socket_timeout: options.get_read_timeout(),
            texts: BoundedQueue::new(options.get_text_message_capacity()),
            events: BoundedQueue::new(options.get_event_capacity()),
            options,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            frames: FrameBuffer::new(),
            out: vec![0; MAX_PACKAGE_LEN].into_boxed_slice(),
            protocol: ProtocolVersion::V1,
            controller: ControllerVersion::new(0, 0, 0, 0),
            outputs: None,
            inputs: Vec::new(),
            running: false,
            started: false,
            lost: false,
            state: State::Negotiating,
            stats: Stats::default(),
            gaps: GapCounter::off(),
            last_data_at: None,
            resume: None,
            latest: Vec::new(),
        };
        client.events.push(Event::State(State::Negotiating));
        client.handshake()?;
        client.set_state(State::Connected);
        Ok(client)
    }

    /// The protocol version in use.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.protocol
    }

    /// The controller's software version, as it reported it.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.controller
    }

    /// The controller's generation, `None` for a major version the registry does not know.
    #[must_use]
    pub fn generation(&self) -> Option<Generation> {
        self.controller.generation()
    }

    /// The controller's address.
    #[must_use]
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// What the connection is doing now. See [`State`], and [`Client::events`] for the
    /// changes.
    #[must_use]
    pub fn state(&self) -> State {
        self.state
    }

    /// The events since the last call, oldest first; the queue keeps the last
    /// [`ConnectOptions::event_capacity`] and counts the ones it dropped in
    /// [`Stats::events_dropped`].
    pub fn events(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.events.queue_mut().drain(..)
    }

    /// The highest output frequency this controller accepts, in hertz: its control-loop rate,
    /// 125 Hz on CB3 and 500 Hz on e-Series and PolyScope X (500 Hz for a generation the
    /// registry does not know). Over protocol v1 it is also the only frequency.
    #[must_use]
    pub fn max_frequency(&self) -> f64 {
        self.controller
            .generation()
            .map_or(500.0, Generation::max_frequency)
    }

    /// Sets up the output recipe the controller will stream at `frequency` hertz.
    ///
    /// Before sending, the spec is checked against the registry (names, direction, types,
    /// the 2048-byte name list) and against the controller's version: one error lists every
    /// field the controller cannot have and the version each needs. The frequency must be
    /// positive and at most [`Client::max_frequency`]. **Protocol v1 cannot set a
    /// frequency:** the controller streams at its control-loop rate, so `frequency` must be
    /// exactly [`Client::max_frequency`] there, and anything else is refused with
    /// [`Error::FrequencyNotInV1`].
    ///
    /// The controller's reply is checked too: `NOT_FOUND` fields are listed in
    /// [`Error::SetupRefused`], and a type that differs from the recipe's fails with
    /// [`Error::SetupReply`] rather than decode data with the wrong layout. Setting up again
    /// replaces the recipe the client expects; the first is forgotten even when the second
    /// is refused.
    ///
    /// # Errors
    /// [`Error::Recipe`], [`Error::Unavailable`], [`Error::InvalidFrequency`],
    /// [`Error::FrequencyTooHigh`], [`Error::FrequencyNotInV1`] (nothing sent for these);
    /// [`Error::SetupRefused`], [`Error::SetupReply`]; a link or protocol error;
    /// [`Error::Misuse`] for an input spec or while streaming (call [`Client::pause`] first).
    pub fn setup_outputs(&mut self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error> {
        let result = self.setup_outputs_inner(spec, frequency);
        self.settle(result)
    }

    fn setup_outputs_inner(&mut self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error> {
        self.check_usable()?;
        if spec.direction() != Direction::Output {
            return Err(Error::Misuse(
                "`setup_outputs` needs an output recipe; set input recipes up with `setup_inputs`",
            ));
        }
        self.check_not_running()?;
        let fields = setup::check_spec(&spec)?;
        setup::check_available(Direction::Output, &fields, self.controller)?;
        let frequency_field = self.frequency_field(frequency)?;
        self.outputs = None;
        let recipe_id = self.exchange_setup_outputs(&spec, frequency_field)?;
        self.outputs = Some(Outputs {
            recipe_id,
            recipe: SetUp::new(&spec),
            frequency,
        });
        self.gaps = GapCounter::new(&spec, frequency, self.max_frequency());
        self.latest = Vec::with_capacity(spec.payload_size());
        Ok(())
    }

    /// Sets up an input recipe and returns the handle to [`Client::send`] it with. A client
    /// may set up several; the controller assigns each its id.
    ///
    /// The spec is checked as in [`Client::setup_outputs`]. The controller refuses a recipe
    /// with fields it does not know (`NOT_FOUND`) or that another client or a fieldbus
    /// adapter already writes (`IN_USE`); [`Error::SetupRefused`] lists every such field and
    /// says when a register lies in the range reserved for fieldbus adapters.
    ///
    /// # Errors
    /// As [`Client::setup_outputs`], without the frequency errors.
    pub fn setup_inputs(&mut self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error> {
        let result = self.setup_inputs_inner(spec);
        self.settle(result)
    }

    fn setup_inputs_inner(&mut self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error> {
        self.check_usable()?;
        if spec.direction() != Direction::Input {
            return Err(Error::Misuse(
                "`setup_inputs` needs an input recipe; set the output recipe up with `setup_outputs`",
            ));
        }
        self.check_not_running()?;
        let fields = setup::check_spec(&spec)?;
        setup::check_available(Direction::Input, &fields, self.controller)?;
        let recipe_id = self.exchange_setup_inputs(&spec)?;
        self.inputs.push(Inputs {
            recipe_id,
            recipe: SetUp::new(&spec),
        });
        Ok(InputHandle {
            client: self.serial,
            index: self.inputs.len() - 1,
        })
    }

    /// The id the controller gave an input recipe, `None` for a handle of another client.
    /// It may change when the client reconnects; the handle stays valid.
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.input(input).map(|i| i.recipe_id)
    }

    /// The id the controller gave the output recipe: `None` before setup and in protocol v1,
    /// whose data packages carry none.
    #[must_use]
    pub fn output_recipe_id(&self) -> Option<u8> {
        self.outputs.as_ref().and_then(|o| o.recipe_id)
    }

    /// Starts streaming, or resumes after [`Client::pause`]; does nothing while streaming.
    ///
    /// Gap counting restarts: the time spent paused is no gap.
    ///
    /// # Errors
    /// [`Error::StartRefused`], or a link or protocol error.
    pub fn start(&mut self) -> Result<(), Error> {
        let result = self.start_inner();
        self.settle(result)
    }

    fn start_inner(&mut self) -> Result<(), Error> {
        self.check_usable()?;
        if self.running {
            return Ok(());
        }
        self.exchange_start()?;
        self.running = true;
        self.started = true;
        self.gaps.restart();
        self.resume = None;
        self.set_state(State::Running);
        Ok(())
    }

    /// Pauses streaming; does nothing when not streaming. Output packages already on their
    /// way are dropped and counted in [`Stats::discarded`]. Call [`Client::start`] to resume.
    ///
    /// # Errors
    /// [`Error::PauseRefused`], or a link or protocol error.
    pub fn pause(&mut self) -> Result<(), Error> {
        let result = self.pause_inner();
        self.settle(result)
    }

    fn pause_inner(&mut self) -> Result<(), Error> {
        self.check_usable()?;
        if !self.running {
            return Ok(());
        }
        let reply = self
            .request(&ClientMessage::Pause)
            .and_then(|()| self.reply(ty::PAUSE));
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                if self.lost {
                    // The user asked to pause: a reconnection must not START again.
                    self.running = false;
                    self.resume = None;
                }
                return Err(e);
            }
        };
        match reply {
            ControllerMessage::PauseReply { accepted: true } => {}
            ControllerMessage::PauseReply { accepted: false } => return Err(Error::PauseRefused),
            other => return Err(unexpected(&other, ty::PAUSE)),
        }
        self.running = false;
        self.resume = None;
        self.set_state(State::Paused);
        Ok(())
    }

    /// Whether outputs are streaming (started and not paused, on a connection that works).
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.state == State::Running
    }

    /// The values of the next output data package, in recipe order, big-endian, borrowed from
    /// the client's receive buffer until the next call. No heap allocation.
    ///
    /// Packages come in the order the controller sent them, each exactly once. Text messages
    /// that arrive in between are queued ([`Client::text_messages`]). With a `timestamp` in
    /// the recipe, packages the controller skipped are counted in [`Stats::skipped`]. See
    /// [`Client::recv_latest`] for the newest package instead.
    ///
    /// The controller does not wait for a slow reader: it drops a connection whose client
    /// stops reading. Call this at least as often as the recipe's frequency.
    ///
    /// With [`ConnectOptions::reconnect`], a link that fails is reconnected within the call
    /// (one round of attempts) and the first package of the new connection is returned.
    ///
    /// # Errors
    /// [`Error::Timeout`] when no package arrives within the read timeout (the connection
    /// stays usable); [`Error::WrongRecipeId`] and [`Error::WrongLength`] for a package that
    /// does not fit the recipe (the package is consumed, the connection stays usable);
    /// [`Error::Closed`] and other link errors (or, reconnecting, the last attempt's error);
    /// [`Error::Misuse`] before [`Client::start`].
    pub fn recv(&mut self) -> Result<&[u8], Error> {
        self.next_data()?;
        self.stats.received += 1;
        let protocol = self.protocol;
        Ok(take_data_values(&mut self.frames, protocol))
    }

    /// Receives the next output package into `recipe`, which must be the recipe set up (same
    /// fields and types); no heap allocation.
    ///
    /// # Errors
    /// As [`Client::recv`]; [`Error::Misuse`] for another recipe (checked before receiving,
    /// so no package is lost).
    pub fn recv_into<R: OutputRecipe + ?Sized>(&mut self, recipe: &mut R) -> Result<(), Error> {
        self.check_output_spec(&recipe.spec())?;
        let payload = self.recv()?;
        recipe.decode_into(payload).map_err(Error::Payload)
    }

    /// Receives the next output package as a `T`, whose spec must be the recipe set up.
    ///
    /// # Errors
    /// As [`Client::recv_into`].
    pub fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        self.check_output_spec(&T::SPEC)?;
        let payload = self.recv()?;
        T::from_payload(payload).map_err(Error::Payload)
    }

    /// The values of the newest output package that has arrived, dropping the older ones
    /// still queued; waits (within the read timeout) only when none has arrived. No heap
    /// allocation.
    ///
    /// Everything already received is taken: the client's buffer, and what the socket
    /// holds without waiting. The packages passed over are counted in
    /// [`Stats::superseded`] and still feed gap counting ([`Stats::skipped`]); text
    /// messages among them are queued. A package that does not fit the recipe stops the
    /// draining: the newest good one before it is returned, and the next call reports it.
    /// See the [module](self) documentation for [`Client::recv`] and this side by side.
    ///
    /// ```
    /// # fn control(client: &mut rtde_core::Client) -> Result<(), rtde_core::Error> {
    /// // A 50 Hz loop on a 500 Hz stream: act on the current state, skip the rest.
    /// loop {
    ///     let state = client.recv_latest()?;
    ///     # let _ = state; break;
    ///     // … compute and send, then sleep until the next period …
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Client::recv`].
    pub fn recv_latest(&mut self) -> Result<&[u8], Error> {
        self.next_data()?;
        let protocol = self.protocol;
        let values = take_data_values(&mut self.frames, protocol);
        self.latest.clear();
        self.latest.extend_from_slice(values);
        // Bounded: a controller cannot outrun this, but an unpaced peer could.
        for _ in 0..MAX_DRAIN_READS {
            self.take_buffered_latest();
            if !self.read_available() {
                break;
            }
        }
        self.take_buffered_latest();
        self.stats.received += 1;
        Ok(&self.latest)
    }

    /// Receives the newest output package into `recipe`, as [`Client::recv_latest`].
    ///
    /// # Errors
    /// As [`Client::recv_into`].
    pub fn recv_latest_into<R: OutputRecipe + ?Sized>(
        &mut self,
        recipe: &mut R,
    ) -> Result<(), Error> {
        self.check_output_spec(&recipe.spec())?;
        let payload = self.recv_latest()?;
        recipe.decode_into(payload).map_err(Error::Payload)
    }

    /// Sends the values of `recipe` as a data package of the input recipe `input` was set up
    /// with (same fields and types). Encodes into a fixed buffer: no heap allocation.
    ///
    /// Controllers act on input packages while synchronisation is started: send after
    /// [`Client::start`]. With [`ConnectOptions::reconnect`], a link that fails is
    /// reconnected within the call and the package is sent on the new connection.
    ///
    /// # Errors
    /// [`Error::Misuse`] for a handle of another client or a recipe other than the one set up;
    /// [`Error::Payload`] when the recipe's encoder fails; a link error.
    pub fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        let result = match self.send_once(input, recipe) {
            Err(e) if self.lost => match self.options.get_reconnect() {
                Some(policy) => {
                    self.events.push(Event::LinkLost(e));
                    self.reconnect_round(policy)
                        .and_then(|_| self.send_once(input, recipe))
                }
                None => Err(e),
            },
            other => other,
        };
        self.settle(result)
    }

    fn send_once<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.check_usable()?;
        let Some(set_up) = self.input(input) else {
            return Err(Error::Misuse(
                "this input handle belongs to another connection; use the handle `setup_inputs` returned on this one",
            ));
        };
        if !set_up.recipe.matches(&recipe.spec()) {
            return Err(Error::Misuse(
                "the recipe given to `send` is not the input recipe this handle was set up with",
            ));
        }
        let (recipe_id, size) = (set_up.recipe_id, set_up.recipe.payload_size);
        let Some(values) = self.out.get_mut(VALUES_AT..VALUES_AT + size) else {
            return Err(Error::Payload(PayloadError::BufferTooSmall {
                needed: size,
                available: MAX_PACKAGE_LEN - VALUES_AT,
            }));
        };
        let written = recipe.encode_into(values).map_err(Error::Payload)?;
        if written != size {
            return Err(Error::Payload(PayloadError::WrongLength {
                expected: size,
                found: written,
            }));
        }
        let len = finish_input_data_package(&mut self.out, recipe_id, size)
            .map_err(|e| Error::Encode(Box::new(e)))?;
        self.write_out(len)
    }

    /// The text messages received since the last call, oldest first; the queue keeps the
    /// last [`ConnectOptions::text_message_capacity`] and counts the ones it dropped in
    /// [`Stats::texts_dropped`].
    pub fn text_messages(&mut self) -> impl Iterator<Item = ControllerText> + '_ {
        self.texts.queue_mut().drain(..)
    }

    /// What the client received, skipped and dropped so far, over every connection.
    #[must_use]
    pub fn stats(&self) -> Stats {
        Stats {
            texts_dropped: self.texts.dropped(),
            events_dropped: self.events.dropped(),
            ..self.stats
        }
    }

    /// Whether skipped packages are counted: the output recipe has a `timestamp`, or a
    /// `control_step` (e-Series 5.26, PolyScope X 10.13 and later) and no `timestamp`.
    #[must_use]
    pub fn counts_gaps(&self) -> bool {
        self.gaps.is_active()
    }

    /// The time between two output packages, once outputs are set up: 1 /
    /// [`Client::output_frequency`], the rate the controller really streams at.
    ///
    /// ```
    /// # fn f(client: &rtde_core::Client) {
    /// // Asked for 400 Hz on an e-Series controller: a package every 2 ms tick.
    /// if client.requested_frequency() == Some(400.0) {
    ///     assert_eq!(client.period(), Some(std::time::Duration::from_millis(2)));
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn period(&self) -> Option<Duration> {
        self.output_frequency()
            .and_then(|f| Duration::try_from_secs_f64(1.0 / f).ok())
    }

    /// The rate output packages arrive at, in hertz, once outputs are set up: the control-loop
    /// rate divided by `floor(loop rate / requested frequency)`, as the RTDE guide says the
    /// controller paces them ([`protocol::timing`](crate::protocol::timing)). 400 Hz asked of
    /// a 500 Hz loop streams at 500 Hz. Loss estimates and [`Client::period`] use this rate.
    /// In protocol v1 it is the control-loop rate.
    #[must_use]
    pub fn output_frequency(&self) -> Option<f64> {
        self.outputs.as_ref().map(|o| {
            crate::protocol::timing::effective_frequency(self.max_frequency(), o.frequency)
        })
    }

    /// The output frequency given to [`Client::setup_outputs`], in hertz, as sent.
    #[must_use]
    pub fn requested_frequency(&self) -> Option<f64> {
        self.outputs.as_ref().map(|o| o.frequency)
    }

    /// Changes the read timeout (see [`ConnectOptions::read_timeout`]).
    ///
    /// # Errors
    /// [`Error::Misuse`] for a zero duration.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), Error> {
        if timeout.is_some_and(|t| t.is_zero()) {
            return Err(Error::Misuse(
                "a timeout of zero is not a timeout; use `None` to wait forever",
            ));
        }
        self.options = self.options.clone().read_timeout(timeout);
        Ok(())
    }

    /// Pauses if streaming, then shuts the connection down.
    ///
    /// Dropping a client closes the socket too, but without pausing first.
    ///
    /// # Errors
    /// The pause's error, if any (the socket is shut down all the same).
    pub fn close(mut self) -> Result<(), Error> {
        let paused = if self.running && !self.lost {
            self.pause()
        } else {
            Ok(())
        };
        // The peer may have closed first; there is nothing left to do then.
        let _ = self.stream.shutdown(Shutdown::Both);
        paused
    }

    // ---- state ----

    fn set_state(&mut self, state: State) {
        if self.state != state {
            self.state = state;
            self.events.push(Event::State(state));
        }
    }

    /// The state a working connection is in: what the user last asked for.
    fn settled_state(&self) -> State {
        if self.running {
            State::Running
        } else if self.started {
            State::Paused
        } else {
            State::Connected
        }
    }

    /// Every public call that can lose the connection ends here: a lost link that nothing is
    /// reconnecting makes the state [`State::Closed`].
    fn settle<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if result.is_err() && self.lost {
            self.set_state(State::Closed);
        }
        result
    }

    // ---- receiving ----

    /// Waits until a whole output data package that fits the recipe is at the front of the
    /// buffer, and observes it (gaps, losses across a reconnection). Reconnects within the
    /// call when the options ask for it.
    fn next_data(&mut self) -> Result<(), Error> {
        let result = match self.next_data_once() {
            Err(e) if self.lost => match self.options.get_reconnect() {
                Some(policy) => {
                    self.events.push(Event::LinkLost(e));
                    // One round per call: a peer that accepts and drops every connection
                    // cannot keep the call going.
                    self.reconnect_round(policy)
                        .and_then(|_| self.next_data_once())
                }
                None => Err(e),
            },
            other => other,
        };
        self.settle(result)
    }

    fn next_data_once(&mut self) -> Result<(), Error> {
        self.check_usable()?;
        if self.outputs.is_none() || !self.running {
            return Err(Error::Misuse(
                "nothing to receive: set up an output recipe with `setup_outputs`, then `start`",
            ));
        }
        self.wait_for(ty::DATA_PACKAGE)?;
        if let Err(e) = self.check_front_data() {
            // The package is consumed; the stream stays in step.
            let _ = self.frames.next_frame();
            return Err(e);
        }
        Ok(())
    }

    /// Checks the whole DATA_PACKAGE at the front of the buffer against the output recipe
    /// and, when it fits, observes it; the package stays at the front either way.
    fn check_front_data(&mut self) -> Result<(), Error> {
        let protocol = self.protocol;
        let Some(outputs) = &self.outputs else {
            return Err(Error::Misuse("no output recipe is set up"));
        };
        let lost = match Frame::parse(self.frames.buffered()) {
            Ok(Some((frame, _))) => match ControllerMessage::decode(frame, protocol) {
                Ok(ControllerMessage::DataPackage { recipe_id, payload }) => {
                    if recipe_id != outputs.recipe_id {
                        return Err(Error::WrongRecipeId {
                            expected: outputs.recipe_id,
                            found: recipe_id,
                        });
                    }
                    if payload.len() != outputs.recipe.payload_size {
                        return Err(Error::WrongLength {
                            expected: outputs.recipe.payload_size,
                            found: payload.len(),
                        });
                    }
                    let now = Instant::now();
                    let controller = self.controller;
                    let effective = crate::protocol::timing::effective_frequency(
                        self.max_frequency(),
                        outputs.frequency,
                    );
                    let lost = self.resume.take().map(|resume| {
                        let counted = resume
                            .timestamp
                            .filter(|_| resume.controller == controller)
                            .and_then(|t| {
                                self.gaps.lost_since(t, payload, resume.min_clock_advance())
                            });
                        match counted {
                            Some(count) => (count, false),
                            None => (estimate_lost(resume.at, now, effective), true),
                        }
                    });
                    if lost.is_none() {
                        self.stats.skipped += self.gaps.observe(payload);
                    }
                    self.last_data_at = Some(now);
                    lost
                }
                Ok(other) => return Err(unexpected(&other, ty::DATA_PACKAGE)),
                Err(e) => return Err(e.into()),
            },
            // Not reached: the caller found a whole package at the front.
            Ok(None) | Err(_) => return Err(Error::Closed { mid_frame: true }),
        };
        if let Some((count, estimated)) = lost {
            self.stats.lost += count;
            self.events.push(Event::PackagesLost { count, estimated });
        }
        Ok(())
    }

    /// For [`Client::recv_latest`]: takes every whole package buffered behind the one in
    /// `latest`, keeping the newest data package that fits; stops at anything it cannot take
    /// without an error, which the next call then reports.
    fn take_buffered_latest(&mut self) {
        loop {
            let kind = match Frame::parse(self.frames.buffered()) {
                Ok(Some((frame, _))) => frame.kind,
                Ok(None) | Err(_) => return,
            };
            match kind {
                ty::DATA_PACKAGE => {
                    if self.check_front_data().is_err() {
                        return;
                    }
                    let protocol = self.protocol;
                    let values = take_data_values(&mut self.frames, protocol);
                    self.latest.clear();
                    self.latest.extend_from_slice(values);
                    self.stats.superseded += 1;
                }
                other if !ty::is_known(other) => {
                    let _ = self.frames.next_frame();
                    self.stats.unknown_packages += 1;
                }
                ty::TEXT_MESSAGE => {
                    let protocol = self.protocol;
                    let Ok(Some((frame, _))) = Frame::parse(self.frames.buffered()) else {
                        return;
                    };
                    let Ok(text) = decode_text(frame, protocol) else {
                        return;
                    };
                    self.texts.push(ControllerText::from_message(&text));
                    let _ = self.frames.next_frame();
                }
                _ => return,
            }
        }
    }

    /// Reads what the socket holds without waiting; whether anything arrived. Trouble is
    /// left for the next blocking read to find and report.
    fn read_available(&mut self) -> bool {
        if self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let got = loop {
            match self.stream.read(self.frames.spare()) {
                Ok(n) if n > 0 => {
                    self.frames.commit(n);
                    break true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // End of stream, nothing there (`WouldBlock`) or an error.
                _ => break false,
            }
        };
        if self.stream.set_nonblocking(false).is_err() {
            // A socket stuck non-blocking would time out at once: lose it rather.
            self.lost = true;
        }
        got
    }

    // ---- the conversation ----

    /// Negotiates the protocol version and reads the controller's.
    fn handshake(&mut self) -> Result<(), Error> {
        self.negotiate()?;
        self.controller = self.query_version()?;
        Ok(())
    }

    /// Requests protocol v2, then v1.
    fn negotiate(&mut self) -> Result<(), Error> {
        for version in [ProtocolVersion::V2, ProtocolVersion::V1] {
            self.request(&ClientMessage::RequestProtocolVersion {
                version: version.number(),
            })?;
            let accepted = match self.reply(ty::REQUEST_PROTOCOL_VERSION)? {
                ControllerMessage::ProtocolVersionReply { accepted } => accepted,
                other => return Err(unexpected(&other, ty::REQUEST_PROTOCOL_VERSION)),
            };
            if accepted {
                // Everything the controller sends from here on is in this version.
                self.protocol = version;
                return Ok(());
            }
        }
        Err(Error::ProtocolRefused)
    }

    fn query_version(&mut self) -> Result<ControllerVersion, Error> {
        self.request(&ClientMessage::GetUrcontrolVersion)?;
        match self.reply(ty::GET_URCONTROL_VERSION)? {
            ControllerMessage::UrcontrolVersion(v) => Ok(v),
            other => Err(unexpected(&other, ty::GET_URCONTROL_VERSION)),
        }
    }

    /// The frequency field of SETUP_OUTPUTS for `frequency` on this connection, or why the
    /// controller cannot stream at it.
    fn frequency_field(&self, frequency: f64) -> Result<Option<f64>, Error> {
        match self.protocol {
            ProtocolVersion::V1 => {
                let rate = self.max_frequency();
                if frequency != rate {
                    return Err(Error::FrequencyNotInV1 {
                        asked: frequency,
                        rate,
                    });
                }
                Ok(None)
            }
            ProtocolVersion::V2 => {
                if !frequency.is_finite() || frequency <= 0.0 {
                    return Err(Error::InvalidFrequency { asked: frequency });
                }
                let max = self.max_frequency();
                if frequency > max {
                    return Err(Error::FrequencyTooHigh {
                        asked: frequency,
                        max,
                    });
                }
                Ok(Some(frequency))
            }
        }
    }

    /// Sends SETUP_OUTPUTS and checks the reply; the recipe id.
    fn exchange_setup_outputs(
        &mut self,
        spec: &RecipeSpec<'_>,
        frequency: Option<f64>,
    ) -> Result<Option<u8>, Error> {
        let mut names = String::with_capacity(spec.name_list_len());
        spec.write_name_list(&mut names);
        let texts_before = self.texts.pushed();
        self.request(&ClientMessage::SetupOutputs {
            frequency,
            names: &names,
        })?;
        let (recipe_id, checked) = match self.reply(ty::SETUP_OUTPUTS)? {
            ControllerMessage::SetupOutputsReply { recipe_id, types } => {
                (recipe_id, setup::check_reply(spec, recipe_id, types))
            }
            other => return Err(unexpected(&other, ty::SETUP_OUTPUTS)),
        };
        checked
            .map(|()| recipe_id)
            .map_err(|e| self.with_refusal_reason(e, texts_before))
    }

    /// Sends SETUP_INPUTS and checks the reply; the recipe id.
    fn exchange_setup_inputs(&mut self, spec: &RecipeSpec<'_>) -> Result<u8, Error> {
        let mut names = String::with_capacity(spec.name_list_len());
        spec.write_name_list(&mut names);
        let texts_before = self.texts.pushed();
        self.request(&ClientMessage::SetupInputs { names: &names })?;
        let (recipe_id, checked) = match self.reply(ty::SETUP_INPUTS)? {
            ControllerMessage::SetupInputsReply { recipe_id, types } => {
                (recipe_id, setup::check_reply(spec, Some(recipe_id), types))
            }
            other => return Err(unexpected(&other, ty::SETUP_INPUTS)),
        };
        checked
            .map(|()| recipe_id)
            .map_err(|e| self.with_refusal_reason(e, texts_before))
    }

    /// A refusal carries the controller's own words when it sent a text message while the
    /// request was pending (controllers explain whole-request refusals that way).
    fn with_refusal_reason(&self, error: Error, texts_before: u64) -> Error {
        match error {
            Error::SetupRefused(mut refused) => {
                refused.reason = self
                    .texts
                    .newest_since(texts_before)
                    .map(|t| t.message.clone());
                Error::SetupRefused(refused)
            }
            other => other,
        }
    }

    /// Sends START and checks the reply.
    fn exchange_start(&mut self) -> Result<(), Error> {
        self.request(&ClientMessage::Start)?;
        match self.reply(ty::START)? {
            ControllerMessage::StartReply { accepted: true } => Ok(()),
            ControllerMessage::StartReply { accepted: false } => Err(Error::StartRefused),
            other => Err(unexpected(&other, ty::START)),
        }
    }

    fn request(&mut self, msg: &ClientMessage<'_>) -> Result<(), Error> {
        let len = msg
            .encode(self.protocol, &mut self.out)
            .map_err(|e| Error::Encode(Box::new(e)))?;
        self.write_out(len)
    }

    fn write_out(&mut self, len: usize) -> Result<(), Error> {
        if let Err(source) = self.stream.write_all(&self.out[..len]) {
            // Part of the package may have gone out: the stream is out of step.
            self.lost = true;
            return Err(Error::Io {
                source,
                mid_frame: false,
            });
        }
        Ok(())
    }

    /// Waits for the reply of type `kind` and decodes it.
    fn reply(&mut self, kind: u8) -> Result<ControllerMessage<'_>, Error> {
        self.wait_for(kind)?;
        let protocol = self.protocol;
        let frame = take_front(&mut self.frames)?;
        match ControllerMessage::decode(frame, protocol) {
            Ok(msg) => Ok(msg),
            Err(e) => {
                // The reply is gone: whatever the request did is unknown.
                self.lost = true;
                Err(e.into())
            }
        }
    }

    /// Waits until a whole package of type `kind` is at the front of the buffer; queues the
    /// text messages and drops (and counts) the data packages that come first.
    ///
    /// Any failure while a reply is due leaves requests and replies out of step, so the
    /// connection is lost; waiting for data, only a broken stream loses it.
    fn wait_for(&mut self, kind: u8) -> Result<(), Error> {
        // A timeout too long for the clock to add (`Duration::MAX`, say) is no deadline.
        let deadline = self
            .options
            .get_read_timeout()
            .and_then(|t| Instant::now().checked_add(t));
        let result = self.wait_until(kind, deadline);
        if result.is_err() && kind != ty::DATA_PACKAGE {
            self.lost = true;
        }
        result
    }

    fn wait_until(&mut self, kind: u8, deadline: Option<Instant>) -> Result<(), Error> {
        loop {
            let front = match Frame::parse(self.frames.buffered()) {
                Ok(Some((frame, _))) => frame.kind,
                Ok(None) => {
                    self.fill(kind, deadline)?;
                    continue;
                }
                Err(e) => {
                    // A bad header: where the next package starts is unknowable.
                    self.lost = true;
                    return Err(e.into());
                }
            };
            if front == kind {
                return Ok(());
            }
            let protocol = self.protocol;
            let frame = take_front(&mut self.frames)?;
            match front {
                ty::TEXT_MESSAGE => {
                    let text = decode_text(frame, protocol)?;
                    self.texts.push(ControllerText::from_message(&text));
                }
                ty::DATA_PACKAGE => self.stats.discarded += 1,
                // The RTDE guide says nothing of package types it does not define: one a
                // newer controller sends is skipped and counted, not a reason to drop the link.
                other if !ty::is_known(other) => self.stats.unknown_packages += 1,
                other => {
                    return Err(Error::Unexpected {
                        package_type: other,
                        waiting_for: kind,
                    });
                }
            }
        }
    }

    /// Reads more bytes, within the deadline.
    fn fill(&mut self, kind: u8, deadline: Option<Instant>) -> Result<(), Error> {
        let mid_frame = !self.frames.buffered().is_empty();
        let timeout = match deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(self.timed_out(kind, mid_frame));
                }
                Some(ceil_to_millis(left))
            }
        };
        // Whole milliseconds: a wait that starts with the full timeout left needs no change.
        if timeout != self.socket_timeout {
            if let Err(source) = self.stream.set_read_timeout(timeout) {
                self.lost = true;
                return Err(Error::Io { source, mid_frame });
            }
            self.socket_timeout = timeout;
        }
        loop {
            match self.stream.read(self.frames.spare()) {
                Ok(0) => {
                    self.lost = true;
                    return Err(Error::Closed { mid_frame });
                }
                Ok(n) => {
                    self.frames.commit(n);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(self.timed_out(kind, mid_frame));
                }
                Err(source) => {
                    self.lost = true;
                    return Err(Error::Io { source, mid_frame });
                }
            }
        }
    }

    fn timed_out(&self, kind: u8, mid_frame: bool) -> Error {
        Error::Timeout {
            after: self.options.get_read_timeout().unwrap_or_default(),
            waiting_for: kind,
            mid_frame,
        }
    }

    // ---- checks ----

    fn check_usable(&self) -> Result<(), Error> {
        if self.lost {
            Err(Error::ConnectionLost)
        } else {
            Ok(())
        }
    }

    fn check_not_running(&self) -> Result<(), Error> {
        if self.running {
            Err(Error::Misuse(
                "recipes cannot be set up while outputs stream; call `pause` first",
            ))
        } else {
            Ok(())
        }
    }

    fn check_output_spec(&self, spec: &RecipeSpec<'_>) -> Result<(), Error> {
        match &self.outputs {
            Some(o) if o.recipe.matches(spec) => Ok(()),
            Some(_) => Err(Error::Misuse(
                "the recipe given to receive into is not the output recipe set up on this connection",
            )),
            None => Err(Error::Misuse(
                "nothing to receive: set up an output recipe with `setup_outputs`, then `start`",
            )),
        }
    }

    fn input(&self, input: &InputHandle) -> Option<&Inputs> {
        if input.client == self.serial {
            self.inputs.get(input.index)
        } else {
            None
        }
    }
}

/// Where an input package's values start: after the header and the input recipe id.
const VALUES_AT: usize = crate::protocol::HEADER_LEN + 1;

/// The most reads one [`Client::recv_latest`] makes after its first package.
const MAX_DRAIN_READS: usize = 64;

/// Opens a connection to the first of `addrs` that answers, with the options' socket
/// settings.
fn open(addrs: &[SocketAddr], options: &ConnectOptions) -> Result<(TcpStream, SocketAddr), Error> {
    let mut last_error = None;
    let mut connected = None;
    for a in addrs {
        match TcpStream::connect_timeout(a, options.get_connect_timeout()) {
            Ok(stream) => {
                connected = Some((stream, *a));
                break;
            }
            Err(e) => last_error = Some(e),
        }
    }
    let Some((stream, peer)) = connected else {
        return Err(match last_error {
            Some(source) => Error::Connect {
                addr: addrs
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
                    .into(),
                source,
            },
            None => Error::Resolve {
                source: io::Error::new(io::ErrorKind::NotFound, "the address resolved to nothing"),
            },
        });
    };
    let link = |source| Error::Io {
        source,
        mid_frame: false,
    };
    stream.set_nodelay(true).map_err(link)?;
    stream
        .set_write_timeout(options.get_write_timeout())
        .map_err(link)?;
    stream
        .set_read_timeout(options.get_read_timeout())
        .map_err(link)?;
    Ok((stream, peer))
}

/// Takes the package at the front of the buffer, which [`Client::wait_for`] found whole.
fn take_front(frames: &mut FrameBuffer) -> Result<Frame<'_>, Error> {
    match frames.next_frame() {
        Ok(Some(frame)) => Ok(frame),
        // Not reached: the caller saw a whole package at the front.
        Ok(None) => Err(Error::Closed { mid_frame: true }),
        Err(e) => Err(e.into()),
    }
}

/// Takes the data package at the front of the buffer, which [`Client::check_front_data`]
/// accepted, and returns its values.
fn take_data_values(frames: &mut FrameBuffer, protocol: ProtocolVersion) -> &[u8] {
    match frames.next_frame() {
        Ok(Some(frame)) => match ControllerMessage::decode(frame, protocol) {
            Ok(ControllerMessage::DataPackage { payload, .. }) => payload,
            // Not reached: the package was checked.
            _ => &[],
        },
        _ => &[],
    }
}

/// The packages a stream at `frequency` sent between the last one received before a
/// reconnection (at `last`) and the first one after it (at `now`), from the clock.
fn estimate_lost(last: Option<Instant>, now: Instant, frequency: f64) -> u64 {
    let Some(last) = last else {
        return 0;
    };
    let periods = (now.saturating_duration_since(last).as_secs_f64() * frequency).round();
    gaps::whole_packages(periods - 1.0)
}

/// Decodes a text message in the connection's protocol version, or else in the other one:
/// a controller may still speak v1 in messages sent before it switched, and a message is
/// never worth losing a connection.
fn decode_text(
    frame: Frame<'_>,
    protocol: ProtocolVersion,
) -> Result<TextMessage<'_>, DecodeError> {
    let other = match protocol {
        ProtocolVersion::V1 => ProtocolVersion::V2,
        ProtocolVersion::V2 => ProtocolVersion::V1,
    };
    match ControllerMessage::decode(frame, protocol) {
        Ok(ControllerMessage::TextMessage(t)) => Ok(t),
        Ok(_) => Err(DecodeError::new(
            frame.kind,
            0,
            DecodeErrorKind::Unexpected("a TEXT_MESSAGE that is no text message"),
        )),
        Err(e) => match ControllerMessage::decode(frame, other) {
            Ok(ControllerMessage::TextMessage(t)) => Ok(t),
            _ => Err(e),
        },
    }
}

fn unexpected(msg: &ControllerMessage<'_>, waiting_for: u8) -> Error {
    Error::Unexpected {
        package_type: msg.package_type(),
        waiting_for,
    }
}

fn ceil_to_millis(d: Duration) -> Duration {
    let millis = d.as_nanos().div_ceil(1_000_000);
    Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX))
}
