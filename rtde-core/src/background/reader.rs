//! The reader thread: it owns the session's link and runs the one loop of the background
//! driver, read → handle → deliver → write, for the stream, for a reconnection's handshake
//! and replay, and for the PAUSE of a close. The session is locked for each step only,
//! never while the thread reads, connects or backs off, so the handles answer meanwhile.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::{Arrivals, Shared, lock};
use crate::delivery::Delivery;
use crate::error::Error;
use crate::protocol::MAX_PACKAGE_LEN;
use crate::session::ConnectOptions;
use crate::session::{Done, Event, Ready, ReconnectPolicy, Session};
use crate::tcp::reconnect::{Hold, round};
use crate::tcp::transport::{self, Got};

/// How often the reader thread wakes when nothing arrives, to notice a close (and, at the
/// latest, a stale stream).
pub(super) const IDLE_TICK: Duration = Duration::from_millis(50);

/// What the loop drives toward.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Goal {
    /// The stream, until the link is lost or a close is asked.
    Serve,
    /// A reconnection attempt's handshake and replay; a close ends it.
    Handshake,
    /// The PAUSE of a close.
    Pause,
}

/// Why the loop stopped.
enum Stop {
    /// The request chain in flight finished (a handshake's, a PAUSE's).
    Done(Result<Done, Error>),
    /// The link is lost.
    Lost(Error),
    /// A close was asked.
    Closing,
}

/// The reader thread's own: the read half of the link, and its buffer.
pub(super) struct Reader {
    shared: Arc<Shared>,
    read: TcpStream,
    /// The read timeout `read` has now.
    timeout: Option<Duration>,
    buf: Box<[u8]>,
    tick: Duration,
}

impl Reader {
    pub(super) fn new(shared: Arc<Shared>, read: TcpStream, tick: Duration) -> Reader {
        Reader {
            shared,
            read,
            timeout: None,
            buf: vec![0; 2 * MAX_PACKAGE_LEN].into_boxed_slice(),
            tick,
        }
    }

    /// Serves until closed or the link is gone for good; reconnects under `policy` (else
    /// the session's) to `addrs` when the link fails.
    pub(super) fn run(
        mut self,
        addrs: &[SocketAddr],
        options: &ConnectOptions,
        policy: Option<ReconnectPolicy>,
    ) -> Result<(), Error> {
        let shared = Arc::clone(&self.shared);
        loop {
            let cause = match self.drive(Goal::Serve) {
                Stop::Closing => return self.close(),
                Stop::Lost(e) | Stop::Done(Err(e)) => e,
                Stop::Done(Ok(_)) => continue,
            };
            if shared.stopping() {
                shared.link().shut_down();
                shared.finish(None);
                return Ok(());
            }
            let mut link = shared.link();
            let result = match policy.or(link.session.reconnect_policy()) {
                Some(policy) => {
                    // Senders wait for the round from here (the flag is set under the
                    // link's lock, which they check it under), and the handles ask the
                    // session how it goes between its steps.
                    let under_way = UnderWay::begin(&shared);
                    drop(link);
                    let result = round(&mut self, addrs, options, policy, Some(cause));
                    link = shared.link();
                    drop(under_way);
                    result.map(drop)
                }
                None => {
                    link.session.handle_link_lost(Instant::now());
                    Err(cause)
                }
            };
            if shared.stopping() {
                // Closed during the round: there is nothing to pause.
                link.shut_down();
                let _ = link.session.settle::<()>(Err(Error::ConnectionLost));
                drop(link);
                shared.finish(None);
                return Ok(());
            }
            if let Err(e) = result {
                let e = link.session.settle::<()>(Err(e)).err();
                link.shut_down();
                drop(link);
                shared.finish(e);
                return Ok(());
            }
        }
    }

    /// Pauses if streaming, then shuts the link down.
    fn close(&mut self) -> Result<(), Error> {
        let shared = Arc::clone(&self.shared);
        let pause = shared.link().session.close(Instant::now());
        let paused = match pause {
            Ok(true) => match self.drive(Goal::Pause) {
                Stop::Done(result) => result.map(drop),
                Stop::Lost(e) => Err(e),
                Stop::Closing => Err(Error::ConnectionLost),
            },
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        };
        let paused = shared.link().session.settle(paused);
        // The reader's clone is the link's socket: closing it ends the handles' writes too.
        transport::close(&self.read);
        shared.finish(None);
        paused
    }

    /// The loop: deliver what the session has ready, write what it has to transmit, read
    /// (without the lock) until bytes come or the session's next deadline (at most a tick,
    /// to notice a close), hand them to the session; until `goal` is met or the link lost.
    fn drive(&mut self, goal: Goal) -> Stop {
        let shared = Arc::clone(&self.shared);
        let mut read_at = Instant::now();
        let mut link = shared.link();
        loop {
            if let Some(stop) = deliver(&shared.delivery, &mut link.session, goal, read_at) {
                if let Stop::Done(_) = stop {
                    // What the reply queued (nothing, at the end of a chain) goes out first.
                    if let Err(e) = link.flush() {
                        return Stop::Lost(e);
                    }
                }
                return stop;
            }
            if let Err(e) = link.flush() {
                return Stop::Lost(e);
            }
            // A sender's failed write loses the link too.
            if link.session.is_lost() {
                return Stop::Lost(Error::ConnectionLost);
            }
            if goal != Goal::Pause && shared.stopping() {
                return Stop::Closing;
            }
            let deadline = link.session.poll_timeout();
            // Room for what is read next, so the session takes all of it.
            let room = link.session.receive_buffer().len().min(self.buf.len());
            drop(link);
            let wait = deadline.map_or(self.tick, |d| {
                d.saturating_duration_since(Instant::now()).min(self.tick)
            });
            let got = if wait.is_zero() || room == 0 {
                Err(io::ErrorKind::TimedOut.into())
            } else {
                self.wait_at_most(wait)
                    .and_then(|()| self.read.read(&mut self.buf[..room]))
            };
            read_at = Instant::now();
            link = shared.link();
            match Got::from(got, link.session.mid_frame()) {
                Got::Bytes(n) => {
                    let taken = link.session.handle_bytes(&self.buf[..n], read_at);
                    if taken < n {
                        // Cannot happen (the read fit the room); a link out of step if it did.
                        link.session.handle_link_lost(read_at);
                        return Stop::Lost(Error::ConnectionLost);
                    }
                }
                Got::Nothing => link.session.handle_timeout(read_at),
                Got::Interrupted => {}
                Got::Lost(e) => {
                    link.session.handle_link_lost(read_at);
                    return Stop::Lost(e);
                }
            }
        }
    }

    /// Sets the read timeout, when it is not `wait` already (no system call per package).
    fn wait_at_most(&mut self, wait: Duration) -> io::Result<()> {
        if self.timeout != Some(wait) {
            self.read.set_read_timeout(Some(wait))?;
            self.timeout = Some(wait);
        }
        Ok(())
    }
}

/// Hands what the session has ready to the handles, in one pass (one wake-up per read,
/// not per package: a read of an unpaced stream holds hundreds); why the loop stops, if it
/// does. A package that does not fit is an event: no caller is there to return its error.
fn deliver(
    delivery: &Delivery<Arrivals>,
    session: &mut Session,
    goal: Goal,
    at: Instant,
) -> Option<Stop> {
    let mut pass = delivery.pass();
    while let Some(ready) = session.poll_event() {
        match ready {
            Ready::Data => pass.data(session.data(), at),
            Ready::Stale { silent_for } => pass.stale(silent_for),
            Ready::Rejected(e) => session.record(Event::Rejected(e)),
            Ready::Broken(e) => return Some(Stop::Lost(e)),
            Ready::Done(result) if goal != Goal::Serve => return Some(Stop::Done(result)),
            Ready::Done(Err(e)) => return Some(Stop::Lost(e)),
            Ready::Done(Ok(_)) => {}
        }
    }
    None
}

/// The reader thread's hold on the session through a round of reconnection attempts: the
/// lock for each step, none while it connects, backs off, or waits for the handshake's
/// replies, so the handles answer meanwhile with the round's truth (the state, the attempts
/// in the events). A close ends the round between two of its steps.
impl Hold for Reader {
    fn with<T>(&mut self, step: impl FnOnce(&mut Session) -> T) -> T {
        step(&mut self.shared.link().session)
    }

    fn drop_link(&mut self) {
        self.shared.link().shutdown_socket();
    }

    fn handshake(&mut self, stream: TcpStream, _peer: SocketAddr) -> Result<Done, Error> {
        self.read = stream.try_clone().map_err(|source| Error::Io {
            source,
            mid_frame: false,
        })?;
        self.timeout = None;
        self.shared.link().connected(stream, Instant::now());
        match self.drive(Goal::Handshake) {
            Stop::Done(result) => result,
            Stop::Lost(e) => Err(e),
            Stop::Closing => Err(Error::ConnectionLost),
        }
    }

    fn back_off(&mut self, wait: Duration) -> Result<(), Error> {
        let shared = &self.shared;
        let deadline = Instant::now().checked_add(wait);
        let mut round = lock(&shared.round);
        loop {
            // Checked under the lock `Background::stop` notifies under: no wake-up is lost.
            if shared.stopping() {
                return Err(Error::ConnectionLost);
            }
            let left = deadline.map_or(IDLE_TICK, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(());
            }
            round = shared
                .round_changed
                .wait_timeout(round, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
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
