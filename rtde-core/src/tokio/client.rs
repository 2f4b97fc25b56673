//! The application's handle: commands, inputs, and what the session knows.

use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use rtde_fields::ControllerVersion;

use super::receive::{Latest, Packages};
use super::shared::{Handle, Inner, Shared};
use crate::dynamic::DynamicRecipe;
use crate::error::Error;
use crate::protocol::ProtocolVersion;
use crate::recipe::{InputRecipe, Recipe, RecipeSpec};
use crate::session::DroppedField;
use crate::session::tolerant::Tolerant;
use crate::session::{ControllerText, Done, Event, InputHandle, Session, State, Stats};

/// A cheap handle to a connection driven by its [`Connection`](super::Connection) task:
/// `Clone + Send + Sync`, so a control loop, a logger and a GUI can share one connection.
///
/// Every rule is the [`Session`]'s, as in the blocking [`Client`](crate::Client): the
/// same checks before sending, the same replies, the same [`Stats`]. Commands take turns
/// (one request is in flight at a time, as the protocol has it): a command from one clone
/// waits for another's to finish.
///
/// **Cancellation safety.** A command dropped at its `.await` before its request was
/// queued sends nothing; after, the request still completes on the connection (its
/// result is dropped) and the next command waits for it. [`AsyncClient::send`] either
/// queues the whole package or nothing. No `.await` here holds a lock.
#[derive(Clone, Debug)]
pub struct AsyncClient {
    shared: Handle,
}

/// The longest [`AsyncClient::defer_reads`] lets packages wait: far below the time a
/// controller gives a client that stops reading, and a few kB of socket buffer at 500 Hz.
pub const MAX_READ_DEFERRAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Whether a command's request is now in flight (a reply will finish it) or it finished
/// at once.
type Issued = bool;

impl AsyncClient {
    pub(super) fn new(shared: &Arc<Shared>) -> AsyncClient {
        AsyncClient {
            shared: Handle::new(shared),
        }
    }

    /// Sets up the output recipe at `frequency` hertz, with every check of
    /// [`Client::setup_outputs`](crate::Client::setup_outputs).
    ///
    /// # Errors
    /// As [`Client::setup_outputs`](crate::Client::setup_outputs);
    /// [`Error::ConnectionLost`] when the link went (or goes) while it waits.
    pub async fn setup_outputs(&self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error> {
        self.command(|s, now| s.setup_outputs(spec, frequency, now).map(|()| true))
            .await
            .map(|_| ())
    }

    /// Sets up an input recipe and returns the handle to [`AsyncClient::send`] it with.
    ///
    /// # Errors
    /// As [`Client::setup_inputs`](crate::Client::setup_inputs).
    pub async fn setup_inputs(&self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error> {
        match self
            .command(|s, now| s.setup_inputs(spec, now).map(|()| true))
            .await?
        {
            Some(Done::InputsSetUp(handle)) => Ok(handle),
            _ => Err(Error::Misuse("SETUP_INPUTS finished as something else")),
        }
    }

    /// Sets up `recipe` as the output recipe with every field this controller has, dropping
    /// the others, as [`Client::setup_outputs_dropping_unavailable`](crate::Client::setup_outputs_dropping_unavailable)
    /// does (the same rule); returns the fields dropped.
    ///
    /// ```no_run
    /// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
    /// let mut recipe = rtde_core::DynamicRecipe::outputs(["timestamp", "ft_raw_wrench"])?;
    /// for dropped in client.setup_outputs_dropping_unavailable(&mut recipe, 125.0).await? {
    ///     eprintln!("this controller has no `{}` ({:?})", dropped.name, dropped.reason);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Client::setup_outputs_dropping_unavailable`](crate::Client::setup_outputs_dropping_unavailable).
    pub async fn setup_outputs_dropping_unavailable(
        &self,
        recipe: &mut DynamicRecipe,
        frequency: f64,
    ) -> Result<Vec<DroppedField>, Error> {
        let mut plan = Tolerant::new(recipe, self.controller_version())?;
        loop {
            let answer = self.setup_outputs(plan.candidate().spec(), frequency).await;
            if plan.answered(answer)?.is_some() {
                return Ok(plan.finish(recipe));
            }
        }
    }

    /// [`AsyncClient::setup_outputs_dropping_unavailable`] for an input recipe: the handle,
    /// and the fields dropped.
    ///
    /// # Errors
    /// As [`Client::setup_inputs_dropping_unavailable`](crate::Client::setup_inputs_dropping_unavailable).
    pub async fn setup_inputs_dropping_unavailable(
        &self,
        recipe: &mut DynamicRecipe,
    ) -> Result<(InputHandle, Vec<DroppedField>), Error> {
        let mut plan = Tolerant::new(recipe, self.controller_version())?;
        loop {
            let answer = self.setup_inputs(plan.candidate().spec()).await;
            if let Some(handle) = plan.answered(answer)? {
                return Ok((handle, plan.finish(recipe)));
            }
        }
    }

    /// Starts streaming, or resumes after a pause; as
    /// [`Client::start`](crate::Client::start).
    ///
    /// # Errors
    /// [`Error::StartRefused`], or a link or protocol error.
    pub async fn start(&self) -> Result<(), Error> {
        self.command(|s, now| s.start(now).map(|()| true))
            .await
            .map(|_| ())
    }

    /// Pauses streaming; as [`Client::pause`](crate::Client::pause).
    ///
    /// # Errors
    /// [`Error::PauseRefused`], or a link or protocol error.
    pub async fn pause(&self) -> Result<(), Error> {
        self.command(|s, now| s.pause(now).map(|()| true))
            .await
            .map(|_| ())
    }

    /// Queues the values of `recipe` as a data package of the input recipe `input` was set
    /// up with; the connection task writes it. Encoded in place in the session's transmit
    /// buffer: no allocation. Waits while the previous package has not gone out yet (the
    /// socket is full), and while the connection reconnects.
    ///
    /// **During an automatic reconnection**
    /// ([`ConnectOptions::reconnect`](crate::ConnectOptions::reconnect)) it waits for the
    /// round to end, as the background driver's
    /// [`Sender::send`](crate::background::Sender::send) does, and is bounded by the same
    /// policy: once the new link has replayed the recipes (and START), the package is
    /// queued on it, with the input recipe id that link assigned. Inputs are never buffered
    /// for a later link: nothing is queued while the link is down, so a package cannot go
    /// out stale behind the replay, and what the caller sees is the wait. When the round
    /// fails, it returns [`Error::ConnectionLost`] (the round's own error goes where the
    /// connection's end goes: the [`Connection`](super::Connection) future, and the
    /// in-order [`Packages`] when one exists), as the background driver's `send` does.
    ///
    /// Cancel-safe: dropped at its `.await` (waiting for room or for a reconnection), it
    /// queued nothing.
    ///
    /// A controller that stops reading cannot make it hang: when the package waiting to go
    /// out finds no room for [`ConnectOptions::write_timeout`](crate::ConnectOptions::write_timeout),
    /// the link is lost, and the `send` waiting (or the next one) fails with the error the
    /// blocking client's `send` gives: an [`Error::Io`] whose source is
    /// [`std::io::ErrorKind::TimedOut`] (unless a reconnection brings the link back
    /// first: then the package goes out on the new link, as the blocking client's does).
    ///
    /// # Errors
    /// As [`Client::send`](crate::Client::send); [`Error::ConnectionLost`] once the
    /// connection has ended, or when the reconnection it waited for failed.
    pub async fn send<R: InputRecipe + ?Sized>(
        &self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        loop {
            let mut progress = pin!(self.shared.progress.notified());
            progress.as_mut().enable();
            {
                let mut inner = self.shared.inner();
                if inner.finished {
                    // A write that failed (the write timeout, say) is reported once, as
                    // the blocking client's `send` reports it.
                    return Err(inner.send_failure.take().unwrap_or(Error::ConnectionLost));
                }
                // A lost link that the task has not taken up yet is about to be reconnected
                // or ended: either way it wakes this wait.
                let link_down = inner.reconnecting || inner.session.is_lost();
                if !link_down && inner.session.poll_transmit().is_none() {
                    inner.session.send(input, recipe)?;
                    Shared::wake_task(&mut inner);
                    return Ok(());
                }
            }
            progress.await;
        }
    }

    /// The in-order receiver of every output package, with room for `capacity` packages
    /// (at least 1); see [`Packages`]. One per connection at a time: take it before
    /// [`AsyncClient::start`], so that it has the first package too.
    ///
    /// Memory: at the first package every slot gets a buffer of the recipe's size, so
    /// that no burst later allocates; the queue then keeps about `capacity` × (the
    /// payload plus some 60 bytes). Size it by time (a second at the output frequency rides
    /// out a stalled consumer), not by the largest number that fits: many connections
    /// with deep queues cost resident memory, and cache misses as the ring goes round.
    ///
    /// # Errors
    /// [`Error::Misuse`] while another one exists.
    pub fn packages(&self, capacity: usize) -> Result<Packages, Error> {
        let mut queue = self.shared.delivery.queue();
        if queue.is_open() {
            return Err(Error::Misuse(
                "a connection has one in-order receiver; drop the other `Packages` first",
            ));
        }
        queue.open(capacity.max(1), 0);
        drop(queue);
        Ok(Packages::new(self.shared.clone()))
    }

    /// Lets the packages that arrive until `until` wait in the socket's receive buffer:
    /// the connection task reads nothing before then (at most [`MAX_READ_DEFERRAL`]
    /// from now), unless a command waits for its reply or the connection closes. What
    /// arrived meanwhile then comes in one read and one wake-up of the [`Packages`]
    /// receiver, not one of each per package: for consumers that handle packages in
    /// batches anyway (a bridge that publishes every 10 ms asks for the time its batch's
    /// last package is due). Each call replaces the last; a time already past reads at
    /// once.
    ///
    /// Nothing is lost or reordered: the kernel holds the bytes (a few hundred per
    /// package), and the controller sees a client that reads, late by at most the
    /// deferral. Packages are late by as much, so a control loop never defers, and a
    /// deferral longer than the [`Connection::staleness`](super::Connection::staleness)
    /// limit reports the stream stale.
    ///
    /// ```no_run
    /// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
    /// use std::time::{Duration, Instant};
    ///
    /// let mut packages = client.packages(1024)?;
    /// client.start().await?;
    /// loop {
    ///     let first = packages.recv().await?.to_vec();
    ///     // ... and whatever else came with it, without waiting:
    ///     while let Some(next) = packages.try_recv() {
    ///         let _values = next?;
    ///     }
    ///     // The next five packages at 500 Hz, in one read.
    ///     client.defer_reads(Instant::now() + Duration::from_millis(10));
    /// #   let _ = first;
    /// }
    /// # }
    /// ```
    pub fn defer_reads(&self, until: Instant) {
        let until = until.min(Instant::now() + MAX_READ_DEFERRAL);
        self.shared.inner().reads_deferred_until = Some(until);
    }

    /// A watch of the newest output package; see [`Latest`].
    #[must_use]
    pub fn latest(&self) -> Latest {
        Latest::new(self.shared.clone())
    }

    /// What the connection is doing now.
    #[must_use]
    pub fn state(&self) -> State {
        self.shared.inner().session.state()
    }

    /// Whether no package arrived for the staleness limit
    /// ([`Connection::staleness`](super::Connection::staleness)); false again with the next
    /// package, which [`Event::Fresh`](crate::Event::Fresh) reports in
    /// [`AsyncClient::events`] (as [`Event::Stale`](crate::Event::Stale) the silence), so
    /// nothing needs to poll this. As the background driver's
    /// [`Background::is_stale`](crate::background::Background::is_stale).
    #[must_use]
    pub fn is_stale(&self) -> bool {
        self.shared.delivery.is_stale()
    }

    /// The counters over every link, with [`Stats::overflowed`] from the in-order queue.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// The events since the last call, oldest first (shared by every clone).
    #[must_use]
    pub fn events(&self) -> Vec<Event> {
        self.shared.inner().session.events().collect()
    }

    /// The text messages received since the last call, oldest first (shared by every
    /// clone).
    #[must_use]
    pub fn text_messages(&self) -> Vec<ControllerText> {
        self.shared.inner().session.text_messages().collect()
    }

    /// The protocol version in use.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.shared.inner().session.protocol_version()
    }

    /// The controller's software version, as it reported it.
    #[must_use]
    pub fn controller_version(&self) -> ControllerVersion {
        self.shared.inner().session.controller_version()
    }

    /// The id the controller gave the output recipe now: `None` before setup and in
    /// protocol v1, whose data packages carry none. As
    /// [`Client::output_recipe_id`](crate::Client::output_recipe_id); it may change on
    /// reconnection.
    ///
    /// ```no_run
    /// # fn f(client: &rtde_core::tokio::AsyncClient) {
    /// // What a recording's header says the packages after it are.
    /// let header = format!(
    ///     "protocol {:?}, controller {}, output recipe {:?}",
    ///     client.protocol_version(),
    ///     client.controller_version(),
    ///     client.output_recipe_id(),
    /// );
    /// # let _ = header;
    /// # }
    /// ```
    #[must_use]
    pub fn output_recipe_id(&self) -> Option<u8> {
        self.shared.inner().session.output_recipe_id()
    }

    /// The id the controller gave an input recipe now (it may change on reconnection);
    /// `None` for a handle of another connection.
    ///
    /// ```no_run
    /// # async fn f(client: rtde_core::tokio::AsyncClient) -> Result<(), rtde_core::Error> {
    /// use rtde_core::{DynamicRecipe, Recipe};
    ///
    /// let inputs = DynamicRecipe::inputs(["input_double_register_24"])?;
    /// let handle = client.setup_inputs(inputs.spec()).await?;
    /// assert!(client.input_recipe_id(&handle).is_some());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.shared.inner().session.input_recipe_id(input)
    }

    /// Reads the session this connection drives, under its lock (keep `f` short: the
    /// connection task waits for it).
    pub fn with_session<T>(&self, f: impl FnOnce(&Session) -> T) -> T {
        f(&self.shared.inner().session)
    }

    /// Pauses if streaming, then ends the connection, waiting (a bounded time) for the
    /// controller to close its side, when it has freed this connection's inputs: the
    /// [`Connection`](super::Connection) future returns `Ok(())`, and every handle sees
    /// [`Error::ConnectionLost`] after the packages already queued.
    ///
    /// # Errors
    /// The pause's error, if any (the connection ends all the same).
    pub async fn close(&self) -> Result<(), Error> {
        // During a round of reconnection attempts nothing streams, so nothing is paused:
        // the task ends the round at once rather than after it.
        let paused = self
            .command_unless_reconnecting(|s, now| s.close(now))
            .await
            .map(|_| ());
        {
            let mut inner = self.shared.inner();
            inner.closing = true;
            Shared::wake_task(&mut inner);
        }
        self.wait(|inner| inner.finished.then_some(())).await;
        match paused {
            Err(Error::ConnectionLost) => Ok(()),
            other => other,
        }
    }

    /// Runs a session command once no request is in flight, then waits for what it
    /// finishes as: `Ok(None)` when nothing was sent.
    async fn command(
        &self,
        command: impl FnOnce(&mut Session, Instant) -> Result<Issued, Error>,
    ) -> Result<Option<Done>, Error> {
        self.command_in(false, command).await
    }

    /// As [`AsyncClient::command`], but during a round of reconnection attempts it sends
    /// nothing (`Ok(None)`) instead of waiting for the round.
    async fn command_unless_reconnecting(
        &self,
        command: impl FnOnce(&mut Session, Instant) -> Result<Issued, Error>,
    ) -> Result<Option<Done>, Error> {
        self.command_in(true, command).await
    }

    async fn command_in(
        &self,
        skip_round: bool,
        command: impl FnOnce(&mut Session, Instant) -> Result<Issued, Error>,
    ) -> Result<Option<Done>, Error> {
        let _turn = self.shared.commands.lock().await;
        let mut command = Some(command);
        let issued = self
            .wait(|inner| {
                if inner.finished {
                    return Some(Err(Error::ConnectionLost));
                }
                if inner.reconnecting && skip_round {
                    return Some(Ok(false));
                }
                if inner.reconnecting || inner.session.is_busy() {
                    return None;
                }
                let command = command.take()?;
                inner.result = None;
                let issued = command(&mut inner.session, Instant::now());
                if matches!(issued, Ok(true)) {
                    inner.awaiting = true;
                    Shared::wake_task(inner);
                }
                Some(issued)
            })
            .await;
        match issued {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(self.settle(e)),
        }
        // Dropped from here on, the command leaves its result to the next one to clear.
        let awaiting = Awaiting(&self.shared);
        let result = self
            .wait(|inner| match inner.result.take() {
                Some(result) => Some(result),
                None if inner.finished => Some(Err(Error::ConnectionLost)),
                None => None,
            })
            .await;
        drop(awaiting);
        result.map(Some).map_err(|e| self.settle(e))
    }

    /// A failure on a lost link that nothing reconnects makes the state
    /// [`State::Closed`] (the session's rule).
    fn settle(&self, error: Error) -> Error {
        let mut inner = self.shared.inner();
        if inner.reconnecting {
            return error;
        }
        match inner.session.settle::<()>(Err(error)) {
            Err(e) => e,
            Ok(()) => Error::ConnectionLost,
        }
    }

    /// Waits until `ready` (called under the session's lock) returns `Some`. Cancel-safe:
    /// `ready` runs only inside a poll, and nothing else happens here.
    async fn wait<T>(&self, mut ready: impl FnMut(&mut Inner) -> Option<T>) -> T {
        loop {
            let mut progress = pin!(self.shared.progress.notified());
            progress.as_mut().enable();
            if let Some(value) = ready(&mut self.shared.inner()) {
                return value;
            }
            progress.await;
        }
    }
}

/// Clears [`Inner::awaiting`] when the command waiting stops, finished or dropped.
struct Awaiting<'a>(&'a Shared);

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        self.0.inner().awaiting = false;
    }
}
