//! The async driver (`rtde_core::tokio`, feature `tokio`) against the scripted fake
//! controller over TCP, and against a controller played by the test over
//! `tokio::io::duplex`: streaming in order, inputs, the bounded queue's counted overflow,
//! the latest watch, reconnection with the recipes replayed, cancellation safety, and the
//! write timeout over a pipe. (The staleness deadline is in the suite over drivers,
//! `tests/drivers.rs`, with the background driver's.)
//! Every wait is bounded.
//!
//! The cases are written as functions of a connected client, so the parameterised fault
//! suite over drivers can call them.

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, FrameBuffer, HEADER_LEN, ProtocolVersion, package_type,
};
use rtde_core::tokio::{AsyncClient, Connection, Latest, PackageStream, Packages};
use rtde_core::{
    ConnectOptions, DynamicRecipe, Error, Event, InputHandle, Recipe, ReconnectPolicy, State,
};
use support::{FakePeer, Script, data_v2, timestamp_and_q};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::time::timeout;

const V2: ProtocolVersion = ProtocolVersion::V2;
/// Generous: a test that waits this long has failed anyway.
const WAIT: Duration = Duration::from_secs(10);

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

/// An output package of `timestamp, actual_q` (recipe id 1) at time `t`.
fn at(t: f64) -> Vec<u8> {
    data_v2(1, &timestamp_and_q(t, t))
}

fn timestamp(values: &[u8]) -> f64 {
    f64::from_be_bytes(values[..8].try_into().unwrap())
}

/// A 500 Hz `timestamp, actual_q` stream on an e-Series controller, started.
fn streaming() -> Script {
    Script::new()
        .handshake_v2("5.21.0")
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .start()
}

/// Receives within [`WAIT`].
async fn next(packages: &mut Packages) -> Result<Vec<u8>, Error> {
    match timeout(WAIT, packages.recv()).await {
        Ok(result) => result.map(<[u8]>::to_vec),
        Err(_) => panic!("no package within {WAIT:?}"),
    }
}

#[test]
fn the_handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<AsyncClient>();
    send_sync::<Packages>();
    send_sync::<Latest>();
    send::<PackageStream<Timestamped>>();
    send::<Connection<tokio::net::TcpStream>>();
    send::<Connection<DuplexStream>>();
}

/// `timestamp, actual_q` decoded by hand, as the derive would.
struct Timestamped(f64);

impl rtde_core::StaticRecipe for Timestamped {
    const SPEC: rtde_core::RecipeSpec<'static> = rtde_core::RecipeSpec::new(
        rtde_core::fields::Direction::Output,
        &["timestamp", "actual_q"],
        &[
            rtde_core::fields::WireType::Double,
            rtde_core::fields::WireType::Vector6d,
        ],
    );
    const PAYLOAD_SIZE: usize = 56;
    const MIN_CONTROLLER: [Option<rtde_core::fields::ControllerVersion>; 3] = [None, None, None];
}

impl rtde_core::FromPayload for Timestamped {
    fn from_payload(payload: &[u8]) -> Result<Self, rtde_core::PayloadError> {
        let t: [u8; 8] = payload
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .filter(|_| payload.len() == 56)
            .ok_or(rtde_core::PayloadError::WrongLength {
                expected: 56,
                found: payload.len(),
            })?;
        Ok(Timestamped(f64::from_be_bytes(t)))
    }
}

// ---- over TCP, against the scripted controller ----

#[tokio::test]
async fn streams_in_order_while_another_task_sends_inputs() {
    const N: usize = 200;
    const INPUTS: usize = 50;
    let mut data = Vec::new();
    for k in 0..N {
        data.extend(at(f64::from(u32::try_from(k).unwrap()) * 0.002));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 3, "INT32")
            .start()
            .stream(data, INPUTS)
            .pause()
            .expect_eof(),
    );
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(inputs.spec()).await.unwrap();
    let mut packages = client.packages(N).unwrap();
    client.start().await.unwrap();

    let sender = {
        let client = client.clone();
        tokio::spawn(async move {
            let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
            for i in 0..INPUTS {
                inputs
                    .set(
                        "input_int_register_24",
                        rtde_core::Value::Int32(i32::try_from(i).unwrap()),
                    )
                    .unwrap();
                client.send(&handle, &inputs).await.unwrap();
            }
        })
    };
    for k in 0..N {
        let values = next(&mut packages).await.unwrap();
        assert_eq!(
            timestamp(&values),
            f64::from(u32::try_from(k).unwrap()) * 0.002
        );
    }
    timeout(WAIT, sender).await.unwrap().unwrap();
    let stats = client.stats();
    assert_eq!(
        (stats.received, stats.overflowed, stats.skipped),
        (200, 0, 0)
    );
    timeout(WAIT, client.close()).await.unwrap().unwrap();
    assert!(matches!(packages.recv().await, Err(Error::ConnectionLost)));
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    let transcript = peer.finish();
    let sent: Vec<(u8, Vec<u8>)> = (0..INPUTS)
        .map(|i| (3, i32::try_from(i).unwrap().to_be_bytes().to_vec()))
        .collect();
    assert_eq!(transcript.inputs, sent);
}

#[tokio::test]
async fn a_slow_consumer_overflows_the_queue_counted_and_the_latest_is_the_newest() {
    const N: usize = 100;
    let mut data = Vec::new();
    for k in 0..N {
        data.extend(at(f64::from(u32::try_from(k).unwrap()) * 0.002));
    }
    let peer = FakePeer::start(streaming().raw(&data).pause().expect_eof());
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let mut packages = client.packages(10).unwrap();
    assert!(matches!(client.packages(10), Err(Error::Misuse(_))));
    let mut latest = client.latest();
    assert!(latest.get().is_none());
    client.start().await.unwrap();
    // Wait for the last package through the watch, without reading the queue.
    let last = f64::from(u32::try_from(N - 1).unwrap()) * 0.002;
    loop {
        let values = timeout(WAIT, latest.changed()).await.unwrap().unwrap();
        if timestamp(values) == last {
            break;
        }
    }
    let mut recipe = outputs();
    assert!(latest.get_into(&mut recipe).unwrap());
    assert_eq!(
        recipe.get("timestamp"),
        Some(&rtde_core::Value::Double(last))
    );
    // The queue kept the newest 10; the 90 before them are counted, not lost silently.
    let stats = client.stats();
    assert_eq!((stats.received, stats.overflowed), (100, 90), "{stats:?}");
    for k in 90..N {
        let values = next(&mut packages).await.unwrap();
        assert_eq!(
            timestamp(&values),
            f64::from(u32::try_from(k).unwrap()) * 0.002
        );
    }
    assert!(packages.try_recv().is_none());
    timeout(WAIT, client.close()).await.unwrap().unwrap();
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    peer.finish();
}

#[tokio::test]
async fn a_package_of_another_recipe_is_an_error_in_order_and_the_stream_goes_on() {
    let mut data = at(1.0);
    data.extend(data_v2(9, &timestamp_and_q(1.002, 0.0)));
    data.extend(at(1.004));
    let peer = FakePeer::start(streaming().raw(&data).pause().expect_eof());
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let mut stream = client.packages(8).unwrap().stream::<Timestamped>();
    client.start().await.unwrap();
    let mut items = Vec::new();
    for _ in 0..3 {
        let item = timeout(
            WAIT,
            std::future::poll_fn(|cx| {
                futures_core::Stream::poll_next(std::pin::Pin::new(&mut stream), cx)
            }),
        )
        .await
        .unwrap()
        .unwrap();
        items.push(item.map(|t| t.0));
    }
    assert!(matches!(items[0], Ok(1.0)));
    assert!(
        matches!(
            items[1],
            Err(Error::WrongRecipeId {
                expected: Some(1),
                found: Some(9)
            })
        ),
        "{:?}",
        items[1]
    );
    assert!(matches!(items[2], Ok(1.004)));
    timeout(WAIT, client.close()).await.unwrap().unwrap();
    // After the end, the stream ends.
    let end = timeout(
        WAIT,
        std::future::poll_fn(|cx| {
            futures_core::Stream::poll_next(std::pin::Pin::new(&mut stream), cx)
        }),
    )
    .await
    .unwrap();
    assert!(end.is_none());
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    peer.finish();
}

#[tokio::test]
async fn closed_mid_frame_reconnects_replays_and_counts_the_loss() {
    let peer = FakePeer::start_many(vec![
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 3, "INT32")
            .start()
            .raw(&at(1.0))
            .raw(&at(1.002)[..10])
            .close(),
        // The same recipes again, byte for byte, with new ids; the controller went on to 2.0.
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 2, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 7, "INT32")
            .start()
            .raw(&data_v2(2, &timestamp_and_q(2.0, 2.0)))
            .stream(Vec::new(), 1)
            .pause()
            .expect_eof(),
    ]);
    let policy = ReconnectPolicy::new()
        .attempts(3)
        .initial_backoff(Duration::from_millis(5));
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options().reconnect(policy))
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(inputs.spec()).await.unwrap();
    let mut packages = client.packages(8).unwrap();
    client.start().await.unwrap();
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.0);
    // The cut package is gone; the next one comes from the new link.
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 2.0);
    assert_eq!(client.state(), State::Running);
    // The handle is still good, with the id the new link assigned.
    client.send(&handle, &inputs).await.unwrap();
    let stats = client.stats();
    assert_eq!(
        (stats.received, stats.lost, stats.reconnects),
        (2, 499, 1),
        "{stats:?}"
    );
    let events = client.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::LinkLost(Error::Closed { mid_frame: true }))),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::PackagesLost {
                count: 499,
                estimated: false
            }
        )),
        "{events:?}"
    );
    timeout(WAIT, client.close()).await.unwrap().unwrap();
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    let transcripts = peer.finish_all();
    assert_eq!(transcripts[1].inputs, [(7, vec![0, 0, 0, 0])]);
}

/// Outputs and `input_int_register_24`, the input's recipe id `input_id`.
fn with_input(script: Script, input_id: u8) -> Script {
    script
        .handshake_v2("5.21.0")
        .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
        .setup_inputs("input_int_register_24", input_id, "INT32")
}

/// A connection whose first link streams one package (received here) and drops; the
/// second link's script begins with `second`. Reconnects automatically.
async fn dropped_after_one_package(
    second: Script,
) -> (
    FakePeer,
    AsyncClient,
    tokio::task::JoinHandle<Result<(), Error>>,
    InputHandle,
    Packages,
) {
    let peer = FakePeer::start_many(vec![
        with_input(Script::new(), 3).start().raw(&at(1.0)).close(),
        second,
    ]);
    let policy = ReconnectPolicy::new()
        .attempts(3)
        .initial_backoff(Duration::from_millis(5));
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options().reconnect(policy))
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let handle = client.setup_inputs(register_24(0).spec()).await.unwrap();
    let mut packages = client.packages(8).unwrap();
    client.start().await.unwrap();
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.0);
    (peer, client, task, handle, packages)
}

fn register_24(value: i32) -> DynamicRecipe {
    let mut input = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    input
        .set("input_int_register_24", rtde_core::Value::Int32(value))
        .unwrap();
    input
}

/// Until the peer's script reaches its `reached` step.
async fn reached(signal: std::sync::mpsc::Receiver<()>) {
    tokio::task::spawn_blocking(move || signal.recv_timeout(WAIT))
        .await
        .unwrap()
        .expect("the client connected again");
}

#[tokio::test]
async fn a_send_dropped_while_it_waits_for_a_reconnection_queued_nothing() {
    let (reach, on_reached) = std::sync::mpsc::channel();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let second = with_input(Script::new().reached(reach).hold(held), 7)
        .start()
        // One input, the one sent after the reconnection: the dropped send left none.
        .stream(Vec::new(), 1)
        .pause()
        .expect_eof();
    let (peer, client, task, handle, _packages) = dropped_after_one_package(second).await;
    reached(on_reached).await;
    // The handshake is held: the send waits (it neither fails nor queues), and is dropped.
    let waited = timeout(
        Duration::from_millis(50),
        client.send(&handle, &register_24(1)),
    )
    .await;
    assert!(waited.is_err(), "{waited:?}");
    drop(release);
    // This one waits for the round, then goes out on the new link with its id.
    timeout(WAIT, client.send(&handle, &register_24(2)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(client.state(), State::Running);
    timeout(WAIT, client.close()).await.unwrap().unwrap();
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    let transcripts = peer.finish_all();
    assert_eq!(transcripts[1].inputs, [(7, vec![0, 0, 0, 2])]);
}

#[tokio::test]
async fn a_send_waiting_for_a_reconnection_ends_when_the_connection_is_dropped() {
    let (reach, on_reached) = std::sync::mpsc::channel();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (peer, client, task, handle, mut packages) =
        dropped_after_one_package(Script::new().reached(reach).hold(held)).await;
    reached(on_reached).await;
    let input = register_24(1);
    let (sent, ()) = tokio::join!(timeout(WAIT, client.send(&handle, &input)), async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        // The connection's future goes (a runtime shutting down does the same).
        task.abort();
    });
    let sent = sent.expect("the waiting send ends with the connection");
    assert!(matches!(sent, Err(Error::ConnectionLost)), "{sent:?}");
    assert!(matches!(
        next(&mut packages).await,
        Err(Error::ConnectionLost)
    ));
    drop(release);
    peer.finish_all();
}

#[tokio::test]
async fn without_reconnection_a_lost_link_ends_the_connection_with_its_error() {
    let peer = FakePeer::start(streaming().raw(&at(1.0)).raw(&at(1.002)[..10]).close());
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let mut packages = client.packages(8).unwrap();
    client.start().await.unwrap();
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.0);
    let ended = timeout(WAIT, task).await.unwrap().unwrap();
    assert!(
        matches!(ended, Err(Error::Closed { mid_frame: true })),
        "{ended:?}"
    );
    // The receiver is told the same, after the packages before it.
    let err = next(&mut packages).await.unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    assert!(matches!(
        next(&mut packages).await,
        Err(Error::ConnectionLost)
    ));
    assert_eq!(client.state(), State::Closed);
    assert!(matches!(client.start().await, Err(Error::ConnectionLost)));
    peer.finish();
}

#[tokio::test]
async fn refusals_are_the_sessions_and_leave_the_connection_usable() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(500.0),
                names: "timestamp,actual_q",
            })
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(0),
                types: "DOUBLE,NOT_FOUND",
            })
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .expect_eof(),
    );
    let (client, connection) = rtde_core::tokio::connect(peer.addr, options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    assert_eq!(client.protocol_version(), V2);
    assert_eq!(client.controller_version().to_string(), "5.21.0");
    // Checked before sending: nothing goes out.
    let err = client
        .setup_outputs(outputs().spec(), 600.0)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::FrequencyTooHigh { .. }), "{err}");
    let err = client
        .setup_outputs(outputs().spec(), 500.0)
        .await
        .unwrap_err();
    match &err {
        Error::SetupRefused(refused) => assert_eq!(refused.not_found(), ["actual_q"]),
        other => panic!("{other}"),
    }
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    // The last handle dropped ends the connection, without a PAUSE (nothing streams).
    drop(client);
    timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    peer.finish();
}

// ---- over tokio::io::duplex, against a controller played here ----

/// The controller's end of a duplex pipe.
struct Controller {
    io: DuplexStream,
    frames: FrameBuffer,
}

impl Controller {
    /// The next package from the client: its type and payload.
    async fn next(&mut self) -> (u8, Vec<u8>) {
        loop {
            if let Some(frame) = self.frames.next_frame().unwrap() {
                return (frame.kind, frame.payload.to_vec());
            }
            let n = timeout(WAIT, self.io.read(self.frames.spare()))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "the client closed");
            self.frames.commit(n);
        }
    }

    /// Reads the client's next package, checks its type, and sends `reply`.
    async fn answer(&mut self, kind: u8, reply: ControllerMessage<'_>) {
        let (got, _) = self.next().await;
        assert_eq!(package_type::name(got), package_type::name(kind));
        self.send(&support::encode(V2, &reply)).await;
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.io.write_all(bytes).await.unwrap();
    }
}

/// Attaches over a duplex pipe: handshake, `timestamp, actual_q` at 500 Hz, the in-order
/// receiver, START.
async fn attached() -> (AsyncClient, Packages, Controller) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let mut controller = Controller {
        io: theirs,
        frames: FrameBuffer::new(),
    };
    let script = tokio::spawn(async move {
        let c = &mut controller;
        c.answer(
            package_type::REQUEST_PROTOCOL_VERSION,
            ControllerMessage::ProtocolVersionReply { accepted: true },
        )
        .await;
        c.answer(
            package_type::GET_URCONTROL_VERSION,
            ControllerMessage::UrcontrolVersion("5.21.0".parse().unwrap()),
        )
        .await;
        c.answer(
            package_type::SETUP_OUTPUTS,
            ControllerMessage::SetupOutputsReply {
                recipe_id: Some(1),
                types: "DOUBLE,VECTOR6D",
            },
        )
        .await;
        c.answer(
            package_type::START,
            ControllerMessage::StartReply { accepted: true },
        )
        .await;
        controller
    });
    let (client, connection) = rtde_core::tokio::attach(ours, options()).await.unwrap();
    tokio::spawn(connection);
    client.setup_outputs(outputs().spec(), 500.0).await.unwrap();
    let packages = client.packages(1024).unwrap();
    client.start().await.unwrap();
    let controller = timeout(WAIT, script).await.unwrap().unwrap();
    (client, packages, controller)
}

#[tokio::test]
async fn a_receive_dropped_mid_frame_loses_neither_the_framing_nor_the_package() {
    let (client, mut packages, mut controller) = attached().await;
    let second = at(1.002);
    controller.send(&at(1.0)).await;
    controller.send(&second[..HEADER_LEN + 10]).await;
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.0);

    // Half of the second package has arrived: the receive waits, and is dropped.
    let dropped = timeout(Duration::from_millis(50), packages.recv()).await;
    assert!(dropped.is_err(), "nothing whole to receive yet");
    assert!(client.with_session(rtde_core::Session::mid_frame));
    // Dropped again, from a select! whose other branch wins.
    tokio::select! {
        biased;
        () = tokio::task::yield_now() => {}
        _ = packages.recv() => panic!("no package is whole yet"),
    }

    controller.send(&second[HEADER_LEN + 10..]).await;
    controller.send(&at(1.004)).await;
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.002);
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.004);
    let stats = client.stats();
    assert_eq!((stats.received, stats.overflowed, stats.skipped), (3, 0, 0));
}

#[tokio::test]
async fn receives_cancelled_all_along_a_stream_cut_at_odd_places_lose_nothing() {
    const N: usize = 300;
    let (client, mut packages, mut controller) = attached().await;
    let mut bytes = Vec::new();
    for k in 0..N {
        bytes.extend(at(f64::from(u32::try_from(k).unwrap()) * 0.002));
    }
    let writer = tokio::spawn(async move {
        for chunk in bytes.chunks(7) {
            controller.send(chunk).await;
            tokio::task::yield_now().await;
        }
        controller
    });
    let (mut received, mut cancelled) = (0, 0u32);
    while received < N {
        tokio::select! {
            biased;
            result = packages.recv() => {
                let values = result.unwrap();
                assert_eq!(timestamp(values), f64::from(u32::try_from(received).unwrap()) * 0.002);
                received += 1;
            }
            () = tokio::task::yield_now() => cancelled += 1,
        }
    }
    assert!(cancelled > 0, "some receives were dropped pending");
    let _controller = timeout(WAIT, writer).await.unwrap().unwrap();
    let stats = client.stats();
    assert_eq!((stats.received, stats.overflowed), (300, 0));
}

// ---- the write timeout ----

#[tokio::test]
async fn a_controller_that_stops_reading_fails_the_send_within_the_write_timeout() {
    // A small pipe: a few dozen input packages fill it.
    let (ours, theirs) = tokio::io::duplex(256);
    let mut controller = Controller {
        io: theirs,
        frames: FrameBuffer::new(),
    };
    let script = tokio::spawn(async move {
        let c = &mut controller;
        c.answer(
            package_type::REQUEST_PROTOCOL_VERSION,
            ControllerMessage::ProtocolVersionReply { accepted: true },
        )
        .await;
        c.answer(
            package_type::GET_URCONTROL_VERSION,
            ControllerMessage::UrcontrolVersion("5.21.0".parse().unwrap()),
        )
        .await;
        c.answer(
            package_type::SETUP_INPUTS,
            ControllerMessage::SetupInputsReply {
                recipe_id: 1,
                types: "INT32",
            },
        )
        .await;
        // From here on it reads nothing.
        controller
    });
    let write_timeout = Duration::from_millis(100);
    let (client, connection) =
        rtde_core::tokio::attach(ours, options().write_timeout(Some(write_timeout)))
            .await
            .unwrap();
    let task = tokio::spawn(connection);
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(inputs.spec()).await.unwrap();
    let controller = timeout(WAIT, script).await.unwrap().unwrap();

    let began = std::time::Instant::now();
    let mut sent = 0;
    let err = loop {
        match timeout(WAIT, client.send(&handle, &inputs))
            .await
            .expect("a send never hangs")
        {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
    };
    assert!(sent > 0);
    assert!(began.elapsed() >= write_timeout);
    let Error::Io { source, mid_frame } = &err else {
        panic!("{err}")
    };
    assert_eq!(source.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert!(!mid_frame);
    let said = rtde_core::Report(&err).to_string();
    assert!(said.contains("stopped reading"), "{said}");
    // The link is gone; without a receiver, the connection ends with the error itself.
    assert!(matches!(
        client.send(&handle, &inputs).await,
        Err(Error::ConnectionLost)
    ));
    assert_eq!(client.state(), State::Closed);
    let ended = timeout(WAIT, task).await.unwrap().unwrap();
    assert!(
        matches!(&ended, Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::TimedOut),
        "{ended:?}"
    );
    drop(controller);
}

#[tokio::test]
async fn deferred_reads_bring_what_came_meanwhile_in_one_wake_up_in_order() {
    let (client, mut packages, mut controller) = attached().await;
    controller.send(&at(1.0)).await;
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.0);

    let until = std::time::Instant::now() + Duration::from_millis(50);
    client.defer_reads(until);
    for k in 1..=5 {
        controller.send(&at(1.0 + f64::from(k) * 0.002)).await;
    }
    let all_sent_before = std::time::Instant::now() < until;
    let first = timestamp(&next(&mut packages).await.unwrap());
    assert!(
        std::time::Instant::now() >= until,
        "nothing is read before the deferral ends"
    );
    assert_eq!(first, 1.002);
    let mut rest = Vec::new();
    while let Some(values) = packages.try_recv() {
        rest.push(timestamp(values.unwrap()));
    }
    if all_sent_before {
        // Everything was in the socket when the deferral ended: one read, one wake-up.
        assert_eq!(rest, [1.004, 1.006, 1.008, 1.010]);
    }
    // Whatever the timing, nothing is lost or reordered, and reading goes on as before.
    while rest.len() < 4 {
        rest.push(timestamp(&next(&mut packages).await.unwrap()));
    }
    assert_eq!(rest, [1.004, 1.006, 1.008, 1.010]);
    controller.send(&at(1.012)).await;
    assert_eq!(timestamp(&next(&mut packages).await.unwrap()), 1.012);
    let stats = client.stats();
    assert_eq!((stats.received, stats.overflowed, stats.skipped), (7, 0, 0));
}
