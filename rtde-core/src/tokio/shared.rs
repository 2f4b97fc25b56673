//! What the connection task and the handles share: the session behind a short lock, the
//! delivery of packages (the queue, the latest package), and the wake-ups between them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;

use ::tokio::sync::{Notify, watch};

use crate::delivery::{Delivery, PackageQueue, Wake};
use crate::error::Error;
use crate::session::{Done, Session, Stats};

/// Shared by the task and every handle. No lock is held across an `.await`: the task holds
/// `inner` for one synchronous pass (read → handle → poll → write), a handle for one
/// session call.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) inner: Mutex<Inner>,
    /// The in-order queue, the latest package, the stale flag and the end.
    pub(super) delivery: Delivery<TaskWake>,
    /// A command finished, the transmit buffer drained, or the task ended.
    pub(super) progress: Notify,
    /// One command in flight at a time, as the protocol has it; clones queue here.
    pub(super) commands: ::tokio::sync::Mutex<()>,
    /// The handles alive ([`Handle`]s): none left ends the connection.
    handles: AtomicUsize,
}

/// How the task wakes the receivers: the in-order one by the waker it left in the queue,
/// every [`Latest`](super::Latest) by a watch.
#[derive(Debug)]
pub(super) struct TaskWake {
    /// The number of the latest change; bumped once per pass of the task.
    pub(super) latest_seq: watch::Sender<u64>,
}

impl Wake for TaskWake {
    type Parked = Option<Waker>;

    fn wake(&self, mut queue: MutexGuard<'_, PackageQueue<Option<Waker>>>) {
        let consumer = queue.parked.take();
        // The consumer woken takes the lock first thing: let go of it before.
        drop(queue);
        if let Some(waker) = consumer {
            waker.wake();
        }
        // Nobody to wake without a `Latest`; one made later reads the slot first.
        if self.latest_seq.receiver_count() > 0 {
            self.latest_seq.send_modify(|seq| *seq += 1);
        }
    }
}

/// A counted reference from a handle to the shared state: the last one dropped wakes the
/// connection task, which then ends.
#[derive(Debug)]
pub(super) struct Handle(Arc<Shared>);

impl Handle {
    pub(super) fn new(shared: &Arc<Shared>) -> Handle {
        shared.handles.fetch_add(1, Ordering::Relaxed);
        Handle(Arc::clone(shared))
    }
}

impl Clone for Handle {
    fn clone(&self) -> Self {
        Handle::new(&self.0)
    }
}

impl std::ops::Deref for Handle {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Counted down before the wake-up, so the task sees it.
        self.0.handles.fetch_sub(1, Ordering::AcqRel);
        Shared::wake_task(&mut self.0.inner());
    }
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) session: Session,
    /// The connection task, to wake when a handle gave the session something to send.
    pub(super) task: Option<Waker>,
    /// What the last command came to, for the command that waits on it.
    pub(super) result: Option<Result<Done, Error>>,
    /// A command waits for `result`.
    pub(super) awaiting: bool,
    /// A reconnection round is under way: commands wait, sends fail.
    pub(super) reconnecting: bool,
    /// [`AsyncClient::close`](super::AsyncClient::close) asked for the end.
    pub(super) closing: bool,
    /// The task has ended: nothing will answer a command any more.
    pub(super) finished: bool,
    /// The write error that lost the link, for the next [`AsyncClient::send`](super::AsyncClient::send).
    pub(super) send_failure: Option<Error>,
    /// [`AsyncClient::defer_reads`](super::AsyncClient::defer_reads): read nothing
    /// before then, unless a command waits for its reply.
    pub(super) reads_deferred_until: Option<std::time::Instant>,
}

impl Shared {
    pub(super) fn new(session: Session) -> Shared {
        Shared {
            inner: Mutex::new(Inner {
                session,
                task: None,
                result: None,
                awaiting: false,
                reconnecting: false,
                closing: false,
                finished: false,
                send_failure: None,
                reads_deferred_until: None,
            }),
            delivery: Delivery::new(
                TaskWake {
                    latest_seq: watch::Sender::new(0),
                },
                0,
            ),
            progress: Notify::new(),
            commands: ::tokio::sync::Mutex::new(()),
            handles: AtomicUsize::new(0),
        }
    }

    /// Whether every handle is gone.
    pub(super) fn abandoned(&self) -> bool {
        self.handles.load(Ordering::Acquire) == 0
    }

    /// The session and what goes with it. A panic elsewhere while it was held leaves
    /// nothing half-done that matters here (each session call is complete or not made), so
    /// a poisoned lock is taken over.
    pub(super) fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's counters, with the in-order queue's overflow.
    pub(super) fn stats(&self) -> Stats {
        let stats = self.inner().session.stats();
        Stats {
            overflowed: self.delivery.overflowed(),
            ..stats
        }
    }

    /// Wakes the connection task (a handle queued bytes, or went away).
    pub(super) fn wake_task(inner: &mut Inner) {
        if let Some(waker) = &inner.task {
            waker.wake_by_ref();
        }
    }

    /// The task ended (by `error`, for the in-order receiver): every waiter learns it.
    pub(super) fn finish(&self, error: Option<Error>) {
        {
            let mut inner = self.inner();
            inner.finished = true;
            inner.reconnecting = false;
            inner.task = None;
        }
        // The receivers, the in-order one told `error`, see the end as a change.
        self.delivery.end(error);
        self.progress.notify_waiters();
    }
}
