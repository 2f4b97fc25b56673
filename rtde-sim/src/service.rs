//! The simulator's other TCP services (the Dashboard server, the script ports): an
//! acceptor per port and a thread per connection, stopped with the simulator.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::controller::Shared;

/// Ids of these connections in the shared socket table, apart from the RTDE ones.
static NEXT_ID: AtomicU64 = AtomicU64::new(1 << 62);

/// A connection's handler: it owns the stream until the client or the shutdown ends it.
pub(crate) type Handler = fn(TcpStream, &Arc<Shared>);

/// Serves `listener` with `handler` until the simulator shuts down; the acceptor and
/// every connection thread hold `alive`, so the shutdown waits for them.
pub(crate) fn spawn(
    name: &str,
    listener: TcpListener,
    shared: &Arc<Shared>,
    threads: &Arc<Mutex<Vec<JoinHandle<()>>>>,
    alive: &mpsc::Sender<()>,
    handler: Handler,
) -> Result<JoinHandle<()>, std::io::Error> {
    let (shared, threads, alive) = (Arc::clone(shared), Arc::clone(threads), alive.clone());
    let thread_name = format!("rtde-sim-{name}");
    thread::Builder::new()
        .name(thread_name.clone())
        .spawn(move || {
            for stream in listener.incoming() {
                if shared.is_shutting_down() {
                    return;
                }
                let Ok(stream) = stream else {
                    thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                if let Ok(clone) = stream.try_clone() {
                    shared
                        .sockets
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(id, clone);
                }
                let (shared, alive) = (Arc::clone(&shared), alive.clone());
                let spawned = thread::Builder::new()
                    .name(format!("{thread_name}-{id}"))
                    .spawn(move || {
                        handler(stream, &shared);
                        shared
                            .sockets
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .remove(&id);
                        drop(alive);
                    });
                let mut threads = threads.lock().unwrap_or_else(PoisonError::into_inner);
                threads.retain(|t| !t.is_finished());
                if let Ok(handle) = spawned {
                    threads.push(handle);
                }
            }
        })
}

/// Binds a service's listener.
pub(crate) fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), crate::Error> {
    let listener = TcpListener::bind(addr).map_err(|source| crate::Error::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| crate::Error::Bind { addr, source })?;
    Ok((listener, bound))
}
