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
                       TRIGGER: reply:START (any package type) or data:N; LEVEL: exception,
                       error, warning, info; KIND: size-too-small, size-too-large,
                       unknown-type, wrong-recipe-id, bytes:HEX; DURATION: 250ms, 2s
    --refuse-unrecorded
                       answer NOT_FOUND for fields whose first version no source records
                       (default: served as if every version of the generation had them)
    --program servo    run urscript/rtde_servo.script's behaviour (waypoints, watchdog, handshake)
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
            "--program" => match value("--program")?.as_str() {
                "servo" => builder = builder.servo_program(),
                other => return Err(format!("unknown program `{other}`: use servo")),
            },
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Some(builder.bind(SocketAddr::new(ip, port))))
}
