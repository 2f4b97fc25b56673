//! `rtde dashboard COMMAND`: one Dashboard server command, its reply typed.

use crate::said;
use std::process::ExitCode;
use std::time::Duration;

use rtde_robot::dashboard::{COMMANDS, Command, DASHBOARD_PORT, Dashboard, DashboardOptions};
use rtde_sim::Sim;

/// Send one command to a robot's Dashboard server (port 29999) and print its reply.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Send one command to a Universal Robots controller's Dashboard server (port \
29999) and print its reply, typed: `robotmode` prints ROBOT_MODE_RUNNING, `programState` the \
state and the program, `running` true or false.

A command the controller's version lacks is refused before it is sent. A refusal (\"Failed \
to execute: play\", \"File not found: pick.urp\") is printed on stderr in the controller's \
words, and the exit code is 1.

Without --robot the command goes to a built-in simulator started for it (powered off, no \
program loaded): for trying the commands out. PolyScope X controllers have no Dashboard \
server.",
    after_help = "Examples:
  rtde dashboard --robot 192.168.1.10 robotmode
  rtde dashboard --robot 192.168.1.10 power on
  rtde dashboard --robot 192.168.1.10 load /programs/pick.urp
  rtde dashboard --robot 192.168.1.10 programState
  rtde dashboard list                  every command, with the versions that added it"
)]
pub(crate) struct DashboardArgs {
    /// The robot: HOST or HOST:PORT (port 29999 unless given). Without it, a built-in
    /// simulator.
    #[arg(long, value_name = "HOST")]
    robot: Option<String>,
    /// How long to wait for the reply.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::args::duration)]
    timeout: Duration,
    /// The command and its argument, as the Dashboard server takes it (`power on`,
    /// `load /programs/pick.urp`), or `list`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

/// Runs `rtde dashboard`.
pub(crate) fn run(args: &DashboardArgs) -> Result<ExitCode, String> {
    let text = args.command.join(" ");
    if text.trim() == "list" {
        for spec in COMMANDS {
            let since = |v: Option<rtde_core::fields::ControllerVersion>| {
                v.map_or_else(|| "-".to_owned(), |v| v.to_string())
            };
            println!(
                "{:<24} CB3 {:<7} e-Series {}",
                spec.name,
                since(spec.cb3),
                since(spec.e_series)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let command: Command = text
        .parse()
        .map_err(|e: rtde_robot::dashboard::ParseCommandError| e.to_string())?;
    let options = DashboardOptions::new().timeout(args.timeout);
    let (_sim, mut dashboard) = match &args.robot {
        Some(robot) => {
            let (host, port) = crate::args::robot_on(robot, DASHBOARD_PORT)?;
            let d = Dashboard::connect((host.as_str(), port), options).map_err(said)?;
            (None, d)
        }
        None => {
            let sim = Sim::builder().dashboard().start().map_err(said)?;
            let addr = sim
                .dashboard_addr()
                .ok_or("the simulator serves no Dashboard server")?;
            eprintln!(
                "no --robot given: asking a built-in simulator (powered off, no program loaded)"
            );
            let d = Dashboard::connect(addr, options).map_err(said)?;
            (Some(sim), d)
        }
    };
    let reply = dashboard.execute(&command).map_err(said)?;
    println!("{reply}");
    Ok(ExitCode::SUCCESS)
}
