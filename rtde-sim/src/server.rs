//! The sockets and threads: an acceptor, and per connection a reader thread (bytes to
//! packages) and a driver thread (protocol state, output streaming, faults, writes).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rtde_core::Value;
use rtde_core::protocol::{
    ControllerMessage, Frame, FrameBuffer, MessageLevel, ProtocolVersion, TextMessage, package_type,
};

use crate::acknowledge::acknowledge_now;
use crate::clock::Clock;
use crate::connection::{Outgoing, RtdeConnection, TEXT_SOURCE, encode, encode_text};
use crate::controller::Shared;
use crate::fault::FaultPlan;
use crate::source::{Sample, Tick};
use crate::ticker::{Ticked, Ticker};

/// How long an idle connection waits for a package before it looks at the shutdown flag
/// again. Shutdown also closes the sockets, which wakes connections at once; this bounds
/// the wait when that races with a new connection.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// How far behind the wall clock a paced connection may fall and still send every
/// package it missed.
const CATCH_UP: Duration = Duration::from_millis(250);

/// Unpaced streaming writes once this many bytes are buffered.
const UNPACED_BATCH: usize = 32 * 1024;

/// What the reader thread passes on.
enum Inbound {
    /// A whole package.
    Frame { kind: u8, payload: Vec<u8> },
    /// The client closed the connection, or reading from it failed.
    Closed,
    /// Bytes that are no RTDE package stream (a size below 3, an unknown type).
    Garbage(String),
}

/// The first multiple of `every` at or after `from`; `None` past `u64::MAX`.
fn next_multiple(from: u64, every: u64) -> Option<u64> {
    from.div_ceil(every).checked_mul(every)
}

/// Accepts connections until shutdown, serving each on its own threads.
pub(crate) fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    clock: Clock,
    threads: &Mutex<Vec<JoinHandle<()>>>,
    alive: &mpsc::Sender<()>,
) {
    let mut next_id = 1u64;
    for stream in listener.incoming() {
        if shared.is_shutting_down() {
            return;
        }
        let Ok(stream) = stream else {
            // A connection that failed before it was accepted (reset, out of descriptors).
            // Out of descriptors, accept fails at once until one is freed: wait a little
            // rather than spin a core.
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        let id = next_id;
        next_id += 1;
        shared.counters.accepted.fetch_add(1, Ordering::Relaxed);
        let (shared, alive) = (Arc::clone(shared), alive.clone());
        let spawned = thread::Builder::new()
            .name(format!("rtde-sim-conn-{id}"))
            .spawn(move || serve(stream, id, &shared, clock, alive));
        let mut threads = threads.lock().unwrap_or_else(PoisonError::into_inner);
        threads.retain(|t| !t.is_finished());
        // A thread that cannot be spawned drops its connection: the client sees a close.
        if let Ok(handle) = spawned {
            threads.push(handle);
        }
    }
}

/// Why a connection ended.
#[derive(Debug)]
enum End {
    /// The client closed it, or the simulator is shutting down.
    Closed,
    /// Writing failed.
    Io,
    /// The client stopped reading for longer than the stall timeout.
    Stalled,
    /// A fault closed it on purpose.
    Fault,
    /// The output source ran out of data.
    SourceEnded,
}

/// Serves one connection until it ends, then releases its inputs.
fn serve(stream: TcpStream, id: u64, shared: &Arc<Shared>, clock: Clock, alive: mpsc::Sender<()>) {
    shared.counters.count_open(true);
    let reader_alive = alive.clone();
    // Declared first, so dropped last: even if the driver panics (a bug in an
    // `OutputSource`, say), the socket closes and the inputs are released.
    let ending = EndOfConnection {
        stream: &stream,
        id,
        shared,
        _alive: alive,
    };
    let setup = (|| -> io::Result<(TcpStream, TcpStream, TcpStream)> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(shared.config.stall_timeout))?;
        Ok((
            stream.try_clone()?,
            stream.try_clone()?,
            stream.try_clone()?,
        ))
    })();
    let Ok((reader_stream, registered, writer)) = setup else {
        return;
    };
    shared
        .sockets
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id, registered);
    let (tx, rx) = mpsc::sync_channel(256);
    let reader = thread::Builder::new()
        .name(format!("rtde-sim-read-{id}"))
        .spawn(move || {
            read_loop(reader_stream, &tx);
            drop(reader_alive);
        });
    if let Ok(reader) = reader {
        let mut conn = Connection::new(writer, id, Arc::clone(shared), clock);
        let why = match (&shared.config.ticker, shared.config.paced) {
            (Some(ticker), true) => run_ticked(conn, ticker, &rx),
            _ => conn.run(&rx),
        };
        match why {
            End::Stalled => {
                shared.counters.stalled.fetch_add(1, Ordering::Relaxed);
            }
            End::Closed if !shared.is_shutting_down() => {
                thread::sleep(FaultPlan::new(&shared.config.faults).close_delay());
            }
            _ => {}
        }
        drop(rx);
        // Before the reader is joined: the reader returns once the socket is shut down.
        drop(ending);
        // It cannot panic.
        let _ = reader.join();
    }
}

/// Drives a connection whose packages the shared clock thread sends: this thread only
/// answers what the client sends, so it sleeps until the client sends something.
fn run_ticked(conn: Connection, ticker: &Ticker, rx: &Receiver<Inbound>) -> End {
    let conn = Arc::new(Mutex::new(conn));
    let weak: Weak<Mutex<Connection>> = Arc::downgrade(&conn);
    ticker.register(weak);
    let lock = || conn.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(end) = lock().ended.take() {
            return end;
        }
        if lock().shared.is_shutting_down() {
            return End::Closed;
        }
        let inbound = match rx.recv_timeout(IDLE_POLL) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return End::Closed,
        };
        let mut guard = lock();
        if let Some(end) = guard.ended.take() {
            return end;
        }
        match guard.on_inbound(inbound) {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(())) => return End::Closed,
            Err(end) => return end,
        }
    }
}

impl Ticked for Connection {
    fn on_tick(&mut self) {
        if self.ended.is_some() {
            return;
        }
        let Some(tick) = self.due() else {
            return;
        };
        if let Err(end) = self.stream_paced(tick) {
            self.ended = Some(end);
            // Wakes the reader, hence this connection's thread, which ends it.
            let _ = self.stream.shutdown(Shutdown::Both);
        }
    }
}

/// What ends a connection, on every way out of [`serve`], a panic included: its socket
/// closed and unregistered, its inputs released, the open count decremented.
struct EndOfConnection<'a> {
    stream: &'a TcpStream,
    id: u64,
    shared: &'a Shared,
    /// Held until the connection is over, for [`Sim::shutdown`](crate::Sim::shutdown).
    _alive: mpsc::Sender<()>,
}

impl Drop for EndOfConnection<'_> {
    fn drop(&mut self) {
        let registered = self
            .shared
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        drop(registered);
        // Before the socket closes: a client that waits for this side's close (rtde's
        // do) may connect again at once, and must find its inputs free.
        self.shared.controller().release(self.id);
        self.shared.counters.count_open(false);
        // Also wakes the reader thread, if the driver panicked.
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Reads packages off the socket and passes them on, until the socket closes.
fn read_loop(mut stream: TcpStream, tx: &SyncSender<Inbound>) {
    let mut frames = FrameBuffer::new();
    loop {
        let n = match stream.read(frames.spare()) {
            Ok(0) => {
                let _ = tx.send(Inbound::Closed);
                return;
            }
            Ok(n) => {
                acknowledge_now(&stream);
                n
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                let _ = tx.send(Inbound::Closed);
                return;
            }
        };
        frames.commit(n);
        loop {
            match frames.next_frame() {
                Ok(Some(Frame { kind, payload })) => {
                    let inbound = Inbound::Frame {
                        kind,
                        payload: payload.to_vec(),
                    };
                    if tx.send(inbound).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Inbound::Garbage(e.to_string()));
                    return;
                }
            }
        }
    }
}

/// One connection's driver: protocol state, the output schedule, and the write side.
struct Connection {
    stream: TcpStream,
    shared: Arc<Shared>,
    rtde: RtdeConnection,
    faults: FaultPlan,
    clock: Clock,
    /// Bytes waiting to be written.
    out: Vec<u8>,
    /// The next tick that may carry an output package, while streaming; `None` when no
    /// tick a `u64` can count is due any more (a decimation so large that the next
    /// multiple is past `u64::MAX`): the connection then streams nothing.
    next_tick: Option<u64>,
    /// Unpaced: the connection's own clock, continuing across pauses; `None` once it
    /// has counted past `u64::MAX`.
    unpaced_tick: Option<u64>,
    /// With a clock per connection: whether this connection's clock has started.
    clock_started: bool,
    /// Output data packages sent so far.
    data_index: u64,
    /// The robot program's messages this connection has sent.
    program_messages: usize,
    /// The robot's messages (its state machine's) this connection has sent.
    robot_messages: usize,
    /// Reused buffers for encoding a data package.
    payload: Vec<u8>,
    package: Vec<u8>,
    /// Why the clock thread ended the connection, under a shared clock.
    ended: Option<End>,
    /// The output stream was held ([`Sim::pause_stream`](crate::Sim::pause_stream)) when
    /// this connection last looked.
    held: bool,
}

impl Connection {
    fn new(stream: TcpStream, id: u64, shared: Arc<Shared>, clock: Clock) -> Self {
        Connection {
            stream,
            faults: FaultPlan::new(&shared.config.faults),
            shared,
            rtde: RtdeConnection::new(id),
            clock,
            out: Vec::with_capacity(UNPACED_BATCH * 2),
            next_tick: Some(0),
            unpaced_tick: Some(0),
            clock_started: false,
            data_index: 0,
            program_messages: 0,
            robot_messages: 0,
            payload: Vec::new(),
            package: Vec::new(),
            ended: None,
            held: false,
        }
    }

    fn streaming(&self) -> bool {
        self.rtde.is_running() && self.rtde.output().is_some()
    }

    /// The next tick to stream, while streaming, not held, and some tick is still due. A
    /// stream let go again starts over as after a START: the ticks it was held for are
    /// not sent (the client's timestamps jump over them), none is sent twice.
    fn due(&mut self) -> Option<u64> {
        let held = self.shared.is_stream_held();
        if self.held && !held && self.streaming() {
            self.schedule_first_package();
        }
        self.held = held;
        self.next_tick.filter(|_| !held && self.streaming())
    }

    fn run(&mut self, rx: &Receiver<Inbound>) -> End {
        match self.drive(rx) {
            Ok(()) => End::Closed,
            Err(end) => end,
        }
    }

    fn drive(&mut self, rx: &Receiver<Inbound>) -> Result<(), End> {
        let paced = self.shared.config.paced;
        loop {
            if self.shared.is_shutting_down() {
                return Ok(());
            }
            let due = self.due();
            let inbound = if due.is_some() && !paced {
                match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return Ok(()),
                }
            } else {
                let timeout = match due {
                    Some(tick) => self
                        .clock
                        .instant_of(tick)
                        .saturating_duration_since(Instant::now()),
                    None => IDLE_POLL,
                };
                match rx.recv_timeout(timeout) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                }
            };
            if let Some(inbound) = inbound
                && self.on_inbound(inbound)?.is_break()
            {
                return Ok(());
            }
            if let Some(tick) = self.due() {
                if paced {
                    self.stream_paced(tick)?;
                } else {
                    self.stream_unpaced(tick)?;
                }
            }
        }
    }

    /// Handles what the reader passed on; `Break` when the connection is over.
    fn on_inbound(&mut self, inbound: Inbound) -> Result<ControlFlow<()>, End> {
        match inbound {
            Inbound::Frame { kind, payload } => self.on_package(kind, &payload)?,
            Inbound::Closed => return Ok(ControlFlow::Break(())),
            Inbound::Garbage(why) => {
                let why = format!("closing the connection: {why}");
                if let Some(bytes) =
                    encode_text(MessageLevel::Error, &why, TEXT_SOURCE, self.rtde.version())
                {
                    self.out.extend_from_slice(&bytes);
                }
                self.flush()?;
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Answers one package from the client.
    fn on_package(&mut self, kind: u8, payload: &[u8]) -> Result<(), End> {
        let was_streaming = self.streaming();
        // Texts sent before the reply to a version request are in the version the
        // client still speaks until it reads that reply.
        let version_before = self.rtde.version();
        let recipe_before = self.rtde.output().map(|r| r.id);
        let mut outgoing: Vec<Outgoing> = Vec::new();
        self.rtde
            .handle(Frame { kind, payload }, &self.shared, &mut outgoing);
        if outgoing.iter().any(|o| o.reply_to.is_some()) {
            let booting = self
                .faults
                .boot_delay(self.shared.config.booted_at.elapsed());
            self.delay(self.faults.reply_delay().saturating_add(booting));
        }
        let recipe_after = self.rtde.output().map(|r| r.id);
        let starts = self.streaming() && (!was_streaming || recipe_before != recipe_after);
        if starts {
            self.schedule_first_package();
        }
        for Outgoing {
            mut bytes,
            reply_to,
        } in outgoing
        {
            if let Some(kind) = reply_to
                && self.faults.data_before_reply(kind)
            {
                self.data_before_reply(kind, starts, was_streaming)?;
            }
            let text_version = if reply_to == Some(package_type::REQUEST_PROTOCOL_VERSION) {
                version_before
            } else {
                self.rtde.version()
            };
            self.send(&mut bytes, reply_to, None, text_version)?;
        }
        self.flush()
    }

    /// For [`Fault::DataBeforeStartReply`](crate::Fault::DataBeforeStartReply) and
    /// [`Fault::DataBeforePauseReply`](crate::Fault::DataBeforePauseReply): the package
    /// that was due next goes out ahead of the reply to `kind`, so no tick is sent twice.
    fn data_before_reply(
        &mut self,
        kind: u8,
        started: bool,
        was_streaming: bool,
    ) -> Result<(), End> {
        let due = match kind {
            _ if self.held => None,
            package_type::START if started => self.next_tick,
            package_type::PAUSE if was_streaming => self.next_tick,
            _ => None,
        };
        let Some(tick) = due else {
            return Ok(());
        };
        let every = self.rtde.output().map_or(1, |r| r.every);
        self.emit(tick)?;
        self.next_tick = tick.checked_add(every);
        self.unpaced_tick = self.next_tick;
        Ok(())
    }

    /// Waits `delay` (a fault's), or until shutdown: every [`IDLE_POLL`] it looks again.
    fn delay(&self, delay: Duration) {
        let deadline = Instant::now().checked_add(delay);
        while !self.shared.is_shutting_down() {
            let left = deadline.map_or(IDLE_POLL, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return;
            }
            thread::sleep(left.min(IDLE_POLL));
        }
    }

    /// The first tick to stream after START: the next multiple of the recipe's decimation,
    /// on the shared clock (paced), the connection's own paced clock (started at tick 0 on
    /// the first START), or the connection's own tick count (unpaced).
    fn schedule_first_package(&mut self) {
        let every = self.rtde.output().map_or(1, |r| r.every);
        let config = &self.shared.config;
        let from = if !config.paced {
            self.unpaced_tick
        } else if config.clock_per_connection && !self.clock_started {
            self.clock = self.clock.restarted();
            self.clock_started = true;
            Some(0)
        } else {
            Some(self.clock.tick_at(Instant::now()))
        };
        self.next_tick = from.and_then(|from| next_multiple(from, every));
    }

    /// Sends the packages that have come due. A connection that fell behind by up to
    /// [`CATCH_UP`] (the thread woke late on a busy machine) sends the missed packages
    /// at once, so pacing alone never makes a gap; one further behind (its writes
    /// blocked on a slow client) sends only the newest, as a controller does, and the
    /// client sees a gap.
    fn stream_paced(&mut self, next_tick: u64) -> Result<(), End> {
        let now = Instant::now();
        if now < self.clock.instant_of(next_tick) {
            return Ok(());
        }
        let every = self.rtde.output().map_or(1, |r| r.every);
        let latest = (self.clock.tick_at(now) / every * every).max(next_tick);
        let window = self.clock.ticks_in(CATCH_UP);
        let mut tick = if latest - next_tick <= window {
            next_tick
        } else {
            latest
        };
        loop {
            self.emit(tick)?;
            match tick.checked_add(every) {
                Some(next) if next <= latest => tick = next,
                _ => break,
            }
        }
        self.next_tick = latest.checked_add(every);
        self.flush()
    }

    /// Sends the next package at once; writes in batches, and at once when it is the
    /// last one the connection's clock can count.
    fn stream_unpaced(&mut self, tick: u64) -> Result<(), End> {
        let every = self.rtde.output().map_or(1, |r| r.every);
        self.next_tick = tick.checked_add(every);
        self.unpaced_tick = self.next_tick;
        self.emit(tick)?;
        if self.out.len() >= UNPACED_BATCH || self.next_tick.is_none() {
            self.flush()?;
        }
        Ok(())
    }

    /// Samples and sends the output package of `tick`, unless a fault or the source skips it.
    fn emit(&mut self, tick: u64) -> Result<(), End> {
        let version = self.rtde.version();
        let shared = Arc::clone(&self.shared);
        let Some(recipe) = self.rtde.output_mut() else {
            return Ok(());
        };
        if self.faults.skips(tick, recipe.every) {
            // The controller's program runs every cycle, whether or not a package goes out.
            shared
                .controller()
                .tick(Tick::new(tick, shared.config.loop_rate));
            return Ok(());
        }
        let (sample, said) = {
            let mut controller = shared.controller();
            let sample = controller.sample(
                &*shared.config.source,
                Tick::new(tick, shared.config.loop_rate),
                &recipe.fields,
                &mut recipe.values,
            );
            // What the program said since this connection last looked: why it stopped.
            let said: Vec<String> = controller
                .program()
                .map(|p| {
                    p.messages()
                        .get(self.program_messages..)
                        .unwrap_or_default()
                        .to_vec()
                })
                .unwrap_or_default();
            self.program_messages += said.len();
            let robot_said: Vec<String> = controller
                .robot
                .as_ref()
                .map(|r| {
                    r.messages()
                        .get(self.robot_messages..)
                        .unwrap_or_default()
                        .to_vec()
                })
                .unwrap_or_default();
            self.robot_messages += robot_said.len();
            (sample, [said, robot_said].concat())
        };
        for message in said {
            if let Some(bytes) = encode_text(MessageLevel::Error, &message, TEXT_SOURCE, version) {
                self.out.extend_from_slice(&bytes);
            }
        }
        match sample {
            Sample::Send => {}
            Sample::Skip => return Ok(()),
            Sample::End => {
                // Said before the close, so that a recorder can tell the end of the data
                // from a lost link.
                let end = ControllerMessage::TextMessage(TextMessage::end_of_stream(
                    TEXT_SOURCE.as_bytes(),
                ));
                if let Some(bytes) = encode(&end, version) {
                    self.out.extend_from_slice(&bytes);
                }
                self.flush()?;
                return Err(End::SourceEnded);
            }
        }
        self.payload.clear();
        for (field, value) in recipe.fields.iter().zip(recipe.values.iter_mut()) {
            let t = field.wire_type();
            if value.wire_type() != t {
                *value = Value::zero(t);
            }
            let start = self.payload.len();
            self.payload.resize(start + t.size(), 0);
            value.write_be(&mut self.payload[start..]);
        }
        let msg = ControllerMessage::DataPackage {
            recipe_id: (version == ProtocolVersion::V2).then_some(recipe.id),
            payload: &self.payload,
        };
        let Ok(len) = msg.encoded_len(version) else {
            return Ok(());
        };
        self.package.resize(len, 0);
        if msg.encode(version, &mut self.package).is_err() {
            return Ok(());
        }
        let mut package = std::mem::take(&mut self.package);
        let index = self.data_index;
        self.data_index += 1;
        let sent = self.send(&mut package, None, Some(index), version);
        self.package = package;
        shared
            .counters
            .data_packages
            .fetch_add(1, Ordering::Relaxed);
        sent
    }

    /// Queues one encoded package, applying the faults planned for it.
    fn send(
        &mut self,
        bytes: &mut Vec<u8>,
        reply_to: Option<u8>,
        data_index: Option<u64>,
        text_version: ProtocolVersion,
    ) -> Result<(), End> {
        let plan = self.faults.plan(reply_to, data_index);
        for (level, message, source) in &plan.texts {
            if let Some(text) = encode_text(*level, message, source, text_version) {
                self.out.extend_from_slice(&text);
            }
        }
        if plan.close_mid_frame {
            let half = (bytes.len() / 2).clamp(1, bytes.len().saturating_sub(1).max(1));
            self.out.extend_from_slice(&bytes[..half]);
            self.flush()?;
            return Err(End::Fault);
        }
        if let Some(kind) = &plan.malformed {
            kind.apply(bytes);
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes everything queued. A write that makes no progress for the stall timeout
    /// (the client's receive window and our send buffer are full) ends the connection.
    fn flush(&mut self) -> Result<(), End> {
        if self.out.is_empty() {
            return Ok(());
        }
        let mut stream = &self.stream;
        let result = stream.write_all(&self.out);
        self.out.clear();
        match result {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(End::Stalled)
            }
            Err(_) => Err(End::Io),
        }
    }
}
