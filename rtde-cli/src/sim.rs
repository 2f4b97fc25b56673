//! `rtde sim`: the simulator, with the options the `rtde-sim` binary has (one definition,
//! `rtde_sim::cli::SimArgs`).

use rtde_sim::cli::SimArgs;

/// Serve a simulated robot's RTDE interface until interrupted.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Serve a simulated Universal Robots controller's RTDE interface until interrupted.

The simulator plays the controller version given: its control-loop rate (125 Hz on CB3, \
500 Hz later), its fields (others are NOT_FOUND), both protocol versions. A UR arm moves \
its joints smoothly; Cartesian values come from its kinematics; what clients write to inputs \
takes effect. It is the library `rtde_sim::Sim`, which tests embed in-process.",
    after_help = "Examples:
  rtde sim
      an e-Series controller (5.21.0) on 127.0.0.1:30004
  rtde sim --version 3.15.8 --arm ur5 --port 0
      a CB3 on any free port (the address is printed first)
  rtde sim --deterministic
      no measurement noise: values follow the motion law documented in rtde_sim::Motion
  rtde sim --robots 100 --port 31000
      a fleet: 100 controllers on ports 31000 to 31099, streamed by one clock thread
  rtde sim --dashboard-port 29999 --script-ports 30001
      a Dashboard server and the script ports: power on, load, play, send programs
  rtde sim --program servo
      run the behaviour of rtde_servo.script: the arm follows the waypoints of
      rtde_robot::control (watchdog, handshake, speed slider)
  rtde sim --program command --fault protective-stop=500ms
      run the behaviour of rtde_command.script (rtde-robot's motion commands),
      with a protective stop after half a second of motion"
)]
pub(crate) struct SimCommand {
    #[command(flatten)]
    sim: SimArgs,
}

/// Runs `rtde sim`: serves until interrupted.
pub(crate) fn run(args: &SimCommand) -> Result<(), String> {
    args.sim.serve("rtde sim")
}
