//! A CSV recording started and stopped by the program, as ur_rtde's `startFileRecording` /
//! `stopFileRecording`: a thread writes every package to the file while the program reads
//! the newest values.
//!
//! ```text
//! cargo run --example csv_recording                                # an in-process simulator
//! cargo run --example csv_recording -- --robot 192.168.1.10 robot.csv
//! ```

use std::error::Error;
use std::time::{Duration, Instant};

use rtde_core::background::SpawnOptions;
use rtde_core::{Client, ConnectOptions, DynamicRecipe, OutputRecipe, RTDE_PORT, Recipe, Value};
use rtde_record::csv::CsvRecording;
use rtde_sim::Sim;

/// How long the example records.
const SECONDS: u64 = 2;

fn main() {
    if let Err(e) = run() {
        eprintln!("csv_recording: {}", rtde_core::Report(&*e));
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mut robot = None;
    let mut path = std::env::temp_dir().join("rtde-csv-recording-example.csv");
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--robot" => robot = Some(args.next().ok_or("--robot needs an address")?),
            other => path = other.into(),
        }
    }

    // Without a robot, a simulated UR5e in this process, on 127.0.0.1 and a free port.
    let sim;
    let mut client = match &robot {
        Some(host) => Client::connect((host.as_str(), RTDE_PORT), ConnectOptions::new())?,
        None => {
            sim = Sim::builder().start()?;
            println!("no --robot given: using the simulator at {}", sim.addr());
            Client::connect(sim.addr(), ConnectOptions::new())?
        }
    };
    let mut recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "actual_TCP_pose"])?;
    client.setup_outputs(recipe.spec(), client.max_frequency().min(125.0))?;
    client.start()?;
    let background = client.spawn(SpawnOptions::new())?;

    let recording = CsvRecording::start(background.receiver(), &recipe, &path)?;
    println!("recording to {}", recording.path().display());
    // The program's own work: here, the newest timestamp four times a second.
    let mut latest = background.receiver();
    let end = Instant::now() + Duration::from_secs(SECONDS);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(values) = latest.latest()? {
            recipe.decode_into(values)?;
            if let Some(Value::Double(t)) = recipe.get("timestamp") {
                println!("t = {t:.3} s, {} rows so far", recording.rows());
            }
        }
    }
    let summary = recording.stop()?;
    println!(
        "{} rows in {} ({} dropped by a full queue)",
        summary.rows,
        path.display(),
        summary.missed
    );
    background.close()?;
    Ok(())
}
