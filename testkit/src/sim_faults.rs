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

/// The command-line arguments that serve the Dashboard server and the script ports on
/// free ports, for [`ROBOT_FAULTS`].
pub const ROBOT_ARGS: &[&str] = &["--dashboard-port", "0", "--script-ports", "0"];

/// A robot-side fault flag (Dashboard server, script ports) and its check.
pub type RobotFaultCase = (&'static str, fn(&Services));

/// Every robot-side fault flag, checked with the simulator started with [`ROBOT_ARGS`].
pub const ROBOT_FAULTS: &[RobotFaultCase] = &[
    ("dashboard-delay=300ms", dashboard_delay),
    ("dashboard-refuse=power on", dashboard_refuse),
    ("runtime-exception=4,2", runtime_exception),
    ("compile-error=5,1", compile_error),
    ("protective-stop-after=0ms", protective_stop_after),
];

/// The addresses a simulator's command line prints for its Dashboard server and script ports.
#[derive(Clone, Copy, Debug)]
pub struct Services {
    /// The Dashboard server.
    pub dashboard: SocketAddr,
    /// The primary interface (30001).
    pub primary: SocketAddr,
    /// The secondary interface (30002).
    pub secondary: SocketAddr,
}

impl Services {
    /// Reads the printed lines (`…: Dashboard server on ADDR`, `…: primary interface
    /// (30001) on ADDR`, …) until every address is known; `None` if they end first.
    pub fn from_lines(lines: impl IntoIterator<Item = String>) -> Option<Services> {
        let (mut dashboard, mut primary, mut secondary) = (None, None, None);
        for line in lines {
            let addr = |marker: &str| -> Option<SocketAddr> {
                line.split_once(marker)?.1.trim().parse().ok()
            };
            dashboard = dashboard.or_else(|| addr("Dashboard server on "));
            primary = primary.or_else(|| addr("primary interface (30001) on "));
            secondary = secondary.or_else(|| addr("secondary interface (30002) on "));
            if let (Some(dashboard), Some(primary), Some(secondary)) =
                (dashboard, primary, secondary)
            {
                return Some(Services {
                    dashboard,
                    primary,
                    secondary,
                });
            }
        }
        None
    }
}

/// A Dashboard connection: one line out, one line back.
struct Dash {
    reader: std::io::BufReader<TcpStream>,
    writer: TcpStream,
}

impl Dash {
    fn connect(addr: SocketAddr) -> Dash {
        let stream = TcpStream::connect(addr).expect("connect to the Dashboard server");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let mut dash = Dash {
            reader: std::io::BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        assert!(
            dash.read()
                .starts_with("Connected: Universal Robots Dashboard Server")
        );
        dash
    }

    fn read(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a Dashboard reply");
        line.trim_end().to_owned()
    }

    fn ask(&mut self, command: &str) -> String {
        writeln!(self.writer, "{command}").unwrap();
        self.read()
    }

    /// Powered on and brakes released.
    fn ready(&mut self) {
        assert_eq!(self.ask("power on"), "Powering on");
        assert_eq!(self.ask("brake release"), "Brake releasing");
    }
}

fn dashboard_delay(s: &Services) {
    let mut d = Dash::connect(s.dashboard);
    let start = Instant::now();
    assert_eq!(d.ask("robotmode"), "Robotmode: POWER_OFF");
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
}

fn dashboard_refuse(s: &Services) {
    let mut d = Dash::connect(s.dashboard);
    assert_eq!(d.ask("power on"), "Failed to execute: power on");
    assert_eq!(d.ask("robotmode"), "Robotmode: POWER_OFF");
}

/// Sends a program to the secondary port and returns the first runtime exception the
/// primary interface reports: (line, column, text).
fn exception_of_a_program(s: &Services) -> (i32, i32, String) {
    Dash::connect(s.dashboard).ready();
    let mut primary = TcpStream::connect(s.primary).expect("connect to the primary interface");
    primary.set_read_timeout(Some(WAIT)).unwrap();
    let deadline = Instant::now() + WAIT;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 1024];
    let mut secondary = None;
    loop {
        assert!(
            Instant::now() < deadline,
            "no runtime exception within {WAIT:?}"
        );
        // Packages: size (i32), type (u8); robot messages: timestamp, source, kind.
        while let Some(size) = bytes.first_chunk::<4>().map(|b| i32::from_be_bytes(*b)) {
            let size = usize::try_from(size).expect("a positive size");
            if bytes.len() < size {
                break;
            }
            let package: Vec<u8> = bytes.drain(..size).collect();
            // The version message first: from then on this connection hears the program.
            if package[4] == 20 && package[14] == 3 && secondary.is_none() {
                let mut stream =
                    TcpStream::connect(s.secondary).expect("connect to the secondary interface");
                stream.write_all(b"def p():\n  x = 1\nend\n").unwrap();
                secondary = Some(stream);
            }
            if package[4] == 20 && package[14] == 10 {
                let int = |at: usize| i32::from_be_bytes(package[at..at + 4].try_into().unwrap());
                return (
                    int(15),
                    int(19),
                    String::from_utf8_lossy(&package[23..]).into_owned(),
                );
            }
        }
        let n = primary.read(&mut buf).expect("primary interface bytes");
        assert!(n > 0, "the primary interface closed");
        bytes.extend_from_slice(&buf[..n]);
    }
}

fn runtime_exception(s: &Services) {
    let (line, column, text) = exception_of_a_program(s);
    assert_eq!((line, column), (4, 2));
    assert!(text.starts_with("runtime_exception"), "{text}");
}

fn compile_error(s: &Services) {
    let (line, column, text) = exception_of_a_program(s);
    assert_eq!((line, column), (5, 1));
    assert!(text.starts_with("compile_error"), "{text}");
}

fn protective_stop_after(s: &Services) {
    let mut d = Dash::connect(s.dashboard);
    d.ready();
    assert!(d.ask("load /programs/a.urp").starts_with("Loading program"));
    assert_eq!(d.ask("play"), "Starting program");
    let deadline = Instant::now() + WAIT;
    while d.ask("safetystatus") != "Safetystatus: PROTECTIVE_STOP" {
        assert!(
            Instant::now() < deadline,
            "no protective stop within {WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(d.ask("programState").starts_with("PAUSED"));
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
