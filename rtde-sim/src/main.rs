//! `rtde-sim`: serves a simulated Universal Robots controller's RTDE interface until
//! interrupted.
//!
//! ```text
//! cargo run -p rtde-sim -- --version 5.21.0 --port 30004
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use rtde_sim::{Arm, Fault, Sim, SimBuilder};

const USAGE: &str = "\
rtde-sim: a simulated Universal Robots controller's RTDE interface

USAGE:
    rtde-sim [OPTIONS]

OPTIONS:
    --version <V>      controller software version to simulate [default: 5.21.0]
                       (3.x CB3 at 125 Hz, 5.x e-Series and 10.x PolyScope X at 500 Hz)
    --port <PORT>      TCP port [default: 30004; 0 picks a free one]
    --bind <ADDR>      address to listen on [default: 127.0.0.1, loopback only]
    --arm <MODEL>      ur3e, ur5e, ur10e or ur5 (CB3) [default: ur5e]
    --v1-only          refuse protocol version 2, as old controllers do
    --fieldbus         hold the fieldbus register ranges, as an enabled EtherNet/IP adapter does
    --deterministic    no measurement noise, seed 0: values follow the documented motion law exactly
    --seed <N>         noise seed, to reproduce a run's values
    --unpaced          stream as fast as clients read instead of at the control-loop rate
    --fault <SPEC>     inject a fault, as real controllers show them (repeatable); SPEC is one of
                         skip-every=N  skip-ticks=T[,T...]  delay-replies=DURATION
                         slow-boot=WINDOW,DURATION  text=TRIGGER,LEVEL,MESSAGE
                         close-mid-frame=TRIGGER  malformed=TRIGGER,KIND
                         data-before-start-reply  data-before-pause-reply  build=N
                         dashboard-delay=DURATION  dashboard-refuse=COMMAND
                         runtime-exception=LINE[,COLUMN]  compile-error=LINE[,COLUMN]
                         protective-stop-after=DURATION
                         protective-stop=DURATION  runtime-stop=DURATION (of the command
                         program's motion)
                       TRIGGER: reply:START (any package type) or data:N; LEVEL: exception,
                       error, warning, info; KIND: size-too-small, size-too-large,
                       unknown-type, wrong-recipe-id, bytes:HEX; DURATION: 250ms, 2s
    --refuse-unrecorded
                       answer NOT_FOUND for fields whose first version no source records
                       (default: served as if every version of the generation had them)
    --program servo    run rtde_servo.script's behaviour (waypoints, watchdog, handshake)
    --program command  run rtde_command.script's behaviour (rtde-robot's motion
                       commands: move_j, move_l, speed, stop, servo, force and teach modes)
    --dashboard-port <PORT>
                       serve a Dashboard server (29999 on a controller; 0 picks a free one), with
                       the robot's state machine behind it: the arm starts powered off
    --script-ports <FIRST>
                       serve the primary, secondary and real-time interfaces on FIRST, FIRST+1,
                       FIRST+2 (30001 on a controller; 0 picks free ones)
    --local-control    start in local control: the Dashboard refuses what acts on the robot
    -h, --help         print this help

Serves until interrupted (Ctrl-C).";

fn main() -> ExitCode {
    let builder = match parse(std::env::args().skip(1)) {
        Ok(Some(builder)) => builder,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("rtde-sim: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let sim = match builder.start() {
        Ok(sim) => sim,
        Err(e) => {
            eprintln!("rtde-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "rtde-sim: controller {} ({} Hz control loop) listening on {}, noise seed {}; Ctrl-C stops",
        sim.controller_version(),
        sim.loop_rate(),
        sim.addr(),
        sim.seed()
    );
    if let Some(addr) = sim.dashboard_addr() {
        println!("rtde-sim: Dashboard server on {addr}");
    }
    for port in rtde_robot_proto::ports::ScriptPort::ALL {
        if let Some(addr) = sim.script_addr(port) {
            println!("rtde-sim: {} on {addr}", port.name());
        }
    }
    loop {
        // Nothing to do here: the simulator's threads serve. The process ends on a signal.
        std::thread::park();
    }
}

/// The builder the arguments describe, or `None` for `--help`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<SimBuilder>, String> {
    let mut builder = Sim::builder();
    let mut ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut port = 30004u16;
    let mut dashboard_port: Option<u16> = None;
    let mut script_ports: Option<u16> = None;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("`{name}` needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--version" => builder = builder.controller_version(&value("--version")?),
            "--port" => {
                let v = value("--port")?;
                port = v
                    .parse()
                    .map_err(|_| format!("`{v}` is not a port number"))?;
            }
            "--bind" => {
                let v = value("--bind")?;
                ip = v
                    .parse()
                    .map_err(|_| format!("`{v}` is not an IP address"))?;
            }
            "--arm" => {
                let v = value("--arm")?;
                let arm = Arm::named(&v)
                    .ok_or_else(|| format!("unknown arm `{v}`: use ur3e, ur5e, ur10e or ur5"))?;
                builder = builder.arm(arm);
            }
            "--v1-only" => builder = builder.v1_only(),
            "--fieldbus" => builder = builder.fieldbus_adapter(),
            "--deterministic" => builder = builder.deterministic(),
            "--seed" => {
                let v = value("--seed")?;
                let seed = v
                    .parse()
                    .map_err(|_| format!("`{v}` is not a seed (a u64)"))?;
                builder = builder.seed(seed);
            }
            "--unpaced" => builder = builder.unpaced(),
            "--fault" => {
                let v = value("--fault")?;
                let fault: Fault = v.parse()?;
                builder = builder.fault(fault);
            }
            "--refuse-unrecorded" => builder = builder.refuse_unrecorded_fields(),
            "--dashboard-port" => {
                let v = value("--dashboard-port")?;
                dashboard_port = Some(
                    v.parse()
                        .map_err(|_| format!("`{v}` is not a port number"))?,
                );
            }
            "--script-ports" => {
                let v = value("--script-ports")?;
                script_ports = Some(
                    v.parse()
                        .map_err(|_| format!("`{v}` is not a port number"))?,
                );
            }
            "--local-control" => builder = builder.local_control(),
            "--program" => match value("--program")?.as_str() {
                "servo" => builder = builder.servo_program(),
                "command" => builder = builder.command_program(),
                other => return Err(format!("unknown program `{other}`: use servo or command")),
            },
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if let Some(p) = dashboard_port {
        builder = builder.dashboard_on(SocketAddr::new(ip, p));
    }
    if let Some(first) = script_ports {
        let at = |i: u16| {
            SocketAddr::new(
                ip,
                if first == 0 {
                    0
                } else {
                    first.saturating_add(i)
                },
            )
        };
        builder = builder.script_ports_on(at(0), at(1), at(2));
    }
    Ok(Some(builder.bind(SocketAddr::new(ip, port))))
}
