//! The background driver: a reader thread owns the connection and drains the socket
//! continuously; the application holds cheap handles, a [`Receiver`] and a [`Sender`].
//!
//! The same session as the blocking [`Client`] (the thread *is* the client's loop of read →
//! handle → poll → write, with the session behind a mutex), so every rule is the same; only
//! who waits differs. A control loop, a GUI and a logger can share one connection:
//!
//! - [`Receiver::latest`]: the newest package, at once, without allocating; the lock is held
//!   for a copy of its values, never across a decode;
//! - [`Receiver::recv`]: every package in order, through a bounded queue whose overflow is
//!   counted in [`Stats::overflowed`] (never silent), with a sequence number a consumer can
//!   check;
//! - [`Sender::send`]: `Send + Sync + Clone`, inputs from any thread.
//!
//! ```no_run
//! use std::time::Duration;
//! use rtde_core::client::SpawnOptions;
//! use rtde_core::{Client, ConnectOptions, DynamicRecipe, OutputRecipe, RTDE_PORT, Recipe};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut client = Client::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new())?;
//! let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"])?;
//! client.setup_outputs(outputs.spec(), 125.0)?;
//! client.start()?;
//! let background = client.spawn(SpawnOptions::new().name("rtde-arm-1"))?;
//!
//! let mut receiver = background.receiver();
//! let values = receiver.recv(Some(Duration::from_secs(1)))?; // the next, in order
//! outputs.decode_into(values)?;
//! if let Some(latest) = receiver.latest()? {               // the newest, at once
//!     outputs.decode_into(latest)?;
//! }
//! background.close()?; // pauses, joins the thread
//! # Ok(())
//! # }
//! ```
//!
//! Dropping the [`Background`] (or [`Background::close`]) stops and joins the thread;
//! handles still held then return [`Error::ConnectionLost`].

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_fields::ControllerVersion;

use super::reconnect::{Hold, round};
use super::transport::Got;
use super::{Client, Turn, realtime};
use crate::delivery::silences::Heard;
use crate::delivery::{Delivery, PackageQueue, Popped, Wake};
use crate::error::Error;
use crate::protocol::{MAX_PACKAGE_LEN, ProtocolVersion, package_type as ty};
use crate::recipe::{FromPayload, InputRecipe, OutputRecipe};
use crate::session::{
    ControllerText, Done, Event, InputHandle, Ready, ReconnectPolicy, State, Stats,
};

/// How often the reader thread wakes when nothing arrives, to notice a close (and, at the
/// latest, a stale stream).
const IDLE_TICK: Duration = Duration::from_millis(50);

/// Options for [`Client::spawn`].
///
/// ```
/// use std::time::Duration;
/// use rtde_core::client::SpawnOptions;
///
/// let options = SpawnOptions::new()
///     .name("rtde-reader")
///     .realtime_priority(80)              // SCHED_FIFO 80 (needs CAP_SYS_NICE)
///     .cpu_affinity(1)
///     .queue_capacity(1000)               // 2 s at 500 Hz for `Receiver::recv`
///     .staleness(Duration::from_millis(20), Duration::from_secs(2));
/// assert_eq!(options.get_queue_capacity(), 1000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnOptions {
    name: String,
    priority: Option<u8>,
    cpu: Option<usize>,
    queue_capacity: usize,
    staleness: Option<(Duration, Duration)>,
    reconnect: Option<ReconnectPolicy>,
    spin: Option<Duration>,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SpawnOptions {
    /// A thread named `rtde-reader` at the default priority on any CPU, an in-order queue
    /// of 1024 packages, no staleness deadline, and the connection's own reconnection
    /// policy ([`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)).
    #[must_use]
    pub fn new() -> Self {
        SpawnOptions {
            name: "rtde-reader".into(),
            priority: None,
            cpu: None,
            queue_capacity: 1024,
            staleness: None,
            reconnect: None,
            spin: None,
        }
    }

    /// The reader thread's name (what `top -H` and debuggers show).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Runs the reader thread under SCHED_FIFO at `priority` (1 to 99). When the operating
    /// system refuses, [`Client::spawn`] fails with [`Error::Realtime`], which says why and
    /// what to grant (root, CAP_SYS_NICE, an `rtprio` limit).
    #[must_use]
    pub fn realtime_priority(mut self, priority: u8) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Pins the reader thread to `cpu`; a CPU the process may not use is an
    /// [`Error::Realtime`].
    #[must_use]
    pub fn cpu_affinity(mut self, cpu: usize) -> Self {
        self.cpu = Some(cpu);
        self
    }

    /// How many packages [`Receiver::recv`]'s queue holds; when full, the oldest goes and is
    /// counted in [`Stats::overflowed`]. 0 keeps none: only [`Receiver::latest`] is used.
    #[must_use]
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity;
        self
    }

    /// Reports [`Event::Stale`] (and [`Background::is_stale`]) when no package arrives for
    /// `limit`; after START and after a reconnection the first package may take `grace`.
    #[must_use]
    pub fn staleness(mut self, limit: Duration, grace: Duration) -> Self {
        self.staleness = Some((limit, grace));
        self
    }

    /// Reconnects automatically with `policy` when the link fails (instead of the policy of
    /// [`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)).
    #[must_use]
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = Some(policy);
        self
    }

    /// Makes [`Receiver::recv`] busy-wait from `window` before the next package is due
    /// (one output period after the reader thread read the last one it returned) until it
    /// arrives, instead of sleeping until the reader thread wakes it: the package then
    /// reaches the receiver without the operating system's wake-up (a futex and a context
    /// switch, or an interrupt across cores). A package later than a quarter of a period (or
    /// `window`, if longer) after it was due is waited for asleep. The price is the CPU of
    /// the spin, about `window` plus the arrival's jitter per package. For a control loop on
    /// a core of its own; by default `recv` sleeps.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rtde_core::client::SpawnOptions;
    ///
    /// let options = SpawnOptions::new().spin_before_arrival(Duration::from_micros(30));
    /// ```
    #[must_use]
    pub fn spin_before_arrival(mut self, window: Duration) -> Self {
        self.spin = Some(window);
        self
    }

    /// The in-order queue's capacity.
    #[must_use]
    pub fn get_queue_capacity(&self) -> usize {
        self.queue_capacity
    }
}

/// What the reader thread and the handles share.
#[derive(Debug)]
struct Shared {
    client: Mutex<Client>,
    /// The in-order queue, the latest package, the stale flag and the end.
    delivery: Delivery<Arrivals>,
    payload_size: usize,
    stop: AtomicBool,
    /// Whether the reader thread is making a round of reconnection attempts ([`UnderWay`]);
    /// set and cleared with `client` locked. Senders wait for the round's end on
    /// `round_changed`, and the reader's backoff waits on it for a close.
    round: Mutex<bool>,
    round_changed: Condvar,
    /// [`SpawnOptions::spin_before_arrival`]'s window, and the output period.
    spin: Option<(Duration, Duration)>,
}

/// How the reader thread wakes the receivers parked in [`Receiver::recv`]: a condition
/// variable, and the count of receivers on it, so that the reader makes no wake-up call
/// (a futex syscall) while every receiver is busy.
#[derive(Debug, Default)]
struct Arrivals {
    arrived: Condvar,
}

impl Wake for Arrivals {
    /// The receivers parked on `arrived`: counted under the queue's lock, which the reader
    /// holds when it looks, so it never misses one.
    type Parked = usize;

    fn wake(&self, queue: MutexGuard<'_, PackageQueue<usize>>) {
        let parked = queue.parked > 0;
        // A receiver woken takes the lock first thing: let go of it before.
        drop(queue);
        if parked {
            self.arrived.notify_all();
        }
    }
}

/// What [`Receiver::recv`] does while the queue is empty, when it busy-waits near arrivals.
enum Spin {
    /// Spin until then.
    Now(Instant),
    /// Sleep this long (or until woken), then spin.
    After(Duration),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A handle's thread that panicked left consistent data behind: every critical section
    // is a copy or a counter update.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    fn client(&self) -> MutexGuard<'_, Client> {
        lock(&self.client)
    }

    /// Wakes whoever waits on the round: a sender for its end, the reader's backoff for
    /// a close.
    fn notify_round(&self) {
        let _round = lock(&self.round);
        self.round_changed.notify_all();
    }
}

/// A running background driver: the reader thread and the way to its handles. Dropping it
/// stops and joins the thread (without pausing; [`Background::close`] pauses first).
#[derive(Debug)]
pub struct Background {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<(), Error>>>,
}

/// Reads output packages a background driver received; see the [module](crate::client::background)
/// documentation. `Clone` gives another receiver with a buffer of its own (one allocation,
/// at the clone); the in-order queue is shared, so each package goes to one `recv` caller.
#[derive(Debug)]
pub struct Receiver {
    shared: Arc<Shared>,
    /// The package last returned: swapped with a queued one's buffer by `recv`, a copy of
    /// the latest by `latest`.
    values: Box<[u8]>,
    seq: u64,
    at: Option<Instant>,
    /// The silences this receiver reported.
    heard: Heard,
}

/// Sends input packages on a background driver's connection, from any thread:
/// `Send + Sync + Clone`.
#[derive(Clone, Debug)]
pub struct Sender {
    shared: Arc<Shared>,
}

impl Client {
    /// Hands the connection to a reader thread that drains the socket continuously, and
    /// returns the [`Background`] that gives out [`Receiver`]s and [`Sender`]s. Set the
    /// recipes up and [`Client::start`] first; reconnection follows
    /// [`SpawnOptions::reconnect`], else the connection's
    /// [`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect).
    ///
    /// # Errors
    /// [`Error::Realtime`] when a real-time option is refused (the connection is closed
    /// then: retry without the option, or grant it); a link error cloning the socket;
    /// [`Error::Misuse`] when the thread cannot be started.
    pub fn spawn(mut self, options: SpawnOptions) -> Result<Background, Error> {
        let read = self.stream.try_clone().map_err(|source| Error::Io {
            source,
            mid_frame: false,
        })?;
        let size = self.session.payload_size().unwrap_or(0);
        let cap = if size == 0 { 0 } else { options.queue_capacity };
        let period = self
            .session
            .output_frequency()
            .filter(|f| f.is_finite() && *f > 0.0)
            .map(|f| Duration::from_secs_f64(1.0 / f));
        let spin = options.spin.zip(period);
        if let Some((limit, grace)) = options.staleness {
            self.session
                .set_staleness(Some(limit), grace, Instant::now());
        }
        let delivery = Delivery::new(Arrivals::default(), size);
        // Every buffer of the queue is allocated here, none after.
        delivery.queue().open(cap, size);
        let shared = Arc::new(Shared {
            client: Mutex::new(self),
            delivery,
            payload_size: size,
            stop: AtomicBool::new(false),
            round: Mutex::new(false),
            round_changed: Condvar::new(),
            spin,
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread_shared = Arc::clone(&shared);
        let tick = options.staleness.map_or(IDLE_TICK, |(limit, _)| {
            (limit / 4).clamp(Duration::from_millis(1), IDLE_TICK)
        });
        let thread = std::thread::Builder::new()
            .name(options.name.clone())
            .spawn(move || {
                let setup = options
                    .priority
                    .map_or(Ok(()), realtime::set_fifo_priority)
                    .and_then(|()| options.cpu.map_or(Ok(()), realtime::set_cpu_affinity));
                let failed = setup.is_err();
                let _ = ready_tx.send(setup);
                if failed {
                    thread_shared.client().shut_down();
                    finish(&thread_shared, None);
                    return Ok(());
                }
                run(&thread_shared, read, tick, options.reconnect)
            })
            .map_err(|_| Error::Misuse("the operating system could not start a thread"))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Background {
                shared,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(Error::Misuse("the reader thread ended before it started"))
            }
        }
    }

    /// Shuts the socket down without pausing.
    fn shut_down(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        self.session.handle_link_lost(Instant::now());
    }
}

/// The reader thread: read (no lock held) → handle → poll → publish, until stopped or the
/// link is gone for good.
fn run(
    shared: &Shared,
    mut read: TcpStream,
    tick: Duration,
    reconnect: Option<ReconnectPolicy>,
) -> Result<(), Error> {
    let mut buf = vec![0u8; 2 * MAX_PACKAGE_LEN];
    let _ = read.set_read_timeout(Some(tick));
    // What the client received before the thread took over (a package that came with the
    // START reply, say) is delivered before anything is read.
    let mut client = shared.client();
    if let Some(cause) = dispatch(shared, &mut client, Instant::now()) {
        client.session.handle_link_lost(Instant::now());
        let result = client.session.settle(Err(cause));
        client.shut_down();
        drop(client);
        return end(shared, result);
    }
    drop(client);
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            let mut client = shared.client();
            client.forget_socket_timeout();
            let result = client.close_in_place();
            drop(client);
            finish(shared, None);
            return result;
        }
        let got = read.read(&mut buf);
        let now = Instant::now();
        let mut client = shared.client();
        let lost = match Got::from(got, client.session.mid_frame()) {
            Got::Bytes(n) => {
                let mut rest = &buf[..n];
                let mut lost = None;
                while !rest.is_empty() && lost.is_none() {
                    let taken = client.session.handle_bytes(rest, now);
                    rest = &rest[taken..];
                    lost = dispatch(shared, &mut client, now);
                    if taken == 0 && lost.is_none() {
                        break;
                    }
                }
                lost
            }
            Got::Nothing => {
                client.session.handle_timeout(now);
                dispatch(shared, &mut client, now)
            }
            Got::Interrupted => None,
            Got::Lost(e) => Some(e),
        };
        // A sender's failed write loses the link too.
        let lost = lost.or_else(|| client.session.is_lost().then_some(Error::ConnectionLost));
        let Some(cause) = lost else {
            continue;
        };
        if shared.stop.load(Ordering::Relaxed) {
            client.shut_down();
            drop(client);
            finish(shared, None);
            return Ok(());
        }
        let policy = reconnect.or(client.options.get_reconnect());
        let result = match policy {
            Some(policy) => {
                // Senders wait for the round from here (the flag is set under the client's
                // lock, which they check it under), and the handles ask the session how
                // it goes between its steps.
                let under_way = UnderWay::begin(shared);
                drop(client);
                let mut stepwise = Stepwise {
                    shared,
                    buf: &mut buf,
                    tick,
                };
                let result = round(&mut stepwise, policy, Some(cause));
                client = shared.client();
                drop(under_way);
                result
            }
            None => {
                client.session.handle_link_lost(now);
                Err(cause)
            }
        };
        if shared.stop.load(Ordering::Relaxed) {
            // Closed during the round: there is nothing to pause.
            client.shut_down();
            let _ = client.session.settle::<()>(Err(Error::ConnectionLost));
            drop(client);
            finish(shared, None);
            return Ok(());
        }
        match result.and_then(|_| {
            client.stream.try_clone().map_err(|source| Error::Io {
                source,
                mid_frame: false,
            })
        }) {
            Ok(stream) => {
                read = stream;
                let _ = read.set_read_timeout(Some(tick));
                client.forget_socket_timeout();
            }
            Err(e) => {
                let result = client.session.settle(Err(e));
                client.shut_down();
                drop(client);
                return end(shared, result);
            }
        }
    }
}

/// A round of reconnection attempts is under way while this lives: senders wait for its
/// end. Ended by drop, so that a reader thread that panicked cannot leave them waiting.
struct UnderWay<'a>(&'a Shared);

impl<'a> UnderWay<'a> {
    fn begin(shared: &'a Shared) -> Self {
        *lock(&shared.round) = true;
        UnderWay(shared)
    }
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        *lock(&self.0.round) = false;
        self.0.round_changed.notify_all();
    }
}

/// The reader thread's hold on the client through a round of reconnection attempts: the
/// lock for each step of the session, none while it connects, backs off, or waits for the
/// handshake's replies, so the handles answer meanwhile with the round's truth (the state,
/// the attempts in the events). A close ends the round between two of its steps.
struct Stepwise<'a> {
    shared: &'a Shared,
    buf: &'a mut [u8],
    tick: Duration,
}

impl Hold for Stepwise<'_> {
    fn with<T>(&mut self, step: impl FnOnce(&mut Client) -> T) -> T {
        step(&mut self.shared.client())
    }

    fn handshake(&mut self, stream: TcpStream, peer: SocketAddr) -> Result<Done, Error> {
        let link = |source| Error::Io {
            source,
            mid_frame: false,
        };
        let mut read = stream.try_clone().map_err(link)?;
        self.with(|client| client.connected(stream, peer));
        loop {
            // Poll and write under the lock (the write is bounded by the write timeout);
            // room for what is read next, so the session takes all of it.
            let (deadline, room) = {
                let mut client = self.shared.client();
                match client.drive_turn()? {
                    Turn::Done(result) => return result,
                    Turn::Read(deadline) => (deadline, client.session.receive_buffer().len()),
                }
            };
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Error::ConnectionLost);
            }
            // Waits in ticks, to notice a close.
            let now = Instant::now();
            let wait = deadline.map_or(self.tick, |d| {
                d.saturating_duration_since(now).min(self.tick)
            });
            let room = room.min(self.buf.len());
            let got = if wait.is_zero() || room == 0 {
                Err(io::ErrorKind::TimedOut.into())
            } else {
                read.set_read_timeout(Some(wait))
                    .and_then(|()| read.read(&mut self.buf[..room]))
            };
            let now = Instant::now();
            let mut client = self.shared.client();
            match Got::from(got, client.session.mid_frame()) {
                Got::Bytes(n) => {
                    let taken = client.session.handle_bytes(&self.buf[..n], now);
                    if taken < n {
                        // Cannot happen (the read fit the room); a link out of step if it did.
                        client.session.handle_link_lost(now);
                        return Err(Error::ConnectionLost);
                    }
                }
                Got::Nothing => {
                    if deadline.is_some_and(|d| now >= d) {
                        client.session.handle_timeout(now);
                    }
                }
                Got::Interrupted => {}
                Got::Lost(e) => {
                    client.session.handle_link_lost(now);
                    return Err(e);
                }
            }
        }
    }

    fn back_off(&mut self, wait: Duration) -> Result<(), Error> {
        let deadline = Instant::now().checked_add(wait);
        let mut round = lock(&self.shared.round);
        loop {
            // Checked under the lock `Background::stop` notifies under: no wake-up is lost.
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Error::ConnectionLost);
            }
            let left = deadline.map_or(IDLE_TICK, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(());
            }
            round = self
                .shared
                .round_changed
                .wait_timeout(round, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Hands what the session has ready to the handles, in one pass (one wake-up per read,
/// not per package: a read of an unpaced stream holds hundreds); the error that loses the
/// link, if any.
fn dispatch(shared: &Shared, client: &mut Client, now: Instant) -> Option<Error> {
    let mut pass = shared.delivery.pass();
    while let Some(ready) = client.session.poll_event() {
        match ready {
            Ready::Data => pass.data(client.session.data(), now),
            Ready::Stale { silent_for } => pass.stale(silent_for),
            Ready::Rejected(e) => client.session.record(Event::Rejected(e)),
            Ready::Broken(e) | Ready::Done(Err(e)) => return Some(e),
            Ready::Done(Ok(_)) => {}
        }
    }
    None
}

/// The link is gone for good: keep why for the handles, then end.
fn end(shared: &Shared, result: Result<(), Error>) -> Result<(), Error> {
    finish(shared, result.err());
    Ok(())
}

/// The thread ends (by `error`, for the receivers and [`Background::close`]): wake every
/// waiting receiver and sender.
fn finish(shared: &Shared, error: Option<Error>) {
    shared.delivery.end(error);
    shared.notify_round();
}

impl Background {
    /// A receiver of output packages (one allocation, for its buffer).
    #[must_use]
    pub fn receiver(&self) -> Receiver {
        Receiver {
            shared: Arc::clone(&self.shared),
            values: vec![0; self.shared.payload_size].into_boxed_slice(),
            seq: 0,
            at: None,
            heard: Heard::default(),
        }
    }

    /// A sender of input packages.
    #[must_use]
    pub fn sender(&self) -> Sender {
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The counters, [`Stats::overflowed`] included.
    #[must_use]
    pub fn stats(&self) -> Stats {
        Stats {
            overflowed: self.shared.delivery.overflowed(),
            ..self.shared.client().stats()
        }
    }

    /// What the connection is doing. During a round of reconnection attempts it answers at
    /// once, like every getter here: [`State::Reconnecting`] (and
    /// [`State::Negotiating`] while an attempt's handshake and replay run), with each
    /// failed attempt in [`Background::events`]. The reader thread holds the connection
    /// only for the session's steps, never while it connects, backs off or waits for a
    /// reply.
    #[must_use]
    pub fn state(&self) -> State {
        self.shared.client().state()
    }

    /// Whether no package arrived for the staleness limit ([`SpawnOptions::staleness`]);
    /// false again with the next package, which [`Event::Fresh`] reports in
    /// [`Background::events`] (as [`Event::Stale`] the silence), so nothing needs to poll
    /// this.
    #[must_use]
    pub fn is_stale(&self) -> bool {
        self.shared.delivery.is_stale()
    }

    /// Whether the reader thread ended (the link is gone and was not brought back).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.shared.delivery.is_ended()
    }

    /// The events since the last call, oldest first.
    #[must_use]
    pub fn events(&self) -> Vec<Event> {
        self.shared.client().events().collect()
    }

    /// The text messages since the last call, oldest first.
    #[must_use]
    pub fn text_messages(&self) -> Vec<ControllerText> {
        self.shared.client().text_messages().collect()
    }

    /// The id the controller gave an input recipe now (it may change on reconnection).
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.shared.client().input_recipe_id(input)
    }

    /// The id the controller gave the output recipe now: `None` before setup and in
    /// protocol v1, whose data packages carry none. As
    /// [`Client::output_recipe_id`]; it may change on reconnection.
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::client::Background) {
    /// // What a recording's header says the packages after it are.
    /// let header = format!(
    ///     "protocol {:?}, controller {}, output recipe {:?}",
    ///     background.protocol_version(),
    ///     background.controller_version(),
    ///     background.output_recipe_id(),
    /// );
    /// # let _ = header;
    /// # }
    /// ```
    #[must_use]
    pub fn output_recipe_id(&self) -> Option<u8> {
        self.shared.client().output_recipe_id()
    }

    /// The protocol version in use now (a reconnection negotiates it again). As
    /// [`Client::protocol_version`].
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::client::Background) {
    /// use rtde_core::protocol::ProtocolVersion;
    ///
    /// // v1 data packages carry no recipe id.
    /// if background.protocol_version() == ProtocolVersion::V1 {
    ///     assert_eq!(background.output_recipe_id(), None);
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.shared.client().protocol_version()
    }

    /// The controller's software version, as it reported it on the link in use (a
    /// reconnection may meet another). As [`Client::controller_version`].
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::client::Background) {
    /// println!("streaming from controller {}", background.controller_version());
    /// # }
    /// ```
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.shared.client().controller_version()
    }

    /// Pauses if streaming, shuts the connection down and joins the reader thread. During a
    /// round of reconnection attempts there is nothing to pause: the round ends at its next
    /// step (a backoff is cut short; a TCP connect under way may take its connect timeout).
    ///
    /// # Errors
    /// The pause's error, or the error that ended the thread earlier: the same a
    /// [`Receiver`] was told (one end, one error, as the async driver's connection task
    /// returns the error its in-order receiver ends with).
    pub fn close(mut self) -> Result<(), Error> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), Error> {
        self.shared.stop.store(true, Ordering::Relaxed);
        // A reader backing off between two attempts ends the round now.
        self.shared.notify_round();
        let joined = match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or(Err(Error::Misuse("the reader thread panicked"))),
            None => Ok(()),
        };
        // The error that ended the thread earlier; a receiver not told yet still is.
        match self.shared.delivery.queue().ended_by() {
            Some(e) => Err(e.duplicate()),
            None => joined,
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if self.thread.is_some() {
            // Without the pause: a drop cannot report its error.
            self.shared.stop.store(true, Ordering::Relaxed);
            let _ = self
                .shared
                .client()
                .stream
                .shutdown(std::net::Shutdown::Both);
            let _ = self.stop();
        }
    }
}

impl Receiver {
    /// The values of the newest package received, at once (`None` before the first). Never
    /// waits for a package and never allocates; the lock is held for the copy into this
    /// receiver's buffer only, so decoding the returned slice holds none.
    ///
    /// # Errors
    /// [`Error::ConnectionLost`] once the reader thread has ended.
    pub fn latest(&mut self) -> Result<Option<&[u8]>, Error> {
        let delivery = &self.shared.delivery;
        if delivery.is_ended() {
            return Err(delivery.queue().ended());
        }
        let copied = delivery.latest().copy_unless(0, &mut self.values);
        let Some((seq, at)) = copied else {
            return Ok(None);
        };
        self.seq = seq;
        self.at = at;
        Ok(Some(&self.values))
    }

    /// The sequence number of the newest package received (0 before the first), without
    /// taking a lock or copying: a loop that polls [`Receiver::latest`] asks this first, and
    /// copies only when it is past [`Receiver::seq`].
    ///
    /// ```no_run
    /// # fn poll(receiver: &mut rtde_core::client::Receiver) -> Result<(), rtde_core::Error> {
    /// if receiver.newest_seq() > receiver.seq() {
    ///     let values = receiver.latest()?; // a package this receiver has not seen
    /// }
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn newest_seq(&self) -> u64 {
        self.shared.delivery.newest()
    }

    /// The newest package as a `T` (see [`Receiver::latest`]).
    ///
    /// # Errors
    /// As [`Receiver::latest`]; [`Error::Payload`] when `T` does not fit.
    pub fn latest_as<T: FromPayload>(&mut self) -> Result<Option<T>, Error> {
        match self.latest()? {
            Some(values) => Ok(Some(T::from_payload_as::<Error>(values)?)),
            None => Ok(None),
        }
    }

    /// The next package in order, waiting up to `timeout` (`None`: forever). Packages the
    /// queue had no room for are counted in [`Stats::overflowed`]; [`Receiver::seq`] tells
    /// which package this was (they count from 1 without holes).
    ///
    /// **When the controller stops sending.** With a staleness deadline
    /// ([`SpawnOptions::staleness`]), a silence longer than the limit ends the wait with
    /// [`Error::Stale`], once per silence and per receiver, as the async driver's
    /// in-order receive and `Latest::changed` do: every package queued before the silence
    /// is returned first, and the next call waits again, for the package that ends the
    /// silence. A silence a package has already ended is not reported (that package is
    /// next); a receiver that begins waiting on a stale stream learns it at once. Stale is
    /// not a lost package: nothing is counted, and [`Receiver::seq`] stays. With a
    /// `timeout`, a silence that began during the wait (or before it, untold to this
    /// receiver) is reported as Stale rather than as the timeout: it says why nothing
    /// came, and a loop with a timeout learns it as one without does; the calls after it
    /// time out as before. Without a deadline, nothing changes.
    ///
    /// ```no_run
    /// # fn f(receiver: &mut rtde_core::client::Receiver) -> Result<(), rtde_core::Error> {
    /// use rtde_core::Error;
    ///
    /// loop {
    ///     match receiver.recv(None) {
    ///         Ok(values) => { /* every package, in order */ let _ = values; }
    ///         Err(Error::Stale { silent_for }) => {
    ///             // nothing for `silent_for`: the robot went silent; wait on
    ///             let _ = silent_for;
    ///         }
    ///         Err(e) => return Err(e), // the reader thread ended
    ///     }
    /// }
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Stale`] when the stream went stale (the next call goes on);
    /// [`Error::Timeout`]; [`Error::ConnectionLost`] once the reader thread has ended and
    /// the queue is empty; [`Error::Misuse`] when the queue has no capacity.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Result<&[u8], Error> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let delivery = &self.shared.delivery;
        let mut queue = delivery.queue();
        if queue.capacity() == 0 {
            return Err(Error::Misuse(
                "this background driver keeps no in-order queue (queue capacity 0, or no output recipe); use `latest`",
            ));
        }
        loop {
            match queue.pop_into(&mut self.values) {
                Some(Popped::Data { seq, at }) => {
                    self.seq = seq;
                    self.at = Some(at);
                    return Ok(&self.values);
                }
                // This driver records a package that did not fit as an event instead.
                Some(Popped::Failed(e)) => return Err(e),
                None => {}
            }
            if queue.is_finished() {
                return Err(queue.ended());
            }
            // The reader queues each package before the silence after it is recorded, and
            // records the silence before it takes this lock to wake: an empty queue here and
            // a silence still going on mean every package before it was returned.
            if let Some(silent_for) = delivery.untold(&mut self.heard) {
                return Err(Error::Stale { silent_for });
            }
            let left = match deadline {
                None => None,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        // The reader takes the queue's lock under the client's: let go of
                        // it before asking the session whether half a package is in.
                        drop(queue);
                        return Err(Error::Timeout {
                            after: timeout.unwrap_or_default(),
                            waiting_for: ty::DATA_PACKAGE,
                            mid_frame: self.shared.client().session.mid_frame(),
                        });
                    }
                    Some(left)
                }
            };
            let left = match self.spin_plan(Instant::now()) {
                Some(Spin::Now(until)) => {
                    drop(queue);
                    self.spin_until(deadline.map_or(until, |d| d.min(until)));
                    queue = delivery.queue();
                    continue;
                }
                Some(Spin::After(wait)) => Some(left.map_or(wait, |l| l.min(wait))),
                None => left,
            };
            queue.parked += 1;
            let arrived = &delivery.wake.arrived;
            queue = match left {
                None => arrived.wait(queue).unwrap_or_else(PoisonError::into_inner),
                Some(left) => {
                    arrived
                        .wait_timeout(queue, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            // Back under the lock (even from a poisoned wait), so the count stays exact.
            queue.parked -= 1;
        }
    }

    /// With [`SpawnOptions::spin_before_arrival`]: whether to spin now, or to sleep until
    /// the window before the next package is due; `None` to sleep until woken (no window,
    /// no package returned yet, or the window has passed).
    fn spin_plan(&self, now: Instant) -> Option<Spin> {
        let (window, period) = self.shared.spin?;
        let due = self.at?.checked_add(period)?;
        // Arrivals jitter by the reader's own wake-up: spin on past `due` for a while.
        let end = due.checked_add(window.max(period / 4))?;
        let start = due.checked_sub(window).unwrap_or(due);
        if now >= end {
            None
        } else if now >= start {
            Some(Spin::Now(end))
        } else {
            Some(Spin::After(start - now))
        }
    }

    /// Busy-waits, without the queue's lock, until a package newer than the last one
    /// returned is published, or `until`.
    fn spin_until(&self, until: Instant) {
        while self.shared.delivery.newest() <= self.seq
            && !self.shared.delivery.is_ended()
            && Instant::now() < until
        {
            std::hint::spin_loop();
        }
    }

    /// The next package in order, decoded into `recipe` (see [`Receiver::recv`]).
    ///
    /// # Errors
    /// As [`Receiver::recv`]; [`Error::Payload`] when `recipe` does not fit.
    pub fn recv_into<R: OutputRecipe + ?Sized>(
        &mut self,
        recipe: &mut R,
        timeout: Option<Duration>,
    ) -> Result<(), Error> {
        let values = self.recv(timeout)?;
        recipe.decode_into(values).map_err(Error::Payload)
    }

    /// The next package in order as a `T` (see [`Receiver::recv`]).
    ///
    /// # Errors
    /// As [`Receiver::recv_into`].
    pub fn recv_as<T: FromPayload>(&mut self, timeout: Option<Duration>) -> Result<T, Error> {
        let values = self.recv(timeout)?;
        T::from_payload_as(values)
    }

    /// Whether another package already waits in the in-order queue: what a control loop
    /// asks right after sending its command, to count a command that went out after the
    /// next package had arrived.
    #[must_use]
    pub fn pending(&self) -> bool {
        !self.shared.delivery.queue().is_empty()
    }

    /// The sequence number of the package last returned (from 1; 0 before the first): a
    /// hole between two `recv`s is an overflow.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// When the reader thread took the package last returned from the socket: its age is
    /// `received_at().elapsed()`, and the hand-off to this thread costs the rest.
    #[must_use]
    pub fn received_at(&self) -> Option<Instant> {
        self.at
    }
}

impl Clone for Receiver {
    fn clone(&self) -> Self {
        Receiver {
            shared: Arc::clone(&self.shared),
            values: vec![0; self.shared.payload_size].into_boxed_slice(),
            seq: 0,
            at: None,
            heard: Heard::default(),
        }
    }
}

impl Sender {
    /// Sends `recipe` as a data package of the input recipe `input` was set up with. Holds
    /// the connection's lock for the encoding and the write only. While the reader thread
    /// reconnects, it waits for the reconnection (bounded by the policy; a close ends it)
    /// without that lock, so the other handles answer meanwhile, and then sends on the new
    /// link; inputs are never kept for a later link.
    ///
    /// # Errors
    /// As [`Client::send`], except that a lost link is not reconnected here (the reader
    /// thread does that): the write's error, or [`Error::ConnectionLost`] once the link is
    /// gone (the reconnection it waited for failed, or the reader thread ended). Why the
    /// link ended is told by the [`Receiver`] (its first receive after the end) and by
    /// [`Background::close`], as the async driver tells it by its in-order receiver and
    /// its connection task.
    pub fn send<R: InputRecipe + ?Sized>(
        &self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        loop {
            {
                // The round is bounded by the policy, and a close ends it.
                let mut round = lock(&self.shared.round);
                while *round && !self.shared.delivery.is_ended() {
                    round = self
                        .shared
                        .round_changed
                        .wait(round)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            if self.shared.delivery.is_ended() {
                return Err(Error::ConnectionLost);
            }
            let mut client = self.shared.client();
            if *lock(&self.shared.round) {
                // A round began in between.
                continue;
            }
            let result = client.send_once(input, recipe);
            return client.session.settle(result);
        }
    }
}
