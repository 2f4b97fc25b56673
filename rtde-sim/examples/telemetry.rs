//! Live, typed telemetry from a controller: joint angles, TCP pose, robot mode, the
//! measured package rate and the packages the controller skipped.
//!
//! ```text
//! cargo run --example telemetry                      # an in-process simulator
//! cargo run --example telemetry -- --robot 10.0.0.5  # a real controller (or RTDE_ROBOT=10.0.0.5)
//! cargo run --example telemetry -- --seconds 10 --frequency 500
//! ```
//!
//! It speaks the protocol through `rtde_core::protocol` and decodes with a
//! `DynamicRecipe`: it was written before `rtde_core::Client` existed, which shrinks it to a
//! few lines.

use std::error::Error;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, FrameBuffer, MessageLevel, ProtocolVersion,
};
use rtde_core::{DynamicRecipe, OutputRecipe, Value};
use rtde_sim::Sim;

const FIELDS: [&str; 4] = ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode"];

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("telemetry: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let mut robot = std::env::var("RTDE_ROBOT").ok().filter(|r| !r.is_empty());
    let mut seconds = 3.0_f64;
    let mut frequency = 125.0_f64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--robot" => robot = Some(value()?),
            "--seconds" => seconds = value()?.parse()?,
            "--frequency" => frequency = value()?.parse()?,
            "-h" | "--help" => {
                println!("usage: telemetry [--robot HOST] [--seconds S] [--frequency HZ]");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }

    // Without a robot, a simulator in this process.
    let (_sim, addr) = match robot {
        Some(host) => {
            let addr = (host.as_str(), 30004)
                .to_socket_addrs()?
                .next()
                .ok_or(format!("`{host}` has no address"))?;
            println!("connecting to the controller at {addr}");
            (None, addr)
        }
        None => {
            let sim = Sim::builder().start()?;
            let addr = sim.addr();
            println!("no --robot given: using a simulated UR5e on {addr}");
            (Some(sim), addr)
        }
    };

    let mut rtde = Connection::open(addr)?;
    let v2 = rtde.request(&ClientMessage::RequestProtocolVersion { version: 2 })?;
    if !matches!(v2, Reply::Accepted(true)) {
        rtde.version = ProtocolVersion::V1;
        println!("the controller speaks protocol v1 only: outputs come at its control-loop rate");
    }
    if let Reply::Version(v) = rtde.request(&ClientMessage::GetUrcontrolVersion)? {
        println!("controller software {v}");
    }
    let mut recipe = DynamicRecipe::outputs(FIELDS)?;
    let names = FIELDS.join(",");
    let setup = ClientMessage::SetupOutputs {
        frequency: (rtde.version == ProtocolVersion::V2).then_some(frequency),
        names: &names,
    };
    match rtde.request(&setup)? {
        Reply::Types(types) if !types.split(',').any(|t| t == "NOT_FOUND") && !types.is_empty() => {
        }
        Reply::Types(types) => return Err(format!("output setup refused: `{types}`").into()),
        other => return Err(format!("unexpected reply {other:?}").into()),
    }
    if !matches!(rtde.request(&ClientMessage::Start)?, Reply::Accepted(true)) {
        return Err("the controller refused to start".into());
    }

    let started = Instant::now();
    let mut last_print = started;
    let (mut received, mut skipped, mut previous) = (0u64, 0u64, None::<f64>);
    let mut step = None::<f64>;
    while started.elapsed().as_secs_f64() < seconds {
        rtde.next_data(&mut recipe)?;
        received += 1;
        let Some(Value::Double(t)) = recipe.get("timestamp").copied() else {
            continue;
        };
        // The smallest timestamp step seen is the output period; longer steps are gaps.
        if let Some(p) = previous {
            let dt = t - p;
            step = Some(step.map_or(dt, |s: f64| s.min(dt)));
            if let Some(s) = step {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let missing = ((dt / s).round() as u64).saturating_sub(1);
                skipped += missing;
            }
        }
        previous = Some(t);
        if last_print.elapsed() >= Duration::from_millis(500) {
            last_print = Instant::now();
            #[allow(clippy::cast_precision_loss)]
            let rate = received as f64 / started.elapsed().as_secs_f64();
            print_line(&recipe, t, rate, skipped);
        }
    }
    rtde.request(&ClientMessage::Pause)?;
    #[allow(clippy::cast_precision_loss)]
    let rate = received as f64 / started.elapsed().as_secs_f64();
    println!(
        "{received} packages in {seconds} s ({rate:.1} Hz), {skipped} skipped by the controller"
    );
    Ok(())
}

fn print_line(recipe: &DynamicRecipe, t: f64, rate: f64, skipped: u64) {
    let (Some(Value::Vector6d(q)), Some(Value::Vector6d(pose)), Some(Value::Int32(mode))) = (
        recipe.get("actual_q"),
        recipe.get("actual_TCP_pose"),
        recipe.get("robot_mode"),
    ) else {
        return;
    };
    let degrees: Vec<String> = q
        .iter()
        .map(|r| format!("{:7.2}", r.to_degrees()))
        .collect();
    println!(
        "t={t:9.3} s  q=[{}]°  tcp=[{:.4} {:.4} {:.4} m | {:.3} {:.3} {:.3} rad]  mode={}  {rate:.1} Hz  skipped={skipped}",
        degrees.join(" "),
        pose[0],
        pose[1],
        pose[2],
        pose[3],
        pose[4],
        pose[5],
        robot_mode(*mode),
    );
}

fn robot_mode(mode: i32) -> &'static str {
    match mode {
        -1 => "NO_CONTROLLER",
        0 => "DISCONNECTED",
        1 => "CONFIRM_SAFETY",
        2 => "BOOTING",
        3 => "POWER_OFF",
        4 => "POWER_ON",
        5 => "IDLE",
        6 => "BACKDRIVE",
        7 => "RUNNING",
        8 => "UPDATING_FIRMWARE",
        _ => "UNKNOWN",
    }
}

/// A reply to a control request.
#[derive(Debug)]
enum Reply {
    Accepted(bool),
    Version(rtde_core::fields::ControllerVersion),
    Types(String),
}

/// The socket and its framing.
struct Connection {
    socket: TcpStream,
    frames: FrameBuffer,
    version: ProtocolVersion,
    buf: Vec<u8>,
}

impl Connection {
    fn open(addr: SocketAddr) -> Result<Self> {
        let socket = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        socket.set_read_timeout(Some(Duration::from_secs(5)))?;
        socket.set_nodelay(true)?;
        Ok(Connection {
            socket,
            frames: FrameBuffer::new(),
            version: ProtocolVersion::V2,
            buf: vec![0; 4096],
        })
    }

    /// Sends a control request and waits for its reply, printing text messages and
    /// passing over data packages on the way.
    fn request(&mut self, msg: &ClientMessage<'_>) -> Result<Reply> {
        let n = msg.encode(self.version, &mut self.buf)?;
        self.socket.write_all(&self.buf[..n])?;
        let kind = msg.package_type();
        loop {
            let frame = self.next_frame()?;
            if frame.0 != kind {
                continue;
            }
            let version = self.version;
            let (kind, payload) = frame;
            let decoded = ControllerMessage::decode(
                rtde_core::protocol::Frame {
                    kind,
                    payload: &payload,
                },
                version,
            )?;
            return Ok(match decoded {
                ControllerMessage::ProtocolVersionReply { accepted }
                | ControllerMessage::StartReply { accepted }
                | ControllerMessage::PauseReply { accepted } => Reply::Accepted(accepted),
                ControllerMessage::UrcontrolVersion(v) => Reply::Version(v),
                ControllerMessage::SetupOutputsReply { types, .. }
                | ControllerMessage::SetupInputsReply { types, .. } => {
                    Reply::Types(types.to_owned())
                }
                other => return Err(format!("unexpected package {other:?}").into()),
            });
        }
    }

    /// Decodes the next data package into `recipe`.
    fn next_data(&mut self, recipe: &mut DynamicRecipe) -> Result<()> {
        loop {
            let (kind, payload) = self.next_frame()?;
            let frame = rtde_core::protocol::Frame {
                kind,
                payload: &payload,
            };
            if let ControllerMessage::DataPackage { payload, .. } =
                ControllerMessage::decode(frame, self.version)?
            {
                recipe.decode_into(payload)?;
                return Ok(());
            }
        }
    }

    /// The next package as (type, payload); text messages are printed and skipped.
    fn next_frame(&mut self) -> Result<(u8, Vec<u8>)> {
        loop {
            if let Some(frame) = self.frames.next_frame()? {
                if let ControllerMessage::TextMessage(t) =
                    ControllerMessage::decode(frame, self.version)?
                {
                    let level = match t.level {
                        MessageLevel::Exception => "exception",
                        MessageLevel::Error => "error",
                        MessageLevel::Warning => "warning",
                        _ => "info",
                    };
                    println!("controller {level}: {}", t.message_lossy());
                    continue;
                }
                return Ok((frame.kind, frame.payload.to_vec()));
            }
            let n = self.socket.read(self.frames.spare())?;
            if n == 0 {
                return Err("the controller closed the connection".into());
            }
            self.frames.commit(n);
        }
    }
}
