//! `rtde`: answers "which field is that, and does my controller have it?" from the registry.

#![forbid(unsafe_code)]

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rtde_fields::{ControllerVersion, Direction};

mod lookup;

/// Look up Universal Robots RTDE fields: their wire types, directions, the controller
/// versions that have them, and which registers are meant for external clients.
#[derive(Debug, Parser)]
#[command(name = "rtde", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Search the field registry by name (substring, any case, typos forgiven).
    ///
    /// Examples:
    ///   rtde fields tcp                       every field with "tcp" in its name
    ///   rtde fields actual_tcp_pos            suggests actual_TCP_pose
    ///   rtde fields --controller 3.15 --direction input register_24
    Fields {
        /// Part of a field name; all fields when omitted.
        pattern: Option<String>,
        /// Show only the fields this controller version has, e.g. 5.4 or 3.15.8.
        #[arg(long, value_name = "VERSION")]
        controller: Option<ControllerVersion>,
        /// Show only outputs (controller to client) or inputs (client to controller).
        #[arg(long, value_enum)]
        direction: Option<DirectionArg>,
    },
    /// Say for each field whether a controller version has it and, if not, from which version.
    ///
    /// Exits with status 1 when any field is unknown or missing on that controller.
    ///
    /// Example:
    ///   rtde check --controller 5.4 actual_q ft_raw_wrench payload_inertia
    Check {
        /// The controller's software version, e.g. 5.4 or 3.15.8.106339.
        #[arg(long, value_name = "VERSION")]
        controller: ControllerVersion,
        /// Canonical field names (any case).
        #[arg(required = true, value_name = "FIELD")]
        fields: Vec<String>,
    },
}

/// A direction as the command line spells it.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum DirectionArg {
    /// Controller to client.
    Output,
    /// Client to controller.
    Input,
}

impl From<DirectionArg> for Direction {
    fn from(d: DirectionArg) -> Self {
        match d {
            DirectionArg::Output => Direction::Output,
            DirectionArg::Input => Direction::Input,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = io::stdout().lock();
    let result = match cli.command {
        Command::Fields {
            pattern,
            controller,
            direction,
        } => lookup::fields(
            &mut out,
            pattern.as_deref(),
            controller,
            direction.map(Direction::from),
        ),
        Command::Check { controller, fields } => lookup::check(&mut out, controller, &fields),
    };
    let _ = out.flush();
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
