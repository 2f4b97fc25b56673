//! The background driver: a reader thread owns the connection and drains the socket
//! continuously; the application holds cheap handles, a [`Receiver`] and a [`Sender`].
//!
//! The same [`Session`] as the blocking [`Client`] and the async driver, so every rule is
//! the same; only who waits differs. The thread takes the session and the socket over from
//! the [`Client`] and runs the session's loop of read → handle → deliver → write on its own
//! (`reader.rs`), handing packages out through the delivery layer the async driver uses
//! too. A control loop, a GUI and a logger can share one connection:
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
//! use rtde_core::background::SpawnOptions;
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

mod handles;
mod options;
mod reader;

use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_fields::ControllerVersion;

use crate::blocking::Client;
use crate::delivery::{Delivery, PackageQueue, Wake};
use crate::error::Error;
use crate::protocol::ProtocolVersion;
use crate::realtime;
use crate::recipe::InputRecipe;
use crate::session::{ControllerText, Event, InputHandle, Session, State, Stats};
use crate::tcp::transport;

pub use handles::{Receiver, Sender, Taken};
pub use options::SpawnOptions;
use reader::{IDLE_TICK, Reader};

/// What the reader thread and the handles share.
#[derive(Debug)]
struct Shared {
    /// The session and the link's write half: locked by the reader thread for each step
    /// of its loop (never while it reads), by a sender for its write, by a getter for its
    /// answer.
    link: Mutex<Link>,
    /// The in-order queue, the latest package, the stale flag and the end.
    delivery: Delivery<Arrivals>,
    payload_size: usize,
    stop: AtomicBool,
    /// Whether the reader thread is making a round of reconnection attempts; set and
    /// cleared with `link` locked. Senders wait for the round's end on
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A handle's thread that panicked left consistent data behind: every critical section
    // is a copy or a counter update.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The session and the socket it writes to.
#[derive(Debug)]
struct Link {
    session: Session,
    /// The link's socket, for writing (the reader thread reads a clone of it).
    writer: TcpStream,
    write_timeout: Option<Duration>,
}

impl Link {
    /// Writes what the session has to transmit.
    fn flush(&mut self) -> Result<(), Error> {
        transport::flush(&mut self.session, &mut self.writer, self.write_timeout)
    }

    /// Sends an input package now, on this thread.
    fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.session.send(input, recipe)?;
        self.flush()
    }

    /// A reconnection attempt's transport is up: the handshake begins on it.
    fn connected(&mut self, stream: TcpStream, now: Instant) {
        self.writer = stream;
        self.session.handle_connected(now);
    }

    /// Shuts the socket down (the reader's read ends with it).
    fn shutdown_socket(&self) {
        // The peer may have closed first; there is nothing left to do then.
        let _ = self.writer.shutdown(Shutdown::Both);
    }

    /// Shuts the socket down without pausing: the link is lost.
    fn shut_down(&mut self) {
        self.shutdown_socket();
        self.session.handle_link_lost(Instant::now());
    }
}

impl Shared {
    fn link(&self) -> MutexGuard<'_, Link> {
        lock(&self.link)
    }

    /// Wakes whoever waits on the round: a sender for its end, the reader's backoff for
    /// a close.
    fn notify_round(&self) {
        let _round = lock(&self.round);
        self.round_changed.notify_all();
    }

    /// Whether a close was asked.
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The thread ends (by `error`, for the receivers and [`Background::close`]): wake every
    /// waiting receiver and sender.
    fn finish(&self, error: Option<Error>) {
        self.delivery.end(error);
        self.notify_round();
    }
}

/// A running background driver: the reader thread and the way to its handles. Dropping it
/// stops and joins the thread (without pausing; [`Background::close`] pauses first).
#[derive(Debug)]
pub struct Background {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<(), Error>>>,
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
    pub fn spawn(self, options: SpawnOptions) -> Result<Background, Error> {
        let (stream, addrs, connect_options, mut session) = self.into_parts();
        let read = stream.try_clone().map_err(|source| Error::Io {
            source,
            mid_frame: false,
        })?;
        let size = session.payload_size().unwrap_or(0);
        let cap = if size == 0 { 0 } else { options.queue_capacity };
        let period = session
            .output_frequency()
            .filter(|f| f.is_finite() && *f > 0.0)
            .map(|f| Duration::from_secs_f64(1.0 / f));
        let spin = options.spin.zip(period);
        if let Some((limit, grace)) = options.staleness {
            session.set_staleness(Some(limit), grace, Instant::now());
        }
        let delivery = Delivery::new(Arrivals::default(), size);
        // Every buffer of the queue is allocated here, none after.
        delivery.queue().open(cap, size);
        let shared = Arc::new(Shared {
            link: Mutex::new(Link {
                session,
                writer: stream,
                write_timeout: connect_options.get_write_timeout(),
            }),
            delivery,
            payload_size: size,
            stop: AtomicBool::new(false),
            round: Mutex::new(false),
            round_changed: Condvar::new(),
            spin,
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let tick = options.staleness.map_or(IDLE_TICK, |(limit, _)| {
            (limit / 4).clamp(Duration::from_millis(1), IDLE_TICK)
        });
        let reader = Reader::new(Arc::clone(&shared), read, tick);
        let thread_shared = Arc::clone(&shared);
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
                    thread_shared.link().shut_down();
                    thread_shared.finish(None);
                    return Ok(());
                }
                reader.run(&addrs, &connect_options, options.reconnect)
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
}

impl Background {
    /// A receiver of output packages (one allocation, for its buffer).
    #[must_use]
    pub fn receiver(&self) -> Receiver {
        Receiver::new(&self.shared)
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
            ..self.shared.link().session.stats()
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
        self.shared.link().session.state()
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
        self.shared.link().session.events().collect()
    }

    /// The text messages since the last call, oldest first.
    #[must_use]
    pub fn text_messages(&self) -> Vec<ControllerText> {
        self.shared.link().session.text_messages().collect()
    }

    /// The id the controller gave an input recipe now (it may change on reconnection).
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.shared.link().session.input_recipe_id(input)
    }

    /// The id the controller gave the output recipe now: `None` before setup and in
    /// protocol v1, whose data packages carry none. As
    /// [`Client::output_recipe_id`]; it may change on reconnection.
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::background::Background) {
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
        self.shared.link().session.output_recipe_id()
    }

    /// The output frequency the recipe was set up with, in hertz, as sent: `None` before
    /// setup. As [`Client::requested_frequency`]; a recording's header keeps it.
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::background::Background) {
    /// if let Some(hz) = background.requested_frequency() {
    ///     println!("streaming at {hz} Hz");
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn requested_frequency(&self) -> Option<f64> {
        self.shared.link().session.requested_frequency()
    }

    /// The protocol version in use now (a reconnection negotiates it again). As
    /// [`Client::protocol_version`].
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::background::Background) {
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
        self.shared.link().session.protocol_version()
    }

    /// The controller's software version, as it reported it on the link in use (a
    /// reconnection may meet another). As [`Client::controller_version`].
    ///
    /// ```no_run
    /// # fn f(background: &rtde_core::background::Background) {
    /// println!("streaming from controller {}", background.controller_version());
    /// # }
    /// ```
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.shared.link().session.controller_version()
    }

    /// Pauses if streaming, closes the connection (waiting, a bounded time, for the
    /// controller to close its side: then it has freed this connection's inputs) and joins
    /// the reader thread. During a
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
            self.shared.link().shutdown_socket();
            let _ = self.stop();
        }
    }
}
