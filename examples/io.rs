//! Toggles outputs with the typed writer and reads them back from the controller's
//! outputs: each standard digital output on and off, a tool output, an analog output in
//! both domains, the speed slider. No mask is written by hand. Exits non-zero when a write
//! does not read back.
//!
//! ```text
//! cargo run --example io                          # an in-process simulator
//! cargo run --example io -- --robot 192.168.1.10  # a real controller: its outputs will switch!
//! ```

use std::error::Error;
use std::time::{Duration, Instant};

use rtde_core::writer::{AnalogDomain, IoConfig, IoWriter};
use rtde_core::{Client, ConnectOptions, RTDE_PORT, RtdeRecipe, StaticRecipe};
use rtde_sim::Sim;

#[derive(RtdeRecipe, Debug, Clone, Copy)]
struct Outputs {
    actual_digital_output_bits: u64,
    standard_analog_output0: f64,
    analog_io_types: u32,
    target_speed_fraction: f64,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("io: {}", rtde_core::Report(&*e));
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let robot = parse_args()?;
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(2)));
    let sim;
    let mut client = match &robot {
        Some(host) if host.contains(':') => Client::connect(host.as_str(), options)?,
        Some(host) => Client::connect((host.as_str(), RTDE_PORT), options)?,
        None => {
            sim = Sim::builder().start()?;
            println!("no --robot given: using the simulator at {}", sim.addr());
            Client::connect(sim.addr(), options)?
        }
    };
    client.setup_outputs(Outputs::SPEC, client.max_frequency().min(125.0))?;
    let io = IoWriter::setup(&mut client, &IoConfig::standard())?;
    client.start()?;

    let mut checks = 0;
    for i in 0..8 {
        io.standard_digital_output(&mut client, i, true)?;
        let bit = 1u64 << i;
        let o = read_until(&mut client, |o| o.actual_digital_output_bits & bit != 0)?;
        println!(
            "digital output {i} on:  actual_digital_output_bits = {:#020b}",
            o.actual_digital_output_bits
        );
        io.standard_digital_output(&mut client, i, false)?;
        read_until(&mut client, |o| o.actual_digital_output_bits & bit == 0)?;
        checks += 2;
    }
    io.tool_digital_output(&mut client, 0, true)?;
    let o = read_until(&mut client, |o| o.actual_digital_output_bits >> 16 & 1 == 1)?;
    println!(
        "tool output 0 on:       actual_digital_output_bits = {:#020b}",
        o.actual_digital_output_bits
    );
    io.tool_digital_output(&mut client, 0, false)?;
    read_until(&mut client, |o| o.actual_digital_output_bits >> 16 & 1 == 0)?;
    checks += 2;

    for (domain, ratio, voltage) in [
        (AnalogDomain::Voltage, 0.5, true),
        (AnalogDomain::Current, 0.25, false),
    ] {
        io.analog_output(&mut client, 0, domain, ratio)?;
        // Bit 2 of analog_io_types is analog output 0's domain (1 = voltage).
        let o = read_until(&mut client, |o| {
            o.standard_analog_output0 == ratio && (o.analog_io_types >> 2 & 1 == 1) == voltage
        })?;
        println!(
            "analog output 0 at {ratio} in {domain:?}: standard_analog_output0 = {}, analog_io_types = {:#06b}",
            o.standard_analog_output0, o.analog_io_types
        );
        checks += 1;
    }
    io.speed_slider(&mut client, 0.5)?;
    read_until(&mut client, |o| o.target_speed_fraction == 0.5)?;
    io.speed_slider(&mut client, 1.0)?;
    let o = read_until(&mut client, |o| o.target_speed_fraction == 1.0)?;
    println!(
        "speed slider back at {:.0} %",
        o.target_speed_fraction * 100.0
    );
    checks += 2;
    client.close()?;
    println!("{checks} writes, each read back");
    Ok(())
}

/// Reads outputs until `ok` holds; an error after two seconds.
fn read_until(
    client: &mut Client,
    ok: impl Fn(&Outputs) -> bool,
) -> Result<Outputs, Box<dyn Error>> {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let o: Outputs = client.recv_as()?;
        if ok(&o) {
            return Ok(o);
        }
    }
    Err("a write did not read back within two seconds".into())
}

fn parse_args() -> Result<Option<String>, Box<dyn Error>> {
    let mut robot = std::env::var("RTDE_ROBOT").ok().filter(|r| !r.is_empty());
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--robot" => robot = Some(it.next().ok_or("`--robot` needs a value")?),
            "-h" | "--help" => {
                println!("usage: io [--robot HOST[:PORT]]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    Ok(robot)
}
