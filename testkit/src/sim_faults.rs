//! One observable effect per fault flag, checked over a raw connection to a simulator
//! started from a command line (`rtde-sim --fault …` or `rtde sim --fault …`): the same
//! table for both binaries, so a flag one of them drops fails a test. Every wait is
//! bounded.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, Frame, FrameBuffer, ProtocolVersion, package_type,
};

const WAIT: Duration = Duration::from_secs(10);

/// A fault flag's value, the extra arguments its check needs, and the check.
pub type FaultCase = (&'static str, &'static [&'static str], fn(SocketAddr));

/// Every fault flag.
pub const FAULTS: &[FaultCase] = &[
    ("skip-every=2", &[], skip_every),
    ("skip-ticks=1", &["--unpaced"], skip_ticks),
    ("delay-replies=300ms", &[], slow_replies),
    ("slow-boot=60s,300ms", &[], slow_replies),
    (
        "text=reply:GET_URCONTROL_VERSION,warning,hello from a fault",
        &[],
        text_message,
    ),
    ("close-mid-frame=reply:START", &[], close_mid_frame),
    ("malformed=reply:START,unknown-type", &[], malformed),
    ("data-before-start-reply", &[], data_before_start_reply),
    ("data-before-pause-reply", &[], data_before_pause_reply),
    ("build=108318", &[], build_number),
    (
        "protective-stop=20ms",
        &["--program", "command"],
        protective_stop,
    ),
    ("runtime-stop=20ms", &["--program", "command"], runtime_stop),
];

/// A raw protocol v2 connection.
struct Raw {
    stream: TcpStream,
    frames: FrameBuffer,
    buf: Vec<u8>,
}

/// What came next on a connection.
#[derive(Debug, PartialEq)]
enum Next {
    /// A whole package: its type byte and payload.
    Package(u8, Vec<u8>),
    /// The connection closed, with this many bytes of a package pending.
    Closed(usize),
}

impl Raw {
    fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let mut raw = Raw {
            stream,
            frames: FrameBuffer::new(),
            buf: vec![0; 4096],
        };
        raw.send(&ClientMessage::RequestProtocolVersion { version: 2 });
        assert_eq!(
            raw.message(),
            ControllerMessage::ProtocolVersionReply { accepted: true }
        );
        raw
    }

    fn send(&mut self, msg: &ClientMessage<'_>) {
        let n = msg.encode(ProtocolVersion::V2, &mut self.buf).unwrap();
        self.stream.write_all(&self.buf[..n]).unwrap();
    }

    fn next(&mut self) -> Next {
        loop {
            if let Ok(Some(frame)) = self.frames.next_frame() {
                return Next::Package(frame.kind, frame.payload.to_vec());
            }
            match self.stream.read(self.frames.spare()) {
                Ok(0) => return Next::Closed(self.frames.buffered().len()),
                Ok(n) => self.frames.commit(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => panic!("nothing from the simulator within {WAIT:?}: {e}"),
            }
        }
    }

    /// The next package, decoded.
    fn message(&mut self) -> ControllerMessage<'static> {
        match self.next() {
            Next::Package(kind, payload) => {
                // A few packages per test: leaking them keeps the matching simple.
                let payload: &'static [u8] = Box::leak(payload.into_boxed_slice());
                ControllerMessage::decode(Frame { kind, payload }, ProtocolVersion::V2)
                    .unwrap_or_else(|e| panic!("undecodable package: {e}"))
            }
            Next::Closed(pending) => panic!("closed ({pending} bytes pending)"),
        }
    }

    /// SETUP_OUTPUTS of `timestamp` at `frequency`.
    fn timestamps(&mut self, frequency: f64) {
        self.send(&ClientMessage::SetupOutputs {
            frequency: Some(frequency),
            names: "timestamp",
        });
        assert!(matches!(
            self.message(),
            ControllerMessage::SetupOutputsReply {
                recipe_id: Some(1),
                ..
            }
        ));
    }

    fn start(&mut self) {
        self.send(&ClientMessage::Start);
        assert_eq!(
            self.message(),
            ControllerMessage::StartReply { accepted: true }
        );
    }

    fn timestamp(&mut self) -> f64 {
        match self.message() {
            ControllerMessage::DataPackage { payload, .. } => {
                f64::from_be_bytes(payload[..8].try_into().unwrap())
            }
            other => panic!("expected a data package, got {other:?}"),
        }
    }
}

/// The control-loop ticks between two timestamps of a 500 Hz controller.
fn ticks(from: f64, to: f64) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let ticks = ((to - from) * 500.0).round() as i64;
    ticks
}

fn skip_every(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.timestamps(500.0);
    c.start();
    let (a, b) = (c.timestamp(), c.timestamp());
    assert_eq!(ticks(a, b), 2, "every second package left out");
}

fn skip_ticks(addr: SocketAddr) {
    // Unpaced: the connection's clock starts at tick 0.
    let mut c = Raw::connect(addr);
    c.timestamps(500.0);
    c.start();
    let got: Vec<i64> = (0..3).map(|_| ticks(0.0, c.timestamp())).collect();
    assert_eq!(got, [0, 2, 3]);
}

fn slow_replies(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    let asked = Instant::now();
    c.send(&ClientMessage::GetUrcontrolVersion);
    assert!(matches!(
        c.message(),
        ControllerMessage::UrcontrolVersion(_)
    ));
    assert!(
        asked.elapsed() >= Duration::from_millis(300),
        "the reply came after {:?}",
        asked.elapsed()
    );
}

fn text_message(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.send(&ClientMessage::GetUrcontrolVersion);
    let ControllerMessage::TextMessage(text) = c.message() else {
        panic!("expected the text first")
    };
    assert_eq!(text.message, b"hello from a fault");
    assert!(matches!(
        c.message(),
        ControllerMessage::UrcontrolVersion(_)
    ));
}

fn close_mid_frame(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.timestamps(500.0);
    c.send(&ClientMessage::Start);
    assert!(
        matches!(c.next(), Next::Closed(pending) if pending > 0),
        "half a package, then the end"
    );
}

fn malformed(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.timestamps(500.0);
    c.send(&ClientMessage::Start);
    let mut reply = [0u8; 4];
    c.stream.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [0, 4, 0x00, 1], "START reply with type byte 0");
}

fn data_before_start_reply(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    // 2 Hz: 250 ticks apart, so nothing else is due around START.
    c.timestamps(2.0);
    c.send(&ClientMessage::Start);
    let first = c.timestamp();
    assert_eq!(
        c.message(),
        ControllerMessage::StartReply { accepted: true }
    );
    assert_eq!(ticks(first, c.timestamp()), 250, "no tick sent twice");
}

fn data_before_pause_reply(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.timestamps(2.0);
    c.start();
    let first = c.timestamp();
    // The next package is due 500 ms later: without the fault PAUSE is answered first.
    c.send(&ClientMessage::Pause);
    assert_eq!(ticks(first, c.timestamp()), 250);
    assert_eq!(
        c.message(),
        ControllerMessage::PauseReply { accepted: true }
    );
    assert!(
        package_type::is_known(package_type::PAUSE),
        "the package types this check relies on"
    );
}

fn build_number(addr: SocketAddr) {
    let mut c = Raw::connect(addr);
    c.send(&ClientMessage::GetUrcontrolVersion);
    let ControllerMessage::UrcontrolVersion(v) = c.message() else {
        panic!("expected the version")
    };
    assert_eq!(v.to_string(), "5.21.0.108318");
}

/// Starts a `move_j` on the command program's registers (upper range: command 1, sequence
/// 1, joint 0 to 1 rad at 0.5 rad/s and 1 rad/s²) and returns `(safety_mode,
/// runtime_state)` once the program stopped. The client never kicks the watchdog, so the
/// faults must come within its 100 ms.
fn move_until_stopped(addr: SocketAddr) -> (i32, u32) {
    let mut c = Raw::connect(addr);
    c.send(&ClientMessage::SetupOutputs {
        frequency: Some(500.0),
        names: "safety_mode,runtime_state",
    });
    assert!(matches!(
        c.message(),
        ControllerMessage::SetupOutputsReply {
            recipe_id: Some(1),
            ..
        }
    ));
    c.send(&ClientMessage::SetupInputs {
        names: "input_int_register_31,input_int_register_32,input_double_register_30,\
                input_double_register_36,input_double_register_37",
    });
    let ControllerMessage::SetupInputsReply { recipe_id, .. } = c.message() else {
        panic!("expected the input setup's reply")
    };
    assert_ne!(recipe_id, 0, "the command registers were refused");
    c.start();
    let mut payload = Vec::new();
    payload.extend(1i32.to_be_bytes());
    payload.extend(1i32.to_be_bytes());
    for v in [1.0f64, 0.5, 1.0] {
        payload.extend(v.to_be_bytes());
    }
    c.send(&ClientMessage::DataPackage {
        recipe_id,
        payload: &payload,
    });
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let ControllerMessage::DataPackage { payload, .. } = c.message() {
            let safety = i32::from_be_bytes(payload[..4].try_into().unwrap());
            let runtime = u32::from_be_bytes(payload[4..8].try_into().unwrap());
            if runtime == 1 {
                return (safety, runtime);
            }
        }
    }
    panic!("the program never stopped")
}

fn protective_stop(addr: SocketAddr) {
    // PROTECTIVE_STOP, program STOPPED.
    assert_eq!(move_until_stopped(addr), (3, 1));
}

fn runtime_stop(addr: SocketAddr) {
    // Safety NORMAL, program STOPPED.
    assert_eq!(move_until_stopped(addr), (1, 1));
}
