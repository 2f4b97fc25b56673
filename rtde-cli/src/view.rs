//! `rtde view`: a robot's or the simulator's outputs, live in Foxglove or Lichtblick.

use std::net::SocketAddr;

use rtde_sim::Arm;

use crate::record::{LimitArgs, Plan, SourceArgs, run_plan};

/// Watch a robot live in Foxglove or Lichtblick: plots of every field, the arm in 3D.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Watch a robot live in Foxglove or Lichtblick: plots of every field, the arm in 3D.

Serves the Foxglove WebSocket protocol (subprotocol foxglove.sdk.v1, or its first name \
foxglove.websocket.v1) on 127.0.0.1:8765 unless --listen says otherwise. In Foxglove or \
Lichtblick: Open connection → Foxglove WebSocket → ws://127.0.0.1:8765. The channels:

  /rtde/outputs   every field of the recipe (rtde.Outputs), for the Plot panel
  /tf             the arm's link frames (foxglove.FrameTransforms), for the 3D panel
  /tcp_pose       the TCP pose in the base frame (foxglove.PoseInFrame)
  /rtde/modes     robot_mode and safety_mode by their UR names (rtde.Modes)
  /rtde/gaps      packages the controller skipped

Without --robot the built-in simulator is viewed. The link frames come from the arm's \
published kinematics (--arm; the simulator's arm is the same). The protocol has no \
authentication: listening on anything but loopback lets others watch the robot.

A viewer that reads too slowly loses frames (counted in the summary); the others and the \
robot connection are never held up. `rtde record --view` records and views at once.",
    after_help = "Examples:
  rtde view
      the simulator, on ws://127.0.0.1:8765
  rtde view --robot 192.168.1.10 --arm ur10e --frequency 125
      a real UR10e
  rtde view --robot 192.168.1.10 --fields actual_q,actual_TCP_pose,actual_TCP_force
      only these fields (timestamp is always added)"
)]
pub(crate) struct ViewArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Output fields to stream, comma-separated [default: the arm's joints, TCP pose and
    /// speed, forces, modes and digital I/O].
    #[arg(
        long,
        short = 'f',
        value_name = "FIELD,…",
        value_delimiter = ',',
        default_value = "timestamp,actual_q,actual_qd,actual_current,actual_TCP_pose,actual_TCP_speed,actual_TCP_force,robot_mode,safety_mode,actual_digital_input_bits,actual_digital_output_bits,speed_scaling"
    )]
    fields: Vec<String>,
    /// The address to serve on (port 0: any free port, printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    listen: SocketAddr,
    /// The arm: any UR model (ur3, ur5, ur10 on CB3; ur3e, ur5e, ur7e, ur10e, ur12e, ur16e,
    /// ur15, ur18, ur8long, ur20, ur30).
    #[arg(long, value_name = "MODEL", default_value = "ur5e")]
    arm: Arm,
    #[command(flatten)]
    limits: LimitArgs,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Runs `rtde view`.
pub(crate) fn run(args: ViewArgs) -> Result<(), String> {
    run_plan(Plan {
        source: args.source,
        fields: args.fields,
        limits: args.limits,
        output: None,
        raw: None,
        view: Some(args.listen),
        arm: args.arm,
        frames: true,
        quiet: args.quiet,
    })
}
