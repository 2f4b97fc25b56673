//! One RTDE conversation as a state machine that does no I/O and reads no clock.
//!
//! [`Session`] owns every rule of talking to a controller once: the handshake (protocol v2,
//! else v1, then the controller's version), the registry pre-flight of each recipe for the
//! connected version, the frequency limits of its generation, the check of every setup
//! reply (naming each `NOT_FOUND` and `IN_USE` field), request/reply matching with reply
//! deadlines, loss accounting ([`Stats`]), the replay plan of a reconnection, the
//! staleness deadline, and what real controllers do to a client: text messages and stray
//! data packages during the handshake (a text message in the v2 layout before the
//! protocol reply is decoded with its level and source), and a data package before the
//! START reply, which is delivered, not dropped.
//!
//! It follows quinn-proto's `Connection`: the driver owns the socket and the clock and
//! calls, in this order, in a loop:
//!
//! 1. **read**: bytes from the transport into [`Session::receive_buffer`], then
//!    [`Session::handle_received`] (or [`Session::handle_bytes`], which copies); a timer that
//!    fired: [`Session::handle_timeout`]; a link that failed: [`Session::handle_link_lost`];
//! 2. **poll**: [`Session::poll_event`] (or [`Session::poll_latest`]) until it returns `None`,
//!    reading each data package's values with [`Session::data`], borrowed from the receive
//!    buffer (no copy, no allocation; valid until the next `receive_buffer` or `handle_*`);
//! 3. **write**: [`Session::poll_transmit`] and [`Session::transmitted`] for what went out;
//! 4. **wait**: for more bytes, or until [`Session::poll_timeout`].
//!
//! Commands ([`Session::setup_outputs`], [`Session::setup_inputs`], [`Session::start`],
//! [`Session::pause`], [`Session::send`], [`Session::close`]) check everything that can be
//! known before sending, queue bytes to transmit, and finish with a [`Ready::Done`] from
//! `poll_event`. One request is in flight at a time, as the protocol has it.
//!
//! The blocking [`Client`](crate::Client) and its background driver are such loops over a
//! `TcpStream`; an async driver is the same loop over `AsyncRead + AsyncWrite`. Because the
//! bytes already read live in the session's buffer, a driver that stops between two steps
//! (a future dropped at an `.await`) loses neither a half-read frame nor a package.
//!
//! # Writing a driver
//!
//! The blocking [`Client`](crate::Client) (`blocking/mod.rs`, `blocking/socket.rs`,
//! `blocking/reconnect.rs`, over `tcp/`) is the reference; an async driver over tokio is
//! the same steps:
//!
//! 1. `Session::new(&options, now)`, open the transport, [`Session::handle_connected`], then
//!    drive (below) until [`Ready::Done`]`(Ok(`[`Done::Connected`]`))`.
//! 2. A command (say [`Session::start`]) queues its request; drive until its [`Ready::Done`].
//!    [`Session::send`] only queues bytes: write them, nothing comes back.
//! 3. Drive: write everything [`Session::poll_transmit`] returns (then
//!    [`Session::transmitted`]); take [`Session::poll_event`] until `None` (a reply may queue
//!    the next request of a chain: write again); then wait for bytes (read into
//!    [`Session::receive_buffer`], then [`Session::handle_received`]) or for
//!    [`Session::poll_timeout`] (then [`Session::handle_timeout`]). End of stream or an I/O
//!    error: [`Session::handle_link_lost`], and the driver's own error to its caller.
//! 4. [`Ready::Broken`], or any error with [`Session::is_lost`]: drop the transport. To
//!    reconnect: [`Session::begin_reconnect`], then per attempt
//!    [`Session::reconnect_attempt`], a new transport, [`Session::handle_connected`], drive
//!    until [`Done::Reconnected`]; a failed attempt goes to [`Session::attempt_failed`],
//!    which says how long to back off or that the round is over. Finish every call with
//!    [`Session::settle`] so that a link nobody brings back reads [`State::Closed`].
//!
//! Cancel safety comes from the buffer living here: a future dropped while awaiting a read
//! has either committed its bytes with `handle_received` or read nothing, so neither a
//! half-read frame nor a package is lost (tokio's `AsyncReadExt::read` into
//! `receive_buffer()` is cancel-safe in this sense; `read_exact` is not).
//!
//! ```
//! use std::time::{Duration, Instant};
//! use rtde_core::protocol::{ControllerMessage as M, ProtocolVersion::V2};
//! use rtde_core::session::{Done, Ready, Session};
//! use rtde_core::{ConnectOptions, DynamicRecipe, Recipe};
//!
//! let t0 = Instant::now();
//! let mut session = Session::new(&ConnectOptions::new(), t0);
//! session.handle_connected(t0); // a transport is up: the handshake is queued
//! let request = session.poll_transmit().unwrap().to_vec();
//! assert_eq!(request, [0, 5, b'V', 0, 2]); // REQUEST_PROTOCOL_VERSION 2
//! session.transmitted(request.len());
//!
//! // The controller's answers, as bytes.
//! let mut wire = [0u8; 64];
//! let n = M::ProtocolVersionReply { accepted: true }.encode(V2, &mut wire).unwrap();
//! session.handle_bytes(&wire[..n], t0);
//! assert!(session.poll_event().is_none()); // the version query is queued next
//! let n = M::UrcontrolVersion("5.21.0".parse().unwrap()).encode(V2, &mut wire).unwrap();
//! session.handle_bytes(&wire[..n], t0);
//! assert!(matches!(session.poll_event(), Some(Ready::Done(Ok(Done::Connected)))));
//!
//! // Checked against 5.21.0 before anything is queued.
//! let outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
//! assert!(session.setup_outputs(outputs.spec(), 1000.0, t0).is_err());
//! # let _ = Duration::ZERO;
//! ```

mod bounded;
mod events;
pub(crate) mod gaps;
mod options;
mod receive;
mod replay;
pub(crate) mod setup;
mod staleness;
mod stats;
mod texts;
pub(crate) mod tolerant;

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rtde_fields::{ControllerVersion, Direction, Generation};

use crate::error::Error;
use crate::protocol::{
    ClientMessage, DataHeader, FrameBuffer, MAX_PACKAGE_LEN, ProtocolVersion,
    finish_input_data_package,
};
use crate::recipe::{InputRecipe, PayloadError, RecipeSpec};

use bounded::BoundedQueue;
pub use events::{Event, Reconnection, State};
use gaps::GapCounter;
pub(crate) use options::check_timeout;
pub use options::{ConnectOptions, ReconnectPolicy};
pub use replay::worth_retrying;
use replay::{Replay, Resume, Round};
use setup::SetUp;
use staleness::Staleness;
pub use stats::Stats;
pub use texts::ControllerText;
pub use tolerant::{DropReason, DroppedField};

/// Tells input handles of different sessions apart.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// An input recipe set up on a connection, for [`Client::send`](crate::Client::send) (or
/// [`Session::send`]).
///
/// Only valid on the connection that returned it; it stays valid across reconnections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputHandle {
    session: u64,
    index: usize,
}

/// What [`Session::poll_event`] hands out.
#[derive(Debug)]
#[non_exhaustive]
pub enum Ready {
    /// An output data package that fits the recipe: its values are [`Session::data`]. Gaps
    /// and losses are counted already; [`Stats::received`] includes it.
    Data,
    /// The request in flight (or the handshake, or a reconnection's replay) finished.
    Done(Result<Done, Error>),
    /// A package that does not fit what was set up ([`Error::WrongRecipeId`],
    /// [`Error::WrongLength`], an unexpected reply): it is consumed, and the connection
    /// stays usable.
    Rejected(Error),
    /// Bytes that cannot be framed, or a package that makes no sense while nothing is
    /// pending: the stream is out of step, and the link must be dropped
    /// ([`Session::is_lost`] is true).
    Broken(Error),
    /// No fresh output package for the staleness limit ([`Session::set_staleness`]);
    /// reported once until the next package, which records [`Event::Fresh`].
    Stale {
        /// Since the last package (or since START, within the grace period).
        silent_for: Duration,
    },
}

/// What finished, in [`Ready::Done`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Done {
    /// The handshake of the first link: the protocol and controller versions are known.
    Connected,
    /// A later link: handshake, every recipe replayed, START if outputs streamed.
    Reconnected(Reconnection),
    /// The output recipe is set up.
    OutputsSetUp,
    /// An input recipe is set up.
    InputsSetUp(InputHandle),
    /// Outputs stream.
    Started,
    /// Outputs are paused.
    Paused,
}

/// The output recipe as set up.
#[derive(Debug)]
struct Outputs {
    recipe_id: Option<u8>,
    recipe: SetUp,
    frequency: f64,
    /// How its data packages start on this link (see [`DataHeader`]).
    header: Option<DataHeader>,
}

impl Outputs {
    fn new(
        recipe_id: Option<u8>,
        recipe: SetUp,
        frequency: f64,
        protocol: ProtocolVersion,
    ) -> Self {
        let header = DataHeader::new(protocol, recipe_id, recipe.payload_size);
        Outputs {
            recipe_id,
            recipe,
            frequency,
            header,
        }
    }

    /// The id the controller gave the recipe on a new link (a reconnection replays it).
    fn reassigned(&mut self, recipe_id: Option<u8>, protocol: ProtocolVersion) {
        self.recipe_id = recipe_id;
        self.header = DataHeader::new(protocol, recipe_id, self.recipe.payload_size);
    }
}

/// One input recipe as set up.
#[derive(Debug)]
struct Inputs {
    recipe_id: u8,
    recipe: SetUp,
}

/// A request whose reply is due.
#[derive(Debug)]
enum Request {
    Negotiate(ProtocolVersion),
    QueryVersion,
    SetupOutputs {
        recipe: SetUp,
        frequency: f64,
        /// Part of a reconnection's replay: the recipe is already known.
        replay: bool,
        texts_before: u64,
    },
    SetupInputs {
        recipe: SetUp,
        /// The input being replayed, or `None` for a new one.
        replay: Option<usize>,
        texts_before: u64,
    },
    Start,
    Pause,
}

/// What a chain of requests completes as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Connect,
    Reconnect,
    Command,
}

#[derive(Debug)]
struct Pending {
    request: Request,
    deadline: Option<Instant>,
    purpose: Purpose,
}

/// One RTDE conversation, without I/O. See the [module](self) documentation.
pub struct Session {
    rx: FrameBuffer,
    c: Conversation,
}

/// Everything but the receive buffer, so a package borrowed from it can be checked and
/// counted against this state.
struct Conversation {
    serial: u64,
    now: Instant,
    reply_timeout: Option<Duration>,
    reconnect: Option<ReconnectPolicy>,
    /// Bytes to transmit: `tx[tx_start..tx_end]`; input packages are encoded in place.
    tx: Box<[u8]>,
    tx_start: usize,
    tx_end: usize,
    protocol: ProtocolVersion,
    /// The protocol version was settled by the controller's reply on this link.
    negotiated: bool,
    controller: ControllerVersion,
    connected_once: bool,
    outputs: Option<Outputs>,
    inputs: Vec<Inputs>,
    /// Outputs were started and not paused since: what a reconnection restores.
    running: bool,
    /// Outputs were started at least once (tells [`State::Paused`] from
    /// [`State::Connected`]).
    started: bool,
    /// The stream is out of step or the link is gone.
    lost: bool,
    state: State,
    events: BoundedQueue<Event>,
    texts: BoundedQueue<ControllerText>,
    stats: Stats,
    gaps: GapCounter,
    last_data_at: Option<Instant>,
    resume: Option<Resume>,
    pending: Option<Pending>,
    replay: VecDeque<Replay>,
    round: Option<Round>,
    /// A finished request not yet handed out by `poll_event`.
    completed: Option<Result<Done, Error>>,
    /// An event held back by [`Session::poll_latest`] behind the package it returned.
    deferred: Option<Ready>,
    /// Where the values of the last [`Ready::Data`] sit in the receive buffer.
    delivered: Option<Range<usize>>,
    /// A data package proved a START whose reply has not come yet.
    late_start_reply: bool,
    staleness: Staleness,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("state", &self.c.state)
            .field("protocol", &self.c.protocol)
            .field("controller", &self.c.controller)
            .field("outputs", &self.c.outputs)
            .field("inputs", &self.c.inputs)
            .field("pending", &self.c.pending)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Where an input package's values start: after the header and the input recipe id.
const VALUES_AT: usize = crate::protocol::HEADER_LEN + 1;

/// How long a driver's close waits, after sending its end of the link, for the controller
/// to close its side. The controller frees the connection's input variables once it has
/// seen the close: a program that closes and connects again at once (a reconnect, the
/// next run of a script) would otherwise find its own inputs still held. A controller
/// that does not close costs this much, once.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_millis(500);

impl Session {
    /// A session with the queue sizes, reply timeout and reconnection policy of `options`
    /// (its socket settings are the driver's), in [`State::Negotiating`]; call
    /// [`Session::handle_connected`] once the transport is up.
    #[must_use]
    pub fn new(options: &ConnectOptions, now: Instant) -> Session {
        let mut events = BoundedQueue::new(options.get_event_capacity());
        events.push(Event::State(State::Negotiating));
        Session {
            rx: FrameBuffer::new(),
            c: Conversation {
                serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
                now,
                reply_timeout: options.get_read_timeout(),
                reconnect: options.get_reconnect(),
                tx: vec![0; MAX_PACKAGE_LEN].into_boxed_slice(),
                tx_start: 0,
                tx_end: 0,
                protocol: ProtocolVersion::V1,
                negotiated: false,
                controller: ControllerVersion::new(0, 0, 0, 0),
                connected_once: false,
                outputs: None,
                inputs: Vec::new(),
                running: false,
                started: false,
                lost: true,
                state: State::Negotiating,
                events,
                texts: BoundedQueue::new(options.get_text_message_capacity()),
                stats: Stats::default(),
                gaps: GapCounter::off(),
                last_data_at: None,
                resume: None,
                pending: None,
                replay: VecDeque::new(),
                round: None,
                completed: None,
                deferred: None,
                delivered: None,
                late_start_reply: false,
                staleness: Staleness::default(),
            },
        }
    }

    // ---- what the driver reports ----

    /// A transport is up (the first, or a reconnection attempt's): clears the receive
    /// buffer and queues the handshake, and for a reconnection the replay of every recipe.
    pub fn handle_connected(&mut self, now: Instant) {
        self.rx.clear();
        self.c.delivered = None;
        self.c.now = now;
        self.c.tx_start = 0;
        self.c.tx_end = 0;
        self.c.protocol = ProtocolVersion::V1;
        self.c.negotiated = false;
        self.c.lost = false;
        self.c.pending = None;
        self.c.replay.clear();
        self.c.completed = None;
        self.c.deferred = None;
        self.c.late_start_reply = false;
        self.c.set_state(State::Negotiating);
        let purpose = if self.c.connected_once {
            Purpose::Reconnect
        } else {
            Purpose::Connect
        };
        self.c
            .request(Request::Negotiate(ProtocolVersion::V2), purpose);
    }

    /// The link failed or was dropped (by the peer, an I/O error, or the driver): the
    /// request in flight is abandoned, text messages still buffered are kept, and where
    /// streaming stood is remembered to count what the gap costs.
    pub fn handle_link_lost(&mut self, now: Instant) {
        self.c.now = now;
        self.c.abandon();
        if self.c.running && self.c.resume.is_none() {
            // Kept from an earlier failed round: the last package received is older.
            self.c.resume = Some(Resume {
                timestamp: self.c.gaps.last(),
                at: self.c.last_data_at,
                controller: self.c.controller,
                resumed_at: None,
            });
        }
        self.keep_buffered_texts();
        self.rx.clear();
        self.c.delivered = None;
        self.c.tx_start = 0;
        self.c.tx_end = 0;
        self.c.lost = true;
    }

    // ---- commands ----

    /// Sets up the output recipe at `frequency` hertz: the checks of
    /// [`Client::setup_outputs`](crate::Client::setup_outputs), then SETUP_OUTPUTS is queued;
    /// [`Ready::Done`] brings the controller's answer, checked.
    ///
    /// # Errors
    /// Everything found before sending (nothing is queued then): [`Error::Recipe`],
    /// [`Error::Unavailable`], the frequency errors, [`Error::Misuse`],
    /// [`Error::ConnectionLost`].
    pub fn setup_outputs(
        &mut self,
        spec: RecipeSpec<'_>,
        frequency: f64,
        now: Instant,
    ) -> Result<(), Error> {
        self.c.now = now;
        self.c.check_idle()?;
        if spec.direction() != Direction::Output {
            return Err(Error::Misuse(
                "`setup_outputs` needs an output recipe; set input recipes up with `setup_inputs`",
            ));
        }
        self.c.check_not_running()?;
        let fields = setup::check_spec(&spec)?;
        setup::check_available(Direction::Output, &fields, self.c.controller)?;
        self.c.frequency_field(frequency)?;
        self.c.outputs = None;
        let texts_before = self.c.texts.pushed();
        self.c.request(
            Request::SetupOutputs {
                recipe: SetUp::new(&spec),
                frequency,
                replay: false,
                texts_before,
            },
            Purpose::Command,
        );
        Ok(())
    }

    /// Sets up an input recipe: the checks of
    /// [`Client::setup_inputs`](crate::Client::setup_inputs), then SETUP_INPUTS is queued;
    /// [`Ready::Done`] brings [`Done::InputsSetUp`] with the handle, or the refusal.
    ///
    /// # Errors
    /// As [`Session::setup_outputs`], without the frequency errors.
    pub fn setup_inputs(&mut self, spec: RecipeSpec<'_>, now: Instant) -> Result<(), Error> {
        self.c.now = now;
        self.c.check_idle()?;
        if spec.direction() != Direction::Input {
            return Err(Error::Misuse(
                "`setup_inputs` needs an input recipe; set the output recipe up with `setup_outputs`",
            ));
        }
        self.c.check_not_running()?;
        let fields = setup::check_spec(&spec)?;
        setup::check_available(Direction::Input, &fields, self.c.controller)?;
        let texts_before = self.c.texts.pushed();
        self.c.request(
            Request::SetupInputs {
                recipe: SetUp::new(&spec),
                replay: None,
                texts_before,
            },
            Purpose::Command,
        );
        Ok(())
    }

    /// Starts streaming, or resumes after a pause; when streaming already, [`Done::Started`]
    /// comes at once.
    ///
    /// # Errors
    /// [`Error::ConnectionLost`], or [`Error::Misuse`] while another request is in flight.
    pub fn start(&mut self, now: Instant) -> Result<(), Error> {
        self.c.now = now;
        self.c.check_idle()?;
        if self.c.running {
            self.c.completed = Some(Ok(Done::Started));
        } else {
            self.c.request(Request::Start, Purpose::Command);
        }
        Ok(())
    }

    /// Pauses streaming; when not streaming, [`Done::Paused`] comes at once. Output packages
    /// already on their way are dropped and counted in [`Stats::discarded`].
    ///
    /// # Errors
    /// As [`Session::start`].
    pub fn pause(&mut self, now: Instant) -> Result<(), Error> {
        self.c.now = now;
        self.c.check_idle()?;
        if self.c.running {
            self.c.request(Request::Pause, Purpose::Command);
        } else {
            self.c.completed = Some(Ok(Done::Paused));
        }
        Ok(())
    }

    /// What closing needs: a PAUSE when outputs stream on a working link (then wait for
    /// [`Ready::Done`]); `false` when the driver can end the transport at once. Either way
    /// the driver then sends its end of the link and waits (a bounded time) for the
    /// controller's, so the controller has freed this connection's inputs when the close
    /// returns.
    ///
    /// # Errors
    /// As [`Session::pause`].
    pub fn close(&mut self, now: Instant) -> Result<bool, Error> {
        if self.c.running && !self.c.lost {
            self.pause(now)?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Queues the values of `recipe` as a data package of the input recipe `input` was set
    /// up with, encoded in place: no heap allocation.
    ///
    /// # Errors
    /// [`Error::Misuse`] for a handle of another connection or another recipe;
    /// [`Error::Payload`] when the recipe's encoder fails; [`Error::ConnectionLost`].
    pub fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        let c = &mut self.c;
        c.check_usable()?;
        let Some(set_up) = c.input(input) else {
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
        c.compact_tx();
        let at = c.tx_end;
        let Some(values) = c.tx.get_mut(at + VALUES_AT..at + VALUES_AT + size) else {
            return Err(Error::Payload(PayloadError::BufferTooSmall {
                needed: size,
                available: MAX_PACKAGE_LEN.saturating_sub(at + VALUES_AT),
            }));
        };
        let written = recipe.encode_into(values).map_err(Error::Payload)?;
        if written != size {
            return Err(Error::Payload(PayloadError::WrongLength {
                expected: size,
                found: written,
            }));
        }
        let len = finish_input_data_package(&mut c.tx[at..], recipe_id, size)
            .map_err(|e| Error::Encode(Box::new(e)))?;
        c.tx_end = at + len;
        Ok(())
    }

    /// Changes how long a reply may take (see
    /// [`ConnectOptions::read_timeout`](ConnectOptions::read_timeout)); `None` waits forever.
    pub fn set_reply_timeout(&mut self, timeout: Option<Duration>) {
        self.c.reply_timeout = timeout;
    }

    // ---- what the driver does next ----

    /// The bytes to write next, if any; report what was written with
    /// [`Session::transmitted`].
    #[must_use]
    pub fn poll_transmit(&self) -> Option<&[u8]> {
        let c = &self.c;
        (c.tx_start < c.tx_end).then(|| &c.tx[c.tx_start..c.tx_end])
    }

    /// `n` bytes of [`Session::poll_transmit`] were written.
    pub fn transmitted(&mut self, n: usize) {
        let c = &mut self.c;
        c.tx_start = (c.tx_start + n).min(c.tx_end);
        if c.tx_start == c.tx_end {
            c.tx_start = 0;
            c.tx_end = 0;
        }
    }

    /// When to call [`Session::handle_timeout`] at the latest: the deadline of the reply in
    /// flight, or the staleness deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let reply = self.c.pending.as_ref().and_then(|p| p.deadline);
        let stale = self.c.staleness.deadline(self.c.running && !self.c.lost);
        match (reply, stale) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- what the application reads ----

    /// What the connection is doing now.
    #[must_use]
    pub fn state(&self) -> State {
        self.c.state
    }

    /// Whether the stream is out of step or the link gone: the driver must drop the
    /// transport; commands fail with [`Error::ConnectionLost`] until a reconnection.
    #[must_use]
    pub fn is_lost(&self) -> bool {
        self.c.lost
    }

    /// Whether a request's reply is due.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.c.pending.is_some() || self.c.completed.is_some()
    }

    /// Whether outputs stream: started, not paused (the link may be down).
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.c.running
    }

    /// The protocol version in use.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.c.protocol
    }

    /// The controller's software version, as it reported it (0.0.0 before the handshake).
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.c.controller
    }

    /// The highest output frequency this controller accepts, in hertz: 125 Hz on CB3,
    /// 500 Hz on e-Series and PolyScope X (and for a generation the registry does not know).
    #[must_use]
    pub fn max_frequency(&self) -> f64 {
        self.c.max_frequency()
    }

    /// The output recipe's id: `None` before setup and in protocol v1.
    #[must_use]
    pub fn output_recipe_id(&self) -> Option<u8> {
        self.c.outputs.as_ref().and_then(|o| o.recipe_id)
    }

    /// The id the controller gave an input recipe, `None` for a handle of another session.
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.c.input(input).map(|i| i.recipe_id)
    }

    /// The output frequency given to [`Session::setup_outputs`], in hertz, as sent.
    #[must_use]
    pub fn requested_frequency(&self) -> Option<f64> {
        self.c.outputs.as_ref().map(|o| o.frequency)
    }

    /// The rate output packages arrive at, in hertz, once outputs are set up: the
    /// control-loop rate divided by `floor(loop rate / requested frequency)`
    /// ([`protocol::timing`](crate::protocol::timing)).
    #[must_use]
    pub fn output_frequency(&self) -> Option<f64> {
        self.c
            .outputs
            .as_ref()
            .map(|o| self.c.output_frequency(o.frequency))
    }

    /// The size of an output package's values, once set up.
    #[must_use]
    pub fn payload_size(&self) -> Option<usize> {
        self.c.outputs.as_ref().map(|o| o.recipe.payload_size)
    }

    /// Whether `spec` is the output recipe set up.
    ///
    /// # Errors
    /// [`Error::Misuse`] when it is not, or when none is.
    pub fn check_output_spec(&self, spec: &RecipeSpec<'_>) -> Result<(), Error> {
        match &self.c.outputs {
            Some(o) if o.recipe.matches(spec) => Ok(()),
            other => Err(not_the_output_recipe(other.is_some())),
        }
    }

    /// [`Session::check_output_spec`] for a recipe known at compile time, such as a
    /// derived recipe's [`StaticRecipe::SPEC`](crate::StaticRecipe::SPEC): once that spec
    /// has matched, checking it again compares two addresses, not every name and type.
    /// What a driver's `recv_as` calls before each package.
    ///
    /// ```
    /// use std::time::Instant;
    /// use rtde_core::{ConnectOptions, Session, StaticRecipe};
    ///
    /// #[derive(rtde_core::RtdeRecipe)]
    /// struct Telemetry { timestamp: f64 }
    ///
    /// let mut session = Session::new(&ConnectOptions::new(), Instant::now());
    /// // Nothing set up yet: nothing to receive.
    /// assert!(session.check_output_static(&Telemetry::SPEC).is_err());
    /// ```
    ///
    /// # Errors
    /// As [`Session::check_output_spec`].
    pub fn check_output_static(&mut self, spec: &RecipeSpec<'static>) -> Result<(), Error> {
        match &mut self.c.outputs {
            Some(o) => {
                if o.recipe.matches_static(spec) {
                    Ok(())
                } else {
                    Err(not_the_output_recipe(true))
                }
            }
            None => Err(not_the_output_recipe(false)),
        }
    }

    /// Whether there is anything to receive: a working link, an output recipe, and outputs
    /// started.
    ///
    /// # Errors
    /// [`Error::ConnectionLost`], or [`Error::Misuse`] before setup and start.
    pub fn check_receivable(&self) -> Result<(), Error> {
        self.c.check_usable()?;
        if self.c.outputs.is_none() || !self.c.running {
            return Err(Error::Misuse(
                "nothing to receive: set up an output recipe with `setup_outputs`, then `start`",
            ));
        }
        Ok(())
    }

    /// Whether skipped packages are counted: the output recipe has a `timestamp`, or a
    /// `control_step` and no `timestamp`.
    #[must_use]
    pub fn counts_gaps(&self) -> bool {
        self.c.gaps.is_active()
    }

    /// The counters, over every link.
    #[must_use]
    pub fn stats(&self) -> Stats {
        Stats {
            texts_dropped: self.c.texts.dropped(),
            events_dropped: self.c.events.dropped(),
            ..self.c.stats
        }
    }

    /// Part of a package has arrived and the rest not yet.
    #[must_use]
    pub fn mid_frame(&self) -> bool {
        !self.rx.buffered().is_empty()
    }

    /// The text messages received since the last call, oldest first (a bounded queue;
    /// drops are counted in [`Stats::texts_dropped`]).
    pub fn text_messages(&mut self) -> impl Iterator<Item = ControllerText> + '_ {
        self.c.texts.queue_mut().drain(..)
    }

    /// The events since the last call, oldest first (a bounded queue; drops are counted in
    /// [`Stats::events_dropped`]).
    pub fn events(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.c.events.queue_mut().drain(..)
    }

    /// Queues an event a driver saw and the session could not (a package a background
    /// driver consumed without a caller to return its error to).
    pub(crate) fn record(&mut self, event: Event) {
        self.c.events.push(event);
    }

    /// A call that returns `result` is over: a failure on a lost link that nothing is
    /// reconnecting makes the state [`State::Closed`].
    ///
    /// # Errors
    /// `result`'s.
    pub fn settle<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if result.is_err() && self.c.lost {
            self.c.set_state(State::Closed);
        }
        result
    }
}

impl Conversation {
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

    /// The rate a recipe asked at `requested` hertz really streams at.
    fn output_frequency(&self, requested: f64) -> f64 {
        crate::protocol::timing::effective_frequency(self.max_frequency(), requested)
    }

    fn max_frequency(&self) -> f64 {
        self.controller
            .generation()
            .map_or(500.0, Generation::max_frequency)
    }

    fn check_usable(&self) -> Result<(), Error> {
        if self.lost {
            Err(Error::ConnectionLost)
        } else {
            Ok(())
        }
    }

    fn check_idle(&self) -> Result<(), Error> {
        self.check_usable()?;
        if self.pending.is_some() || self.completed.is_some() {
            return Err(Error::Misuse(
                "a request is in flight; wait for its reply before the next one",
            ));
        }
        Ok(())
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

    fn input(&self, input: &InputHandle) -> Option<&Inputs> {
        if input.session == self.serial {
            self.inputs.get(input.index)
        } else {
            None
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

    /// Gives up the request in flight and the rest of its chain (the link is lost).
    fn abandon(&mut self) -> Option<Pending> {
        self.replay.clear();
        let pending = self.pending.take();
        if let Some(Pending {
            request: Request::Pause,
            ..
        }) = pending
        {
            // The user asked to pause: a reconnection must not START again.
            self.running = false;
            self.resume = None;
        }
        pending
    }

    /// Moves unsent bytes to the front, so a package fits behind them.
    fn compact_tx(&mut self) {
        if self.tx_start > 0 {
            self.tx.copy_within(self.tx_start..self.tx_end, 0);
            self.tx_end -= self.tx_start;
            self.tx_start = 0;
        }
    }

    /// Queues `request`'s bytes and waits for its reply. A request that cannot be encoded
    /// completes at once with the error.
    fn request(&mut self, request: Request, purpose: Purpose) {
        let protocol = self.protocol;
        let mut names = String::new();
        let frequency_field = match &request {
            Request::SetupOutputs { frequency, .. } => {
                self.frequency_field(*frequency).ok().flatten()
            }
            _ => None,
        };
        let msg = match &request {
            Request::Negotiate(version) => ClientMessage::RequestProtocolVersion {
                version: version.number(),
            },
            Request::QueryVersion => ClientMessage::GetUrcontrolVersion,
            Request::SetupOutputs { recipe, .. } => {
                let spec = recipe.spec(Direction::Output);
                names.reserve(spec.name_list_len());
                spec.write_name_list(&mut names);
                ClientMessage::SetupOutputs {
                    frequency: frequency_field,
                    names: &names,
                }
            }
            Request::SetupInputs { recipe, .. } => {
                let spec = recipe.spec(Direction::Input);
                names.reserve(spec.name_list_len());
                spec.write_name_list(&mut names);
                ClientMessage::SetupInputs { names: &names }
            }
            Request::Start => ClientMessage::Start,
            Request::Pause => ClientMessage::Pause,
        };
        self.compact_tx();
        let at = self.tx_end;
        match msg.encode(protocol, &mut self.tx[at..]) {
            Ok(len) => self.tx_end = at + len,
            Err(e) => {
                self.completed = Some(Err(Error::Encode(Box::new(e))));
                return;
            }
        }
        // A timeout too long for the clock to add (`Duration::MAX`, say) is no deadline.
        let deadline = self.reply_timeout.and_then(|t| self.now.checked_add(t));
        self.pending = Some(Pending {
            request,
            deadline,
            purpose,
        });
    }
}

/// Why a recipe given to receive into was refused: another recipe is set up, or none.
fn not_the_output_recipe(one_set_up: bool) -> Error {
    Error::Misuse(if one_set_up {
        "the recipe given to receive into is not the output recipe set up on this connection"
    } else {
        "nothing to receive: set up an output recipe with `setup_outputs`, then `start`"
    })
}

#[cfg(test)]
mod tests;
