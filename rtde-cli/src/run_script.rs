//! `rtde run-script FILE`: send a URScript program and report its fate.

use crate::said;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
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
(rtde_servo.script) and runs any other on its URScript engine; the command then watches \
the program until it ends, as --until-end does, since the simulator ends with the command.

With --until-end, what the controller says while the program plays (its textmsg lines \
among them) is printed as it comes, and the command ends when the program does: with how \
long it played, or with its runtime exception or protective stop. Ctrl-C stops watching \
(a program on a robot plays on).",
    after_help = "Examples:
  rtde run-script urscript/examples/pick_and_place.script
      a user's program on the built-in simulator's URScript engine, watched until it ends
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
    /// Watch the program until it ends, printing what the controller says meanwhile (the
    /// default on the built-in simulator).
    #[arg(long)]
    until_end: bool,
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
    let until_end = args.until_end || args.robot.is_none();
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
        .check_script(!args.no_check)
        .until_end(until_end);
    let name = program.name().unwrap_or("the program").to_owned();
    if until_end {
        crate::interrupt::handle()?;
    }
    // On a thread of its own, so that Ctrl-C can end a watch of a program that never ends.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let fate = sender.send_observed(&program, |step| eprintln!("{}", describe(step)));
        let _ = tx.send(fate);
    });
    let started = loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(fate) => break fate.map_err(said)?,
            Err(RecvTimeoutError::Timeout) if crate::interrupt::asked() => {
                println!("interrupted: stopped watching {name}, which may still be playing");
                return Ok(ExitCode::SUCCESS);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the script sender's thread ended without a result".into());
            }
        }
    };
    match started.ended {
        Some(played) => println!(
            "ended: {name} played for {:.2} s (started {} ms after sending)",
            played.as_secs_f64(),
            started.after.as_millis()
        ),
        None => println!(
            "started: {name} is playing ({} ms after sending)",
            started.after.as_millis()
        ),
    }
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
