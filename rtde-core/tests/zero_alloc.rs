//! After setup, receiving and decoding output packages and sending input packages performs
//! no heap allocation: a counting global allocator proves it over 10,000 packages of each.
//!
//! This file is a test binary of its own so that its allocator counts nothing else.

use rtde_testkit::counting_allocator::{self, CountingAllocator};
use rtde_testkit::scripted as support;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

use std::time::Duration;

use rtde_core::fields::{ControllerVersion, Direction, WireType};
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, FromPayload, PayloadError, Recipe, RecipeSpec,
    StaticRecipe, Value,
};
use support::{FakePeer, Script, data_v2, timestamp_and_q};

use counting_allocator::on_this_thread as allocations;

/// `timestamp, actual_q` as `#[derive(RtdeRecipe)]` would implement it.
struct TimestampAndQ {
    timestamp: f64,
    actual_q: [f64; 6],
}

impl StaticRecipe for TimestampAndQ {
    const SPEC: RecipeSpec<'static> = RecipeSpec::new(
        Direction::Output,
        &["timestamp", "actual_q"],
        &[WireType::Double, WireType::Vector6d],
    );
    const PAYLOAD_SIZE: usize = 56;
    const MIN_CONTROLLER: [Option<ControllerVersion>; 3] = [
        Some(ControllerVersion::new(3, 4, 0, 0)),
        Some(ControllerVersion::new(5, 0, 0, 0)),
        Some(ControllerVersion::new(10, 7, 0, 0)),
    ];
}

impl FromPayload for TimestampAndQ {
    fn from_payload(payload: &[u8]) -> Result<Self, PayloadError> {
        let wrong = || PayloadError::WrongLength {
            expected: Self::PAYLOAD_SIZE,
            found: payload.len(),
        };
        let values: &[u8; 56] = payload.try_into().map_err(|_| wrong())?;
        let (t, mut rest) = values.split_first_chunk::<8>().ok_or_else(wrong)?;
        let mut actual_q = [0.0; 6];
        for q in &mut actual_q {
            let (bytes, tail) = rest.split_first_chunk::<8>().ok_or_else(wrong)?;
            *q = f64::from_be_bytes(*bytes);
            rest = tail;
        }
        Ok(TimestampAndQ {
            timestamp: f64::from_be_bytes(*t),
            actual_q,
        })
    }
}

#[test]
fn receiving_decoding_and_sending_after_setup_allocate_nothing() {
    const N: u32 = 10_000;
    let (control, _) = allocations(|| Vec::<u8>::with_capacity(1));
    assert_eq!(control, 1, "the counting allocator counts");

    // Four rounds of N output packages: into a DynamicRecipe (with an input package sent
    // after each), as raw payloads, as a static recipe, and the latest only.
    let mut data = Vec::new();
    for k in 0..4 * N {
        data.extend(data_v2(
            1,
            &timestamp_and_q(f64::from(k) * 0.002, f64::from(k)),
        ));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs(
                "input_int_register_24,input_double_register_24",
                5,
                "INT32,DOUBLE",
            )
            .start()
            .stream(data, N as usize)
            .pause()
            .expect_eof(),
    );
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(10)));
    let mut client = Client::connect(peer.addr, options).unwrap();
    let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    let mut inputs =
        DynamicRecipe::inputs(["input_int_register_24", "input_double_register_24"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();

    let (allocated, (sum_raw, sum_static)) = allocations(|| {
        for i in 0..N {
            client.recv_into(&mut outputs).unwrap();
            assert_eq!(outputs.value(0), Some(&Value::Double(f64::from(i) * 0.002)));
            inputs
                .set(
                    "input_int_register_24",
                    Value::Int32(i32::try_from(i).unwrap()),
                )
                .unwrap();
            inputs
                .set(
                    "input_double_register_24",
                    Value::Double(f64::from(i) / 2.0),
                )
                .unwrap();
            client.send(&handle, &inputs).unwrap();
        }
        let mut sum_raw = 0.0;
        for _ in 0..N {
            let payload = client.recv().unwrap();
            let last_q = payload[48..].first_chunk::<8>().unwrap();
            sum_raw += f64::from_be_bytes(*last_q);
        }
        let mut sum_static = 0.0;
        for _ in 0..N {
            let package: TimestampAndQ = client.recv_as().unwrap();
            sum_static += package.actual_q[5] - package.timestamp / 0.002;
        }
        // Each call returns a newer package, so at most N calls reach the last.
        let last = f64::from(4 * N - 1);
        for _ in 0..N {
            client.recv_latest_into(&mut outputs).unwrap();
            if outputs.value(1) == Some(&Value::Vector6d([last; 6])) {
                break;
            }
        }
        (sum_raw, sum_static)
    });
    assert_eq!(allocated, 0, "heap allocations after setup");
    // Packages N..2N carry actual_q = k.
    let expected: f64 = (N..2 * N).map(f64::from).sum();
    assert_eq!(sum_raw, expected);
    assert_eq!(sum_static, 0.0);
    assert_eq!(
        outputs.value(1),
        Some(&Value::Vector6d([f64::from(4 * N - 1); 6]))
    );
    let stats = client.stats();
    assert_eq!(stats.received + stats.superseded, 4 * u64::from(N));
    assert_eq!(stats.skipped, 0);
    client.close().unwrap();

    let transcript = peer.finish();
    assert_eq!(transcript.inputs.len(), N as usize);
    for (i, (recipe_id, values)) in (0..N).zip(&transcript.inputs) {
        let mut expected = i32::try_from(i).unwrap().to_be_bytes().to_vec();
        expected.extend_from_slice(&(f64::from(i) / 2.0).to_be_bytes());
        assert_eq!((*recipe_id, values), (5, &expected));
    }
}

/// The background driver's handles on the application's threads: `Receiver::recv`,
/// `Receiver::latest` and `Sender::send` allocate nothing after setup. (The reader thread
/// is not this thread, so its allocations are not counted here; `benches/drivers` counts
/// the whole process, reader thread included, and finds none either.)
#[test]
fn the_background_drivers_handles_allocate_nothing_after_setup() {
    use rtde_core::background::SpawnOptions;

    const N: u32 = 5_000;
    let mut data = Vec::new();
    for k in 0..N {
        data.extend(data_v2(
            1,
            &timestamp_and_q(f64::from(k) * 0.002, f64::from(k)),
        ));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 5, "INT32")
            .start()
            .stream(data, N as usize)
            .pause()
            .expect_eof(),
    );
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(10)));
    let mut client = Client::connect(peer.addr, options).unwrap();
    let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    // Room for every package: the peer sends them all at once.
    let background = client
        .spawn(SpawnOptions::new().queue_capacity(N as usize))
        .unwrap();
    let mut receiver = background.receiver();
    let sender = background.sender();

    let (allocated, latest_seen) = allocations(|| {
        for i in 0..N {
            receiver
                .recv_into(&mut outputs, Some(Duration::from_secs(10)))
                .unwrap();
            assert_eq!(outputs.value(0), Some(&Value::Double(f64::from(i) * 0.002)));
            inputs
                .set(
                    "input_int_register_24",
                    Value::Int32(i32::try_from(i).unwrap()),
                )
                .unwrap();
            sender.send(&handle, &inputs).unwrap();
        }
        let mut latest_seen = 0;
        for _ in 0..N {
            if receiver.latest().unwrap().is_some() {
                latest_seen += 1;
            }
        }
        latest_seen
    });
    assert_eq!(allocated, 0, "heap allocations after setup");
    assert_eq!(latest_seen, N);
    assert_eq!(background.stats().overflowed, 0);
    background.close().unwrap();
    let transcript = peer.finish();
    assert_eq!(transcript.inputs.len(), N as usize);
}

/// The async driver on a current-thread runtime, so that the connection task, the
/// receiver and the sender all run on this thread and are all counted: after setup and a
/// warm-up (the first package sizes the queue's buffers, the first receive the
/// receiver's), receiving every package, reading the latest and sending an input after
/// each allocate nothing.
#[cfg(feature = "tokio")]
#[test]
fn the_async_driver_receives_watches_and_sends_without_allocating() {
    const WARM: u32 = 1_000;
    const N: u32 = 10_000;
    let mut data = Vec::new();
    for k in 0..WARM + N {
        data.extend(data_v2(
            1,
            &timestamp_and_q(f64::from(k) * 0.002, f64::from(k)),
        ));
    }
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(500.0, "timestamp,actual_q", 1, "DOUBLE,VECTOR6D")
            .setup_inputs("input_int_register_24", 5, "INT32")
            .start()
            .stream(data, (WARM + N) as usize)
            .pause()
            .expect_eof(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(10)));
    let (client, mut packages, mut latest, handle, task) = runtime.block_on(async {
        let (client, connection) = rtde_core::tokio::connect(peer.addr, options).await.unwrap();
        let task = tokio::spawn(connection);
        let outputs = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
        client.setup_outputs(outputs.spec(), 500.0).await.unwrap();
        let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
        let handle = client.setup_inputs(inputs.spec()).await.unwrap();
        // Room for the whole stream: the peer writes it as fast as loopback goes.
        let packages = client.packages(16_384).unwrap();
        let latest = client.latest();
        client.start().await.unwrap();
        (client, packages, latest, handle, task)
    });
    let mut outputs = DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let mut lap = |from: u32, to: u32| {
        runtime.block_on(async {
            let mut newest = 0.0_f64;
            for i in from..to {
                packages.recv_into(&mut outputs).await.unwrap();
                assert_eq!(outputs.value(0), Some(&Value::Double(f64::from(i) * 0.002)));
                let values = latest.get().unwrap();
                newest = newest.max(f64::from_be_bytes(values[..8].try_into().unwrap()));
                inputs
                    .set(
                        "input_int_register_24",
                        Value::Int32(i32::try_from(i).unwrap()),
                    )
                    .unwrap();
                client.send(&handle, &inputs).await.unwrap();
            }
            newest
        })
    };
    lap(0, WARM);
    let (allocated, newest) = allocations(|| lap(WARM, WARM + N));
    assert_eq!(allocated, 0, "heap allocations after setup");
    assert!(newest >= f64::from(WARM + N - 1) * 0.002);
    let stats = client.stats();
    assert_eq!(
        (stats.received, stats.overflowed, stats.skipped),
        (u64::from(WARM + N), 0, 0)
    );
    runtime.block_on(async {
        client.close().await.unwrap();
        task.await.unwrap().unwrap();
    });
    let transcript = peer.finish();
    assert_eq!(transcript.inputs.len(), (WARM + N) as usize);
    assert_eq!(
        transcript.inputs[9_999],
        (5, 9_999i32.to_be_bytes().to_vec())
    );
}
