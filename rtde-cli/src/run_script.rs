//! `rtde run-script FILE`: send a URScript program and report its fate.

use crate::said;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::script::{Ports, Program, ScriptPort, ScriptSender, Step};
use rtde_sim::Sim;

/// Send a URScript program to a robot's script port and report what became of it.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Send a URScript program to a Universal Robots controller's script port \
(30002 unless --port says otherwise) and report its fate: playing, a compile error or a \
runtime exception with its line and column, or a protective stop.

Before sending, the Dashboard server is asked whether the controller is in remote control, \
the arm running and the safety status normal; if not, nothing is sent and the error says \
what to do. A file whose first statement is not `def name():` is wrapped in one. The \
program is then checked against the controller's version as `rtde check-script` does; one \
that fails is not sent (--no-check sends it anyway).

A program moves a real robot: with --robot, nothing is sent without \
--i-have-checked-the-workspace. Without --robot the program goes to a built-in simulator \
(powered on and brakes released for it), which runs the project's own programs \
(rtde_servo.script) and runs any other on its URScript engine.",
    after_help = "Examples:
  rtde run-script rtde-robot-proto/src/programs/servo/rtde_servo.script
      on the built-in simulator: it recognises the servo program and runs it
  rtde run-script pick.script --robot 192.168.1.10 --i-have-checked-the-workspace"
)]
pub(crate) struct RunScriptArgs {
    /// The URScript file.
    file: PathBuf,
    /// The robot: HOST or HOST:PORT, the port being the script port's (--port's number
    /// unless given; IPv6 in brackets). Without it, a built-in simulator.
    #[arg(long, value_name = "HOST[:PORT]")]
    robot: Option<String>,
    /// Confirms that the robot's workspace is clear: the program may move the arm.
    #[arg(long)]
    i_have_checked_the_workspace: bool,
    /// The script port: primary (30001), secondary (30002) or realtime (30003).
    #[arg(long, value_name = "PORT", default_value = "secondary", value_parser = port)]
    port: ScriptPort,
    /// Send the program without checking it first against the controller's built-ins
    /// (`rtde check-script` runs the same check): for a built-in the checker does not list.
    #[arg(long)]
    no_check: bool,
    /// How long to wait for the program to play.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::args::duration)]
    timeout: Duration,
}

fn port(name: &str) -> Result<ScriptPort, String> {
    match name {
        "primary" | "30001" => Ok(ScriptPort::Primary),
        "secondary" | "30002" => Ok(ScriptPort::Secondary),
        "realtime" | "30003" => Ok(ScriptPort::RealTime),
        _ => Err(format!(
            "unknown script port `{name}`: primary, secondary or realtime"
        )),
    }
}

/// Runs `rtde run-script`.
pub(crate) fn run(args: &RunScriptArgs) -> Result<ExitCode, String> {
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display(), e = said(e)))?;
    let program =
        Program::new(&source).map_err(|e| format!("{}: {e}", args.file.display(), e = said(e)))?;
    let (_sim, sender) = match &args.robot {
        Some(robot) => {
            let (host, number) = crate::args::robot_on(robot, args.port.default_port())?;
            if !args.i_have_checked_the_workspace {
                return Err(format!(
                    "{} may move the robot at {host}: check that its workspace is clear, then add \
                     --i-have-checked-the-workspace (nothing was sent)",
                    args.file.display()
                ));
            }
            let ports = Ports::default().with_script(args.port, number);
            (
                None,
                ScriptSender::new(resolve(&host, number)?).ports(ports),
            )
        }
        None => {
            let sim = Sim::builder()
                .dashboard()
                .script_ports()
                .start()
                .map_err(said)?;
            eprintln!(
                "no --robot given: sending to a built-in simulator (controller {})",
                sim.controller_version()
            );
            let addr = sim
                .dashboard_addr()
                .ok_or("the simulator serves no Dashboard server")?;
            let mut dashboard = Dashboard::connect(addr, DashboardOptions::new()).map_err(said)?;
            dashboard.power_on().map_err(said)?;
            dashboard.brake_release().map_err(said)?;
            eprintln!("simulator: powered on, brakes released");
            let ports = sim
                .script_sender_ports()
                .ok_or("the simulator serves no script ports")?;
            let sender = ScriptSender::new(sim.addr().ip()).ports(ports);
            (Some(sim), sender)
        }
    };
    let sender = sender
        .via(args.port)
        .timeout(args.timeout)
        .check_script(!args.no_check);
    let started = sender
        .send_observed(&program, |step| eprintln!("{}", describe(step)))
        .map_err(said)?;
    println!(
        "started: {} is playing ({} ms after sending)",
        program.name().unwrap_or("the program"),
        started.after.as_millis()
    );
    Ok(ExitCode::SUCCESS)
}

/// The address of `host`, a name or an IP address: the script sender reaches several of
/// the controller's ports at one address.
fn resolve(host: &str, port: u16) -> Result<IpAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{host}`: {e}", e = said(e)))?
        .next()
        .map(|addr| addr.ip())
        .ok_or_else(|| format!("`{host}` has no address"))
}

fn describe(step: &Step) -> String {
    match step {
        Step::Checked { mode, safety } => {
            format!("checked: remote control, {mode}, {safety}")
        }
        Step::Version(v) => format!("controller {v}"),
        Step::Sent { bytes, port } => format!("sent {bytes} bytes to the {}", port.name()),
        Step::Said(text) => format!("controller: {text}"),
        Step::Playing => "runtime state PLAYING".into(),
        other => format!("{other:?}"),
    }
}
