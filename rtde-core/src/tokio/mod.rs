//! The async driver (feature `tokio`): one task owns the transport and the [`Session`];
//! the application holds cheap handles, in tokio-postgres' shape.
//!
//! [`connect`] (or [`attach`], over any `AsyncRead + AsyncWrite`) negotiates with the
//! controller and returns two halves:
//!
//! - an [`AsyncClient`], `Clone + Send + Sync`: the commands (`setup_outputs`,
//!   `setup_inputs`, `start`, `pause`, `close`), [`AsyncClient::send`] for inputs, and
//!   what the session knows (state, stats, events, text messages);
//! - a [`Connection`], the future that does the work: spawn it. It runs the session's loop
//!   (read → handle → poll → write → wait) and, with
//!   [`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect), the session's
//!   reconnection plan: the same attempts, backoff and replay as the blocking
//!   [`Client`](crate::Client). It keeps the write timeout of
//!   [`ConnectOptions::write_timeout`](crate::ConnectOptions::write_timeout) (a controller
//!   that stops reading fails the `send`, it does not hang it) and, when asked
//!   ([`Connection::staleness`]), the background driver's staleness deadline.
//!
//! Output packages reach the application two ways, both fed by the task as it reads:
//! [`Packages`] (every package in order, from a bounded queue whose overflow is counted in
//! [`Stats::overflowed`](crate::Stats::overflowed); [`PackageStream`] is the same as a
//! `Stream` of decoded recipes, read with the [`StreamExt`] re-exported here) and
//! [`Latest`] (a watch of the newest).
//!
//! **No rule lives here.** Every check, reply, loss count and reconnection step is the
//! session's; this module moves bytes between it and the transport, and between it and
//! the handles. The session sits behind a lock that is held for one synchronous pass of
//! the task or one call of a handle, never across an `.await`.
//!
//! **Cancellation safety.** Every method that waits is cancel-safe, and says so. The
//! bytes read from the socket go straight into the session's buffer inside the task's
//! poll, so half a frame belongs to the session, never to a receive; a package leaves
//! the queue only in the poll that returns it.
//!
//! **Allocation.** After setup, the steady path allocates nothing: the task reads into
//! the session's buffer, the queue's buffers go round (see [`Packages`]), the latest slot
//! and each handle's copy keep their capacity, inputs are encoded in place, and waking a
//! task clones no more than a tokio waker (a reference count). The counting-allocator test
//! (`rtde-core/tests/zero_alloc.rs`) proves it over a current-thread runtime.
//!
//! **Why a feature, not a crate.** The driver needs nothing from rtde-core but its
//! public session API, so it could live apart; but users already depend on rtde-core,
//! the driver is small, and a feature keeps one version, one `Error` and one set of docs,
//! as tokio-modbus does with its `tcp`/`rtu` features. Without the feature nothing of
//! tokio is compiled.
//!
//! The runtime needs its I/O and time drivers (`enable_all`).
//!
//! ```
//! use rtde_core::{ConnectOptions, DynamicRecipe, Recipe};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! # rt.block_on(async {
//! # let addr = fake_controller::start();
//!
//! let (client, connection) = rtde_core::tokio::connect(addr, ConnectOptions::new()).await?;
//! tokio::spawn(connection);
//!
//! let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"])?;
//! client.setup_outputs(outputs.spec(), 125.0).await?;
//! let mut packages = client.packages(256)?;
//! client.start().await?;
//! for _ in 0..3 {
//!     packages.recv_into(&mut outputs).await?;
//!     println!("{:?}", outputs.get("actual_q"));
//! }
//! assert_eq!(client.stats().received, 3);
//! client.close().await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
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

mod alarm;
mod client;
mod connection;
mod receive;
mod shared;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use ::tokio::io::{AsyncRead, AsyncWrite};
use ::tokio::net::{TcpStream, ToSocketAddrs};

pub use client::{AsyncClient, MAX_READ_DEFERRAL};
pub use connection::Connection;
pub use receive::{Latest, PackageStream, Packages};
/// The combinators of a [`PackageStream`] (`next`, `map`, `take`, `timeout`, …): tokio's
/// own, re-exported so that reading a stream needs no other crate. Any `StreamExt` works
/// on a `PackageStream` (it is a `futures_core::Stream`); import only one of them, as two
/// traits with a `next` make the call ambiguous.
pub use tokio_stream::StreamExt;

use crate::error::Error;
use crate::session::{ConnectOptions, Session};
use shared::Shared;

/// Connects to a controller over TCP, negotiates as
/// [`Client::connect`](crate::Client::connect) does, and returns the handle and the
/// connection task to spawn. With [`ConnectOptions::reconnect`], the task reconnects to
/// the same addresses by itself.
///
/// ```no_run
/// # async fn f() -> Result<(), rtde_core::Error> {
/// use rtde_core::{ConnectOptions, RTDE_PORT};
///
/// let (client, connection) =
///     rtde_core::tokio::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new()).await?;
/// tokio::spawn(async move {
///     if let Err(e) = connection.await {
///         eprintln!("RTDE connection: {e}");
///     }
/// });
/// println!("{}", client.controller_version());
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::Resolve`], [`Error::Connect`], a link error during the handshake,
/// [`Error::ProtocolRefused`], [`Error::Timeout`], or [`Error::Misuse`] for a zero timeout.
pub async fn connect<A: ToSocketAddrs>(
    addr: A,
    options: ConnectOptions,
) -> Result<(AsyncClient, Connection<TcpStream>), Error> {
    options.check()?;
    let addrs: Arc<[SocketAddr]> = ::tokio::net::lookup_host(addr)
        .await
        .map_err(|source| Error::Resolve { source })?
        .collect();
    let stream = open(Arc::clone(&addrs), options.clone()).await?;
    let connector = connector(addrs, options.clone());
    start(stream, &options, Some(connector)).await
}

/// Runs the session over a transport that is already open (`tokio::io::duplex`, a TLS
/// stream, a serial tunnel): negotiates, and returns the handle and the connection task.
/// Without an address to go back to, a lost link ends the connection; nothing reconnects.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// # rt.block_on(async {
/// let (ours, theirs) = tokio::io::duplex(4096);
/// drop(theirs); // nobody answers
/// let refused = rtde_core::tokio::attach(ours, rtde_core::ConnectOptions::new()).await;
/// assert!(matches!(refused, Err(rtde_core::Error::Closed { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// A link error during the handshake, [`Error::ProtocolRefused`], [`Error::Timeout`], or
/// [`Error::Misuse`] for a zero timeout.
pub async fn attach<IO>(
    io: IO,
    options: ConnectOptions,
) -> Result<(AsyncClient, Connection<IO>), Error>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    options.check()?;
    start(io, &options, None).await
}

/// Takes over a blocking [`Client`](crate::Client) whose recipes are set up (and
/// started, or not): its socket, its session and everything negotiated on it, as
/// [`Client::spawn`](crate::Client::spawn) does for a thread. Packages the client had not
/// read yet are the first [`Packages`] gets. Reconnection follows the client's options.
/// Call it inside a tokio runtime (the socket joins its reactor).
///
/// # Errors
/// [`Error::Misuse`] outside a runtime; a link error moving the socket.
pub fn from_client(client: crate::Client) -> Result<(AsyncClient, Connection<TcpStream>), Error> {
    if ::tokio::runtime::Handle::try_current().is_err() {
        return Err(Error::Misuse(
            "`rtde_core::tokio::from_client` needs a tokio runtime: call it inside one",
        ));
    }
    let (stream, addrs, options, session) = client.into_parts();
    let link = |source| Error::Io {
        source,
        mid_frame: false,
    };
    stream.set_read_timeout(None).map_err(link)?;
    stream.set_nonblocking(true).map_err(link)?;
    let stream = TcpStream::from_std(stream).map_err(link)?;
    let shared = Arc::new(Shared::new(session));
    let client = AsyncClient::new(&shared);
    let write_timeout = options.get_write_timeout();
    let connection = Connection::new(
        shared,
        stream,
        Some(connector(addrs.into(), options)),
        write_timeout,
    );
    Ok((client, connection))
}

/// Opens a new link to the same addresses for each reconnection attempt.
fn connector(
    addrs: Arc<[SocketAddr]>,
    options: ConnectOptions,
) -> connection::Connector<TcpStream> {
    Box::new(move || {
        let open: connection::Opening<TcpStream> =
            Box::pin(open(Arc::clone(&addrs), options.clone()));
        open
    })
}

async fn start<IO>(
    io: IO,
    options: &ConnectOptions,
    connector: Option<connection::Connector<IO>>,
) -> Result<(AsyncClient, Connection<IO>), Error>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let now = Instant::now();
    let mut session = Session::new(options, now);
    session.handle_connected(now);
    let shared = Arc::new(Shared::new(session));
    let client = AsyncClient::new(&shared);
    let mut connection = Connection::new(shared, io, connector, options.get_write_timeout());
    connection.handshake().await?;
    Ok((client, connection))
}

/// Opens a TCP connection to the first of `addrs` that answers within the connect
/// timeout, with `TCP_NODELAY` (packages are small and late ones useless).
async fn open(addrs: Arc<[SocketAddr]>, options: ConnectOptions) -> Result<TcpStream, Error> {
    let mut last_error = None;
    for addr in addrs.iter() {
        let attempt =
            ::tokio::time::timeout(options.get_connect_timeout(), TcpStream::connect(addr));
        match attempt.await {
            Ok(Ok(stream)) => {
                stream.set_nodelay(true).map_err(|source| Error::Io {
                    source,
                    mid_frame: false,
                })?;
                return Ok(stream);
            }
            Ok(Err(e)) => last_error = Some(e),
            Err(_) => last_error = Some(io::ErrorKind::TimedOut.into()),
        }
    }
    Err(Error::connect_failed(&addrs, last_error))
}

/// The handles can be shared between threads and tasks.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    const fn send<T: Send>() {}
    send_sync::<AsyncClient>();
    send_sync::<Packages>();
    send_sync::<Latest>();
    send::<Connection<TcpStream>>();
};
