//! The application's two ways to read: every package in order ([`Packages`], and
//! [`PackageStream`] over it), or the latest ([`Latest`]).

use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use ::tokio::sync::watch;
use futures_core::Stream;

use super::shared::Handle;
use crate::delivery::Popped;
use crate::delivery::silences::Heard;
use crate::error::Error;
use crate::recipe::{FromPayload, OutputRecipe, RecipeSpec};

/// Every output package, in order, from a bounded queue that the connection task fills;
/// from [`AsyncClient::packages`](super::AsyncClient::packages).
///
/// The task never waits for this receiver: when the queue is full it drops the oldest
/// package and counts it in [`Stats::overflowed`](crate::Stats::overflowed), so a slow
/// consumer cannot make the controller drop the connection, and no package goes
/// uncounted. A package that does not fit the recipe comes as its error, in order
/// ([`Error::WrongRecipeId`], [`Error::WrongLength`]); the connection stays.
///
/// Each package's values are swapped into a buffer this receiver holds: receiving copies
/// nothing more and, once the buffers have the recipe's size (at the first package after
/// a setup), allocates nothing.
///
/// **Cancellation safety.** Every receive method is cancel-safe: a package is taken from
/// the queue only in the poll that returns it, so a receive dropped at its `.await` (a
/// `tokio::select!` branch that lost, a `tokio::time::timeout` that fired) takes nothing,
/// and the next receive returns that package. Half a frame read from the socket stays in
/// the session's buffer, owned by the connection task, not by the receive.
#[derive(Debug)]
pub struct Packages {
    shared: Handle,
    held: Box<[u8]>,
    /// The silences this receiver reported.
    heard: Heard,
}

impl Packages {
    pub(super) fn new(shared: Handle) -> Packages {
        Packages {
            shared,
            held: Box::default(),
            heard: Heard::default(),
        }
    }

    /// Takes the next entry into `held` when there is one; a silence this receiver was not
    /// told of once the queue is empty; registers the waker otherwise.
    fn poll_entry(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let delivery = &self.shared.delivery;
        let mut queue = delivery.queue();
        match queue.pop_into(&mut self.held) {
            Some(Popped::Data { .. }) => Poll::Ready(Ok(())),
            Some(Popped::Failed(e)) => Poll::Ready(Err(e)),
            None if queue.is_finished() => Poll::Ready(Err(queue.ended())),
            None => {
                if let Some(silent_for) = delivery.untold(&mut self.heard) {
                    return Poll::Ready(Err(Error::Stale { silent_for }));
                }
                match &queue.parked {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => queue.parked = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }

    /// The values of the next output package, in recipe order, big-endian, borrowed from
    /// this receiver until the next call. Cancel-safe (a stale report, too, is taken only
    /// in the poll that returns it).
    ///
    /// **When the controller stops sending.** With a staleness deadline
    /// ([`Connection::staleness`](super::Connection::staleness)), a silence longer than the
    /// limit ends the wait with [`Error::Stale`], once per silence, as
    /// [`Latest::changed`] does: every package queued before the silence is returned
    /// first, and the next call waits again, for the package that ends the silence. A
    /// silence a package has already ended is not reported (that package is next). Stale
    /// is not a lost package: nothing is counted. Without a deadline, a silent controller
    /// is waited for until the link's own errors end the connection.
    ///
    /// ```no_run
    /// # async fn f(mut packages: rtde_core::tokio::Packages) -> Result<(), rtde_core::Error> {
    /// use rtde_core::Error;
    ///
    /// loop {
    ///     match packages.recv().await {
    ///         Ok(values) => { /* every package, in order */ let _ = values; }
    ///         Err(Error::Stale { silent_for }) => {
    ///             // nothing for `silent_for`: the robot went silent; wait on
    ///             let _ = silent_for;
    ///         }
    ///         Err(e @ (Error::WrongRecipeId { .. } | Error::WrongLength { .. })) => {
    ///             let _ = e; // one package that did not fit; the stream goes on
    ///         }
    ///         Err(e) => return Err(e), // the connection ended
    ///     }
    /// }
    /// # }
    /// ```
    ///
    /// # Errors
    /// A package that does not fit the recipe ([`Error::WrongRecipeId`],
    /// [`Error::WrongLength`]; the next call goes on); [`Error::Stale`] when the stream
    /// went stale (the next call goes on); when the link is lost and nothing
    /// reconnects it, the error that lost it (after every package before it), then
    /// [`Error::ConnectionLost`] from every later call.
    pub async fn recv(&mut self) -> Result<&[u8], Error> {
        std::future::poll_fn(|cx| self.poll_entry(cx)).await?;
        Ok(&self.held)
    }

    /// The next package, if one is queued, without waiting; as [`Packages::recv`], an
    /// empty queue on a stale stream reports [`Error::Stale`] once.
    pub fn try_recv(&mut self) -> Option<Result<&[u8], Error>> {
        let waker = std::task::Waker::noop();
        match self.poll_entry(&mut Context::from_waker(waker)) {
            Poll::Ready(Ok(())) => Some(Ok(&self.held)),
            Poll::Ready(Err(e)) => Some(Err(e)),
            Poll::Pending => {
                self.shared.delivery.queue().parked = None;
                None
            }
        }
    }

    /// Receives the next package into `recipe`, which must be the output recipe set up
    /// (checked first, so a wrong recipe loses no package). Cancel-safe.
    ///
    /// # Errors
    /// As [`Packages::recv`]; [`Error::Misuse`] for another recipe; [`Error::Payload`].
    pub async fn recv_into<R: OutputRecipe + ?Sized>(
        &mut self,
        recipe: &mut R,
    ) -> Result<(), Error> {
        self.check(&recipe.spec())?;
        let values = self.recv().await?;
        recipe.decode_into(values).map_err(Error::Payload)
    }

    /// Receives the next package as a `T`, whose spec must be the output recipe set up.
    /// Cancel-safe.
    ///
    /// # Errors
    /// As [`Packages::recv_into`].
    pub async fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        self.shared.inner().session.check_output_static(&T::SPEC)?;
        let values = self.recv().await?;
        T::from_payload_as(values)
    }

    /// A [`Stream`] of every package decoded as a `T`. It ends after the connection does.
    ///
    /// Its items come with a `StreamExt`: [`rtde_core::tokio::StreamExt`](super::StreamExt)
    /// is re-exported for that (`futures::StreamExt` works too; import one of the two).
    ///
    /// ```no_run
    /// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
    /// use rtde_core::{RtdeRecipe, StaticRecipe};
    /// use rtde_core::tokio::StreamExt;
    ///
    /// #[derive(RtdeRecipe)]
    /// struct Telemetry { timestamp: f64, actual_q: [f64; 6] }
    ///
    /// client.setup_outputs(Telemetry::SPEC, 125.0).await?;
    /// let mut stream = client.packages(1024)?.stream::<Telemetry>();
    /// client.start().await?;
    /// // `None` once the connection has ended and every package before the end was read.
    /// while let Some(package) = stream.next().await {
    ///     match package {
    ///         Ok(telemetry) => println!("{:.3} s: {:?}", telemetry.timestamp, telemetry.actual_q),
    ///         // A package that did not fit, a stale stream, or the error that ended the link.
    ///         Err(e) => eprintln!("{e}"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn stream<T: FromPayload>(self) -> PackageStream<T> {
        PackageStream {
            packages: self,
            checked: false,
            ended: false,
            _recipe: PhantomData,
        }
    }

    fn check(&self, spec: &RecipeSpec<'_>) -> Result<(), Error> {
        self.shared.inner().session.check_output_spec(spec)
    }
}

impl Drop for Packages {
    fn drop(&mut self) {
        self.shared.delivery.queue().close();
    }
}

/// Every output package decoded as a `T`, as a [`Stream`]; from [`Packages::stream`].
///
/// Each item is one package (or the error of one that did not fit the recipe, or
/// [`Error::Stale`] when the stream went stale, as [`Packages::recv`]); after the
/// connection ends, the items queued before the end, then `None`. `T` is checked against
/// the output recipe at the first package: another recipe yields [`Error::Misuse`] and
/// ends the stream. Cancel-safe, as [`Packages`]; decoding allocates only what `T` does
/// (nothing, for a derived recipe).
///
/// ```no_run
/// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
/// use rtde_core::RtdeRecipe;
/// use rtde_core::tokio::StreamExt;
///
/// #[derive(RtdeRecipe)]
/// struct Telemetry { timestamp: f64, actual_q: [f64; 6] }
///
/// // The first 500 packages that fit, each as a `Telemetry`.
/// let mut first = client
///     .packages(1024)?
///     .stream::<Telemetry>()
///     .filter_map(Result::ok)
///     .take(500);
/// while let Some(telemetry) = first.next().await {
///     let _ = telemetry.actual_q;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PackageStream<T> {
    packages: Packages,
    checked: bool,
    ended: bool,
    _recipe: PhantomData<fn() -> T>,
}

impl<T> PackageStream<T> {
    /// The receiver back.
    #[must_use]
    pub fn into_inner(self) -> Packages {
        self.packages
    }
}

impl<T: FromPayload> Stream for PackageStream<T> {
    type Item = Result<T, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        if !this.checked {
            if let Err(e) = this.packages.check(&T::SPEC) {
                // Before setup, nothing can arrive yet; a wrong recipe stays wrong.
                if this
                    .packages
                    .shared
                    .inner()
                    .session
                    .payload_size()
                    .is_some()
                {
                    this.ended = true;
                    return Poll::Ready(Some(Err(e)));
                }
            } else {
                this.checked = true;
            }
        }
        match this.packages.poll_entry(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(Some(T::from_payload_as(&this.packages.held))),
            Poll::Ready(Err(Error::ConnectionLost))
                if this.packages.shared.delivery.queue().is_finished() =>
            {
                this.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
        }
    }
}

/// The newest output package, as a watch: from
/// [`AsyncClient::latest`](super::AsyncClient::latest). Any number may exist; each reads
/// on its own.
///
/// The connection task copies every package into one slot; reading copies the slot into
/// a buffer this handle holds, under a lock held for that copy only (no decode under it).
/// Packages that came and went between two reads were replaced here, not lost: the
/// in-order [`Packages`] (if any) still has each of them. With a staleness deadline, a
/// controller that stops sending ends a [`Latest::changed`] wait with [`Error::Stale`]
/// instead of leaving it waiting.
#[derive(Debug)]
pub struct Latest {
    shared: Handle,
    changes: watch::Receiver<u64>,
    held: Box<[u8]>,
    seen: u64,
    /// The silences this handle reported from [`Latest::changed`].
    heard: Heard,
}

impl Latest {
    pub(super) fn new(shared: Handle) -> Latest {
        let changes = shared.delivery.wake.latest_seq.subscribe();
        Latest {
            shared,
            changes,
            held: Box::default(),
            seen: 0,
            heard: Heard::default(),
        }
    }

    /// The newest package received so far, without waiting; `None` before the first.
    /// No allocation once the recipe is set up.
    pub fn get(&mut self) -> Option<&[u8]> {
        self.take_newer();
        (self.seen > 0).then_some(&*self.held)
    }

    /// The newest package into `recipe`; `Ok(false)` before the first package.
    ///
    /// # Errors
    /// [`Error::Misuse`] for a recipe other than the one set up; [`Error::Payload`].
    pub fn get_into<R: OutputRecipe + ?Sized>(&mut self, recipe: &mut R) -> Result<bool, Error> {
        self.shared
            .inner()
            .session
            .check_output_spec(&recipe.spec())?;
        match self.get() {
            Some(values) => recipe
                .decode_into(values)
                .map(|()| true)
                .map_err(Error::Payload),
            None => Ok(false),
        }
    }

    /// Whether the newest package is stale: none arrived for the staleness limit
    /// ([`Connection::staleness`](super::Connection::staleness)).
    #[must_use]
    pub fn is_stale(&self) -> bool {
        self.shared.delivery.is_stale()
    }

    /// The newest package, waiting until one newer than the last this handle returned has
    /// arrived, or until the stream goes stale. Cancel-safe: it takes nothing but a copy
    /// (and a stale report only in the poll that returns it). No allocation once the recipe
    /// is set up.
    ///
    /// **When the controller stops sending.** With a staleness deadline
    /// ([`Connection::staleness`](super::Connection::staleness)), a silence longer than the
    /// limit ends the wait with [`Error::Stale`], once per silence and per handle, as
    /// [`Event::Stale`](crate::Event::Stale) is reported once and
    /// [`Latest::is_stale`] turns true (the background driver's
    /// [`Background::is_stale`](crate::background::Background::is_stale) and `Event::Stale`
    /// are the same report). The connection stays: the next call waits again, for a fresh
    /// package. A handle that begins waiting on a stale stream learns it at once (after the
    /// newest package, if it has not returned that one yet). Without a deadline, a silent
    /// controller is waited for until the link's own errors end the connection.
    ///
    /// ```no_run
    /// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
    /// use rtde_core::Error;
    ///
    /// let mut latest = client.latest();
    /// loop {
    ///     match latest.changed().await {
    ///         Ok(values) => { /* act on the newest package */ let _ = values; }
    ///         Err(Error::Stale { silent_for }) => {
    ///             // nothing for `silent_for`: stop acting on the last package
    ///             let _ = silent_for;
    ///         }
    ///         Err(e) => return Err(e), // the connection ended
    ///     }
    /// }
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Stale`] when the stream went stale since this handle's last package (once
    /// per silence); [`Error::ConnectionLost`] once the connection has ended.
    pub async fn changed(&mut self) -> Result<&[u8], Error> {
        loop {
            match self.take_change() {
                Some(Ok(())) => return Ok(&self.held),
                Some(Err(silent_for)) => return Err(Error::Stale { silent_for }),
                None => {}
            }
            if self.shared.delivery.is_ended() {
                return Err(Error::ConnectionLost);
            }
            if self.changes.changed().await.is_err() {
                return Err(Error::ConnectionLost);
            }
        }
    }

    /// A newer package (copied into `held`), or a silence this handle has not reported
    /// that is still going on (no package since it), or nothing.
    fn take_change(&mut self) -> Option<Result<(), std::time::Duration>> {
        if self.take_newer() {
            return Some(Ok(()));
        }
        self.shared.delivery.untold(&mut self.heard).map(Err)
    }

    /// Copies the slot when it holds a newer package than the last one taken.
    fn take_newer(&mut self) -> bool {
        self.changes.mark_unchanged();
        let newer = self
            .shared
            .delivery
            .latest()
            .copy_unless(self.seen, &mut self.held);
        match newer {
            Some((seq, _)) => {
                self.seen = seq;
                true
            }
            None => false,
        }
    }
}

impl Clone for Latest {
    fn clone(&self) -> Self {
        Latest::new(self.shared.clone())
    }
}
