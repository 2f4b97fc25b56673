//! `rtde-sim`: serves a simulated Universal Robots controller until interrupted. Its
//! options are `rtde_sim::cli::SimArgs`, which `rtde sim` shares.
//!
//! ```text
//! cargo run -p rtde-sim -- --version 5.21.0 --port 30004
//! ```

use std::process::ExitCode;

use clap::Parser;
use rtde_sim::cli::SimArgs;

/// Serve a simulated Universal Robots controller until interrupted (Ctrl-C).
#[derive(Debug, Parser)]
#[command(
    name = "rtde-sim",
    long_about = "Serve a simulated Universal Robots controller until interrupted (Ctrl-C): \
RTDE, and with the options below its Dashboard server, script ports and robot programs. \
The same options as `rtde sim`.",
    after_help = "Examples:
  rtde-sim --version 3.15.8 --port 0 --deterministic
      a CB3 on any free port, without noise (the address is printed first)
  rtde-sim --dashboard-port 29999 --script-ports 30001
      a Dashboard server and the script ports: power on, load, play, send programs"
)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.sim.serve("rtde-sim") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtde-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
