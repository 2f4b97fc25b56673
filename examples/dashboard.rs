//! Runs a program through the Dashboard server: power on, brake release, load, play, the
//! robot's mode and safety status, stop. Each step's reply is checked; the exit code is
//! the verdict (0: every step as expected).
//!
//! ```text
//! cargo run --example dashboard                      # an in-process simulator
//! cargo run --example dashboard -- --robot 192.168.1.10 --program /programs/demo.urp \
//!     --i-have-checked-the-workspace                 # a real robot: it powers on and plays!
//! ```

use std::error::Error;
use std::time::Duration;

use rtde_core::{RobotMode, RuntimeState, SafetyStatus};
use rtde_robot::dashboard::{DASHBOARD_PORT, Dashboard, DashboardOptions};
use rtde_sim::Sim;

struct Args {
    robot: Option<String>,
    program: String,
    checked: bool,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("dashboard: {}", rtde_core::Report(&*e));
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let options = DashboardOptions::new().timeout(Duration::from_secs(5));
    let sim;
    let mut d = match &args.robot {
        Some(host) => {
            if !args.checked {
                return Err(format!(
                    "this powers on the robot at {host} and plays {}: check its workspace, then add \
                     --i-have-checked-the-workspace",
                    args.program
                )
                .into());
            }
            Dashboard::connect((host.as_str(), DASHBOARD_PORT), options)?
        }
        None => {
            sim = Sim::builder().dashboard().start()?;
            println!(
                "no --robot given: using the simulator's Dashboard server at {}",
                sim.dashboard_addr().ok_or("no Dashboard server")?
            );
            Dashboard::connect(sim.dashboard_addr().ok_or("no Dashboard server")?, options)?
        }
    };
    println!("controller {}", d.controller_version());

    // A robot already running (this example run a second time) is left as it is: powering
    // on a running robot leaves it running, and it would never turn idle.
    if d.robot_mode()? != RobotMode::Running {
        d.power_on()?;
        d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(30))?;
        println!("powered on: {}", d.robot_mode()?);
        d.brake_release()?;
        d.wait_for_robot_mode(RobotMode::Running, Duration::from_secs(30))?;
    }
    println!("brakes released: {}", d.robot_mode()?);

    d.load(&args.program)?;
    println!("loaded: {}", d.loaded_program()?.unwrap_or_default());
    d.play()?;
    let state = d.program_state()?;
    println!(
        "playing: {} {}",
        state.state,
        state.program.unwrap_or_default()
    );
    expect("program state", state.state, RuntimeState::Playing)?;
    expect("robot mode", d.robot_mode()?, RobotMode::Running)?;
    let safety = d.safety_status()?;
    println!("safety status: {safety}");
    expect("safety status", safety, SafetyStatus::Normal)?;

    d.stop()?;
    let state = d.program_state()?;
    println!("stopped: {}", state.state);
    expect("program state", state.state, RuntimeState::Stopped)?;
    println!("every step as expected");
    Ok(())
}

fn expect<T: PartialEq + std::fmt::Display>(
    what: &str,
    got: T,
    want: T,
) -> Result<(), Box<dyn Error>> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: expected {want}, got {got}").into())
    }
}

fn parse_args() -> Result<Args, Box<dyn Error>> {
    let mut args = Args {
        robot: None,
        program: "/programs/demo.urp".into(),
        checked: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--robot" => args.robot = Some(it.next().ok_or("--robot needs a host")?),
            "--program" => args.program = it.next().ok_or("--program needs a path")?,
            "--i-have-checked-the-workspace" => args.checked = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --robot HOST, --program PATH, \
                     --i-have-checked-the-workspace"
                )
                .into());
            }
        }
    }
    Ok(args)
}
