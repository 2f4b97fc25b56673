//! A smooth joint trajectory streamed through the waypoint handshake, with a watchdog: the
//! robot side is `rtde_servo.script` (on a real robot) or the simulator running
//! its behaviour. Prints the tracking error and the deadline misses; exits non-zero when
//! the robot program stopped the arm (watchdog or handshake).
//!
//! ```text
//! cargo run --example servo                              # an in-process simulator
//! cargo run --example servo -- --seconds 2 --speed 0.3   # the speed slider at 30 %
//! cargo run --example servo -- --hang-after 0.5          # stop answering: the watchdog trips
//! cargo run --example servo -- --robot 192.168.1.10      # a real controller running the template
//! ```

use std::error::Error;
use std::f64::consts::PI;
use std::time::{Duration, Instant};

use rtde_core::writer::{IoConfig, IoWriter};
use rtde_core::{Client, ConnectOptions, RTDE_PORT, RtdeRecipe};
use rtde_robot::control::{ControlLoop, LoopEvent, ProgramStatus};
use rtde_sim::{Motion, Sim};

#[derive(RtdeRecipe, Clone, Copy)]
struct State {
    timestamp: f64,
    actual_q: [f64; 6],
    target_q: [f64; 6],
}

/// The waypoint: six joint targets in the template's registers.
#[derive(RtdeRecipe)]
#[rtde(input)]
struct Waypoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

/// How far each joint swings from home, rad.
const SWING: [f64; 6] = [0.2, -0.1, 0.15, -0.1, 0.1, 0.3];

/// The trajectory: from home, each joint swings out and back over four seconds, smoothly
/// (zero velocity at both ends).
fn trajectory(t: f64) -> [f64; 6] {
    std::array::from_fn(|j| HOME[j] + SWING[j] * 0.5 * (1.0 - (2.0 * PI * t / 4.0).cos()))
}

struct Args {
    robot: Option<String>,
    seconds: f64,
    speed: Option<f64>,
    hang_after: Option<f64>,
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(2),
        Err(e) => {
            eprintln!("servo: {}", rtde_core::Report(&*e));
            std::process::exit(1);
        }
    }
}

/// `Ok(false)` when the robot program stopped the arm.
fn run() -> Result<bool, Box<dyn Error>> {
    let Some(args) = parse_args()? else {
        println!(
            "usage: servo [--robot HOST[:PORT]] [--seconds S] [--speed FRACTION] [--hang-after S]"
        );
        return Ok(true);
    };
    let (_sim, mut client) = connect(args.robot.as_deref())?;
    let frequency = client.max_frequency();
    let mut control = set_up(&mut client, frequency, args.speed)?;

    let mut tracking = Tracking::default();
    let (mut status, waypoints) =
        stream(&mut client, &mut control, &args, frequency, &mut tracking)?;
    // After a hang, the program's verdict arrives in the packages read while hanging.
    if args.hang_after.is_some() {
        let payload = client.recv()?;
        if let Some(b) = payload.get(payload.len() - 4..) {
            status = ProgramStatus::from_register(i32::from_be_bytes(b.try_into()?));
        }
    }

    print_deadline_misses(&mut control);
    print_summary(&control, waypoints, &tracking);
    print_text_messages(&mut client);
    client.close()?;
    if status.is_stopped() {
        println!("the robot program stopped the arm: {status:?}");
        return Ok(false);
    }
    Ok(true)
}

/// A simulator running the servo program's behaviour, the arm at home.
fn simulator() -> Result<Sim, Box<dyn Error>> {
    let sim = Sim::builder()
        .servo_program()
        .motion(Motion::still(HOME))
        .start()?;
    println!(
        "no --robot given: the simulator runs the servo program at {}",
        sim.addr()
    );
    Ok(sim)
}

/// Connects to the robot at `robot`, or else to a simulator started here, which the
/// caller keeps for as long as the client.
fn connect(robot: Option<&str>) -> Result<(Option<Sim>, Client), Box<dyn Error>> {
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(2)));
    Ok(match robot {
        Some(host) if host.contains(':') => (None, Client::connect(host, options)?),
        Some(host) => (None, Client::connect((host, RTDE_PORT), options)?),
        None => {
            let sim = simulator()?;
            let client = Client::connect(sim.addr(), options)?;
            (Some(sim), client)
        }
    })
}

/// Sets up the control loop's recipes (and the speed slider's, given a speed), starts the
/// stream, and sets the slider.
fn set_up(
    client: &mut Client,
    frequency: f64,
    speed: Option<f64>,
) -> Result<ControlLoop<State, Waypoint>, Box<dyn Error>> {
    let io = match speed {
        Some(_) => Some(IoWriter::setup(client, &IoConfig::new().speed_slider())?),
        None => None,
    };
    let control = ControlLoop::<State, Waypoint>::setup(client, frequency)?;
    client.start()?;
    if let (Some(io), Some(speed)) = (&io, speed) {
        io.speed_slider(client, speed)?;
        println!("speed slider at {:.0} %", speed * 100.0);
    }
    Ok(control)
}

/// The tracking error |actual_q - target_q| (its largest joint) over the cycles in which
/// the program ran.
#[derive(Default)]
struct Tracking {
    max: f64,
    sum_sq: f64,
    samples: u64,
}

impl Tracking {
    fn add(&mut self, s: &State) {
        let e = s
            .actual_q
            .iter()
            .zip(&s.target_q)
            .map(|(a, t)| (a - t).abs())
            .fold(0.0, f64::max);
        self.max = self.max.max(e);
        self.sum_sq += e * e;
        self.samples += 1;
    }

    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    fn rms(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            (self.sum_sq / self.samples as f64).sqrt()
        }
    }
}

/// Streams the trajectory for `--seconds`, one waypoint per acknowledgement, until the
/// program stops the arm; after `--hang-after`, stops answering. Returns the program's last
/// status and the number of waypoints sent.
fn stream(
    client: &mut Client,
    control: &mut ControlLoop<State, Waypoint>,
    args: &Args,
    frequency: f64,
    tracking: &mut Tracking,
) -> Result<(ProgramStatus, u32), Box<dyn Error>> {
    let dt = 1.0 / frequency;
    let started = Instant::now();
    let mut waypoint = 0u32;
    let mut status = ProgramStatus::Waiting;
    while started.elapsed().as_secs_f64() < args.seconds {
        if args
            .hang_after
            .is_some_and(|h| started.elapsed().as_secs_f64() >= h)
        {
            // A hung client: keep the connection, stop answering.
            let _ = client.recv()?;
            print_text_messages(client);
            continue;
        }
        let mut seen = None;
        let report = control.cycle(client, |state, handshake| {
            seen = Some(*state);
            if handshake.advance() {
                waypoint += 1;
            }
            Waypoint {
                q: trajectory(f64::from(waypoint) * dt),
            }
        })?;
        status = report.status;
        if let Some(s) = seen
            && status == ProgramStatus::Running
        {
            tracking.add(&s);
        }
        if status.is_stopped() {
            break;
        }
    }
    Ok((status, waypoint))
}

/// The cycles whose command went out after the next package had arrived.
fn print_deadline_misses(control: &mut ControlLoop<State, Waypoint>) {
    for event in control.events() {
        if let LoopEvent::DeadlineMiss {
            cycle,
            response,
            behind: false,
        } = event
        {
            println!("deadline missed in cycle {cycle}: command {response:?} after the package");
        }
    }
}

fn print_summary(control: &ControlLoop<State, Waypoint>, waypoints: u32, tracking: &Tracking) {
    let stats = control.stats();
    println!(
        "{} cycles, {waypoints} waypoints, {} acknowledged; tracking error |actual_q - target_q|: \
         max {:.4} rad, rms {:.4} rad; deadline misses: {} ({} of them with the next package \
         already there when the cycle began); longest response {:?}",
        stats.cycles,
        control.handshake().acked(),
        tracking.max,
        tracking.rms(),
        stats.misses,
        stats.misses_behind,
        stats.max_response
    );
}

fn print_text_messages(client: &mut Client) {
    for text in client.text_messages() {
        println!("controller says: {}", text.message);
    }
}

fn parse_args() -> Result<Option<Args>, Box<dyn Error>> {
    let mut args = Args {
        robot: std::env::var("RTDE_ROBOT").ok().filter(|r| !r.is_empty()),
        seconds: 4.0,
        speed: None,
        hang_after: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--robot" => args.robot = Some(value()?),
            "--seconds" => args.seconds = value()?.parse()?,
            "--speed" => args.speed = Some(value()?.parse()?),
            "--hang-after" => args.hang_after = Some(value()?.parse()?),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    Ok(Some(args))
}
