//! `rtde sim`: the simulator of `rtde-sim`, from the command line.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use rtde_core::RTDE_PORT;

use crate::args;
use rtde_core::fields::ControllerVersion;
use rtde_sim::{Arm, Fault, Sim};

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
  rtde sim --robots 100 --port 40000
      a fleet: 100 controllers on ports 40000 to 40099, streamed by one clock thread
  rtde sim --dashboard-port 29999 --script-ports 30001
      a Dashboard server and the script ports: power on, load, play, send programs
  rtde sim --program servo
      run the behaviour of rtde_servo.script: the arm follows the waypoints of
      rtde_robot::control (watchdog, handshake, speed slider)
  rtde sim --program command --fault protective-stop=500ms
      run the behaviour of rtde_command.script (rtde-robot's motion commands),
      with a protective stop after half a second of motion"
)]
pub(crate) struct SimArgs {
    /// The controller software version to play: 3.x (CB3), 5.x (e-Series), 10.x (PolyScope X).
    #[arg(long, value_name = "VERSION", default_value = "5.21.0")]
    version: ControllerVersion,
    /// The TCP port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = RTDE_PORT)]
    port: u16,
    /// The address to listen on; the default serves this machine only.
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// The arm: ur3e, ur5e, ur10e or ur5 (CB3).
    #[arg(long, value_name = "MODEL", default_value = "ur5e", value_parser = args::arm)]
    arm: Arm,
    /// No measurement noise, seed 0: values follow the documented motion law exactly.
    #[arg(long, conflicts_with = "seed")]
    deterministic: bool,
    /// The noise seed, to reproduce a run's values.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Stream as fast as clients read instead of at the control-loop rate.
    #[arg(long)]
    unpaced: bool,
    /// Refuse protocol version 2, as old controllers do.
    #[arg(long)]
    v1_only: bool,
    /// Hold the fieldbus register ranges, as an enabled EtherNet/IP or PROFINET adapter does.
    #[arg(long)]
    fieldbus: bool,
    /// Inject a fault real controllers show (repeatable): skip-every=N, skip-ticks=T[,T…],
    /// delay-replies=DURATION, slow-boot=WINDOW,DURATION, text=TRIGGER,LEVEL,MESSAGE,
    /// close-mid-frame=TRIGGER, malformed=TRIGGER,KIND, data-before-start-reply,
    /// data-before-pause-reply, build=N, dashboard-delay=DURATION, dashboard-refuse=COMMAND,
    /// runtime-exception=LINE(,COLUMN), compile-error=LINE(,COLUMN),
    /// protective-stop-after=DURATION. TRIGGER is reply:START (any package type) or data:N;
    /// LEVEL exception, error, warning or info; KIND size-too-small, size-too-large,
    /// unknown-type, wrong-recipe-id or bytes:HEX; DURATION 250ms or 2s.
    #[arg(long = "fault", value_name = "SPEC", value_parser = fault)]
    faults: Vec<Fault>,
    /// Answer NOT_FOUND for fields whose first version no source records (by default they
    /// are served as if every version of the generation had them).
    #[arg(long)]
    refuse_unrecorded: bool,
    /// Serve a fleet: this many controllers from one process, on consecutive ports from
    /// --port (each on a free port with --port 0), all ticked by one clock thread; robot
    /// i gets noise seed SEED + i. One line per robot gives its address.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    robots: u16,
    /// Run a robot program's behaviour, as if started on the pendant: `servo`, the
    /// repository's rtde_servo.script (waypoints from registers, watchdog,
    /// handshake); `command`, its rtde_command.script (rtde-robot's motion
    /// commands: move_j, move_l, speed, stop, servo, force and teach modes).
    #[arg(long, value_name = "PROGRAM", value_parser = ["servo", "command"])]
    program: Option<String>,
    /// Serve a Dashboard server on this port (29999 on a controller; 0 picks a free one),
    /// with the robot's state machine behind it: the arm starts powered off.
    #[arg(long, value_name = "PORT")]
    dashboard_port: Option<u16>,
    /// Serve the script ports (primary, secondary, real-time interfaces) on this port and
    /// the next two (30001 on a controller; 0 picks free ones): the project's programs run,
    /// any other is accepted and said not to run.
    #[arg(long, value_name = "FIRST")]
    script_ports: Option<u16>,
    /// Start in local control: the Dashboard server refuses what acts on the robot.
    #[arg(long)]
    local_control: bool,
}

fn fault(spec: &str) -> Result<Fault, String> {
    spec.parse()
}

/// Runs `rtde sim`: serves until interrupted.
pub(crate) fn run(args: &SimArgs) -> Result<(), String> {
    let mut builder = Sim::builder()
        .controller_version(&args.version.to_string())
        .bind(SocketAddr::new(args.bind, args.port))
        .arm(args.arm);
    if args.deterministic {
        builder = builder.deterministic();
    }
    if let Some(seed) = args.seed {
        builder = builder.seed(seed);
    }
    if args.unpaced {
        builder = builder.unpaced();
    }
    if args.v1_only {
        builder = builder.v1_only();
    }
    if args.fieldbus {
        builder = builder.fieldbus_adapter();
    }
    if args.refuse_unrecorded {
        builder = builder.refuse_unrecorded_fields();
    }
    for fault in &args.faults {
        builder = builder.fault(fault.clone());
    }
    match args.program.as_deref() {
        Some("servo") => builder = builder.servo_program(),
        Some("command") => builder = builder.command_program(),
        _ => {}
    }
    if let Some(port) = args.dashboard_port {
        builder = builder.dashboard_on(SocketAddr::new(args.bind, port));
    }
    if let Some(first) = args.script_ports {
        let at = |i: u16| {
            SocketAddr::new(
                args.bind,
                if first == 0 {
                    0
                } else {
                    first.saturating_add(i)
                },
            )
        };
        builder = builder.script_ports_on(at(0), at(1), at(2));
    }
    if args.local_control {
        builder = builder.local_control();
    }
    if args.robots > 1 {
        let fleet = builder
            .start_fleet(args.robots)
            .map_err(|e| e.to_string())?;
        for (i, addr) in fleet.addrs().enumerate() {
            println!("rtde sim: robot {i} listening on {addr}");
        }
        let first = fleet.robot(0).ok_or("the fleet has no robot")?;
        println!(
            "rtde sim: {} controllers {} ({} Hz control loop), noise seeds {} to {}; Ctrl-C stops",
            fleet.len(),
            first.controller_version(),
            first.loop_rate(),
            fleet.seed(),
            fleet.seed().wrapping_add(u64::from(args.robots) - 1),
        );
        serve_forever();
    }
    let sim = builder.start().map_err(|e| e.to_string())?;
    // The address first and alone, for scripts (and tests) that start it on port 0.
    println!("rtde sim: listening on {}", sim.addr());
    if let Some(addr) = sim.dashboard_addr() {
        println!("rtde sim: Dashboard server on {addr}");
    }
    for port in rtde_robot::script::ScriptPort::ALL {
        if let Some(addr) = sim.script_addr(port) {
            println!("rtde sim: {} on {addr}", port.name());
        }
    }
    println!(
        "rtde sim: controller {} ({} Hz control loop), noise seed {}; Ctrl-C stops",
        sim.controller_version(),
        sim.loop_rate(),
        sim.seed()
    );
    serve_forever();
}

/// The simulator's threads serve; the process ends on a signal.
fn serve_forever() -> ! {
    loop {
        std::thread::park();
    }
}
