//! `rtde primary`: a controller's primary (or secondary) interface, printed as it comes.

use crate::said;
use std::process::ExitCode;

use rtde_robot::primary::{Decoded, PrimaryClient, PrimaryMessage, RobotState};
use rtde_robot::script::ScriptPort;
use rtde_sim::Sim;

/// Print a robot's primary interface (port 30001): robot state and robot messages.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Print what a Universal Robots controller's primary interface (port 30001) \
sends: its version, a line of robot state about every 100 ms (modes, program, joints, TCP), \
its kinematics as the controller calibrated them (once, and again when they change), and \
robot messages (runtime exceptions, safety mode changes, key messages) as they come. \
--secondary reads port 30002, which sends robot state without the messages.

Without --robot it reads a built-in simulator. At the end a summary says how many packages \
came and what was passed over.",
    after_help = "Examples:
  rtde primary --robot 192.168.1.10              until interrupted
  rtde primary --robot 192.168.1.10 --count 20   twenty robot states, then a summary
  rtde primary --secondary                       the built-in simulator's secondary interface"
)]
pub(crate) struct PrimaryArgs {
    /// The robot: HOST or HOST:PORT (port 30001, or 30002 with --secondary, unless
    /// given). Without it, a built-in simulator.
    #[arg(long, value_name = "HOST")]
    robot: Option<String>,
    /// Read the secondary interface (30002): robot state only.
    #[arg(long)]
    secondary: bool,
    /// Stop after this many robot states (with a robot: never unless given; with the
    /// built-in simulator: 10).
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}

/// Runs `rtde primary`.
pub(crate) fn run(args: &PrimaryArgs) -> Result<ExitCode, String> {
    let port = if args.secondary {
        ScriptPort::Secondary
    } else {
        ScriptPort::Primary
    };
    let (_sim, addr, count) = match &args.robot {
        Some(robot) => {
            let (host, port) = crate::args::robot_on(robot, port.default_port())?;
            (None, format!("{host}:{port}"), args.count)
        }
        None => {
            let sim = Sim::builder().script_ports().start().map_err(said)?;
            let addr = sim
                .script_addr(port)
                .ok_or("the simulator serves no script ports")?;
            eprintln!(
                "no --robot given: reading a built-in simulator's {}",
                port.name()
            );
            (Some(sim), addr.to_string(), Some(args.count.unwrap_or(10)))
        }
    };
    crate::interrupt::handle()?;
    let mut client = PrimaryClient::connect(addr.as_str()).map_err(said)?;
    println!(
        "controller {} at {} ({} robot state layout)",
        client.version(),
        client.addr(),
        if client.version().major >= 5 {
            "e-Series"
        } else {
            "CB3"
        }
    );
    let mut states = 0;
    let mut kinematics = None;
    let result = loop {
        if count.is_some_and(|n| states >= n) || crate::interrupt::asked() {
            break Ok(());
        }
        match client.recv() {
            Ok(Decoded::State { state, .. }) => {
                states += 1;
                if state.kinematics != kinematics {
                    kinematics = state.kinematics;
                    print_kinematics(state);
                }
                println!("{}", state_line(state));
            }
            Ok(Decoded::Message(PrimaryMessage::Other { .. })) => {}
            Ok(Decoded::Message(message)) => println!("message {message:?}"),
            Ok(_) => {}
            Err(e) => break Err(said(e)),
        }
    };
    let stats = client.stats();
    eprintln!(
        "{} robot states, {} robot messages; passed over: {} packages, {} sub-packages of \
         unknown types, {} cut",
        stats.states,
        stats.messages,
        stats.skipped_packages,
        stats.skipped_sub_packages,
        stats.cut_sub_packages + stats.cut_messages
    );
    result.map(|()| ExitCode::SUCCESS)
}

/// One robot state as a line: time, modes, program, joints and TCP.
fn state_line(state: &RobotState) -> String {
    let mut line = String::from("state");
    if let Some(mode) = &state.robot_mode {
        #[allow(clippy::cast_precision_loss)] // milliseconds for display
        let seconds = mode.timestamp as f64 / 1000.0;
        let program = match (mode.program_running, mode.program_paused) {
            (_, true) => "paused",
            (true, false) => "running",
            (false, false) => "stopped",
        };
        line += &format!(" t={seconds:.3}s {} program {program}", mode.mode());
    }
    if let Some(masterboard) = &state.masterboard {
        line += &format!(" {}", masterboard.safety());
    }
    if let Some(joints) = &state.joints {
        line += &format!(" q={}", vector(&joints.q_actual()));
    }
    if let Some(cartesian) = &state.cartesian {
        line += &format!(" tcp={}", vector(&cartesian.tcp_pose));
    }
    line
}

fn print_kinematics(state: &RobotState) {
    if let Some(k) = &state.kinematics {
        println!(
            "kinematics (the controller's calibrated DH): a={} d={} alpha={} theta={}",
            vector(&k.dh_a),
            vector(&k.dh_d),
            vector(&k.dh_alpha),
            vector(&k.dh_theta)
        );
    }
}

fn vector(values: &[f64]) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v:.4}")).collect();
    format!("[{}]", parts.join(", "))
}
