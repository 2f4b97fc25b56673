//! One suite, every driver: each scenario is written once, against [`Driver`], and
//! run by `every_driver!` for the blocking [`Client`], the background driver
//! ([`Client::spawn`]) and the async driver (`rtde_core::tokio::from_client`, its
//! connection task on a tokio runtime of its own). The behaviour is the session's, so the
//! scenarios are the same; only who waits differs.
//!
//! The scenarios are what happens to a connection after the handshake: against rtde-sim
//! (the values it streams, derived recipes read and written, inputs taken while paused,
//! and its faults: `drivers/sim.rs`) and against the scripted peer of
//! `rtde_testkit::scripted` (`drivers/scripted.rs`, shared, not copied). The handshake and
//! the setups (faulted, checked before they are sent, refused whole, or dropping what the
//! controller lacks) are `drivers/handshake.rs`, run by `every_way_in!` against each way a
//! connection starts: the blocking `Client::connect` (which the background driver starts
//! from), and the async driver's own `connect` and `attach`.
//!
//! Where the drivers differ by design, the scenario asserts each one's documented
//! behaviour, keyed on [`Driver::BY_HAND`] and [`Driver::PAUSES`]:
//!
//! - the blocking client reconnects when asked ([`Client::reconnect`]), and with a policy
//!   at the call that finds the link lost; the background and async drivers reconnect on
//!   their own, under the policy, as soon as their reader sees the loss, and without one
//!   they end for good. An input sent meanwhile is one behaviour: it waits for the
//!   reconnection and goes out on the new link (the blocking client's after its
//!   reconnection), or fails with [`Error::ConnectionLost`] when the round fails;
//! - the background driver has no pause: its reader thread streams until
//!   [`Background::close`], which pauses;
//! - the blocking client's `recv_latest` passes over the packages before the newest
//!   (counted as superseded), where the other drivers' readers take every package and keep
//!   them for the in-order receiver too.

mod common;
use rtde_testkit::scripted as support;

#[path = "drivers/handshake.rs"]
mod handshake;
#[path = "drivers/scripted.rs"]
mod scripted;
#[path = "drivers/sim.rs"]
mod sim;

use std::time::{Duration, Instant};

use common::WAIT;
use rtde_core::OutputRecipe;
use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::ProtocolVersion;
use rtde_core::{
    Client, ConnectOptions, ControllerText, DynamicRecipe, Error, Event, FromPayload, InputHandle,
    InputRecipe, Recipe, State, Stats,
};

/// What a scenario needs of a driver.
pub(crate) trait Driver: Sized {
    /// Whether the driver reconnects when asked ([`Driver::come_back`] calls
    /// [`Client::reconnect`]) rather than on its own under the reconnection policy.
    const BY_HAND: bool;
    /// Whether the driver can pause and start again ([`Driver::pause`], [`Driver::start`]).
    const PAUSES: bool;
    /// Whether taking the latest passes over the packages before it (the blocking
    /// client's `recv_latest`, which counts them as superseded), rather than leaving them
    /// to the in-order receiver (the other drivers' readers take every package).
    const LATEST_SUPERSEDES: bool;
    /// Takes over a client whose recipes are set up (and, mostly, started).
    fn take(client: Client) -> Self;
    /// The next output package that fits, in order; packages that do not fit are kept for
    /// [`Driver::rejected`].
    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error>;
    /// The newest package received so far into `recipe`; `Ok(false)` when none has come.
    fn latest_into(&mut self, recipe: &mut DynamicRecipe) -> Result<bool, Error>;
    /// How long [`Driver::recv_into`] waits.
    fn set_wait(&mut self, wait: Duration);
    /// The packages refused since the last call.
    fn rejected(&mut self) -> Vec<Error>;
    /// The next output package, in order, decoded as `T` (each driver's `recv_as`).
    fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error>;
    /// The next output package's payload, in order, as it came.
    fn recv_payload(&mut self) -> Result<Vec<u8>, Error>;
    fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error>;
    /// Pauses streaming (only when [`Driver::PAUSES`]).
    fn pause(&mut self) -> Result<(), Error>;
    /// Starts streaming again (only when [`Driver::PAUSES`]).
    fn start(&mut self) -> Result<(), Error>;
    /// After the link was lost: reconnects ([`Driver::BY_HAND`]), or waits (bounded) until
    /// the driver has reconnected on its own, or has given up (then the error that ended
    /// it).
    fn come_back(&mut self) -> Result<(), Error>;
    fn stats(&self) -> Stats;
    fn state(&self) -> State;
    fn input_recipe_id(&self, input: &InputHandle) -> Option<u8>;
    /// What a capture header records: the output recipe's id, the protocol version and
    /// the controller's version, on the link in use.
    fn output_recipe_id(&self) -> Option<u8>;
    fn protocol_version(&self) -> ProtocolVersion;
    fn controller_version(&self) -> ControllerVersion;
    /// The events since the last call (rejections apart).
    fn events(&mut self) -> Vec<Event>;
    fn text_messages(&mut self) -> Vec<ControllerText>;
    /// Pauses if streaming, then closes.
    fn close(self) -> Result<(), Error>;
    /// After the connection ended by itself: how the driver reports that end besides its
    /// receives (the async connection task's output, the background driver's `close`);
    /// `None` for the blocking client, whose calls are all it has.
    fn end(self) -> Option<Result<(), Error>>;
    /// Drops the driver without pausing.
    fn finish(self);
}

/// A driver that keeps a staleness deadline ("no fresh package for X", with a grace for
/// the first package after START): the background and async drivers. (The blocking client
/// has its read timeout instead: nothing reads while the application does not.)
pub(crate) trait Staleness: Driver {
    /// As [`Driver::take`], with the deadline.
    fn take_stale(client: Client, limit: Duration, grace: Duration) -> Self;
    fn is_stale(&self) -> bool;
    /// Waits (within [`WAIT`]) for the latest package to change: `Ok` for a newer one,
    /// the error that ended the wait otherwise ([`Error::Stale`] when the stream went
    /// stale). `None` for a driver without such a wait: the background driver's
    /// `Receiver::latest` never waits, and its `Receiver::recv` takes a timeout.
    fn changed(&mut self) -> Option<Result<(), Error>>;
    /// The next entry of the in-order queue into `recipe`, waiting without a timeout of
    /// the driver's own (the background driver's `Receiver::recv(None)`, the async
    /// `Packages::recv_into`); the test fails if nothing ends the wait within [`WAIT`].
    fn recv_in_order(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error>;
}

pub(crate) struct Blocking {
    client: Client,
    rejected: Vec<Error>,
}

impl Driver for Blocking {
    const BY_HAND: bool = true;
    const PAUSES: bool = true;
    const LATEST_SUPERSEDES: bool = true;

    fn take(client: Client) -> Self {
        Blocking {
            client,
            rejected: Vec::new(),
        }
    }

    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        loop {
            match self.client.recv_into(recipe) {
                Err(e @ (Error::WrongRecipeId { .. } | Error::WrongLength { .. })) => {
                    self.rejected.push(e);
                }
                other => return other,
            }
        }
    }

    fn latest_into(&mut self, recipe: &mut DynamicRecipe) -> Result<bool, Error> {
        self.client.recv_latest_into(recipe).map(|()| true)
    }

    fn set_wait(&mut self, wait: Duration) {
        self.client.set_read_timeout(Some(wait)).unwrap();
    }

    fn rejected(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.rejected)
    }

    fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        self.client.recv_as()
    }

    fn recv_payload(&mut self) -> Result<Vec<u8>, Error> {
        self.client.recv().map(<[u8]>::to_vec)
    }

    fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.client.send(input, recipe)
    }

    fn pause(&mut self) -> Result<(), Error> {
        self.client.pause()
    }

    fn start(&mut self) -> Result<(), Error> {
        self.client.start()
    }

    fn come_back(&mut self) -> Result<(), Error> {
        self.client.reconnect().map(drop)
    }

    fn stats(&self) -> Stats {
        self.client.stats()
    }

    fn state(&self) -> State {
        self.client.state()
    }

    fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.client.input_recipe_id(input)
    }

    fn output_recipe_id(&self) -> Option<u8> {
        self.client.output_recipe_id()
    }

    fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version()
    }

    fn controller_version(&self) -> ControllerVersion {
        self.client.controller_version()
    }

    fn events(&mut self) -> Vec<Event> {
        self.client.events().collect()
    }

    fn text_messages(&mut self) -> Vec<ControllerText> {
        self.client.text_messages().collect()
    }

    fn close(self) -> Result<(), Error> {
        self.client.close()
    }

    fn end(self) -> Option<Result<(), Error>> {
        None
    }

    fn finish(self) {
        drop(self.client);
    }
}

/// Waits until a driver that reconnects on its own has done so (`Ok`), or has ended
/// (`Err(())`), within [`WAIT`].
fn reconnected_on_its_own(seen: &mut u64, stats: impl Fn() -> (Stats, State)) -> Result<(), ()> {
    let deadline = Instant::now() + WAIT;
    loop {
        let (stats, state) = stats();
        match state {
            State::Closed => return Err(()),
            State::Running | State::Paused | State::Connected if stats.reconnects > *seen => {
                *seen = stats.reconnects;
                return Ok(());
            }
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "neither reconnected nor ended within {WAIT:?}: {state:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(crate) struct Threaded {
    background: Background,
    receiver: Receiver,
    sender: Sender,
    rejected: Vec<Error>,
    wait: Duration,
    reconnects: u64,
}

impl Threaded {
    fn spawned(client: Client, options: SpawnOptions) -> Self {
        let background = client.spawn(options).unwrap();
        Threaded {
            receiver: background.receiver(),
            sender: background.sender(),
            background,
            rejected: Vec::new(),
            wait: WAIT,
            reconnects: 0,
        }
    }

    fn sort_events(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        for event in self.background.events() {
            match event {
                Event::Rejected(e) => self.rejected.push(e),
                other => events.push(other),
            }
        }
        events
    }
}

impl Driver for Threaded {
    const BY_HAND: bool = false;
    const PAUSES: bool = false;
    const LATEST_SUPERSEDES: bool = false;

    fn take(client: Client) -> Self {
        Threaded::spawned(client, SpawnOptions::new())
    }

    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        self.receiver.recv_into(recipe, Some(self.wait))
    }

    fn latest_into(&mut self, recipe: &mut DynamicRecipe) -> Result<bool, Error> {
        match self.receiver.latest()? {
            Some(values) => recipe
                .decode_into(values)
                .map(|()| true)
                .map_err(Error::Payload),
            None => Ok(false),
        }
    }

    fn set_wait(&mut self, wait: Duration) {
        self.wait = wait;
    }

    fn rejected(&mut self) -> Vec<Error> {
        let _ = self.sort_events();
        std::mem::take(&mut self.rejected)
    }

    fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        self.receiver.recv_as(Some(self.wait))
    }

    fn recv_payload(&mut self) -> Result<Vec<u8>, Error> {
        self.receiver.recv(Some(self.wait)).map(<[u8]>::to_vec)
    }

    fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.sender.send(input, recipe)
    }

    fn pause(&mut self) -> Result<(), Error> {
        Err(Error::Misuse("the background driver has no pause"))
    }

    fn start(&mut self) -> Result<(), Error> {
        Err(Error::Misuse("the background driver has no start"))
    }

    fn come_back(&mut self) -> Result<(), Error> {
        let background = &self.background;
        match reconnected_on_its_own(&mut self.reconnects, || {
            (background.stats(), background.state())
        }) {
            Ok(()) => Ok(()),
            // The error that ended the reader thread, after the packages before it.
            Err(()) => loop {
                if let Err(e) = self.receiver.recv(Some(WAIT)) {
                    break Err(e);
                }
            },
        }
    }

    fn stats(&self) -> Stats {
        self.background.stats()
    }

    fn state(&self) -> State {
        self.background.state()
    }

    fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.background.input_recipe_id(input)
    }

    fn output_recipe_id(&self) -> Option<u8> {
        self.background.output_recipe_id()
    }

    fn protocol_version(&self) -> ProtocolVersion {
        self.background.protocol_version()
    }

    fn controller_version(&self) -> ControllerVersion {
        self.background.controller_version()
    }

    fn events(&mut self) -> Vec<Event> {
        self.sort_events()
    }

    fn text_messages(&mut self) -> Vec<ControllerText> {
        self.background.text_messages()
    }

    fn close(self) -> Result<(), Error> {
        self.background.close()
    }

    fn end(self) -> Option<Result<(), Error>> {
        Some(self.background.close())
    }

    fn finish(self) {
        drop(self.background);
    }
}

impl Staleness for Threaded {
    fn take_stale(client: Client, limit: Duration, grace: Duration) -> Self {
        Threaded::spawned(client, SpawnOptions::new().staleness(limit, grace))
    }

    fn is_stale(&self) -> bool {
        self.background.is_stale()
    }

    fn changed(&mut self) -> Option<Result<(), Error>> {
        None
    }

    fn recv_in_order(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        // `recv(None)` on a thread of its own, so a wait that never ends fails the test
        // rather than hanging it (dropping the driver then ends that wait).
        let mut receiver = std::mem::replace(&mut self.receiver, self.background.receiver());
        let (done, ended) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let got = receiver.recv(None).map(<[u8]>::to_vec);
            let _ = done.send(());
            (receiver, got)
        });
        ended
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("`Receiver::recv(None)` waited past {WAIT:?}"));
        let (receiver, got) = waiter.join().expect("the waiting receiver");
        self.receiver = receiver;
        recipe.decode_into(&got?).map_err(Error::Payload)
    }
}

/// The async driver: the connection task on a one-worker runtime, so it reads on while the
/// test thread does something else; each call blocks on the handle's future.
pub(crate) struct Asynchronous {
    runtime: tokio::runtime::Runtime,
    /// The connection task.
    task: tokio::task::JoinHandle<Result<(), Error>>,
    client: rtde_core::tokio::AsyncClient,
    packages: rtde_core::tokio::Packages,
    latest: rtde_core::tokio::Latest,
    rejected: Vec<Error>,
    wait: Duration,
    reconnects: u64,
}

impl Asynchronous {
    fn spawned(client: Client, staleness: Option<(Duration, Duration)>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (client, packages, task) = runtime.block_on(async {
            let (client, connection) = rtde_core::tokio::from_client(client).unwrap();
            let packages = client.packages(1024).unwrap();
            let task = match staleness {
                Some((limit, grace)) => tokio::spawn(connection.staleness(limit, grace)),
                None => tokio::spawn(connection),
            };
            (client, packages, task)
        });
        Asynchronous {
            runtime,
            task,
            latest: client.latest(),
            client,
            packages,
            rejected: Vec::new(),
            wait: WAIT,
            reconnects: 0,
        }
    }

    /// Drops the handles, then the runtime with the connection task.
    fn finish_handles(self) {
        drop(self.client);
        drop(self.packages);
        drop(self.latest);
        // Without waiting for the worker: what the connection task did is done when its
        // future says so, and a scenario checks what the controller saw right after.
        self.runtime.shutdown_background();
    }

    /// What a receive that waited past the wait is, as the other drivers report it.
    fn timed_out(&self) -> Error {
        Error::Timeout {
            after: self.wait,
            waiting_for: rtde_core::protocol::package_type::DATA_PACKAGE,
            mid_frame: self.client.with_session(rtde_core::Session::mid_frame),
        }
    }

    /// The next entry of the in-order queue within the wait: a package's values, or the
    /// error in its place.
    fn next(&mut self) -> Result<Result<(), Error>, tokio::time::error::Elapsed> {
        let (wait, packages) = (self.wait, &mut self.packages);
        self.runtime.block_on(async {
            tokio::time::timeout(wait, async { packages.recv().await.map(drop) }).await
        })
    }
}

impl Driver for Asynchronous {
    const BY_HAND: bool = false;
    const PAUSES: bool = true;
    const LATEST_SUPERSEDES: bool = false;

    fn take(client: Client) -> Self {
        Asynchronous::spawned(client, None)
    }

    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        loop {
            let (wait, packages) = (self.wait, &mut self.packages);
            let received = self
                .runtime
                .block_on(async { tokio::time::timeout(wait, packages.recv_into(recipe)).await });
            match received {
                Err(_) => return Err(self.timed_out()),
                Ok(Err(e @ (Error::WrongRecipeId { .. } | Error::WrongLength { .. }))) => {
                    self.rejected.push(e);
                }
                Ok(other) => return other,
            }
        }
    }

    fn latest_into(&mut self, recipe: &mut DynamicRecipe) -> Result<bool, Error> {
        self.latest.get_into(recipe)
    }

    fn set_wait(&mut self, wait: Duration) {
        self.wait = wait;
    }

    fn rejected(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.rejected)
    }

    fn recv_as<T: FromPayload>(&mut self) -> Result<T, Error> {
        let (wait, packages) = (self.wait, &mut self.packages);
        self.runtime
            .block_on(async { tokio::time::timeout(wait, packages.recv_as()).await })
            .map_err(|_| self.timed_out())?
    }

    fn recv_payload(&mut self) -> Result<Vec<u8>, Error> {
        let (wait, packages) = (self.wait, &mut self.packages);
        self.runtime
            .block_on(async {
                tokio::time::timeout(wait, async { packages.recv().await.map(<[u8]>::to_vec) })
                    .await
            })
            .map_err(|_| self.timed_out())?
    }

    fn send<R: InputRecipe + ?Sized>(
        &mut self,
        input: &InputHandle,
        recipe: &R,
    ) -> Result<(), Error> {
        self.runtime.block_on(self.client.send(input, recipe))
    }

    fn pause(&mut self) -> Result<(), Error> {
        self.runtime.block_on(self.client.pause())
    }

    fn start(&mut self) -> Result<(), Error> {
        self.runtime.block_on(self.client.start())
    }

    fn come_back(&mut self) -> Result<(), Error> {
        let client = &self.client;
        match reconnected_on_its_own(&mut self.reconnects, || (client.stats(), client.state())) {
            Ok(()) => Ok(()),
            // The error that ended the connection, after the packages before it.
            Err(()) => loop {
                match self.next() {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => break Err(e),
                    Err(_) => panic!("the connection ended without its error"),
                }
            },
        }
    }

    fn stats(&self) -> Stats {
        self.client.stats()
    }

    fn state(&self) -> State {
        self.client.state()
    }

    fn input_recipe_id(&self, input: &InputHandle) -> Option<u8> {
        self.client.input_recipe_id(input)
    }

    fn output_recipe_id(&self) -> Option<u8> {
        self.client.output_recipe_id()
    }

    fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version()
    }

    fn controller_version(&self) -> ControllerVersion {
        self.client.controller_version()
    }

    fn events(&mut self) -> Vec<Event> {
        self.client.events()
    }

    fn text_messages(&mut self) -> Vec<ControllerText> {
        self.client.text_messages()
    }

    fn close(self) -> Result<(), Error> {
        let closed = self
            .runtime
            .block_on(async { tokio::time::timeout(WAIT, self.client.close()).await })
            .expect("closed within the wait");
        self.finish_handles();
        closed
    }

    fn end(mut self) -> Option<Result<(), Error>> {
        let task = &mut self.task;
        let ended = self
            .runtime
            .block_on(async { tokio::time::timeout(WAIT, task).await })
            .expect("the connection task ended within the wait")
            .expect("the connection task ran to its end");
        self.finish_handles();
        Some(ended)
    }

    fn finish(self) {
        self.finish_handles();
    }
}

pub(crate) fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

/// A client of `outputs()` at `frequency`, started, its events drained, taken by `D`.
pub(crate) fn started<D: Driver>(
    addr: std::net::SocketAddr,
    options: ConnectOptions,
    frequency: f64,
) -> D {
    let mut client = Client::connect(addr, options).unwrap();
    client.setup_outputs(outputs().spec(), frequency).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    D::take(client)
}

impl Staleness for Asynchronous {
    fn take_stale(client: Client, limit: Duration, grace: Duration) -> Self {
        Asynchronous::spawned(client, Some((limit, grace)))
    }

    fn is_stale(&self) -> bool {
        let stale = self.client.is_stale();
        assert_eq!(self.latest.is_stale(), stale, "the watch says the same");
        stale
    }

    fn changed(&mut self) -> Option<Result<(), Error>> {
        let latest = &mut self.latest;
        let changed = self
            .runtime
            .block_on(async { tokio::time::timeout(WAIT, latest.changed()).await })
            .unwrap_or_else(|_| panic!("`Latest::changed` waited past {WAIT:?}"));
        Some(changed.map(drop))
    }

    fn recv_in_order(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        let packages = &mut self.packages;
        self.runtime
            .block_on(async { tokio::time::timeout(WAIT, packages.recv_into(recipe)).await })
            .unwrap_or_else(|_| panic!("`Packages::recv_into` waited past {WAIT:?}"))
    }
}

/// Runs each scenario (`module::scenario`) against every driver.
macro_rules! every_driver {
    ($($module:ident :: $scenario:ident),* $(,)?) => {
        mod blocking {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Blocking>() })*
        }
        mod background {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Threaded>() })*
        }
        mod asynchronous {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Asynchronous>() })*
        }
    };
}

/// Runs each scenario against every driver that keeps a staleness deadline.
macro_rules! every_stale_driver {
    ($($module:ident :: $scenario:ident),* $(,)?) => {
        mod background_stale {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Threaded>() })*
        }
        mod asynchronous_stale {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Asynchronous>() })*
        }
    };
}

/// Runs each scenario against every driver that reconnects on its own, while the
/// application goes on asking it things.
macro_rules! every_driver_on_its_own {
    ($($module:ident :: $scenario:ident),* $(,)?) => {
        mod background_on_its_own {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Threaded>() })*
        }
        mod asynchronous_on_its_own {
            $(#[test] fn $scenario() { super::$module::$scenario::<super::Asynchronous>() })*
        }
    };
}

every_stale_driver!(
    scripted::staleness_waits_out_the_grace_period_at_start_up,
    scripted::an_in_order_receive_returns_the_queued_packages_then_stale_then_waits_again,
    scripted::the_package_that_ends_a_stale_silence_reports_the_stream_fresh_once,
    sim::a_paused_stream_goes_stale_and_its_resumption_is_fresh,
);

every_driver_on_its_own!(
    scripted::the_handles_answer_at_once_while_a_round_backs_off_and_close_ends_it,
    scripted::the_handles_answer_at_once_while_a_handshake_reply_is_awaited,
);

every_driver!(
    // against the simulator: its values and inputs
    sim::derived_recipes_read_the_motion_law_and_write_inputs_that_take_effect,
    sim::inputs_sent_while_paused_take_effect,
    sim::the_inputs_of_a_closed_connection_are_free_when_close_returns,
    // against the simulator's faults
    sim::every_package_in_order_until_the_link_closes_with_skips_counted,
    sim::closed_mid_frame_reconnects_replays_inputs_and_counts_the_loss_exactly,
    sim::a_malformed_frame_loses_the_link_and_automatic_reconnection_recovers,
    sim::a_package_of_another_recipe_is_reported_and_the_stream_goes_on,
    sim::a_v1_only_controller_is_reconnected_over_v1,
    sim::a_restarted_controller_is_reconnected_and_the_loss_estimated,
    sim::a_downgraded_controller_is_refused_naming_the_field_it_lost,
    sim::a_controller_that_shuts_down_ends_the_stream_and_the_driver_with_one_error,
    // the link
    scripted::closed_mid_frame_is_a_typed_error_and_the_way_on_is_each_drivers,
    scripted::a_peer_that_stops_sending_times_out_within_the_bound_and_the_connection_stays,
    scripted::garbage_bytes_lose_the_link_with_a_decode_error,
    scripted::a_size_field_larger_than_what_follows_then_close,
    scripted::a_size_field_larger_than_what_follows_then_silence_times_out_mid_frame,
    scripted::a_peer_that_stops_reading_fails_the_send_within_the_write_timeout,
    // packages that make no sense
    scripted::wrong_recipe_id_and_wrong_length_are_typed_errors_and_the_stream_goes_on,
    scripted::a_data_package_before_the_start_reply_is_the_first_package,
    scripted::the_latest_is_the_newest_and_the_packages_before_it_are_accounted_for,
    scripted::skipped_packages_are_counted_exactly_from_timestamps,
    scripted::a_v1_only_controller_streams_without_recipe_ids,
    scripted::unknown_package_types_are_skipped_and_counted_not_a_lost_link,
    // reconnection
    scripted::automatic_reconnect_after_the_peer_drops_replays_everything_byte_exactly,
    scripted::a_paused_client_reconnects_paused,
    scripted::a_pause_the_link_broke_is_kept_by_the_reconnection,
    scripted::failed_attempts_are_retried_with_backoff_and_reported,
    scripted::a_round_of_attempts_is_bounded_and_ends_closed,
    scripted::a_downgrade_that_loses_a_field_is_named_on_reconnect_before_anything_is_sent,
    scripted::not_found_after_a_downgrade_on_reconnect_is_refused_naming_the_field,
    scripted::text_messages_already_received_survive_a_reconnection,
    scripted::a_send_during_a_reconnection_waits_for_it_and_goes_out_on_the_new_link,
    scripted::a_send_during_a_reconnection_that_fails_is_connection_lost,
);

/// Runs each handshake scenario against every way in: the blocking `Client::connect`, and
/// the async driver's own `connect` and `attach`.
macro_rules! every_way_in {
    ($($scenario:ident),* $(,)?) => {
        mod blocking_handshake {
            $(#[test] fn $scenario() { super::handshake::$scenario::<rtde_core::Client>() })*
        }
        mod async_connect_handshake {
            $(#[test] fn $scenario() { super::handshake::$scenario::<super::handshake::AsyncConnect>() })*
        }
        mod async_attach_handshake {
            $(#[test] fn $scenario() { super::handshake::$scenario::<super::handshake::AsyncAttach>() })*
        }
    };
}

every_way_in!(
    a_peer_that_stops_answering_the_handshake_times_out,
    a_slow_controller_times_out_and_a_patient_client_gets_through,
    garbage_during_the_handshake_fails_the_way_in,
    a_link_cut_inside_a_handshake_reply_is_closed_mid_frame,
    a_controller_that_refuses_both_versions_is_refused,
    a_controller_that_refuses_v2_is_spoken_to_in_v1,
    text_messages_and_a_stray_data_package_during_the_handshake,
    a_v2_text_before_the_protocol_reply_is_read_with_its_level_and_source,
    start_refused_then_an_unexpected_reply_puts_the_link_out_of_step,
    in_use_on_one_of_five_inputs_names_it_and_the_connection_stays,
    start_without_outputs_is_refused_with_the_controllers_text,
    a_build_number_in_the_version_reply_is_kept_and_changes_no_check,
    a_tolerant_setup_drops_what_the_controller_lacks_and_sets_up_the_rest,
    a_tolerant_setup_with_nothing_left_is_the_refusal_and_in_use_is_no_drop,
    a_setup_refused_as_a_whole_carries_the_controllers_text,
    a_version_too_old_is_refused_before_any_setup_is_sent,
    invalid_recipes_are_refused_before_sending,
    a_name_list_over_2048_bytes_is_refused_before_sending,
);

/// Every way in checks the options before it opens anything: the blocking client's
/// `connect` (which the background driver starts from), and the async driver's `connect`
/// and `attach`, which runs its own handshake.
#[test]
fn every_way_in_refuses_a_zero_timeout_before_it_opens_anything() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let silent_peer = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = silent_peer.local_addr().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let zero = Duration::ZERO;
    for options in [
        ConnectOptions::new().connect_timeout(zero),
        ConnectOptions::new().read_timeout(Some(zero)),
        ConnectOptions::new().write_timeout(Some(zero)),
    ] {
        let misuse = |r: Result<(), Error>| matches!(r, Err(Error::Misuse(_)));
        let blocking = Client::connect(addr, options.clone()).map(drop);
        assert!(misuse(blocking), "blocking, {options:?}");
        runtime.block_on(async {
            let connected = rtde_core::tokio::connect(addr, options.clone()).await;
            assert!(misuse(connected.map(drop)), "async connect, {options:?}");
            // A peer that answers nothing: past the check, the handshake would wait on it.
            let ours = tokio::net::TcpStream::connect(silent).await.unwrap();
            let attached = rtde_core::tokio::attach(ours, options.clone()).await;
            assert!(misuse(attached.map(drop)), "async attach, {options:?}");
        });
    }
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "no driver connected"
    );
}
