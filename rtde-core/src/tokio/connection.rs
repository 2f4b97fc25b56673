//! The connection task: the session's loop of read → handle → poll → write → wait over an
//! `AsyncRead + AsyncWrite`, and a reconnection's attempts, as one future.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ::tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::alarm::Alarm;
use super::shared::{Inner, Shared};
use crate::error::Error;
use crate::session::{CLOSE_GRACE, Done, Ready, Session};

/// How many reads one pass of the task makes before it yields to the runtime, so an
/// unpaced controller cannot starve the tasks that consume its packages.
const READS_PER_PASS: usize = 16;

/// Opens a new transport for a reconnection attempt.
pub(super) type Connector<IO> = Box<dyn FnMut() -> Opening<IO> + Send>;

/// A transport being opened.
pub(super) type Opening<IO> = Pin<Box<dyn Future<Output = Result<IO, Error>> + Send>>;

/// The half of a connection that does the work: a future that owns the transport and
/// drives the session, to be spawned (`tokio::spawn(connection)`) or polled next to the
/// handles. It ends with `Ok(())` after [`AsyncClient::close`](super::AsyncClient::close)
/// or once every handle is dropped, and with the error that lost the link when nothing
/// (or no attempt left) reconnects it: [`Error::Closed`] when the controller closed it,
/// say. The in-order [`Packages`](super::Packages), when one exists, ends with the same
/// error, after the packages before it: one end, one error, told to both.
///
/// Cancellation: dropping it drops the link (without a PAUSE); the handles then see
/// [`Error::ConnectionLost`].
#[must_use = "the connection does nothing unless polled: spawn it"]
pub struct Connection<IO> {
    shared: Arc<Shared>,
    io: Option<IO>,
    /// The session's deadline, the write timeout, or the end of a reconnection's backoff.
    timer: Alarm,
    deferral: Deferral,
    connector: Option<Connector<IO>>,
    phase: Phase<IO>,
    /// [`ConnectOptions::write_timeout`](crate::ConnectOptions::write_timeout).
    write_timeout: Option<Duration>,
    /// Since when bytes wait to go out and the transport took none.
    write_stalled: Option<Instant>,
}

impl<IO> std::fmt::Debug for Connection<IO> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.shared.inner().session)
            .finish_non_exhaustive()
    }
}

enum Phase<IO> {
    /// A working link, serving the handles.
    Serving,
    /// A reconnection attempt opens its transport.
    Opening(Opening<IO>),
    /// A reconnection attempt's handshake and replay.
    Replaying,
    /// Waiting out the backoff before the next attempt.
    Backoff,
    /// Closed by `close`: this side's end is sent; reading and dropping what comes until
    /// the controller closes its side, or [`CLOSE_GRACE`] passes.
    Draining,
    /// Ended.
    Ended,
}

/// Why a pass over the link stopped.
pub(super) enum Stop {
    /// A request chain finished (only when driving until one does).
    Done(Result<Done, Error>),
    /// The link is lost.
    Lost(Error),
    /// Closed on purpose: every handle is gone, or `close` finished.
    Closed,
}

impl<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static> Connection<IO> {
    pub(super) fn new(
        shared: Arc<Shared>,
        io: IO,
        connector: Option<Connector<IO>>,
        write_timeout: Option<Duration>,
    ) -> Self {
        Connection {
            shared,
            io: Some(io),
            timer: Alarm::new(),
            deferral: Deferral {
                timer: Alarm::new(),
            },
            connector,
            phase: Phase::Serving,
            write_timeout,
            write_stalled: None,
        }
    }

    /// Reports [`Event::Stale`](crate::Event::Stale) (and
    /// [`AsyncClient::is_stale`](super::AsyncClient::is_stale), and ends a
    /// [`Latest::changed`](super::Latest::changed) wait with [`Error::Stale`]) when no
    /// output package arrives for `limit` while streaming; after START and after a reconnection the first
    /// package may take `grace`. The same deadline as the background driver's
    /// [`SpawnOptions::staleness`](crate::background::SpawnOptions::staleness), kept by the
    /// session; the task wakes for it on its own.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), rtde_core::Error> {
    /// use std::time::Duration;
    /// use rtde_core::{ConnectOptions, RTDE_PORT};
    ///
    /// let (client, connection) =
    ///     rtde_core::tokio::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new()).await?;
    /// // Stale after 20 ms without a package; the first after START may take 2 s.
    /// tokio::spawn(connection.staleness(Duration::from_millis(20), Duration::from_secs(2)));
    /// // … set up, start …
    /// if client.is_stale() {
    ///     // stop the arm: the controller's state is no longer known
    /// }
    /// # Ok(()) }
    /// ```
    #[must_use = "the connection does nothing unless polled: spawn it"]
    pub fn staleness(self, limit: Duration, grace: Duration) -> Self {
        self.shared
            .inner()
            .session
            .set_staleness(Some(limit), grace, Instant::now());
        self
    }

    /// Drives the link until the request chain in flight (the handshake) is done.
    pub(super) async fn handshake(&mut self) -> Result<Done, Error> {
        let stop = std::future::poll_fn(|cx| self.poll_link(cx, true)).await;
        let mut inner = self.shared.inner();
        let result = match stop {
            Stop::Done(result) => result,
            Stop::Lost(e) => Err(e),
            Stop::Closed => Err(Error::ConnectionLost),
        };
        inner.session.settle(result)
    }

    /// One pass: read what the transport has into the session, hand out what the session
    /// has (packages to the queue and the latest slot, results to the commands), write what
    /// it has to transmit, and arm the timer. `until_done` returns the first finished
    /// request chain instead of handing it to a command.
    fn poll_link(&mut self, cx: &mut Context<'_>, until_done: bool) -> Poll<Stop> {
        let shared = Arc::clone(&self.shared);
        let mut inner = shared.inner();
        match &inner.task {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => inner.task = Some(cx.waker().clone()),
        }
        if shared.abandoned() {
            // Every handle is gone: nobody can read or send any more.
            return Poll::Ready(Stop::Closed);
        }
        let Some(io) = self.io.as_mut() else {
            return Poll::Ready(Stop::Lost(Error::ConnectionLost));
        };
        let mut reads = 0;
        loop {
            // read
            let mut read_pending = self.deferral.holds(&mut inner, cx);
            let mut lost = None;
            if !read_pending {
                match read(&mut inner.session, io, cx) {
                    Ok(pending) => read_pending = pending,
                    Err(e) => lost = Some(e),
                }
            }
            // poll
            let mut done = None;
            let broken = deliver(&shared, &mut inner, until_done, &mut done);
            if let Some(result) = done {
                // What the reply queued (nothing, at the end of a chain) goes out first.
                if let Err(e) = flush(&shared, &mut inner, io, cx, &mut self.write_stalled) {
                    return Poll::Ready(Stop::Lost(e));
                }
                return Poll::Ready(Stop::Done(result));
            }
            if let Some(e) = lost.or(broken) {
                inner.session.handle_link_lost(Instant::now());
                return Poll::Ready(Stop::Lost(e));
            }
            if inner.session.is_lost() {
                // A reply that failed took the link with it; its command has the error.
                return Poll::Ready(Stop::Lost(Error::ConnectionLost));
            }
            // write
            if let Err(e) = flush(&shared, &mut inner, io, cx, &mut self.write_stalled) {
                return Poll::Ready(Stop::Lost(e));
            }
            if inner.closing && !inner.session.is_busy() {
                match Pin::new(&mut *io).poll_shutdown(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(_) => return Poll::Ready(Stop::Closed),
                }
            }
            // wait: for the session's deadline, or the write timeout while bytes wait
            let write_deadline = self
                .write_stalled
                .zip(self.write_timeout)
                .and_then(|(since, limit)| since.checked_add(limit));
            self.timer
                .set(earliest(inner.session.poll_timeout(), write_deadline));
            if self.timer.poll(cx).is_ready() {
                let now = Instant::now();
                if write_deadline.is_some_and(|d| now >= d) {
                    // The controller stopped reading; part of a package may be out.
                    inner.session.handle_link_lost(now);
                    let e = Error::write_timed_out(self.write_timeout);
                    return Poll::Ready(Stop::Lost(write_failed(&mut inner, e)));
                }
                inner.session.handle_timeout(now);
                continue;
            }
            if read_pending {
                return Poll::Pending;
            }
            reads += 1;
            if reads >= READS_PER_PASS {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }

    /// The link is lost: a reconnection round begins when the options ask for one (and
    /// this connection can open transports), else the connection ends with `error`.
    fn lost(&mut self, error: Error) -> Option<Error> {
        self.io = None;
        self.write_stalled = None;
        let mut inner = self.shared.inner();
        if inner.awaiting && inner.result.is_none() {
            // The request in flight went with the link.
            inner.result = Some(Err(Error::ConnectionLost));
            self.shared.progress.notify_waiters();
        }
        let policy = inner.session.reconnect_policy();
        match (policy, self.connector.is_some()) {
            (Some(policy), true) => {
                inner
                    .session
                    .begin_reconnect(policy, Some(error), Instant::now());
                inner.reconnecting = true;
                drop(inner);
                self.attempt();
                None
            }
            _ => inner.session.settle::<()>(Err(error)).err(),
        }
    }

    /// The next attempt of the round: open a transport.
    fn attempt(&mut self) {
        self.shared.inner().session.reconnect_attempt();
        if let Some(connector) = &mut self.connector {
            self.phase = Phase::Opening(connector());
        }
    }

    /// An attempt failed: back off and try again, or end the round (and the connection)
    /// with the error.
    fn attempt_failed(&mut self, error: Error) -> Option<Error> {
        self.io = None;
        self.write_stalled = None;
        let mut inner = self.shared.inner();
        match inner.session.attempt_failed(error, Instant::now()) {
            Ok(wait) => {
                self.timer.set(Instant::now().checked_add(wait));
                self.phase = Phase::Backoff;
                None
            }
            Err(e) => inner.session.settle::<()>(Err(e)).err(),
        }
    }

    /// Reads and drops what the controller sends after this side's end, until it closes
    /// its side, the link fails, or the grace passes: then the connection ends.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Some(io) = self.io.as_mut() else {
            return self.end(None);
        };
        let mut scratch = [0u8; 4096];
        for _ in 0..READS_PER_PASS {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut *io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {}
                // The controller's end, or an error: the link is gone either way.
                Poll::Ready(_) => return self.end(None),
                Poll::Pending => {
                    return match self.timer.poll(cx) {
                        Poll::Ready(()) => self.end(None),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
        if self.timer.poll(cx).is_ready() {
            return self.end(None);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Ends the connection. What ended it is this future's error, and goes to the
    /// in-order receiver too when there is one (after the packages before it, as the
    /// other drivers report it): one end, one error.
    fn end(&mut self, error: Option<Error>) -> Poll<Result<(), Error>> {
        self.phase = Phase::Ended;
        self.io = None;
        self.shared.finish(error.as_ref().map(Error::duplicate));
        Poll::Ready(error.map_or(Ok(()), Err))
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static> Future for Connection<IO> {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            if !matches!(this.phase, Phase::Serving | Phase::Draining | Phase::Ended)
                && this.shared.inner().closing
            {
                // Closed while reconnecting: nothing to pause.
                return this.end(None);
            }
            match &mut this.phase {
                Phase::Ended => return Poll::Ready(Ok(())),
                Phase::Serving => match this.poll_link(cx, false) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Stop::Closed) => {
                        if !this.shared.inner().closing {
                            return this.end(None);
                        }
                        this.timer.set(Instant::now().checked_add(CLOSE_GRACE));
                        this.phase = Phase::Draining;
                    }
                    Poll::Ready(Stop::Lost(e) | Stop::Done(Err(e))) => {
                        if let Some(e) = this.lost(e) {
                            return this.end(Some(e));
                        }
                    }
                    Poll::Ready(Stop::Done(Ok(_))) => {}
                },
                Phase::Opening(open) => match open.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(io)) => {
                        this.io = Some(io);
                        this.shared.inner().session.handle_connected(Instant::now());
                        this.phase = Phase::Replaying;
                    }
                    Poll::Ready(Err(e)) => {
                        if let Some(e) = this.attempt_failed(e) {
                            return this.end(Some(e));
                        }
                    }
                },
                Phase::Replaying => match this.poll_link(cx, true) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Stop::Closed) => return this.end(None),
                    Poll::Ready(Stop::Done(Ok(_))) => {
                        this.phase = Phase::Serving;
                        let mut inner = this.shared.inner();
                        inner.reconnecting = false;
                        inner.send_failure = None;
                        drop(inner);
                        this.shared.progress.notify_waiters();
                    }
                    Poll::Ready(Stop::Done(Err(e)) | Stop::Lost(e)) => {
                        if let Some(e) = this.attempt_failed(e) {
                            return this.end(Some(e));
                        }
                    }
                },
                Phase::Draining => return this.poll_drain(cx),
                Phase::Backoff => {
                    if this.shared.abandoned() {
                        return this.end(None);
                    }
                    match this.timer.poll(cx) {
                        Poll::Pending => {
                            let mut inner = this.shared.inner();
                            match &inner.task {
                                Some(w) if w.will_wake(cx.waker()) => {}
                                _ => inner.task = Some(cx.waker().clone()),
                            }
                            return Poll::Pending;
                        }
                        Poll::Ready(()) => this.attempt(),
                    }
                }
            }
        }
    }
}

impl<IO> Drop for Connection<IO> {
    fn drop(&mut self) {
        // Dropped before it ended (an aborted task, a runtime shutting down): nothing will
        // answer the handles any more, and a `send` waiting for a reconnection must not
        // wait for ever.
        if !matches!(self.phase, Phase::Ended) {
            self.shared.finish(None);
        }
    }
}

/// The consumer's deferral of reads, and the timer that ends it.
struct Deferral {
    timer: Alarm,
}

impl Deferral {
    /// Whether to leave the socket unread in this pass, as the consumer asked
    /// ([`AsyncClient::defer_reads`](super::AsyncClient::defer_reads)): until the time
    /// it gave, on which the deferral timer wakes the task, unless a command waits for
    /// its reply or the connection closes.
    fn holds(&mut self, inner: &mut Inner, cx: &mut Context<'_>) -> bool {
        let Some(until) = inner.reads_deferred_until else {
            return false;
        };
        if inner.awaiting || inner.closing || inner.session.is_busy() || Instant::now() >= until {
            inner.reads_deferred_until = None;
            self.timer.set(None);
            return false;
        }
        self.timer.set(Some(until));
        if self.timer.poll(cx).is_ready() {
            inner.reads_deferred_until = None;
            return false;
        }
        true
    }
}

/// Hands out everything the session has ready (packages, errors of packages that did not
/// fit and silences to the receivers, in one pass); the error of a broken stream. While the
/// task serves the handles a finished request goes to the command waiting for it;
/// `until_done` puts it in `done` instead and stops there.
fn deliver(
    shared: &Shared,
    inner: &mut Inner,
    until_done: bool,
    done: &mut Option<Result<Done, Error>>,
) -> Option<Error> {
    let mut pass = shared.delivery.pass();
    let mut at = None;
    while let Some(ready) = inner.session.poll_event() {
        match ready {
            Ready::Data => {
                let at = *at.get_or_insert_with(Instant::now);
                pass.data(inner.session.data(), at);
            }
            Ready::Done(result) => {
                if until_done {
                    *done = Some(result);
                    break;
                }
                inner.result = Some(result);
                shared.progress.notify_waiters();
            }
            Ready::Rejected(e) => pass.rejected(e),
            // The session is lost now.
            Ready::Broken(e) => return Some(e),
            // The session recorded the event; the handles read the flag, and the receives
            // waiting (a `Latest`'s change, the in-order receiver's package) learn it:
            // woken after the pass, as for a package.
            Ready::Stale { silent_for } => pass.stale(silent_for),
        }
    }
    None
}

/// Reads what the transport has into `session`: `Ok(true)` when it has nothing yet, an
/// error when the link is gone.
fn read<IO: AsyncRead + Unpin>(
    session: &mut Session,
    io: &mut IO,
    cx: &mut Context<'_>,
) -> Result<bool, Error> {
    let mid_frame = session.mid_frame();
    let spare = session.receive_buffer();
    // Empty only when whole packages fill the buffer: poll them first.
    if spare.is_empty() {
        return Ok(false);
    }
    let mut buf = ReadBuf::new(spare);
    match Pin::new(&mut *io).poll_read(cx, &mut buf) {
        Poll::Ready(Ok(())) => {
            let n = buf.filled().len();
            if n == 0 {
                return Err(Error::Closed { mid_frame });
            }
            session.handle_received(n, Instant::now());
            Ok(false)
        }
        Poll::Ready(Err(source)) => Err(Error::Io { source, mid_frame }),
        Poll::Pending => Ok(true),
    }
}

/// [`write`], keeping `write_stalled`; the error is the one that ends the link.
fn flush<IO: AsyncWrite + Unpin>(
    shared: &Shared,
    inner: &mut Inner,
    io: &mut IO,
    cx: &mut Context<'_>,
    write_stalled: &mut Option<Instant>,
) -> Result<(), Error> {
    match write(shared, inner, io, cx) {
        Ok(wrote) => {
            stall(write_stalled, inner, wrote);
            Ok(())
        }
        Err(e) => Err(write_failed(inner, e)),
    }
}

/// The earlier of two deadlines, either of which may be unset.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Writes what the session has to transmit, until the transport would block; whether any
/// of it went out.
fn write<IO: AsyncWrite + Unpin>(
    shared: &Shared,
    inner: &mut Inner,
    io: &mut IO,
    cx: &mut Context<'_>,
) -> Result<bool, Error> {
    let mut wrote = false;
    while let Some(bytes) = inner.session.poll_transmit() {
        match Pin::new(&mut *io).poll_write(cx, bytes) {
            Poll::Ready(Ok(0)) => return Err(link_failed(inner, io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(n)) => {
                inner.session.transmitted(n);
                wrote = true;
            }
            // Part of the package may have gone out: the stream is out of step.
            Poll::Ready(Err(e)) => return Err(link_failed(inner, e)),
            Poll::Pending => return Ok(wrote),
        }
    }
    if wrote {
        match Pin::new(&mut *io).poll_flush(cx) {
            Poll::Ready(Err(e)) => return Err(link_failed(inner, e)),
            Poll::Ready(Ok(())) | Poll::Pending => {}
        }
        // The buffer drained: a `send` waiting for room may queue its package.
        shared.progress.notify_waiters();
    }
    Ok(wrote)
}

/// Keeps when bytes began to wait with the transport taking none: cleared when nothing
/// waits, restarted when some went out.
fn stall(since: &mut Option<Instant>, inner: &Inner, wrote: bool) {
    if inner.session.poll_transmit().is_none() {
        *since = None;
    } else if wrote || since.is_none() {
        *since = Some(Instant::now());
    }
}

/// A write failed and took the link: the error for the connection, and a copy for the
/// [`AsyncClient::send`](super::AsyncClient::send) that waits (or comes next), which
/// reports it as the blocking client's `send` does.
fn write_failed(inner: &mut Inner, error: Error) -> Error {
    if matches!(error, Error::Io { .. }) {
        inner.send_failure = Some(error.duplicate());
    }
    error
}

fn link_failed(inner: &mut Inner, source: io::Error) -> Error {
    inner.session.handle_link_lost(Instant::now());
    Error::Io {
        source,
        mid_frame: false,
    }
}
