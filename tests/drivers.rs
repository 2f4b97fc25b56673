//! One fault suite, every driver: each scenario is written once, against [`Driver`], and
//! run by `every_driver!` for the blocking [`Client`], the background driver
//! ([`Client::spawn`]) and the async driver (`rtde_core::tokio::from_client`, its
//! connection task on a tokio runtime of its own). The behaviour is the session's, so the
//! scenarios are the same; only who waits differs.
//!
//! Scenarios against rtde-sim's faults and against the scripted peer of
//! `rtde-core/tests/support` (shared, not copied). The blocking client's own API
//! (connecting, manual reconnection, the latest-only mode) is tested in
//! `rtde-core/tests/faults.rs` and `tests/client_faults.rs`.

mod common;
#[path = "../rtde-core/tests/support/mod.rs"]
mod support;

use std::time::Duration;

use common::{WAIT, due_between, options, reconnecting, timestamp};
use rtde_core::client::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::protocol::{ClientMessage, ControllerMessage};
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Event, InputHandle, Recipe, State,
    Stats, Value,
};
use rtde_sim::{Fault, Malformation, Sim, Trigger};
use support::{FakePeer, Script, data_v2, timestamp_and_q};

/// What a scenario needs of a driver.
trait Driver: Sized {
    /// Takes over a client whose recipes are set up and started.
    fn take(client: Client) -> Self;
    /// The next output package that fits, in order; packages that do not fit are kept for
    /// [`Driver::rejected`].
    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error>;
    /// How long [`Driver::recv_into`] waits.
    fn set_wait(&mut self, wait: Duration);
    /// The packages refused since the last call.
    fn rejected(&mut self) -> Vec<Error>;
    fn send(&mut self, input: &InputHandle, recipe: &DynamicRecipe) -> Result<(), Error>;
    fn stats(&self) -> Stats;
    fn state(&self) -> State;
    /// The events since the last call (rejections apart).
    fn events(&mut self) -> Vec<Event>;
    fn finish(self);
}

struct Blocking {
    client: Client,
    rejected: Vec<Error>,
}

impl Driver for Blocking {
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

    fn set_wait(&mut self, wait: Duration) {
        self.client.set_read_timeout(Some(wait)).unwrap();
    }

    fn rejected(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.rejected)
    }

    fn send(&mut self, input: &InputHandle, recipe: &DynamicRecipe) -> Result<(), Error> {
        self.client.send(input, recipe)
    }

    fn stats(&self) -> Stats {
        self.client.stats()
    }

    fn state(&self) -> State {
        self.client.state()
    }

    fn events(&mut self) -> Vec<Event> {
        self.client.events().collect()
    }

    fn finish(self) {
        drop(self.client);
    }
}

struct Threaded {
    background: Background,
    receiver: Receiver,
    sender: Sender,
    rejected: Vec<Error>,
    wait: Duration,
}

impl Threaded {
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
    fn take(client: Client) -> Self {
        let background = client.spawn(SpawnOptions::new()).unwrap();
        Threaded {
            receiver: background.receiver(),
            sender: background.sender(),
            background,
            rejected: Vec::new(),
            wait: WAIT,
        }
    }

    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        self.receiver.recv_into(recipe, Some(self.wait))
    }

    fn set_wait(&mut self, wait: Duration) {
        self.wait = wait;
    }

    fn rejected(&mut self) -> Vec<Error> {
        let _ = self.sort_events();
        std::mem::take(&mut self.rejected)
    }

    fn send(&mut self, input: &InputHandle, recipe: &DynamicRecipe) -> Result<(), Error> {
        self.sender.send(input, recipe)
    }

    fn stats(&self) -> Stats {
        self.background.stats()
    }

    fn state(&self) -> State {
        self.background.state()
    }

    fn events(&mut self) -> Vec<Event> {
        self.sort_events()
    }

    fn finish(self) {
        drop(self.background);
    }
}

/// The async driver: the connection task on a one-worker runtime, so it reads on while the
/// test thread does something else; each call blocks on the handle's future.
struct Asynchronous {
    runtime: tokio::runtime::Runtime,
    client: rtde_core::tokio::AsyncClient,
    packages: rtde_core::tokio::Packages,
    rejected: Vec<Error>,
    wait: Duration,
}

impl Driver for Asynchronous {
    fn take(client: Client) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (client, packages) = runtime.block_on(async {
            let (client, connection) = rtde_core::tokio::from_client(client).unwrap();
            let packages = client.packages(1024).unwrap();
            tokio::spawn(connection);
            (client, packages)
        });
        Asynchronous {
            runtime,
            client,
            packages,
            rejected: Vec::new(),
            wait: WAIT,
        }
    }

    fn recv_into(&mut self, recipe: &mut DynamicRecipe) -> Result<(), Error> {
        loop {
            let (wait, packages) = (self.wait, &mut self.packages);
            let received = self
                .runtime
                .block_on(async { tokio::time::timeout(wait, packages.recv_into(recipe)).await });
            match received {
                Err(_) => {
                    return Err(Error::Timeout {
                        after: self.wait,
                        waiting_for: rtde_core::protocol::package_type::DATA_PACKAGE,
                        mid_frame: self.client.with_session(rtde_core::Session::mid_frame),
                    });
                }
                Ok(Err(e @ (Error::WrongRecipeId { .. } | Error::WrongLength { .. }))) => {
                    self.rejected.push(e);
                }
                Ok(other) => return other,
            }
        }
    }

    fn set_wait(&mut self, wait: Duration) {
        self.wait = wait;
    }

    fn rejected(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.rejected)
    }

    fn send(&mut self, input: &InputHandle, recipe: &DynamicRecipe) -> Result<(), Error> {
        self.runtime.block_on(self.client.send(input, recipe))
    }

    fn stats(&self) -> Stats {
        self.client.stats()
    }

    fn state(&self) -> State {
        self.client.state()
    }

    fn events(&mut self) -> Vec<Event> {
        self.client.events()
    }

    fn finish(self) {
        drop(self.client);
        drop(self.packages);
        self.runtime.shutdown_timeout(WAIT);
    }
}

/// Runs each scenario against every driver.
macro_rules! every_driver {
    ($($scenario:ident),* $(,)?) => {
        mod blocking {
            $(#[test] fn $scenario() { super::$scenario::<super::Blocking>() })*
        }
        mod background {
            $(#[test] fn $scenario() { super::$scenario::<super::Threaded>() })*
        }
        mod asynchronous {
            $(#[test] fn $scenario() { super::$scenario::<super::Asynchronous>() })*
        }
    };
}

every_driver!(
    every_package_in_order_until_the_link_closes_with_skips_counted,
    closed_mid_frame_reconnects_replays_inputs_and_counts_the_loss_exactly,
    a_malformed_frame_loses_the_link_and_automatic_reconnection_recovers,
    a_package_of_another_recipe_is_reported_and_the_stream_goes_on,
    a_data_package_before_the_start_reply_is_the_first_package,
    garbage_bytes_lose_the_link_with_a_decode_error,
    a_peer_that_stops_sending_times_out_and_the_connection_stays,
);

// ---- helpers ----

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

fn started<D: Driver>(addr: std::net::SocketAddr, options: ConnectOptions, frequency: f64) -> D {
    let mut client = Client::connect(addr, options).unwrap();
    client.setup_outputs(outputs().spec(), frequency).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    D::take(client)
}

// ---- against the simulator ----

fn every_package_in_order_until_the_link_closes_with_skips_counted<D: Driver>() {
    // 250 Hz on a 500 Hz loop, every 5th package left out, and the link cut in package 40:
    // what each driver received is then final, whoever waits.
    let sim = Sim::builder()
        .fault(Fault::SkipEvery(5))
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(40)))
        .deterministic()
        .start()
        .unwrap();
    let mut driver: D = started(sim.addr(), options(), 250.0);
    let mut recipe = outputs();
    let mut times = Vec::new();
    let end = loop {
        match driver.recv_into(&mut recipe) {
            Ok(()) => times.push(timestamp(&recipe)),
            Err(e) => break e,
        }
    };
    assert!(matches!(end, Error::Closed { mid_frame: true }), "{end}");
    assert_eq!(times.len(), 40);
    assert!(times.windows(2).all(|w| w[0] < w[1]), "in order");
    let stats = driver.stats();
    assert!(stats.skipped > 0, "{stats:?}");
    assert_eq!(
        stats.received + stats.skipped,
        due_between(times[0], times[39], 500.0, 250.0) + 2,
        "{stats:?}"
    );
    assert_eq!((stats.received, stats.lost, stats.discarded), (40, 0, 0));
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
}

fn closed_mid_frame_reconnects_replays_inputs_and_counts_the_loss_exactly<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(10)))
        .deterministic()
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), reconnecting()).unwrap();
    let mut outputs =
        DynamicRecipe::outputs(["timestamp", "actual_q", "input_int_register_24"]).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    let _ = client.events().count();
    let mut driver = D::take(client);
    for _ in 0..10 {
        driver.recv_into(&mut outputs).unwrap();
    }
    let before = timestamp(&outputs);
    // Package 10 is cut: the driver reconnects, and the next package is the new link's first.
    driver.recv_into(&mut outputs).unwrap();
    let after = timestamp(&outputs);
    assert_eq!(driver.state(), State::Running);
    assert_eq!(sim.stats().connections_accepted, 2);

    let lost = due_between(before, after, 500.0, 500.0);
    let events = driver.events();
    assert!(
        matches!(
            events[0],
            Event::LinkLost(Error::Closed { mid_frame: true })
        ),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::PackagesLost { count, estimated: false } if *count == lost
        )),
        "{events:?}, {lost} lost"
    );
    let stats = driver.stats();
    assert_eq!((stats.lost, stats.reconnects), (lost, 1));
    assert!(stats.received >= 11, "{stats:?}");

    // The input recipe was replayed: the old handle writes, the value reads back.
    inputs
        .set("input_int_register_24", Value::Int32(4242))
        .unwrap();
    driver.send(&handle, &inputs).unwrap();
    // Bounded by packages, not by one tick: on a loaded machine the packages already on
    // their way when the input took effect can be many.
    let mut seen = false;
    for _ in 0..2500 {
        driver.recv_into(&mut outputs).unwrap();
        if outputs.get("input_int_register_24") == Some(&Value::Int32(4242)) {
            seen = true;
            break;
        }
    }
    assert!(seen, "the input sent after reconnecting never took effect");
    driver.finish();
}

fn a_malformed_frame_loses_the_link_and_automatic_reconnection_recovers<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(3),
            kind: Malformation::SizeTooSmall,
        })
        .start()
        .unwrap();
    let mut recipe = outputs();

    // Without reconnection: a typed error, and the connection is closed.
    let mut driver: D = started(sim.addr(), options(), 500.0);
    for _ in 0..3 {
        driver.recv_into(&mut recipe).unwrap();
    }
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
    assert!(matches!(err, Error::Decode(_)), "{err}");
    assert_eq!(driver.state(), State::Closed);
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::ConnectionLost)
    ));
    driver.finish();

    // With it: the stream goes on.
    let mut driver: D = started(sim.addr(), reconnecting(), 500.0);
    for _ in 0..6 {
        driver.recv_into(&mut recipe).unwrap();
    }
    let events = driver.events();
    assert!(
        matches!(events[0], Event::LinkLost(Error::Decode(_))),
        "{events:?}"
    );
    assert!(driver.stats().reconnects >= 1);
    driver.finish();
}

fn a_package_of_another_recipe_is_reported_and_the_stream_goes_on<D: Driver>() {
    let sim = Sim::builder()
        .fault(Fault::Malformed {
            at: Trigger::DataPackage(2),
            kind: Malformation::WrongRecipeId,
        })
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(4)))
        .start()
        .unwrap();
    let mut driver: D = started(sim.addr(), options(), 500.0);
    let mut recipe = outputs();
    for _ in 0..3 {
        driver.recv_into(&mut recipe).unwrap();
    }
    assert!(matches!(
        driver.recv_into(&mut recipe),
        Err(Error::Closed { .. })
    ));
    let rejected = driver.rejected();
    assert!(
        matches!(
            rejected.as_slice(),
            [Error::WrongRecipeId {
                expected: Some(1),
                found: Some(2)
            }]
        ),
        "{rejected:?}"
    );
    // The rejected package is a hole in the timestamps.
    let stats = driver.stats();
    assert_eq!((stats.received, stats.skipped), (3, 1));
    driver.finish();
}

// ---- against the scripted peer ----

fn at(t: f64) -> Vec<u8> {
    data_v2(1, &timestamp_and_q(t, t))
}

fn a_data_package_before_the_start_reply_is_the_first_package<D: Driver>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect(ClientMessage::Start)
            .raw(&at(1.0))
            .reply(ControllerMessage::StartReply { accepted: true })
            .raw(&at(1.002))
            .close(),
    );
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    for t in [1.0, 1.002] {
        driver.recv_into(&mut recipe).unwrap();
        assert_eq!(timestamp(&recipe), t);
    }
    let stats = driver.stats();
    assert_eq!((stats.received, stats.discarded), (2, 0), "{stats:?}");
    driver.finish();
    peer.finish();
}

fn garbage_bytes_lose_the_link_with_a_decode_error<D: Driver>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&at(1.0))
            .raw(&[0x00, 0x07, 0xbe, 1, 2, 3, 4])
            .wait(Duration::from_millis(200)),
    );
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err}");
    assert_eq!(driver.state(), State::Closed);
    driver.finish();
    peer.finish();
}

fn a_peer_that_stops_sending_times_out_and_the_connection_stays<D: Driver>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&at(1.0))
            .wait(Duration::from_millis(400))
            .raw(&at(1.002))
            .wait(Duration::from_millis(200)),
    );
    let mut driver: D = started(peer.addr, options(), 500.0);
    let mut recipe = outputs();
    driver.recv_into(&mut recipe).unwrap();
    driver.set_wait(Duration::from_millis(100));
    let err = driver.recv_into(&mut recipe).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(driver.state(), State::Running);
    driver.set_wait(WAIT);
    driver.recv_into(&mut recipe).unwrap();
    assert_eq!(timestamp(&recipe), 1.002);
    driver.finish();
    peer.finish();
}
