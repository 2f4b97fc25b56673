//! Every call of the typed writer against the simulator: the bytes it put on the wire
//! (recorded by a loopback relay between client and simulator, masks included), and what
//! the controller then reports in its outputs.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rtde_core::protocol::{ClientMessage, Frame, ProtocolVersion};
use rtde_core::writer::{AnalogDomain, IoConfig, IoError, IoGroup, IoWriter, WriteError};
use rtde_core::{Client, ConnectOptions, RtdeRecipe, StaticRecipe, Value};
use rtde_sim::Sim;

#[derive(RtdeRecipe, Debug, Clone, Copy, PartialEq)]
struct Readback {
    actual_digital_output_bits: u64,
    standard_analog_output0: f64,
    standard_analog_output1: f64,
    analog_io_types: u32,
    target_speed_fraction: f64,
    input_int_register_24: i32,
    input_double_register_47: f64,
    input_bit_register_64: bool,
}

/// Relays one connection to `to`, keeping a copy of every byte the client sent.
struct Relay {
    addr: SocketAddr,
    sent: Arc<Mutex<Vec<u8>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    fn start(to: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let copy = Arc::clone(&sent);
        let accept = std::thread::spawn(move || {
            let (client, _) = listener.accept().unwrap();
            let server = TcpStream::connect(to).unwrap();
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let up = std::thread::spawn(move || pipe(client, server, Some(&copy)));
            pipe(s2, c2, None);
            up.join().unwrap();
        });
        Relay {
            addr,
            sent,
            threads: vec![accept],
        }
    }

    /// The input data packages the client sent so far: (recipe id, payload).
    fn data_packages(&self) -> Vec<(u8, Vec<u8>)> {
        let bytes = self.sent.lock().unwrap().clone();
        let mut at = 0;
        let mut out = Vec::new();
        while let Some((frame, used)) = Frame::parse(&bytes[at..]).unwrap() {
            at += used;
            if let ClientMessage::DataPackage { recipe_id, payload } =
                ClientMessage::decode(frame, ProtocolVersion::V2).unwrap()
            {
                out.push((recipe_id, payload.to_vec()));
            }
        }
        out
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream, copy: Option<&Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Some(copy) = copy {
                    copy.lock().unwrap().extend_from_slice(&buf[..n]);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

struct Rig {
    sim: Sim,
    relay: Relay,
    client: Client,
    io: IoWriter,
}

impl Rig {
    fn start(config: &IoConfig) -> Rig {
        let sim = Sim::builder().start().unwrap();
        let relay = Relay::start(sim.addr());
        let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
        let mut client = Client::connect(relay.addr, options).unwrap();
        client.setup_outputs(Readback::SPEC, 500.0).unwrap();
        let io = IoWriter::setup(&mut client, config).unwrap();
        client.start().unwrap();
        Rig {
            sim,
            relay,
            client,
            io,
        }
    }

    /// The last package on the wire (call it once the outputs show the write, so that the
    /// relay has passed it on): it went through `group`'s recipe with `payload`.
    fn assert_sent(&self, group: IoGroup, payload: &[u8]) {
        let id = self
            .client
            .input_recipe_id(self.io.handle(group).unwrap())
            .unwrap();
        let packages = self.relay.data_packages();
        assert_eq!(packages.last(), Some(&(id, payload.to_vec())), "{group}");
    }

    /// Reads outputs until `ok` holds (the controller applies inputs between packages),
    /// for at most ten seconds: the relay's threads may wait for a core.
    fn read_until(&mut self, ok: impl Fn(&Readback) -> bool) -> Readback {
        let mut last = None;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            let r: Readback = self.client.recv_as().unwrap();
            if ok(&r) {
                return r;
            }
            last = Some(r);
        }
        panic!(
            "the outputs never showed the write: {last:?}; sent {:?}; {:?}",
            self.relay.data_packages(),
            self.client.text_messages().collect::<Vec<_>>()
        );
    }

    fn finish(self) {
        self.client.close().unwrap();
        self.sim.shutdown().unwrap();
        for t in self.relay.threads {
            t.join().unwrap();
        }
    }
}

fn f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

#[test]
fn digital_outputs_change_one_bit_per_call() {
    let mut rig = Rig::start(&IoConfig::new().digital_outputs());
    let io = &rig.io;

    io.standard_digital_output(&mut rig.client, 3, true)
        .unwrap();
    rig.read_until(|r| r.actual_digital_output_bits == 0b1000);
    rig.assert_sent(IoGroup::StandardDigitalOutputs, &[0b1000, 0b1000]);

    let io = &rig.io;
    io.standard_digital_output(&mut rig.client, 5, true)
        .unwrap();
    // Bit 3 stays on: the mask selected bit 5 only.
    rig.read_until(|r| r.actual_digital_output_bits == 0b10_1000);
    rig.assert_sent(IoGroup::StandardDigitalOutputs, &[0b10_0000, 0b10_0000]);

    let io = &rig.io;
    io.standard_digital_output(&mut rig.client, 3, false)
        .unwrap();
    rig.read_until(|r| r.actual_digital_output_bits == 0b10_0000);
    rig.assert_sent(IoGroup::StandardDigitalOutputs, &[0b1000, 0]);

    let io = &rig.io;
    io.configurable_digital_output(&mut rig.client, 1, true)
        .unwrap();
    rig.read_until(|r| r.actual_digital_output_bits == 0b10_0010_0000);
    rig.assert_sent(IoGroup::ConfigurableDigitalOutputs, &[0b10, 0b10]);

    let io = &rig.io;
    io.tool_digital_output(&mut rig.client, 1, true).unwrap();
    let r = rig.read_until(|r| r.actual_digital_output_bits >> 16 == 0b10);
    rig.assert_sent(IoGroup::ToolDigitalOutputs, &[0b10, 0b10]);
    assert_eq!(r.actual_digital_output_bits, 0b10_0000_0010_0010_0000);
    assert_eq!(
        rig.sim.io().digital_output_bits(),
        r.actual_digital_output_bits
    );
    rig.finish();
}

#[test]
fn analog_outputs_send_their_own_domain_or_none() {
    let mut rig = Rig::start(&IoConfig::new().analog_outputs());

    let io = &rig.io;
    io.analog_output(&mut rig.client, 0, AnalogDomain::Voltage, 0.5)
        .unwrap();
    let mut expected = vec![0b01, 0b01];
    expected.extend(f64s(&[0.5, 0.0]));
    // `analog_io_types` bit 2 is output 0's domain: voltage.
    rig.read_until(|r| r.standard_analog_output0 == 0.5 && r.analog_io_types == 0b0100);
    rig.assert_sent(IoGroup::AnalogOutputs, &expected);

    let io = &rig.io;
    io.analog_output(&mut rig.client, 1, AnalogDomain::Current, 0.25)
        .unwrap();
    let mut expected = vec![0b10, 0b00];
    expected.extend(f64s(&[0.0, 0.25]));
    // Output 0 keeps its value and its domain: the mask selected output 1 only.
    let r = rig.read_until(|r| r.standard_analog_output1 == 0.25);
    rig.assert_sent(IoGroup::AnalogOutputs, &expected);
    assert_eq!(
        (r.standard_analog_output0, r.analog_io_types),
        (0.5, 0b0100)
    );

    // A value alone: no domain on the wire, so the voltage domain stays.
    let io = &rig.io;
    io.analog_output_keep_domain(&mut rig.client, 0, 0.75)
        .unwrap();
    let mut expected = vec![0b01];
    expected.extend(f64s(&[0.75, 0.0]));
    let r = rig.read_until(|r| r.standard_analog_output0 == 0.75);
    rig.assert_sent(IoGroup::AnalogOutputsKeepDomain, &expected);
    assert_eq!(
        (r.standard_analog_output1, r.analog_io_types),
        (0.25, 0b0100)
    );
    rig.finish();
}

#[test]
fn speed_slider_and_registers_read_back() {
    let config = IoConfig::new()
        .speed_slider()
        .external_force_torque()
        .int_registers(24..=24)
        .double_registers(47..=47)
        .bit_registers(64..=64);
    let mut rig = Rig::start(&config);

    let io = &rig.io;
    io.speed_slider(&mut rig.client, 0.3).unwrap();
    let mut expected = vec![0, 0, 0, 1];
    expected.extend(f64s(&[0.3]));
    rig.read_until(|r| r.target_speed_fraction == 0.3);
    rig.assert_sent(IoGroup::SpeedSlider, &expected);

    let io = &rig.io;
    io.int_register(&mut rig.client, 24, -7).unwrap();
    rig.read_until(|r| r.input_int_register_24 == -7);
    rig.assert_sent(IoGroup::IntRegister(24), &(-7i32).to_be_bytes());

    let io = &rig.io;
    io.double_register(&mut rig.client, 47, 2.5).unwrap();
    rig.read_until(|r| r.input_double_register_47 == 2.5);
    rig.assert_sent(IoGroup::DoubleRegister(47), &2.5f64.to_be_bytes());

    let io = &rig.io;
    io.bit_register(&mut rig.client, 64, true).unwrap();
    let r = rig.read_until(|r| r.input_bit_register_64);
    rig.assert_sent(IoGroup::BitRegister(64), &[1]);
    // Each write moved only its own input.
    assert_eq!(
        (
            r.target_speed_fraction,
            r.input_int_register_24,
            r.input_double_register_47
        ),
        (0.3, -7, 2.5)
    );

    // No output reports the external wrench: the controller's input state does.
    let wrench = [1.0, -2.0, 3.0, 0.25, -0.5, 0.75];
    let io = &rig.io;
    io.external_force_torque(&mut rig.client, wrench).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rig.sim.io().input("external_force_torque") != Some(&Value::Vector6d(wrench)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the wrench never arrived"
        );
        let _: Readback = rig.client.recv_as().unwrap();
    }
    rig.assert_sent(IoGroup::ExternalForceTorque, &f64s(&wrench));
    rig.finish();
}

#[test]
fn refused_writes_send_nothing() {
    let mut rig = Rig::start(&IoConfig::new().speed_slider());
    let before = rig.relay.data_packages().len();
    let io = &rig.io;
    let err = io.int_register(&mut rig.client, 23, 1).unwrap_err();
    assert!(
        matches!(err, WriteError::Io(IoError::NotExternal { .. })),
        "{err}"
    );
    let err = io.int_register(&mut rig.client, 30, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the writer has no recipe for `input_int_register_30`; add it to the `IoConfig` it is set up with"
    );
    let err = io.speed_slider(&mut rig.client, 1.5).unwrap_err();
    assert!(
        matches!(err, WriteError::Io(IoError::OutOfRange { .. })),
        "{err}"
    );
    // A package sent afterwards is the first data package since: the refused ones never left.
    io.speed_slider(&mut rig.client, 0.5).unwrap();
    rig.read_until(|r| r.target_speed_fraction == 0.5);
    assert_eq!(rig.relay.data_packages().len(), before + 1);
    rig.finish();
}

/// The same writer, set up on the client before it is spawned, writes through the
/// background driver's `Sender`: the same bytes on the wire, the same read-back.
#[test]
fn the_writer_sends_through_the_background_driver() {
    use rtde_core::background::SpawnOptions;

    let config = IoConfig::new()
        .digital_outputs()
        .speed_slider()
        .int_registers(24..=24);
    let Rig {
        sim,
        relay,
        client,
        io,
    } = Rig::start(&config);
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let mut sender = background.sender();
    let mut receiver = background.receiver();
    let read_until = |receiver: &mut rtde_core::background::Receiver,
                      ok: &dyn Fn(&Readback) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let r: Readback = receiver.recv_as(Some(Duration::from_secs(5))).unwrap();
            if ok(&r) {
                return r;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the outputs never showed the write: {r:?}; sent {:?}",
                relay.data_packages()
            );
        }
    };
    let assert_sent = |group: IoGroup, payload: &[u8]| {
        let id = background
            .input_recipe_id(io.handle(group).unwrap())
            .unwrap();
        assert_eq!(
            relay.data_packages().last(),
            Some(&(id, payload.to_vec())),
            "{group}"
        );
    };

    io.standard_digital_output(&mut sender, 3, true).unwrap();
    read_until(&mut receiver, &|r| {
        r.actual_digital_output_bits & 0b1000 != 0
    });
    assert_sent(IoGroup::StandardDigitalOutputs, &[0b1000, 0b1000]);

    // From another thread: the sender is `Send` and the writer is shared by reference.
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut sender = background.sender();
            io.speed_slider(&mut sender, 0.3).unwrap();
        });
    });
    read_until(&mut receiver, &|r| r.target_speed_fraction == 0.3);
    let mut expected = vec![0, 0, 0, 1];
    expected.extend(f64s(&[0.3]));
    assert_sent(IoGroup::SpeedSlider, &expected);

    io.int_register(&mut sender, 24, -7).unwrap();
    let r = read_until(&mut receiver, &|r| r.input_int_register_24 == -7);
    assert_sent(IoGroup::IntRegister(24), &(-7i32).to_be_bytes());
    // Each write moved only its own input.
    assert_eq!(r.actual_digital_output_bits & 0xff, 0b1000);
    assert_eq!(r.target_speed_fraction, 0.3);

    // A group the writer was not set up with sends nothing, through this driver too.
    let before = relay.data_packages().len();
    assert!(matches!(
        io.double_register(&mut sender, 30, 1.0),
        Err(WriteError::NotSetUp(IoGroup::DoubleRegister(30)))
    ));
    assert_eq!(relay.data_packages().len(), before);

    background.close().unwrap();
    sim.shutdown().unwrap();
    for t in relay.threads {
        t.join().unwrap();
    }
}

/// The same groups, set up and written through the async driver: the same bytes on the
/// wire, the same read-back, and a group it was not set up with sends nothing.
#[test]
fn the_writer_sends_through_the_async_driver() {
    use rtde_core::writer::IoWrite;

    let sim = Sim::builder().start().unwrap();
    let relay = Relay::start(sim.addr());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
        let (client, connection) = rtde_core::tokio::connect(relay.addr, options)
            .await
            .unwrap();
        let connection = tokio::spawn(connection);
        client.setup_outputs(Readback::SPEC, 500.0).await.unwrap();
        let config = IoConfig::new().digital_outputs().speed_slider();
        let io = IoWriter::setup_async(&client, &config).await.unwrap();
        let mut packages = client.packages(64).unwrap();
        client.start().await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut read_until = async |ok: &dyn Fn(&Readback) -> bool| loop {
            let r: Readback = tokio::time::timeout(Duration::from_secs(5), packages.recv_as())
                .await
                .unwrap()
                .unwrap();
            if ok(&r) {
                return r;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the outputs never showed the write: {r:?}; sent {:?}",
                relay.data_packages()
            );
        };
        let assert_sent = |group: IoGroup, payload: &[u8]| {
            let id = client.input_recipe_id(io.handle(group).unwrap()).unwrap();
            assert_eq!(
                relay.data_packages().last(),
                Some(&(id, payload.to_vec())),
                "{group}"
            );
        };

        let write = IoWrite::standard_digital_output(3, true).unwrap();
        io.send_async(&client, &write).await.unwrap();
        read_until(&|r| r.actual_digital_output_bits & 0b1000 != 0).await;
        assert_sent(IoGroup::StandardDigitalOutputs, &[0b1000, 0b1000]);

        let write = IoWrite::speed_slider(0.3).unwrap();
        io.send_async(&client, &write).await.unwrap();
        let r = read_until(&|r| r.target_speed_fraction == 0.3).await;
        let mut expected = vec![0, 0, 0, 1];
        expected.extend(f64s(&[0.3]));
        assert_sent(IoGroup::SpeedSlider, &expected);
        // Each write moved only its own input.
        assert_eq!(r.actual_digital_output_bits & 0xff, 0b1000);

        let before = relay.data_packages().len();
        let write = IoWrite::int_register(24, 1).unwrap();
        assert!(matches!(
            io.send_async(&client, &write).await,
            Err(WriteError::NotSetUp(IoGroup::IntRegister(24)))
        ));
        assert_eq!(relay.data_packages().len(), before);

        client.close().await.unwrap();
        connection.await.unwrap().unwrap();
    });
    sim.shutdown().unwrap();
    for t in relay.threads {
        t.join().unwrap();
    }
}
