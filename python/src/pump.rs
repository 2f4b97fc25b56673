//! The in-order packages of a `Client` for an event loop (`rtde_rs.aio`). A thread of its
//! own takes them from the receiver without ever holding the GIL, and says when some are
//! ready through a pipe the loop watches (`loop.add_reader`). So the loop's thread is the
//! only one that makes Python objects of them, and no thread waits for the GIL to hand a
//! package over: a hand-off thread in Python took the GIL for every package, and each
//! time the scheduler preempted it holding it, the loop stalled as long.

use std::collections::VecDeque;
use std::io::{PipeReader, PipeWriter, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyList;
use rtde_core::background::Receiver;
use rtde_core::{Error, ErrorKind};

use crate::client::Client;
use crate::errors;
use crate::lifecycle::lock;

/// How long the thread waits at a time before it looks whether it was stopped.
const SLICE: Duration = Duration::from_millis(100);

/// A package's bytes, or the error the receiver gave in its place.
type Item = Result<Vec<u8>, Error>;

/// What the thread and the loop share.
struct Shared {
    ready: Mutex<Ready>,
    /// Notified when the loop takes packages: the thread may take more.
    room: Condvar,
    stop: AtomicBool,
    /// At most this many packages wait for the loop.
    ahead: usize,
    /// A byte is written when the first package of an empty queue (or the end) is ready.
    wake: PipeWriter,
}

#[derive(Default)]
struct Ready {
    items: VecDeque<Item>,
    /// The receiver's stream has ended (the link is gone): nothing more will come.
    finished: bool,
}

impl Shared {
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.room.notify_one();
    }

    fn hand_over(&self, item: Option<Item>) {
        let was_empty = {
            let mut ready = lock(&self.ready);
            let was_empty = ready.items.is_empty();
            match item {
                Some(item) => ready.items.push_back(item),
                None => ready.finished = true,
            }
            was_empty
        };
        if was_empty {
            // The pipe holds a byte per wake-up the loop has not read yet, far below its
            // capacity; a loop that closed its end no longer needs the news.
            let _ = (&self.wake).write(&[1]);
        }
    }

    /// Waits until the loop has room for another package; false once stopped.
    fn room(&self) -> bool {
        let mut ready = lock(&self.ready);
        while ready.items.len() >= self.ahead {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            ready = self
                .room
                .wait_timeout(ready, SLICE)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        !self.stop.load(Ordering::Relaxed)
    }

    fn run(&self, receiver: &Mutex<Receiver>) {
        while self.room() {
            let item = lock(receiver).recv(Some(SLICE)).map(<[u8]>::to_vec);
            let ends = match &item {
                Err(e) if e.is_timeout() => continue,
                Err(e) => e.kind() == ErrorKind::Link,
                Ok(_) => false,
            };
            self.hand_over(Some(item));
            if ends {
                break;
            }
        }
        self.hand_over(None);
    }
}

/// A client's packages in order, for an event loop: `fileno()` becomes readable when
/// `take()` has something to give. Made by `Client._pump` for `rtde_rs.aio.Client`.
#[pyclass(frozen, module = "rtde_rs")]
pub(crate) struct Pump {
    client: Py<Client>,
    shared: Arc<Shared>,
    wakes: PipeReader,
}

impl Pump {
    pub(crate) fn start(
        client: Py<Client>,
        receiver: Arc<Mutex<Receiver>>,
        ahead: usize,
    ) -> std::io::Result<Self> {
        let (wakes, wake) = std::io::pipe()?;
        let shared = Arc::new(Shared {
            ready: Mutex::default(),
            room: Condvar::new(),
            stop: AtomicBool::new(false),
            ahead: ahead.max(1),
            wake,
        });
        std::thread::Builder::new()
            .name("rtde_rs-aio-pump".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || shared.run(&receiver)
            })?;
        Ok(Self {
            client,
            shared,
            wakes,
        })
    }
}

#[pymethods]
impl Pump {
    /// The pipe's end the loop watches; the caller reads (and drops) its bytes.
    fn fileno(&self) -> i32 {
        self.wakes.as_raw_fd()
    }

    /// The packages ready now, oldest first: each a dict, or the exception the threaded
    /// `recv` would have raised in its place; and whether the stream has ended.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, bool)> {
        let (items, finished) = {
            let mut ready = lock(&self.shared.ready);
            (std::mem::take(&mut ready.items), ready.finished)
        };
        if !items.is_empty() {
            self.shared.room.notify_one();
        }
        let layout = &self.client.get().layout;
        let list = PyList::empty(py);
        for item in items {
            match item {
                Ok(payload) => list.append(layout.to_dict(py, &payload)?)?,
                Err(e) => list.append(errors::rtde(py, e).into_value(py))?,
            }
        }
        Ok((list, finished))
    }

    /// Stops the thread; it ends within 0.1 s. Not joined: the loop that calls this must
    /// not wait for it.
    fn stop(&self) {
        self.shared.stop();
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.shared.stop();
    }
}
