//! Pick and place with typed motion commands: the Dashboard server powers the arm on and
//! releases its brakes, the command program goes to the script port, then `move_j` home,
//! `move_l` down 10 cm, the tool output on, `move_l` up, a square path with blends, and
//! back home. Each reached pose is
//! printed and checked against its target; the exit code is the check (0: every pose
//! reached, 1: an error or a pose missed, 2: a real robot without the workspace flag).
//!
//! ```text
//! cargo run --example pick_and_place                          # on the simulator
//! cargo run --example pick_and_place -- --robot 192.168.1.10 --i-have-checked-the-workspace
//! ```
//!
//! On a real robot (in remote control, on e-Series) the example powers the arm on, sends
//! `rtde_command.script`, and the arm moves: 10 cm down and up, and a 10 cm
//! square, from the home pose below. Nothing is sent without
//! `--i-have-checked-the-workspace`.

use std::error::Error;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use rtde_core::writer::{IoConfig, IoWriter};
use rtde_core::{Client, ConnectOptions, RTDE_PORT, RobotMode, RtdeRecipe, StaticRecipe};
use rtde_robot::dashboard::{DASHBOARD_PORT, Dashboard, DashboardOptions};
use rtde_robot::motion::{JointMove, LinearMove, MotionOptions, ProgramSource, Reached, Robot};
use rtde_robot::script::ScriptSender;
use rtde_sim::{Motion, Sim};

const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];

/// How far a reached pose may be from its target: 1 µm on the simulator; a real arm's
/// repeatability on one.
fn tolerance(simulated: bool) -> f64 {
    if simulated { 1e-6 } else { 1e-3 }
}

#[derive(RtdeRecipe)]
struct Outputs {
    actual_digital_output_bits: u64,
}

const USAGE: &str = "usage: pick_and_place [--robot HOST[:PORT] --i-have-checked-the-workspace]";

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("pick_and_place: {}", rtde_core::Report(&*e));
            std::process::exit(1);
        }
    }
}

/// `Ok(false)` when a pose was missed or the tool output did not read back.
fn run() -> Result<bool, Box<dyn Error>> {
    let Some(args) = parse_args()? else {
        println!("{USAGE}");
        return Ok(true);
    };
    // The simulator, when there is one, runs until the end of the example.
    let (_sim, target) = match &args.robot_host {
        Some(host) => (None, robot(host, args.checked)?),
        None => {
            let (sim, target) = simulator()?;
            (Some(sim), target)
        }
    };
    let simulated = args.robot_host.is_none();

    power_on(target.dashboard)?;
    let options = MotionOptions::new().source(ProgramSource::Send(target.sender));
    let robot = Robot::connect(target.addr.as_str(), options)?;
    println!("command program sent and playing");
    let mut ok = true;
    let report = |step: &str, reached: &Reached, target: Option<&[f64; 6]>| {
        report(step, reached, target, tolerance(simulated))
    };

    let home = robot.move_j(JointMove::to(HOME).speed(1.0).accel(2.0))?;
    ok &= report("move_j home", &home, None);
    let above = home.tcp_pose;
    let mut pick = above;
    pick[2] -= 0.10;
    ok &= report(
        "move_l down 10 cm",
        &robot.move_l(LinearMove::to(pick))?,
        Some(&pick),
    );

    let (mut io_client, io) = gripper(&target.addr)?;
    ok &= grip(&mut io_client, &io)?;

    ok &= report(
        "move_l up 10 cm",
        &robot.move_l(LinearMove::to(above))?,
        Some(&above),
    );
    let around = robot.move_l_path(&square(above))?;
    ok &= report("square with blends", &around, Some(&above));

    io.tool_digital_output(&mut io_client, 0, false)?;
    io_client.close()?;
    let back = robot.move_j(JointMove::to(HOME).speed(1.0).accel(2.0))?;
    ok &= report("move_j home", &back, Some(&home.tcp_pose));
    robot.close()?;
    println!(
        "{}",
        if ok {
            "every pose reached"
        } else {
            "a pose was missed"
        }
    );
    Ok(ok)
}

struct Args {
    robot_host: Option<String>,
    checked: bool,
}

/// `None` for `--help`.
fn parse_args() -> Result<Option<Args>, Box<dyn Error>> {
    let mut parsed = Args {
        robot_host: None,
        checked: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--robot" => parsed.robot_host = Some(args.next().ok_or("--robot needs a HOST")?),
            "--i-have-checked-the-workspace" => parsed.checked = true,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}").into()),
        }
    }
    Ok(Some(parsed))
}

/// Where the example connects: RTDE, the Dashboard server, and the script port.
struct Target {
    addr: String,
    dashboard: SocketAddr,
    sender: ScriptSender,
}

/// A real robot's ports at `host`. Exits with 2, before anything is sent, unless the user
/// said the workspace is clear.
fn robot(host: &str, checked: bool) -> Result<Target, Box<dyn Error>> {
    if !checked {
        eprintln!(
            "pick_and_place: this moves the arm at {host}: 10 cm down and up and a 10 cm \
             square from the home pose {HOME:?}. Check that the workspace is clear, then \
             pass --i-have-checked-the-workspace."
        );
        std::process::exit(2);
    }
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    let ip = (name, RTDE_PORT)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| format!("{name}: no address"))?
        .ip();
    let addr = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:{RTDE_PORT}")
    };
    Ok(Target {
        addr,
        dashboard: SocketAddr::new(ip, DASHBOARD_PORT),
        sender: ScriptSender::new(ip),
    })
}

/// A simulator with a Dashboard server and script ports, the arm at home.
fn simulator() -> Result<(Sim, Target), Box<dyn Error>> {
    // A CB3's clock (125 Hz): the command program's watchdog is 50 cycles, 400 ms
    // there, 100 ms at an e-Series' 500 Hz, which a debug build on a busy machine
    // can stall past (CI once did, and the robot stopped, as it should).
    let sim = Sim::builder()
        .controller_version("3.15.8")
        .dashboard()
        .script_ports()
        .deterministic()
        .motion(Motion::still(HOME))
        .start()?;
    println!("no --robot given: a simulator at {}", sim.addr());
    let ports = sim.script_sender_ports().ok_or("no script ports")?;
    let target = Target {
        addr: sim.addr().to_string(),
        dashboard: sim.dashboard_addr().ok_or("no Dashboard server")?,
        sender: ScriptSender::new(sim.addr().ip()).ports(ports),
    };
    Ok((sim, target))
}

/// Powers on and releases the brakes through the Dashboard server, so that the command
/// program, whose preconditions are checked before it goes, can be sent next.
fn power_on(dashboard: SocketAddr) -> Result<(), Box<dyn Error>> {
    let mut d = Dashboard::connect(dashboard, DashboardOptions::new())?;
    // A robot already running (this example run a second time) is left as it is: powering
    // on a running robot leaves it running, and it would never turn idle.
    if d.robot_mode()? != RobotMode::Running {
        d.power_on()?;
        d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(30))?;
        d.brake_release()?;
        d.wait_for_robot_mode(RobotMode::Running, Duration::from_secs(30))?;
    }
    println!("powered on, brakes released: {}", d.robot_mode()?);
    Ok(())
}

/// The gripper: tool digital output 0, written on a connection of its own.
fn gripper(addr: &str) -> Result<(Client, IoWriter), Box<dyn Error>> {
    let mut io_client = Client::connect(
        addr,
        ConnectOptions::new().read_timeout(Some(Duration::from_secs(2))),
    )?;
    io_client.setup_outputs(Outputs::SPEC, 125.0)?;
    let io = IoWriter::setup(&mut io_client, &IoConfig::standard())?;
    io_client.start()?;
    Ok((io_client, io))
}

/// Closes the gripper and waits (up to 250 packages) for the output to read back.
fn grip(io_client: &mut Client, io: &IoWriter) -> Result<bool, Box<dyn Error>> {
    io.tool_digital_output(io_client, 0, true)?;
    let mut gripped = false;
    for _ in 0..250 {
        let o: Outputs = io_client.recv_as()?;
        if o.actual_digital_output_bits >> 16 & 1 == 1 {
            gripped = true;
            break;
        }
    }
    println!(
        "tool output 0 on       {}",
        if gripped {
            "read back"
        } else {
            "NOT READ BACK"
        }
    );
    Ok(gripped)
}

/// A 10 cm square from `corner`, blended at each corner but the last.
fn square(corner: [f64; 6]) -> Vec<LinearMove> {
    [(0.1, 0.0), (0.1, 0.1), (0.0, 0.1), (0.0, 0.0)]
        .iter()
        .enumerate()
        .map(|(i, (dx, dy))| {
            let mut p = corner;
            p[0] += dx;
            p[1] += dy;
            let blend = if i < 3 { 0.02 } else { 0.0 };
            LinearMove::to(p).speed(0.2).accel(1.0).blend(blend)
        })
        .collect()
}

/// Prints a reached pose and, given a target, whether it is within `tolerance` of it.
fn report(step: &str, reached: &Reached, target: Option<&[f64; 6]>, tolerance: f64) -> bool {
    let p = reached.tcp_pose;
    print!(
        "{step:<22} TCP [{:+.4}, {:+.4}, {:+.4}, {:+.4}, {:+.4}, {:+.4}]",
        p[0], p[1], p[2], p[3], p[4], p[5]
    );
    let mut hit = true;
    if let Some(t) = target {
        let off = p
            .iter()
            .zip(t)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        hit = off <= tolerance;
        print!("  {} by {off:.1e}", if hit { "reached" } else { "MISSED" });
    }
    println!();
    hit
}
