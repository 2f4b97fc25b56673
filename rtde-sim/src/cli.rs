//! The simulator's command line, defined once: the `rtde-sim` binary and `rtde sim` (the
//! `rtde` command's subcommand) both flatten [`SimArgs`] into their parsers and serve with
//! [`SimArgs::serve`]. Behind the `cli` feature (on by default), so that a test that embeds
//! the simulator need not build clap.
//!
//! ```
//! use clap::Parser;
//! use rtde_sim::cli::SimArgs;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     sim: SimArgs,
//! }
//!
//! let cli = Cli::parse_from(["my-sim", "--version", "3.15.8", "--port", "0", "--deterministic"]);
//! let sim = cli.sim.builder().start().unwrap();
//! assert_eq!(sim.loop_rate(), 125);
//! # sim.shutdown().unwrap();
//! ```

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use rtde_core::RTDE_PORT;
use rtde_core::fields::ControllerVersion;
use rtde_robot_proto::ports::ScriptPort;

use crate::{Arm, Calibration, Fault, Sim, SimBuilder};

/// The simulator's options; see the [module](self) documentation.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// The controller software version to play: 3.x (CB3, 125 Hz), 5.x (e-Series, 500 Hz),
    /// 10.x (PolyScope X, 500 Hz).
    #[arg(long, value_name = "VERSION", default_value = "5.21.0")]
    pub version: ControllerVersion,
    /// The TCP port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = RTDE_PORT)]
    pub port: u16,
    /// The address to listen on; the default serves this machine only.
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// The arm: any UR model (ur3, ur5, ur10 on CB3; ur3e, ur5e, ur7e, ur10e, ur12e, ur16e,
    /// ur15, ur18, ur8long, ur20, ur30).
    #[arg(long, value_name = "MODEL", default_value = "ur5e")]
    pub arm: Arm,
    /// Give the arm a factory calibration: FILE (lines `delta_a = six numbers`, and
    /// delta_d, delta_alpha, delta_theta), or random:SEED for one drawn within 2 mm and
    /// 2 mrad. Poses come from the calibrated arm, and the primary interface's kinematics
    /// info carries its table.
    #[arg(long, value_name = "FILE|random:SEED", value_parser = crate::calibration_of)]
    pub calibration: Option<Calibration>,
    /// No measurement noise, seed 0: values follow the documented motion law exactly.
    #[arg(long, conflicts_with = "seed")]
    pub deterministic: bool,
    /// The noise seed, to reproduce a run's values.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Stream as fast as clients read instead of at the control-loop rate.
    #[arg(long)]
    pub unpaced: bool,
    /// Refuse protocol version 2, as old controllers do.
    #[arg(long)]
    pub v1_only: bool,
    /// Hold the fieldbus register ranges, as an enabled EtherNet/IP or PROFINET adapter does.
    #[arg(long)]
    pub fieldbus: bool,
    /// Inject a fault real controllers show (repeatable): skip-every=N, skip-ticks=T[,T…],
    /// delay-replies=DURATION, slow-boot=WINDOW,DURATION, slow-close=DURATION,
    /// text=TRIGGER,LEVEL,MESSAGE,
    /// close-mid-frame=TRIGGER, malformed=TRIGGER,KIND, data-before-start-reply,
    /// data-before-pause-reply, build=N, dashboard-delay=DURATION, dashboard-refuse=COMMAND,
    /// runtime-exception=LINE(,COLUMN), compile-error=LINE(,COLUMN),
    /// protective-stop-after=DURATION, and of the command program's motion
    /// protective-stop=DURATION and runtime-stop=DURATION. TRIGGER is reply:START (any
    /// package type) or data:N; LEVEL exception, error, warning or info; KIND
    /// size-too-small, size-too-large, unknown-type, wrong-recipe-id or bytes:HEX; DURATION
    /// 250ms or 2s.
    #[arg(long = "fault", value_name = "SPEC", value_parser = fault)]
    pub faults: Vec<Fault>,
    /// Answer NOT_FOUND for fields whose first version no source records (by default they
    /// are served as if every version of the generation had them).
    #[arg(long)]
    pub refuse_unrecorded: bool,
    /// Serve a fleet: this many controllers from one process, on consecutive ports from
    /// --port (each on a free port with --port 0), all ticked by one clock thread; robot
    /// i gets noise seed SEED + i. One line per robot gives its address.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub robots: u16,
    /// Run a robot program's behaviour, as if started on the pendant: `servo`,
    /// rtde_servo.script (waypoints from registers, watchdog, handshake); `command`,
    /// rtde_command.script (rtde-robot's motion commands: move_j, move_l, speed, stop,
    /// servo, force and teach modes).
    #[arg(long, value_name = "PROGRAM", value_parser = ["servo", "command"])]
    pub program: Option<String>,
    /// Accepted for command lines written when the engine was not the default; it is now
    /// the one way a program runs.
    #[arg(long, hide = true)]
    pub interpret_own_programs: bool,
    /// Serve a Dashboard server on this port (29999 on a controller; 0 picks a free one),
    /// with the robot's state machine behind it: the arm starts powered off.
    #[arg(long, value_name = "PORT")]
    pub dashboard_port: Option<u16>,
    /// Serve the script ports (primary, secondary, real-time interfaces) on this port and
    /// the next two (30001 on a controller; 0 picks free ones): programs run on the
    /// URScript engine.
    #[arg(long, value_name = "FIRST")]
    pub script_ports: Option<u16>,
    /// Start in local control: the Dashboard server refuses what acts on the robot.
    #[arg(long)]
    pub local_control: bool,
}

/// A builder setting a flag turns on.
type Setting = fn(SimBuilder) -> SimBuilder;

fn fault(spec: &str) -> Result<Fault, String> {
    spec.parse()
}

impl SimArgs {
    /// The simulator these options describe (one robot; [`SimArgs::serve`] starts a fleet
    /// for `--robots`).
    #[must_use]
    pub fn builder(&self) -> SimBuilder {
        let mut builder = Sim::builder()
            .controller_version(&self.version.to_string())
            .bind(SocketAddr::new(self.bind, self.port))
            .arm(self.arm);
        if let Some(calibration) = self.calibration {
            builder = builder.calibration(calibration);
        }
        let flags: [(bool, Setting); 6] = [
            (self.deterministic, SimBuilder::deterministic),
            (self.unpaced, SimBuilder::unpaced),
            (self.v1_only, SimBuilder::v1_only),
            (self.fieldbus, SimBuilder::fieldbus_adapter),
            (self.refuse_unrecorded, SimBuilder::refuse_unrecorded_fields),
            (self.local_control, SimBuilder::local_control),
        ];
        for (on, set) in flags {
            if on {
                builder = set(builder);
            }
        }
        if let Some(seed) = self.seed {
            builder = builder.seed(seed);
        }
        for fault in &self.faults {
            builder = builder.fault(fault.clone());
        }
        match self.program.as_deref() {
            Some("servo") => builder = builder.servo_program(),
            Some("command") => builder = builder.command_program(),
            _ => {}
        }
        if let Some(port) = self.dashboard_port {
            builder = builder.dashboard_on(SocketAddr::new(self.bind, port));
        }
        if let Some(first) = self.script_ports {
            builder = builder.script_ports_from(SocketAddr::new(self.bind, first));
        }
        builder
    }

    /// Starts the simulator (a fleet for `--robots` above 1) and serves until the process
    /// is interrupted. The first line printed is `NAME: listening on ADDR` (one per robot
    /// in a fleet), for scripts and tests that start it on port 0; then the other
    /// interfaces' addresses and the controller.
    ///
    /// Returns after Ctrl-C (SIGINT or SIGTERM), the simulator shut down. A program that
    /// handles Ctrl-C itself keeps the signals: then this serves until the process ends.
    ///
    /// # Errors
    /// Why the simulator could not start: an invalid version, an address in use.
    pub fn serve(&self, name: &str) -> Result<(), String> {
        // A reader that stops reading (a script that took the address and closed the
        // pipe) must not stop the simulator: what cannot be printed is dropped.
        let say = |line: std::fmt::Arguments<'_>| {
            let _ = writeln!(std::io::stdout(), "{line}");
        };
        if self.robots > 1 {
            let fleet = self
                .builder()
                .start_fleet(self.robots)
                .map_err(|e| rtde_core::Report(&e).to_string())?;
            for (i, addr) in fleet.addrs().enumerate() {
                say(format_args!("{name}: robot {i} listening on {addr}"));
            }
            let first = fleet.robot(0).ok_or("the fleet has no robot")?;
            say(format_args!(
                "{name}: {} controllers {} ({} Hz control loop), noise seeds {} to {}; Ctrl-C stops",
                fleet.len(),
                first.controller_version(),
                first.loop_rate(),
                fleet.seed(),
                fleet.seed().wrapping_add(u64::from(self.robots) - 1),
            ));
            wait_for_ctrl_c();
            return fleet
                .shutdown()
                .map_err(|e| rtde_core::Report(&e).to_string());
        }
        let sim = self
            .builder()
            .start()
            .map_err(|e| rtde_core::Report(&e).to_string())?;
        say(format_args!("{name}: listening on {}", sim.addr()));
        if let Some(addr) = sim.dashboard_addr() {
            say(format_args!("{name}: Dashboard server on {addr}"));
        }
        for port in ScriptPort::ALL {
            if let Some(addr) = sim.script_addr(port) {
                say(format_args!("{name}: {} on {addr}", port.name()));
            }
        }
        for port in ScriptPort::ALL {
            if let Some(addr) = sim.read_only_addr(port) {
                say(format_args!("{name}: {} on {addr}", port.read_only_name()));
            }
        }
        let arm = sim.arm();
        let calibrated = if self.calibration.is_some() {
            ", calibrated"
        } else {
            ""
        };
        say(format_args!(
            "{name}: controller {} ({} Hz control loop), arm {}{calibrated}, noise seed {}; Ctrl-C stops",
            sim.controller_version(),
            sim.loop_rate(),
            arm.name,
            sim.seed()
        ));
        wait_for_ctrl_c();
        sim.shutdown()
            .map_err(|e| rtde_core::Report(&e).to_string())
    }
}

/// Waits for Ctrl-C. Handled, not left to the signal's default: a shell or a test that
/// starts the simulator in the background ignores SIGINT for it, and it served on.
fn wait_for_ctrl_c() {
    let (tx, rx) = std::sync::mpsc::channel();
    let handled = ctrlc::set_handler(move || {
        let _ = tx.send(());
    });
    match handled {
        Ok(()) => {
            let _ = rx.recv();
        }
        // The program's own handler decides when the process ends.
        Err(_) => loop {
            std::thread::park();
        },
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::SimArgs;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    #[test]
    fn own_programs_run_on_the_engine_whatever_the_old_flag_says() {
        let args = ["rtde-sim", "--port", "0", "--program", "command"];
        for flag in [&[][..], &["--interpret-own-programs"][..]] {
            let cli = Cli::try_parse_from(args.iter().chain(flag)).unwrap();
            let sim = cli.sim.builder().start().unwrap();
            assert!(sim.script_program().is_some(), "{flag:?}");
            sim.shutdown().unwrap();
        }
        // The native emulation is gone: asking for it is an error, not a silent engine.
        let native = args.iter().chain(&["--native-own-programs"]);
        assert!(Cli::try_parse_from(native).is_err());
    }
}
