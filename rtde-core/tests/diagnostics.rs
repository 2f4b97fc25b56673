//! Refusals and surprises that the client explains or survives: a recipe set up with what
//! the controller has (`NOT_FOUND`-tolerant; the blocking and the async client alike),
//! package types the client does not know.

use rtde_testkit::scripted as support;

use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::protocol::{ClientMessage, ControllerMessage};
#[cfg(feature = "tokio")]
use rtde_core::tokio::AsyncClient;
use rtde_core::{
    Client, ConnectOptions, DropReason, DroppedField, DynamicRecipe, Error, Recipe, State,
};
use support::{FakePeer, Script, data_v2, timestamp_and_q};

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

/// A tolerant setup through one client: the blocking one, or the async one on a runtime of
/// its own. Both follow one rule; each scenario below runs against both.
trait TolerantSetup {
    fn connect(addr: SocketAddr) -> Self;
    fn outputs(&mut self, r: &mut DynamicRecipe, hz: f64) -> Result<Vec<DroppedField>, Error>;
    fn inputs(&mut self, r: &mut DynamicRecipe) -> Result<Vec<DroppedField>, Error>;
    /// Starts, receives one package into `recipe`, pauses and closes.
    fn start_recv_close(self, recipe: &mut DynamicRecipe);
    /// Closes the connection, having started nothing.
    fn close(self);
}

impl TolerantSetup for Client {
    fn connect(addr: SocketAddr) -> Self {
        Client::connect(addr, options()).unwrap()
    }
    fn outputs(&mut self, r: &mut DynamicRecipe, hz: f64) -> Result<Vec<DroppedField>, Error> {
        self.setup_outputs_dropping_unavailable(r, hz)
    }
    fn inputs(&mut self, r: &mut DynamicRecipe) -> Result<Vec<DroppedField>, Error> {
        self.setup_inputs_dropping_unavailable(r).map(|(_, d)| d)
    }
    fn start_recv_close(mut self, recipe: &mut DynamicRecipe) {
        self.start().unwrap();
        self.recv_into(recipe).unwrap();
        Client::close(self).unwrap();
    }
    fn close(self) {
        assert_eq!(self.state(), State::Connected);
        drop(self);
    }
}

#[cfg(feature = "tokio")]
struct Async {
    runtime: tokio::runtime::Runtime,
    client: AsyncClient,
    connection: tokio::task::JoinHandle<Result<(), Error>>,
}

#[cfg(feature = "tokio")]
impl TolerantSetup for Async {
    fn connect(addr: SocketAddr) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (client, connection) = runtime
            .block_on(rtde_core::tokio::connect(addr, options()))
            .unwrap();
        let connection = runtime.spawn(connection);
        Async {
            runtime,
            client,
            connection,
        }
    }
    fn outputs(&mut self, r: &mut DynamicRecipe, hz: f64) -> Result<Vec<DroppedField>, Error> {
        self.runtime
            .block_on(self.client.setup_outputs_dropping_unavailable(r, hz))
    }
    fn inputs(&mut self, r: &mut DynamicRecipe) -> Result<Vec<DroppedField>, Error> {
        self.runtime
            .block_on(self.client.setup_inputs_dropping_unavailable(r))
            .map(|(_, d)| d)
    }
    fn start_recv_close(self, recipe: &mut DynamicRecipe) {
        let Async {
            runtime,
            client,
            connection,
        } = self;
        runtime.block_on(async {
            let mut packages = client.packages(16).unwrap();
            client.start().await.unwrap();
            packages.recv_into(recipe).await.unwrap();
            client.close().await.unwrap();
            connection.await.unwrap().unwrap();
        });
    }
    fn close(self) {
        assert_eq!(self.client.state(), State::Connected);
        self.runtime.block_on(async {
            self.client.close().await.unwrap();
            self.connection.await.unwrap().unwrap();
        });
    }
}

// `ft_raw_wrench` needs 5.9: never sent to 5.4. `target_q` is answered NOT_FOUND (the
// controller's own word), so the rest is set up again without it.
fn a_tolerant_setup_drops_what_the_controller_lacks_and_sets_up_the_rest<C: TolerantSetup>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.4.0")
            .setup_outputs(
                500.0,
                "timestamp,actual_q,target_q",
                0,
                "DOUBLE,VECTOR6D,NOT_FOUND",
            )
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&data_v2(1, &timestamp_and_q(1.0, 0.5)))
            .pause()
            .expect_eof(),
    );
    let mut client = C::connect(peer.addr);
    let mut recipe =
        DynamicRecipe::outputs(["timestamp", "actual_q", "ft_raw_wrench", "target_q"]).unwrap();
    let dropped = client.outputs(&mut recipe, 500.0).unwrap();
    assert_eq!(
        dropped,
        [
            DroppedField {
                name: "ft_raw_wrench",
                reason: DropReason::NotOnThisVersion(Some("5.9.0".parse().unwrap())),
            },
            DroppedField {
                name: "target_q",
                reason: DropReason::NotFound,
            },
        ]
    );
    assert_eq!(recipe.names(), ["timestamp", "actual_q"]);
    client.start_recv_close(&mut recipe);
    assert_eq!(
        recipe.get("timestamp"),
        Some(&rtde_core::Value::Double(1.0))
    );
    peer.finish();
}

fn a_tolerant_setup_with_nothing_left_is_the_refusal_and_in_use_is_no_drop<C: TolerantSetup>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.4.0")
            .setup_outputs(500.0, "target_q", 0, "NOT_FOUND")
            .setup_inputs(
                "input_int_register_30,input_int_register_31",
                0,
                "IN_USE,NOT_FOUND",
            )
            .expect_eof(),
    );
    let mut client = C::connect(peer.addr);
    // Every field missing on this version: the refusal, nothing sent.
    let mut only_new = DynamicRecipe::outputs(["ft_raw_wrench"]).unwrap();
    let err = client.outputs(&mut only_new, 500.0).unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    assert_eq!(only_new.names(), ["ft_raw_wrench"], "left as it was");
    // Every field NOT_FOUND: the controller's refusal.
    let mut recipe = DynamicRecipe::outputs(["target_q"]).unwrap();
    let err = client.outputs(&mut recipe, 500.0).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.not_found(), ["target_q"]);
    // IN_USE means someone else writes the field: an error, not a field to drop.
    let mut inputs =
        DynamicRecipe::inputs(["input_int_register_30", "input_int_register_31"]).unwrap();
    let err = client.inputs(&mut inputs).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.in_use(), ["input_int_register_30"]);
    client.close();
    peer.finish();
}

#[test]
fn a_tolerant_setup_drops_what_the_controller_lacks_blocking() {
    a_tolerant_setup_drops_what_the_controller_lacks_and_sets_up_the_rest::<Client>();
}

#[cfg(feature = "tokio")]
#[test]
fn a_tolerant_setup_drops_what_the_controller_lacks_async() {
    a_tolerant_setup_drops_what_the_controller_lacks_and_sets_up_the_rest::<Async>();
}

#[test]
fn a_tolerant_setup_with_nothing_left_is_the_refusal_blocking() {
    a_tolerant_setup_with_nothing_left_is_the_refusal_and_in_use_is_no_drop::<Client>();
}

#[cfg(feature = "tokio")]
#[test]
fn a_tolerant_setup_with_nothing_left_is_the_refusal_async() {
    a_tolerant_setup_with_nothing_left_is_the_refusal_and_in_use_is_no_drop::<Async>();
}

/// A package of type `X`, which the RTDE guide does not define.
fn unknown_package() -> Vec<u8> {
    vec![0x00, 0x06, b'X', 1, 2, 3]
}

#[test]
fn unknown_package_types_are_skipped_and_counted_not_a_lost_link() {
    let at = |t: f64| data_v2(1, &timestamp_and_q(t, 0.0));
    let mut stream = at(1.000);
    stream.extend(unknown_package());
    stream.extend(at(1.002));
    let peer = FakePeer::start(
        Script::new()
            .version(rtde_core::protocol::ProtocolVersion::V1)
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // Before the reply to a request, too.
            .raw(&unknown_package())
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(rtde_core::protocol::ProtocolVersion::V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .start()
            .raw(&stream)
            .raw(&unknown_package())
            .raw(&at(1.004))
            .pause()
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    assert_eq!(client.stats().unknown_packages, 1);
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    client.setup_outputs(recipe.spec(), 500.0).unwrap();
    client.start().unwrap();
    client.recv().unwrap();
    client.recv().unwrap();
    // recv_latest passes over one too.
    client.recv_latest().unwrap();
    let stats = client.stats();
    assert_eq!((stats.received, stats.unknown_packages), (3, 3));
    assert_eq!(stats.skipped, 0);
    assert_eq!(client.state(), State::Running);
    client.close().unwrap();
    peer.finish();
}
