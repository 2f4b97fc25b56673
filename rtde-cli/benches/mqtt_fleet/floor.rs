//! The floor under the bridge's CPU figure: the least any bridge must do to move the
//! same fleet into the same broker, on one thread, with nothing in between.
//!
//! Per robot and per batch, one nonblocking read of the robot's socket (every package
//! since the last read), the data packages' payloads copied into one MQTT QoS 1 PUBLISH
//! written to Mosquitto (in a write of its own, as rumqttc writes, or with the pass's
//! other publications in one write, as a client that coalesced them would), and the
//! broker's PUBACKs read back. No encoding beyond the
//! copy, no queue, no runtime, no per-robot wake-up: one pass over every robot per batch
//! period, so even the sleeps are shared. The RTDE handshake goes through rtde-core's
//! codec; the MQTT packets are written by hand (MQTT 3.1.1, clean session, no keepalive).
//!
//! Whatever the machine charges for loopback TCP lands here as it lands on the bridge:
//! a read's ACK runs the simulator's side of it, a write runs the broker's receive. So
//! the bridge over the floor, in the same run, is the bridge's own cost.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rtde_core::protocol::{ClientMessage, FrameBuffer, ProtocolVersion, package_type};

/// What the floor did: packages, CPU and time in its measured window; publications and
/// their acknowledgements over the whole run.
pub(crate) struct Floor {
    pub(crate) packages: u64,
    pub(crate) publications: u64,
    pub(crate) acknowledged: u64,
    pub(crate) cpu_seconds: f64,
    pub(crate) seconds: f64,
}

impl Floor {
    pub(crate) fn cpu_per_package_us(&self) -> f64 {
        self.cpu_seconds * 1e6 / self.packages.max(1) as f64
    }
}

/// How the floor writes its publications to the broker.
#[derive(Clone, Copy)]
pub(crate) enum Writes {
    /// One write per publication, as rumqttc's event loop does.
    Each,
    /// Every publication of a pass in one write: what an MQTT client that coalesced
    /// its queued publications would pay.
    Coalesced,
}

struct Robot {
    socket: TcpStream,
    frames: FrameBuffer,
    topic: Vec<u8>,
}

/// Streams every robot at `frequency` with the bridge's recipe, reads each once per
/// `read_every` for `seconds` after a second of warm-up, and publishes each read to the
/// broker on `broker_port` as one QoS 1 message, written as `writes` says.
pub(crate) fn run(
    robots: &[SocketAddr],
    frequency: f64,
    read_every: Duration,
    broker_port: u16,
    seconds: u64,
    writes: Writes,
) -> Floor {
    let mut fleet: Vec<Robot> = robots
        .iter()
        .enumerate()
        .map(|(i, addr)| Robot {
            socket: start_stream(*addr, frequency),
            frames: FrameBuffer::new(),
            topic: format!("floor/r{i:03}").into_bytes(),
        })
        .collect();
    let mut broker = mqtt_connect(broker_port);
    broker.set_nonblocking(true).unwrap();

    let mut payloads = Vec::new();
    let mut packet = Vec::new();
    let mut acks = [0u8; 4096];
    let (mut ack_bytes, mut next_id) = (0u64, 1u16);
    let (mut packages, mut publications) = (0u64, 0u64);
    let mut window: Option<(Instant, f64, u64)> = None;
    let started = Instant::now();
    let warm_up = Duration::from_secs(1);
    let end = started + warm_up + Duration::from_secs(seconds);
    let mut next = started + read_every;
    while Instant::now() < end {
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        next += read_every;
        if window.is_none() && started.elapsed() >= warm_up {
            window = Some((
                Instant::now(),
                super::cpu_seconds_of("thread-self"),
                packages,
            ));
        }
        packet.clear();
        for robot in &mut fleet {
            payloads.clear();
            let count = read_available(robot, &mut payloads);
            if count == 0 {
                continue;
            }
            packages += count;
            publish(&mut packet, &robot.topic, next_id, &payloads);
            if let Writes::Each = writes {
                write_all(&mut broker, &packet);
                packet.clear();
            }
            publications += 1;
            next_id = next_id.checked_add(1).unwrap_or(1);
        }
        write_all(&mut broker, &packet);
        ack_bytes += read_acks(&mut broker, &mut acks);
    }
    let (w0, c0, p0) = window.expect("the floor ran past its warm-up");
    let cpu = super::cpu_seconds_of("thread-self") - c0;
    let seconds = w0.elapsed().as_secs_f64();
    // Every publication acknowledged, or the floor did not do what the bridge does.
    let deadline = Instant::now() + Duration::from_secs(5);
    while ack_bytes / 4 < publications && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        ack_bytes += read_acks(&mut broker, &mut acks);
    }
    Floor {
        packages: packages - p0,
        publications,
        acknowledged: ack_bytes / 4,
        cpu_seconds: cpu,
        seconds,
    }
}

/// Reads everything the robot sent since the last call; appends the data packages'
/// payloads to `out` and returns how many there were.
fn read_available(robot: &mut Robot, out: &mut Vec<u8>) -> u64 {
    loop {
        let spare = robot.frames.spare();
        let room = spare.len();
        match robot.socket.read(spare) {
            Ok(0) => panic!("a simulated robot closed its stream"),
            Ok(n) => {
                robot.frames.commit(n);
                if n < room {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("reading a simulated robot: {e}"),
        }
    }
    let mut count = 0;
    while let Some(frame) = robot.frames.next_frame().expect("the simulator frames") {
        if frame.kind == package_type::DATA_PACKAGE {
            out.extend_from_slice(frame.payload);
            count += 1;
        }
    }
    count
}

/// Connects, negotiates protocol 2, sets up `timestamp,actual_q` (the bridge's recipe in
/// this benchmark) at `frequency` and starts; returns the socket, nonblocking.
fn start_stream(addr: SocketAddr, frequency: f64) -> TcpStream {
    let mut socket = TcpStream::connect(addr).expect("connect to a simulated robot");
    socket.set_nodelay(true).unwrap();
    let mut frames = FrameBuffer::new();
    let mut ask = |socket: &mut TcpStream, message: ClientMessage<'_>, reply: u8| {
        let mut buf = [0u8; 256];
        let n = message.encode(ProtocolVersion::V2, &mut buf).unwrap();
        socket.write_all(&buf[..n]).unwrap();
        loop {
            if let Some(frame) = frames.next_frame().unwrap() {
                if frame.kind == reply {
                    return frame.payload.first().copied().unwrap_or(0);
                }
                // Text messages, and data packages that beat the START reply.
                continue;
            }
            let n = socket.read(frames.spare()).unwrap();
            assert!(n > 0, "the simulator closed the handshake");
            frames.commit(n);
        }
    };
    let accepted = ask(
        &mut socket,
        ClientMessage::RequestProtocolVersion { version: 2 },
        package_type::REQUEST_PROTOCOL_VERSION,
    );
    assert_eq!(accepted, 1, "protocol 2 refused");
    let recipe = ask(
        &mut socket,
        ClientMessage::SetupOutputs {
            frequency: Some(frequency),
            names: "timestamp,actual_q",
        },
        package_type::SETUP_OUTPUTS,
    );
    assert_ne!(recipe, 0, "recipe refused");
    let started = ask(&mut socket, ClientMessage::Start, package_type::START);
    assert_eq!(started, 1, "START refused");
    socket.set_nonblocking(true).unwrap();
    socket
}

/// An MQTT 3.1.1 connection with a clean session and no keepalive, CONNACK checked.
fn mqtt_connect(port: u16) -> TcpStream {
    let mut socket =
        TcpStream::connect((std::net::Ipv4Addr::LOCALHOST, port)).expect("connect to mosquitto");
    // Nagle's algorithm stays on, as in rumqttc's default, which the bridge keeps.
    socket.set_nodelay(false).unwrap();
    let id = b"bench-floor";
    let mut body = vec![0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 0];
    body.extend_from_slice(&u16::try_from(id.len()).unwrap().to_be_bytes());
    body.extend_from_slice(id);
    let mut packet = vec![0x10];
    remaining_length(&mut packet, body.len());
    packet.extend_from_slice(&body);
    socket.write_all(&packet).unwrap();
    let mut connack = [0u8; 4];
    socket.read_exact(&mut connack).unwrap();
    assert_eq!(
        connack,
        [0x20, 2, 0, 0],
        "mosquitto refused the floor's CONNECT"
    );
    socket
}

/// A QoS 1 PUBLISH of `payload` on `topic` with packet id `id`, appended to `packet`.
fn publish(packet: &mut Vec<u8>, topic: &[u8], id: u16, payload: &[u8]) {
    packet.push(0x32);
    remaining_length(packet, 2 + topic.len() + 2 + payload.len());
    packet.extend_from_slice(&u16::try_from(topic.len()).unwrap().to_be_bytes());
    packet.extend_from_slice(topic);
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(payload);
}

/// MQTT's variable-length "remaining length".
fn remaining_length(packet: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = u8::try_from(n % 128).unwrap();
        n /= 128;
        packet.push(if n > 0 { byte | 0x80 } else { byte });
        if n == 0 {
            return;
        }
    }
}

/// Writes all of `bytes` to a nonblocking socket, waiting out a full send buffer.
fn write_all(socket: &mut TcpStream, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match socket.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_micros(100));
            }
            Err(e) => panic!("writing to mosquitto: {e}"),
        }
    }
}

/// Reads what the broker sent (nothing but 4-byte PUBACKs: the floor subscribes to
/// nothing); the bytes read.
fn read_acks(socket: &mut TcpStream, buf: &mut [u8]) -> u64 {
    let mut total = 0;
    loop {
        match socket.read(buf) {
            Ok(0) => panic!("mosquitto closed the floor's connection"),
            Ok(n) => {
                total += n as u64;
                if n < buf.len() {
                    return total;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return total,
            Err(e) => panic!("reading from mosquitto: {e}"),
        }
    }
}
