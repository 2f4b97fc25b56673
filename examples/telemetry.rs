//! Live, typed telemetry: joint angles, TCP pose, robot mode, the measured package rate and
//! the packages the controller skipped.
//!
//! ```text
//! cargo run --example telemetry                          # an in-process simulator
//! cargo run --example telemetry -- --robot 192.168.1.10  # a real controller (or RTDE_ROBOT=…)
//! cargo run --example telemetry -- --seconds 10 --frequency 500
//! ```

use std::error::Error;
use std::time::{Duration, Instant};

use rtde_core::{Client, ConnectOptions, Pose, RTDE_PORT, RobotMode, RtdeRecipe, StaticRecipe};
use rtde_sim::Sim;

/// What we ask the controller for; every name and type is checked at compile time.
#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f64,
    actual_q: [f64; 6],
    actual_tcp_pose: Pose,
    robot_mode: RobotMode,
}

struct Args {
    robot: Option<String>,
    seconds: f64,
    frequency: Option<f64>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("telemetry: {}", rtde_core::Report(&*e));
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let Some(args) = parse_args()? else {
        println!("usage: telemetry [--robot HOST[:PORT]] [--seconds S] [--frequency HZ]");
        return Ok(());
    };

    // Without a robot, a simulated UR5e in this process, on 127.0.0.1 and a free port.
    let sim;
    let mut client = match &args.robot {
        Some(host) => {
            println!("connecting to the controller at {host}");
            if host.contains(':') {
                Client::connect(host.as_str(), ConnectOptions::new())?
            } else {
                Client::connect((host.as_str(), RTDE_PORT), ConnectOptions::new())?
            }
        }
        None => {
            sim = Sim::builder().start()?;
            println!("no --robot given: using the simulator at {}", sim.addr());
            Client::connect(sim.addr(), ConnectOptions::new())?
        }
    };
    println!(
        "controller {} ({}), protocol {}",
        client.controller_version(),
        client
            .generation()
            .map_or("unknown generation", |g| g.as_str()),
        client.protocol_version()
    );

    // 125 Hz works on every generation; over protocol v1 the loop rate is the only choice.
    let frequency = args
        .frequency
        .unwrap_or_else(|| client.max_frequency().min(125.0));
    client.setup_outputs(Telemetry::SPEC, frequency)?;
    client.start()?;

    let started = Instant::now();
    let mut next_print = started;
    let mut packages = 0u64;
    while started.elapsed().as_secs_f64() < args.seconds {
        let t: Telemetry = client.recv_as()?;
        packages += 1;
        if Instant::now() >= next_print {
            next_print += Duration::from_millis(250);
            print_row(&t);
        }
        for text in client.text_messages() {
            println!("controller says: {text:?}");
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let stats = client.stats();
    client.close()?;
    #[allow(clippy::cast_precision_loss)] // a package count far below 2^52
    let rate = packages as f64 / elapsed;
    println!(
        "{packages} packages in {elapsed:.2} s: {rate:.1} per second at {frequency} Hz asked; \
         {} skipped by the controller",
        stats.skipped
    );
    Ok(())
}

fn print_row(t: &Telemetry) {
    let q = t.actual_q.map(f64::to_degrees);
    let p = t.actual_tcp_pose;
    println!(
        "t={:8.3} s  q=[{:7.2} {:7.2} {:7.2} {:7.2} {:7.2} {:7.2}] deg  \
         tcp=({:6.1}, {:6.1}, {:6.1}) mm rv=({:5.2}, {:5.2}, {:5.2})  {}",
        t.timestamp,
        q[0],
        q[1],
        q[2],
        q[3],
        q[4],
        q[5],
        p.x * 1000.0,
        p.y * 1000.0,
        p.z * 1000.0,
        p.rx,
        p.ry,
        p.rz,
        t.robot_mode
    );
}

fn parse_args() -> Result<Option<Args>, Box<dyn Error>> {
    let mut args = Args {
        robot: std::env::var("RTDE_ROBOT").ok().filter(|r| !r.is_empty()),
        seconds: 3.0,
        frequency: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--robot" => args.robot = Some(value()?),
            "--seconds" => args.seconds = value()?.parse()?,
            "--frequency" => args.frequency = Some(value()?.parse()?),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`; try --help").into()),
        }
    }
    Ok(Some(args))
}
