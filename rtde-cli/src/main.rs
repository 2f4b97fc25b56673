//! `rtde`: look up RTDE fields, record a controller's outputs without loss, replay a
//! recording as a controller, plot it, and run the simulator.
//!
//! One module per subcommand; [`table`] is the CSV (the raw capture format is
//! `rtde_record::capture`).

#![forbid(unsafe_code)]

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod bridge;
mod check_script;
mod convert;
mod dashboard;
mod dictionary;
mod interrupt;
mod lookup;
mod outfile;
mod plot;
mod plot_input;
mod primary;
mod progress;
mod record;
mod replay;
mod run_script;
mod sim;
mod subscribe;
mod table;
mod view;

/// Universal Robots RTDE from the command line: look fields up, record a robot's outputs
/// without losing a package, replay a recording as a controller, plot it, watch it live.
#[derive(Debug, Parser)]
#[command(
    name = "rtde",
    version,
    long_about = None,
    after_help = "Start here:
  rtde fields tcp                                 which fields have \"tcp\" in their name
  rtde check --controller 5.4 ft_raw_wrench       does a 5.4 controller have it?
  rtde record --fields actual_q --duration 10s -o run.csv --raw run.rtde
                                                  record the built-in simulator (--robot HOST for a robot)
  rtde plot run.csv --fields actual_q             run.png: the joints over time
  rtde replay run.rtde                            serve the recording on 127.0.0.1:30004
  rtde view                                       watch the simulator live in Foxglove
  rtde convert run.rtde run.mcap                  a capture for Foxglove, PlotJuggler, Rerun
  rtde bridge fleet.toml                          a fleet's telemetry into MQTT
  rtde dashboard --robot HOST robotmode           one Dashboard server command, its reply typed
  rtde primary --robot HOST                       the primary interface: robot state and messages
  rtde run-script urscript/examples/pick_and_place.script
                                                  run a program (built-in simulator without --robot)
  rtde check-script pick.script --version 3.15    check a URScript file for a 3.15 controller

`rtde help COMMAND` explains each command, with examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Fields(lookup::FieldsArgs),
    Check(lookup::CheckArgs),
    Record(record::RecordArgs),
    Replay(replay::ReplayArgs),
    Plot(plot::PlotArgs),
    Sim(sim::SimCommand),
    Bridge(bridge::BridgeArgs),
    Subscribe(subscribe::SubscribeArgs),
    Dashboard(dashboard::DashboardArgs),
    Primary(primary::PrimaryArgs),
    RunScript(run_script::RunScriptArgs),
    CheckScript(check_script::CheckScriptArgs),
    View(view::ViewArgs),
    Convert(convert::ConvertArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fields(args) => lookup_output(|out| lookup::fields(out, &args)),
        Command::Check(args) => lookup_output(|out| lookup::check(out, &args)),
        Command::Record(args) => record::run(args).map(|()| ExitCode::SUCCESS),
        Command::Replay(args) => replay::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Plot(args) => plot::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Sim(args) => sim::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Bridge(args) => bridge::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Subscribe(args) => subscribe::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Dashboard(args) => dashboard::run(&args),
        Command::Primary(args) => primary::run(&args),
        Command::RunScript(args) => run_script::run(&args),
        Command::CheckScript(args) => check_script::run(&args),
        Command::View(args) => view::run(args).map(|()| ExitCode::SUCCESS),
        Command::Convert(args) => convert::run(&args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // One line, whatever went wrong: the messages carry their own context.
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// An error as the command prints it: its message, then each of its causes once.
fn said(e: impl std::error::Error + 'static) -> String {
    rtde_core::Report(&e).to_string()
}

/// Runs a lookup that prints to stdout; a closed pipe (`rtde fields | head`) is no error.
fn lookup_output(
    f: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<ExitCode>,
) -> Result<ExitCode, String> {
    let mut out = io::stdout().lock();
    let result = f(&mut out).and_then(|code| out.flush().map(|()| code));
    match result {
        Ok(code) => Ok(code),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(said(e)),
    }
}
