//! The handshake and the setups, faulted, against every way in: the blocking
//! [`Client::connect`], and the async driver's own `rtde_core::tokio::connect` and
//! `rtde_core::tokio::attach` (over a TCP stream the test opened), each with its
//! connection task running. Every driver after the handshake is built from one of these,
//! so the scenarios of `scripted.rs` and `sim.rs` start where these end.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, DecodeErrorKind, MessageLevel, ProtocolVersion, TextMessage,
    package_type,
};
use rtde_core::{
    Client, ConnectOptions, ControllerText, DropReason, DroppedField, DynamicRecipe, Error,
    ErrorKind, InputHandle, Recipe, RecipeSpec, State, Stats, Value,
};
use rtde_sim::{Fault, Sim, Trigger};

use crate::common::{WAIT, options};
use crate::outputs;
use crate::support::{FakePeer, Script, data_v2, encode, timestamp_and_q};

const V2: ProtocolVersion = ProtocolVersion::V2;

/// What a scenario needs of a way in: the handshake, then the setups and START on the
/// connection it opened. Dropping it closes the connection.
pub(crate) trait Handshaker: Sized {
    /// Connects to `addr` and negotiates.
    fn connect(addr: SocketAddr, options: ConnectOptions) -> Result<Self, Error>;
    fn setup_outputs(&mut self, recipe: &DynamicRecipe, frequency: f64) -> Result<(), Error>;
    fn setup_inputs(&mut self, recipe: &DynamicRecipe) -> Result<InputHandle, Error>;
    /// As [`Handshaker::setup_outputs`], from a spec (one made by hand, or a derived
    /// recipe's).
    fn setup_outputs_spec(&mut self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error>;
    fn setup_inputs_spec(&mut self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error>;
    fn start(&mut self) -> Result<(), Error>;
    fn state(&self) -> State;
    fn stats(&self) -> Stats;
    fn protocol_version(&self) -> ProtocolVersion;
    fn controller_version(&self) -> ControllerVersion;
    fn text_messages(&mut self) -> Vec<ControllerText>;
    /// A setup that drops the fields the controller lacks, and says which.
    fn setup_outputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
        frequency: f64,
    ) -> Result<Vec<DroppedField>, Error>;
    fn setup_inputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
    ) -> Result<Vec<DroppedField>, Error>;
    /// Starts, receives the first package into `recipe`, pauses and closes; the test fails
    /// on any error.
    fn start_recv_close(self, recipe: &mut DynamicRecipe);
    /// Closes the connection, having started nothing; the test fails on any error.
    fn close_unstarted(self);
}

impl Handshaker for Client {
    fn connect(addr: SocketAddr, options: ConnectOptions) -> Result<Self, Error> {
        Client::connect(addr, options)
    }

    fn setup_outputs(&mut self, recipe: &DynamicRecipe, frequency: f64) -> Result<(), Error> {
        Client::setup_outputs(self, recipe.spec(), frequency)
    }

    fn setup_inputs(&mut self, recipe: &DynamicRecipe) -> Result<InputHandle, Error> {
        Client::setup_inputs(self, recipe.spec())
    }

    fn setup_outputs_spec(&mut self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error> {
        Client::setup_outputs(self, spec, frequency)
    }

    fn setup_inputs_spec(&mut self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error> {
        Client::setup_inputs(self, spec)
    }

    fn start(&mut self) -> Result<(), Error> {
        Client::start(self)
    }

    fn state(&self) -> State {
        Client::state(self)
    }

    fn stats(&self) -> Stats {
        Client::stats(self)
    }

    fn protocol_version(&self) -> ProtocolVersion {
        Client::protocol_version(self)
    }

    fn controller_version(&self) -> ControllerVersion {
        Client::controller_version(self)
    }

    fn text_messages(&mut self) -> Vec<ControllerText> {
        Client::text_messages(self).collect()
    }

    fn setup_outputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
        frequency: f64,
    ) -> Result<Vec<DroppedField>, Error> {
        Client::setup_outputs_dropping_unavailable(self, recipe, frequency)
    }

    fn setup_inputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
    ) -> Result<Vec<DroppedField>, Error> {
        Client::setup_inputs_dropping_unavailable(self, recipe).map(|(_, dropped)| dropped)
    }

    fn start_recv_close(mut self, recipe: &mut DynamicRecipe) {
        Client::start(&mut self).unwrap();
        self.recv_into(recipe).unwrap();
        Client::close(self).unwrap();
    }

    fn close_unstarted(self) {
        assert_eq!(Client::state(&self), State::Connected);
        drop(self);
    }
}

/// The async driver, come in through `connect` (`ATTACH = false`) or through `attach`
/// over a TCP stream (`ATTACH = true`), its connection task spawned on a one-worker
/// runtime of its own; each call blocks on the handle's future, within [`WAIT`].
pub(crate) struct Async<const ATTACH: bool> {
    runtime: tokio::runtime::Runtime,
    client: Option<rtde_core::tokio::AsyncClient>,
    /// The connection task.
    connection: Option<tokio::task::JoinHandle<Result<(), Error>>>,
}

pub(crate) type AsyncConnect = Async<false>;
pub(crate) type AsyncAttach = Async<true>;

impl<const ATTACH: bool> Async<ATTACH> {
    fn client(&self) -> &rtde_core::tokio::AsyncClient {
        self.client.as_ref().expect("the handle, until dropped")
    }

    fn call<T>(&self, f: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        self.runtime
            .block_on(async { tokio::time::timeout(WAIT, f).await })
            .unwrap_or_else(|_| panic!("the async call waited past {WAIT:?}"))
    }

    /// Closes through the handle, and expects the connection task to end without error.
    fn close_and_end(mut self) {
        let client = self.client.take().expect("the handle, until dropped");
        self.call(client.close()).unwrap();
        drop(client);
        let connection = self.connection.take().expect("the connection task");
        self.call(async {
            connection
                .await
                .expect("the connection task ran to its end")
        })
        .unwrap();
    }
}

impl<const ATTACH: bool> Drop for Async<ATTACH> {
    fn drop(&mut self) {
        // The last handle gone ends the connection task, which closes the link.
        drop(self.client.take());
    }
}

impl<const ATTACH: bool> Handshaker for Async<ATTACH> {
    fn connect(addr: SocketAddr, options: ConnectOptions) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (client, connection) = runtime.block_on(async {
            let negotiated = async {
                if ATTACH {
                    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
                    let (client, connection) = rtde_core::tokio::attach(stream, options).await?;
                    Ok::<_, Error>((client, tokio::spawn(connection)))
                } else {
                    let (client, connection) = rtde_core::tokio::connect(addr, options).await?;
                    Ok((client, tokio::spawn(connection)))
                }
            };
            tokio::time::timeout(WAIT, negotiated)
                .await
                .unwrap_or_else(|_| panic!("the handshake waited past {WAIT:?}"))
        })?;
        Ok(Async {
            runtime,
            client: Some(client),
            connection: Some(connection),
        })
    }

    fn setup_outputs(&mut self, recipe: &DynamicRecipe, frequency: f64) -> Result<(), Error> {
        self.call(self.client().setup_outputs(recipe.spec(), frequency))
    }

    fn setup_inputs(&mut self, recipe: &DynamicRecipe) -> Result<InputHandle, Error> {
        self.call(self.client().setup_inputs(recipe.spec()))
    }

    fn setup_outputs_spec(&mut self, spec: RecipeSpec<'_>, frequency: f64) -> Result<(), Error> {
        self.call(self.client().setup_outputs(spec, frequency))
    }

    fn setup_inputs_spec(&mut self, spec: RecipeSpec<'_>) -> Result<InputHandle, Error> {
        self.call(self.client().setup_inputs(spec))
    }

    fn start(&mut self) -> Result<(), Error> {
        self.call(self.client().start())
    }

    fn state(&self) -> State {
        self.client().state()
    }

    fn stats(&self) -> Stats {
        self.client().stats()
    }

    fn protocol_version(&self) -> ProtocolVersion {
        self.client().protocol_version()
    }

    fn controller_version(&self) -> ControllerVersion {
        self.client().controller_version()
    }

    fn text_messages(&mut self) -> Vec<ControllerText> {
        self.client().text_messages()
    }

    fn setup_outputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
        frequency: f64,
    ) -> Result<Vec<DroppedField>, Error> {
        self.call(
            self.client()
                .setup_outputs_dropping_unavailable(recipe, frequency),
        )
    }

    fn setup_inputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
    ) -> Result<Vec<DroppedField>, Error> {
        self.call(self.client().setup_inputs_dropping_unavailable(recipe))
            .map(|(_, dropped)| dropped)
    }

    fn start_recv_close(self, recipe: &mut DynamicRecipe) {
        let mut packages = self.client().packages(16).unwrap();
        self.call(self.client().start()).unwrap();
        self.call(packages.recv_into(recipe)).unwrap();
        drop(packages);
        self.close_and_end();
    }

    fn close_unstarted(self) {
        assert_eq!(self.state(), State::Connected);
        self.close_and_end();
    }
}

/// Expects the way in to fail, and says which way it was if it did not.
fn refused<H: Handshaker>(addr: SocketAddr, options: ConnectOptions) -> Error {
    match H::connect(addr, options) {
        Ok(_) => panic!("{} connected", std::any::type_name::<H>()),
        Err(e) => e,
    }
}

// ---- the handshake ----

pub(crate) fn a_peer_that_stops_answering_the_handshake_times_out<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .expect_eof(),
    );
    let timeout = Duration::from_millis(200);
    let started = Instant::now();
    let err = refused::<H>(peer.addr, options().read_timeout(Some(timeout)));
    assert!(
        matches!(
            err,
            Error::Timeout {
                waiting_for: package_type::REQUEST_PROTOCOL_VERSION,
                mid_frame: false,
                ..
            }
        ),
        "{err}"
    );
    assert!(started.elapsed() < timeout * 5);
    peer.finish();
}

pub(crate) fn a_slow_controller_times_out_and_a_patient_client_gets_through<H: Handshaker>() {
    let delay = Duration::from_millis(150);
    let sim = Sim::builder()
        .fault(Fault::DelayReplies(delay))
        .fault(Fault::TextMessage {
            at: Trigger::Reply(package_type::GET_URCONTROL_VERSION),
            level: MessageLevel::Warning,
            message: "SafetySetup has not been confirmed yet".into(),
            source: "Controller".into(),
        })
        .start()
        .unwrap();
    // A read timeout shorter than the delay: a typed, bounded timeout.
    let timeout = Duration::from_millis(50);
    let begun = Instant::now();
    let err = refused::<H>(sim.addr(), options().read_timeout(Some(timeout)));
    assert!(
        matches!(
            err,
            Error::Timeout {
                waiting_for: package_type::REQUEST_PROTOCOL_VERSION,
                ..
            }
        ),
        "{err}"
    );
    assert!(begun.elapsed() < WAIT);

    // A patient client gets through, with the text kept.
    let begun = Instant::now();
    let mut client = H::connect(sim.addr(), options()).unwrap();
    assert!(begun.elapsed() >= delay * 2, "two replies, each delayed");
    let texts = client.text_messages();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].message, "SafetySetup has not been confirmed yet");
    assert_eq!(texts[0].source, "Controller");
}

pub(crate) fn garbage_during_the_handshake_fails_the_way_in<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // A size field of 1, less than the header.
            .raw(&[0x00, 0x01, b'V', 0x01])
            .expect_eof(),
    );
    let err = refused::<H>(peer.addr, options());
    let Error::Decode(decode) = &err else {
        panic!("{err}")
    };
    assert_eq!(decode.kind(), &DecodeErrorKind::SizeTooSmall { size: 1 });
    peer.finish();
}

pub(crate) fn a_link_cut_inside_a_handshake_reply_is_closed_mid_frame<H: Handshaker>() {
    let reply = encode(
        ProtocolVersion::V1,
        &ControllerMessage::ProtocolVersionReply { accepted: true },
    );
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .raw(&reply[..reply.len() - 1])
            .close(),
    );
    let err = refused::<H>(peer.addr, options());
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err:?}");
    peer.finish();
}

pub(crate) fn a_controller_that_refuses_both_versions_is_refused<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: false })
            .expect(ClientMessage::RequestProtocolVersion { version: 1 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: false })
            .expect_eof(),
    );
    let err = refused::<H>(peer.addr, options());
    assert!(matches!(err, Error::ProtocolRefused), "{err}");
    assert_eq!(err.kind(), ErrorKind::Refused);
    peer.finish();
}

pub(crate) fn a_controller_that_refuses_v2_is_spoken_to_in_v1<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v1("3.15.8")
            // v1: no frequency, no recipe id.
            .setup_outputs_v1("timestamp,actual_q", "DOUBLE,VECTOR6D")
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V1);
    assert_eq!(client.controller_version().to_string(), "3.15.8");
    client.setup_outputs(&outputs(), 125.0).unwrap();
    drop(client);
    peer.finish();
}

pub(crate) fn a_build_number_in_the_version_reply_is_kept_and_changes_no_check<H: Handshaker>() {
    let sim = Sim::builder()
        .controller_version("5.9.0")
        .fault(Fault::BuildNumber(108_318))
        .start()
        .unwrap();
    let mut client = H::connect(sim.addr(), options()).unwrap();
    assert_eq!(client.controller_version().to_string(), "5.9.0.108318");
    // `ft_raw_wrench` needs 5.9.0: the build number does not make it older.
    let recipe = DynamicRecipe::outputs(["ft_raw_wrench"]).unwrap();
    client.setup_outputs(&recipe, 10.0).unwrap();
}

// ---- packages out of turn ----

pub(crate) fn text_messages_and_a_stray_data_package_during_the_handshake<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // Sent before the controller switched: v1 layout.
            .text("booting")
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .text("still booting")
            .raw(&data_v2(7, &[1, 2, 3]))
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(250.0),
                names: "timestamp,actual_q",
            })
            .text("setting up")
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(1),
                types: "DOUBLE,VECTOR6D",
            })
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    assert_eq!(client.protocol_version(), V2);
    client.setup_outputs(&outputs(), 250.0).unwrap();
    let texts: Vec<String> = client
        .text_messages()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        texts,
        [
            "warning: booting",
            "warning from fake: still booting",
            "warning from fake: setting up"
        ]
    );
    assert!(client.text_messages().is_empty());
    assert_eq!(client.stats().discarded, 1);
    drop(client);
    peer.finish();
}

pub(crate) fn a_v2_text_before_the_protocol_reply_is_read_with_its_level_and_source<
    H: Handshaker,
>() {
    let text = ControllerMessage::TextMessage(TextMessage {
        level: MessageLevel::Warning,
        message: b"SafetySetup has not been confirmed yet",
        source: b"Controller",
    });
    let peer = FakePeer::start(
        Script::new()
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            // The controller already speaks v2 before it says so.
            .raw(&encode(V2, &text))
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                "5.21.0".parse().unwrap(),
            ))
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    let texts = client.text_messages();
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0].level, MessageLevel::Warning);
    assert_eq!(texts[0].source, "Controller");
    assert_eq!(texts[0].message, "SafetySetup has not been confirmed yet");
    drop(client);
    peer.finish();
}

// ---- replies that refuse, or do not fit ----

pub(crate) fn start_refused_then_an_unexpected_reply_puts_the_link_out_of_step<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .expect(ClientMessage::Start)
            .reply(ControllerMessage::StartReply { accepted: false })
            .expect(ClientMessage::Start)
            .reply(ControllerMessage::PauseReply { accepted: true })
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    let err = client.start().unwrap_err();
    assert!(matches!(err, Error::StartRefused), "{err}");
    assert_eq!(err.kind(), ErrorKind::Refused);
    let err = client.start().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unexpected {
                package_type: package_type::PAUSE,
                waiting_for: package_type::START
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "unexpected PAUSE package while waiting for the reply to START"
    );
    // Requests and replies are out of step now.
    assert!(matches!(client.start(), Err(Error::ConnectionLost)));
    drop(client);
    peer.finish();
}

pub(crate) fn in_use_on_one_of_five_inputs_names_it_and_the_connection_stays<H: Handshaker>() {
    let names = "input_int_register_24,input_int_register_25,input_double_register_24,\
                 input_bit_register_64,input_double_register_25";
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_inputs(names, 0, "INT32,INT32,DOUBLE,IN_USE,DOUBLE")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    let recipe = DynamicRecipe::inputs(names.split(',')).unwrap();
    let err = client.setup_inputs(&recipe).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.in_use(), ["input_bit_register_64"]);
    // A refusal leaves the connection usable.
    assert_eq!(client.state(), State::Connected);
    client.setup_outputs(&outputs(), 500.0).unwrap();
    drop(client);
    peer.finish();
}

pub(crate) fn start_without_outputs_is_refused_with_the_controllers_text<H: Handshaker>() {
    let sim = Sim::builder().start().unwrap();
    let mut client = H::connect(sim.addr(), options()).unwrap();
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    client.setup_inputs(&inputs).unwrap();
    let err = client.start().unwrap_err();
    assert!(matches!(err, Error::StartRefused), "{err}");
    let texts: Vec<String> = client
        .text_messages()
        .into_iter()
        .map(|t| t.message)
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("no output recipe")),
        "{texts:?}"
    );
    // With an output recipe, it starts.
    let outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(&outputs, 10.0).unwrap();
    client.start().unwrap();
}

// ---- setups that drop what the controller lacks ----

// `ft_raw_wrench` needs 5.9: never sent to 5.4. `target_q` is answered NOT_FOUND (the
// controller's own word), so the rest is set up again without it.
pub(crate) fn a_tolerant_setup_drops_what_the_controller_lacks_and_sets_up_the_rest<
    H: Handshaker,
>() {
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
    let mut client = H::connect(peer.addr, options()).unwrap();
    let mut recipe =
        DynamicRecipe::outputs(["timestamp", "actual_q", "ft_raw_wrench", "target_q"]).unwrap();
    let dropped = client
        .setup_outputs_dropping_unavailable(&mut recipe, 500.0)
        .unwrap();
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
    assert_eq!(recipe.get("timestamp"), Some(&Value::Double(1.0)));
    peer.finish();
}

pub(crate) fn a_tolerant_setup_with_nothing_left_is_the_refusal_and_in_use_is_no_drop<
    H: Handshaker,
>() {
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
    let mut client = H::connect(peer.addr, options()).unwrap();
    // Every field missing on this version: the refusal, nothing sent.
    let mut only_new = DynamicRecipe::outputs(["ft_raw_wrench"]).unwrap();
    let err = client
        .setup_outputs_dropping_unavailable(&mut only_new, 500.0)
        .unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    assert_eq!(only_new.names(), ["ft_raw_wrench"], "left as it was");
    // Every field NOT_FOUND: the controller's refusal.
    let mut recipe = DynamicRecipe::outputs(["target_q"]).unwrap();
    let err = client
        .setup_outputs_dropping_unavailable(&mut recipe, 500.0)
        .unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.not_found(), ["target_q"]);
    // IN_USE means someone else writes the field: an error, not a field to drop.
    let mut inputs =
        DynamicRecipe::inputs(["input_int_register_30", "input_int_register_31"]).unwrap();
    let err = client
        .setup_inputs_dropping_unavailable(&mut inputs)
        .unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.in_use(), ["input_int_register_30"]);
    client.close_unstarted();
    peer.finish();
}

// ---- the checks before a setup, and a setup refused whole ----

pub(crate) fn a_setup_refused_as_a_whole_carries_the_controllers_text<H: Handshaker>() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(500.0),
                names: "timestamp,actual_q",
            })
            // No type for any field: the request was refused whole, and the text says why.
            .text("the capture was recorded at 125 Hz")
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(0),
                types: "",
            })
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(500.0),
                names: "timestamp,actual_q",
            })
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(0),
                types: "",
            })
            .expect_eof(),
    );
    let mut client = H::connect(peer.addr, options()).unwrap();
    let err = client
        .setup_outputs_spec(outputs().spec(), 500.0)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.reason(), Some("the capture was recorded at 125 Hz"));
    assert_eq!(
        err.to_string(),
        "the controller refused the output recipe as a whole: \"the capture was recorded at 125 Hz\""
    );
    // Without a text message during this request, no earlier text is taken for the reason.
    let err = client
        .setup_outputs_spec(outputs().spec(), 500.0)
        .unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.reason(), None);
    assert!(
        err.to_string()
            .ends_with("without naming a field; `Client::text_messages` may say why"),
        "{err}"
    );
    drop(client);
    peer.finish();
}

pub(crate) fn a_version_too_old_is_refused_before_any_setup_is_sent<H: Handshaker>() {
    // The peer fails the test if a SETUP_OUTPUTS or SETUP_INPUTS arrives.
    let peer = FakePeer::start(Script::new().handshake_v2("3.8.0").expect_eof());
    let mut client = H::connect(peer.addr, options()).unwrap();
    let recipe =
        DynamicRecipe::outputs(["timestamp", "ft_raw_wrench", "input_int_register_30"]).unwrap();
    let err = client.setup_outputs_spec(recipe.spec(), 125.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert_eq!(
        err.to_string(),
        "the controller cannot provide 2 of the requested output fields: `ft_raw_wrench` \
         requires e-Series 5.9.0 (controller is CB3 3.8.0); `input_int_register_30` requires CB3 \
         3.9.0 (controller is CB3 3.8.0); remove them from the recipe or update the controller"
    );
    let Error::Unavailable(missing) = &err else {
        panic!()
    };
    let needs: Vec<_> = missing
        .fields()
        .iter()
        .map(|f| (f.name(), f.needs().unwrap().to_string()))
        .collect();
    assert_eq!(
        needs,
        [
            ("ft_raw_wrench", "5.9.0".to_string()),
            ("input_int_register_30", "3.9.0".to_string())
        ]
    );

    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let err = client.setup_inputs_spec(inputs.spec()).unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err}");

    // A derived recipe's spec is checked the same way.
    #[derive(rtde_core::RtdeRecipe)]
    struct Wrench {
        timestamp: f64,
        ft_raw_wrench: [f64; 6],
    }
    let err = client
        .setup_outputs_spec(<Wrench as rtde_core::StaticRecipe>::SPEC, 125.0)
        .unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    assert!(err.to_string().contains("`ft_raw_wrench`"), "{err}");
    assert!(err.to_string().contains("5.9.0"), "{err}");

    // CB3 streams at 125 Hz at most; checked before sending too.
    let err = client
        .setup_outputs_spec(outputs().spec(), 500.0)
        .unwrap_err();
    assert!(
        matches!(err, Error::FrequencyTooHigh { max, .. } if max == 125.0),
        "{err}"
    );
    let err = client
        .setup_outputs_spec(outputs().spec(), f64::NAN)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    drop(client);
    peer.finish();
}

pub(crate) fn invalid_recipes_are_refused_before_sending<H: Handshaker>() {
    let peer = FakePeer::start(Script::new().handshake_v2("5.21.0").expect_eof());
    let mut client = H::connect(peer.addr, options()).unwrap();
    // An input spec for outputs, and a hand-made spec the registry disagrees with.
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    assert!(matches!(
        client.setup_outputs_spec(inputs.spec(), 500.0),
        Err(Error::Misuse(_))
    ));
    let spec = RecipeSpec::new(
        rtde_core::fields::Direction::Output,
        &["timestamp", "actual_tcp_pose"],
        &[
            rtde_core::fields::WireType::Double,
            rtde_core::fields::WireType::Vector6d,
        ],
    );
    let err = client.setup_outputs_spec(spec, 500.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert!(
        err.to_string()
            .contains("unknown output field `actual_tcp_pose` (did you mean `actual_TCP_pose`?)"),
        "{err}"
    );
    drop(client);
    peer.finish();
}

pub(crate) fn a_name_list_over_2048_bytes_is_refused_before_sending<H: Handshaker>() {
    let peer = FakePeer::start(Script::new().handshake_v2("5.21.0").expect_eof());
    let mut client = H::connect(peer.addr, options()).unwrap();
    let all = rtde_core::fields::fields(rtde_core::fields::Direction::Output);
    let names: Vec<&'static str> = all.iter().map(|f| f.name()).collect();
    let types: Vec<_> = all.iter().map(|f| f.wire_type()).collect();
    let spec = RecipeSpec::new(rtde_core::fields::Direction::Output, &names, &types);
    assert!(
        spec.name_list_len() > 2048,
        "the registry's outputs no longer fill 2 KiB"
    );
    let err = client.setup_outputs_spec(spec, 500.0).unwrap_err();
    let Error::Recipe(recipe) = &err else {
        panic!("{err}")
    };
    assert!(
        recipe.problems().iter().any(|p| matches!(
            p,
            rtde_core::RecipeProblem::NameListTooLong { len } if *len == spec.name_list_len()
        )),
        "{err}"
    );
    drop(client);
    peer.finish();
}
