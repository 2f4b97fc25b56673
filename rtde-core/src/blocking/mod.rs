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
//! # use rtde_core::{Event, State};
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

mod reconnect;
mod socket;
mod tolerant;

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use rtde_fields::{ControllerVersion, Generation};

use crate::error::Error;
use crate::protocol::{ProtocolVersion, package_type as ty};
use crate::recipe::{FromPayload, InputRecipe, OutputRecipe, RecipeSpec};
use crate::session::{Done, Ready, Session, check_timeout};

pub use crate::session::{
    ConnectOptions, ControllerText, Event, InputHandle, ReconnectPolicy, Reconnection, State, Stats,
};
pub use crate::session::{DropReason, DroppedField};
use crate::tcp::transport;

/// The controller's RTDE port.
pub const RTDE_PORT: u16 = 30004;

/// A connection to a controller's RTDE interface. See the [module](self) documentation.
///
/// A thin driver: the socket and its timeouts here, every rule of the conversation in a
/// [`Session`] (see [`crate::session`]).
pub struct Client {
    stream: TcpStream,
    /// Every address the controller's address resolved to, for reconnecting.
    addrs: Vec<SocketAddr>,
    peer: SocketAddr,
    options: ConnectOptions,
    /// The read timeout the socket has now.
    socket_timeout: Option<Duration>,
    session: Session,
}

impl Client {
    /// The socket, the addresses to reconnect to, the options and the session, for a
    /// driver that takes the connection over (the background and async ones).
    pub(crate) fn into_parts(self) -> (TcpStream, Vec<SocketAddr>, ConnectOptions, Session) {
        (self.stream, self.addrs, self.options, self.session)
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .field("session", &self.session)
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
        options.check()?;
        let addrs: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|source| Error::Resolve { source })?
            .collect();
        let (stream, peer) = transport::open(&addrs, &options)?;
        let now = Instant::now();
        let mut client = Client {
            stream,
            addrs,
            peer,
            socket_timeout: options.get_read_timeout(),
            session: Session::new(&options, now),
            options,
        };
        client.session.handle_connected(now);
        client.drive()?;
        Ok(client)
    }

    /// The protocol version in use.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.session.protocol_version()
    }

    /// The controller's software version, as it reported it.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.session.controller_version()
    }

    /// The controller's generation, `None` for a major version the registry does not know.
    #[must_use]
    pub fn generation(&self) -> Option<Generation> {
        self.session.controller_version().generation()
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
        self.session.state()
    }

    /// The events since the last call, oldest first; the queue keeps the last
    /// [`ConnectOptions::event_capacity`] and counts the ones it dropped in
    /// [`Stats::events_dropped`].
    pub fn events(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.session.events()
    }

    /// The highest output frequency this controller accepts, in hertz: its control-loop rate,
    /// 125 Hz on CB3 and 500 Hz on e-Series and PolyScope X (500 Hz for a generation the
    /// registry does not know). Over protocol v1 it is also the only frequency.
    #[must_use]
    pub fn max_frequency(&self) -> f64 {
        self.session.max_frequency()
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
        let result = self
            .command(|s, now| s.setup_outputs(spec, frequency, now))
            .map(|_| ());
        self.session.settle(result)
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
        let result = match self.command(|s, now| s.setup_inputs(spec, now)) {
            Ok(Done::InputsSetUp(handle)) => Ok(handle),
            Ok(_) => Err(Error::Misuse("SETUP_INPUTS finished as something else")),
            Err(e) => Err(e),
        };
        self.session.settle(result)
    }

    /// The id the controller gave an input recipe, `None` for a handle of another client.
    /// It may change when the client reconnects; the handle stays valid.
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.session.input_recipe_id(input)
    }

    /// The id the controller gave the output recipe: `None` before setup and in protocol v1,
    /// whose data packages carry none.
    #[must_use]
    pub fn output_recipe_id(&self) -> Option<u8> {
        self.session.output_recipe_id()
    }

    /// Starts streaming, or resumes after [`Client::pause`]; does nothing while streaming.
    ///
    /// Gap counting restarts: the time spent paused is no gap. A data package that arrives
    /// before the controller's reply (real controllers on loaded hosts send one) proves the
    /// START, and is the first package [`Client::recv`] returns.
    ///
    /// # Errors
    /// [`Error::StartRefused`], or a link or protocol error.
    pub fn start(&mut self) -> Result<(), Error> {
        let result = self.command(Session::start).map(|_| ());
        self.session.settle(result)
    }

    /// Pauses streaming; does nothing when not streaming. Output packages already on their
    /// way are dropped and counted in [`Stats::discarded`]. Call [`Client::start`] to resume.
    ///
    /// # Errors
    /// [`Error::PauseRefused`], or a link or protocol error.
    pub fn pause(&mut self) -> Result<(), Error> {
        let result = self.command(Session::pause).map(|_| ());
        self.session.settle(result)
    }

    /// Whether outputs are streaming (started and not paused, on a connection that works).
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.state() == State::Running
    }

    /// The values of the next output data package, in recipe order, big-endian, borrowed from
    /// the client's receive buffer until the next call. No heap allocation, no copy.
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
        self.next_data(false)?;
        Ok(self.session.data())
    }

    /// Receives the next output package into `recipe`, which must be the recipe set up (same
    /// fields and types); no heap allocation.
    ///
    /// # Errors
    /// As [`Client::recv`]; [`Error::Misuse`] for another recipe (checked before receiving,
    /// so no package is lost).
    pub fn recv_into<R: OutputRecipe + ?Sized>(&mut self, recipe: &mut R) -> Result<(), Error> {
        self.session.check_output_spec(&recipe.spec())?;
        let payload = self.recv()?;
        recipe.decode_into(payload).map_err(Error::Payload)
    }

    /// Whether bytes of another package are already in the client's buffer (read together
    /// with the last one), without a system call: a package that arrived bunched with the
    /// previous one, or while the caller was late to receive.
    #[must_use]
    pub fn package_buffered(&self) -> bool {
        self.session.mid_frame()
    }

    /// Whether bytes of another package have already arrived, looked at without blocking:
    /// what a control loop asks right after sending its command, to tell a command that
    /// went out before the next package from one that went out after it (a missed
    /// deadline). It reads what the socket holds into the client's buffer; nothing is lost.
    pub fn package_waiting(&mut self) -> bool {
        if self.session.mid_frame() {
            return true;
        }
        self.read_available();
        self.session.mid_frame()
    }

    /// Receives the next output package as a `T`, whose spec must be the recipe set up.
    ///
    /// # Errors
    /// As [`Client::recv_into`].
    pub fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        self.session.check_output_static(&T::SPEC)?;
        let payload = self.recv()?;
        T::from_payload_as(payload)
    }

    /// The values of the newest output package that has arrived, dropping the older ones
    /// still queued; waits (within the read timeout) only when none has arrived. No heap
    /// allocation, no copy.
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
        self.next_data(true)?;
        Ok(self.session.data())
    }

    /// Receives the newest output package into `recipe`, as [`Client::recv_latest`].
    ///
    /// # Errors
    /// As [`Client::recv_into`].
    pub fn recv_latest_into<R: OutputRecipe + ?Sized>(
        &mut self,
        recipe: &mut R,
    ) -> Result<(), Error> {
        self.session.check_output_spec(&recipe.spec())?;
        let payload = self.recv_latest()?;
        recipe.decode_into(payload).map_err(Error::Payload)
    }

    /// Sends the values of `recipe` as a data package of the input recipe `input` was set up
    /// with (same fields and types). Encodes into a fixed buffer: no heap allocation.
    ///
    /// Controllers apply input packages whether or not outputs stream (START and PAUSE
    /// start and pause output updates only; ur_rtde's IO interface writes a robot's outputs
    /// without ever sending START), and the simulator does the same. With
    /// [`ConnectOptions::reconnect`], a link that fails is
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
            Err(e) if self.session.is_lost() => match self.options.get_reconnect() {
                Some(policy) => self
                    .reconnect_round(policy, Some(e))
                    .and_then(|_| self.send_once(input, recipe)),
                None => Err(e),
            },
            other => other,
        };
        self.session.settle(result)
    }

    fn send_once<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.session.send(input, recipe)?;
        self.flush()
    }

    /// The text messages received since the last call, oldest first; the queue keeps the
    /// last [`ConnectOptions::text_message_capacity`] and counts the ones it dropped in
    /// [`Stats::texts_dropped`].
    pub fn text_messages(&mut self) -> impl Iterator<Item = ControllerText> + '_ {
        self.session.text_messages()
    }

    /// What the client received, skipped and dropped so far, over every connection.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.session.stats()
    }

    /// Whether skipped packages are counted: the output recipe has a `timestamp`, or a
    /// `control_step` (e-Series 5.26, PolyScope X 10.13 and later) and no `timestamp`.
    #[must_use]
    pub fn counts_gaps(&self) -> bool {
        self.session.counts_gaps()
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
        self.session.output_frequency()
    }

    /// The output frequency given to [`Client::setup_outputs`], in hertz, as sent.
    #[must_use]
    pub fn requested_frequency(&self) -> Option<f64> {
        self.session.requested_frequency()
    }

    /// Changes the read timeout (see [`ConnectOptions::read_timeout`]).
    ///
    /// # Errors
    /// [`Error::Misuse`] for a zero duration.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), Error> {
        check_timeout(timeout)?;
        self.options = self.options.clone().read_timeout(timeout);
        self.session.set_reply_timeout(timeout);
        Ok(())
    }

    /// The session this client drives: its rules and counters, for inspection.
    #[must_use]
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Pauses if streaming, then closes the connection, waiting (a bounded time) for the
    /// controller to close its side: once it has, it has freed this connection's inputs.
    ///
    /// Dropping a client closes the socket too, but without pausing first.
    ///
    /// # Errors
    /// The pause's error, if any (the socket is shut down all the same).
    pub fn close(mut self) -> Result<(), Error> {
        let paused = match self.session.close(Instant::now()) {
            Ok(true) => self.drive().map(|_| ()),
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        };
        let paused = self.session.settle(paused);
        transport::close(&self.stream);
        paused
    }

    // ---- the driver's loop ----

    /// Runs a session command, then drives the conversation until it is done.
    fn command(
        &mut self,
        command: impl FnOnce(&mut Session, Instant) -> Result<(), Error>,
    ) -> Result<Done, Error> {
        command(&mut self.session, Instant::now())?;
        self.drive()
    }

    /// Drives the conversation until the request in flight (or chain of them) is done.
    fn drive(&mut self) -> Result<Done, Error> {
        if !self.session.is_busy() {
            return Err(Error::Misuse("nothing is in flight"));
        }
        // Waiting for `Done`, the loop returns only with it.
        self.turn_until(Until::Done)?
            .ok_or(Error::Misuse("nothing is in flight"))
    }

    /// Waits until the session delivers an output package (every one in order, or the
    /// latest), reconnecting within the call when the options ask for it.
    fn next_data(&mut self, latest: bool) -> Result<(), Error> {
        let result = match self.next_data_once(latest) {
            Err(e) if self.session.is_lost() => match self.options.get_reconnect() {
                // One round per call: a peer that accepts and drops every connection
                // cannot keep the call going.
                Some(policy) => self
                    .reconnect_round(policy, Some(e))
                    .and_then(|_| self.next_data_once(latest)),
                None => Err(e),
            },
            other => other,
        };
        self.session.settle(result)
    }

    fn next_data_once(&mut self, latest: bool) -> Result<(), Error> {
        self.session.check_receivable()?;
        // A timeout too long for the clock to add (`Duration::MAX`, say) is no deadline.
        let timeout = self.options.get_read_timeout();
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        if latest {
            self.read_available();
        }
        self.turn_until(Until::Data {
            latest,
            deadline,
            timeout,
        })
        .map(|_| ())
    }

    /// The driver's one loop: read → handle → poll → write until the session has what
    /// the caller waits for.
    ///
    /// A request in flight waits on the session's own deadline and ends with its reply;
    /// the packages and rejections that arrive meanwhile are the session's to count. A
    /// wait for data ends with a package, a package that does not fit (the caller hears
    /// of it), or the read timeout.
    ///
    /// `Some` is what finished, for [`Until::Done`]; `None` is a package, for
    /// [`Until::Data`] (its values are the session's).
    fn turn_until(&mut self, until: Until) -> Result<Option<Done>, Error> {
        // A wait for data starts with the whole read timeout, without reading the clock:
        // the deadline was set a moment ago. Later waits of the call take what is left.
        let mut first_wait = true;
        loop {
            let ready = match until {
                Until::Data { latest: true, .. } => self.session.poll_latest(),
                _ => self.session.poll_event(),
            };
            match (ready, until) {
                (Some(Ready::Done(result)), Until::Done) => {
                    // What the reply queued (nothing, at the end of a chain) goes out first.
                    self.flush()?;
                    return result.map(Some);
                }
                (Some(Ready::Data), Until::Data { .. }) => return Ok(None),
                (Some(Ready::Broken(e)), _)
                | (Some(Ready::Rejected(e) | Ready::Done(Err(e))), Until::Data { .. }) => {
                    return Err(e);
                }
                (Some(_), _) => {}
                (None, Until::Done) => {
                    // A reply may have queued the next request of a chain.
                    self.flush()?;
                    if !self.fill(self.session.poll_timeout())? {
                        self.session.handle_timeout(Instant::now());
                    }
                }
                (
                    None,
                    Until::Data {
                        deadline, timeout, ..
                    },
                ) => {
                    let filled = if first_wait {
                        self.fill_within(timeout)?
                    } else {
                        self.fill(deadline)?
                    };
                    first_wait = false;
                    if !filled {
                        return Err(Error::Timeout {
                            after: timeout.unwrap_or_default(),
                            waiting_for: ty::DATA_PACKAGE,
                            mid_frame: self.session.mid_frame(),
                        });
                    }
                }
            }
        }
    }
}

/// What [`Client::turn_until`] waits for.
#[derive(Clone, Copy)]
enum Until {
    /// The request in flight to finish.
    Done,
    /// An output package, by `deadline`.
    Data {
        latest: bool,
        deadline: Option<Instant>,
        timeout: Option<Duration>,
    },
}
