//! Soak benchmark (not a test): streams from an in-process simulator for N minutes with one
//! forced disconnect in the middle, reconnecting automatically, and reports what arrived,
//! what was lost, how long the reconnection took and the resident memory at start and end.
//!
//! ```text
//! cargo run --release --example soak -- --minutes 10                  # 500 Hz, e-Series
//! cargo run --release --example soak -- --minutes 1 --frequency 125
//! ```
//!
//! The simulator cuts the connection in the middle of the output package due at 55 % of the
//! run (`Fault::CloseMidFrame`; every connection counts its own packages, so the second
//! connection would be cut only after the run has ended). Resident memory is the process's
//! (`VmRSS` in `/proc/self/status`), so it includes the simulator's threads.

use std::error::Error;
use std::time::{Duration, Instant};

use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Event, Recipe, ReconnectPolicy, Stats, Value,
};
use rtde_sim::{Fault, Sim, Trigger};

struct Args {
    minutes: f64,
    frequency: f64,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("soak: {}", rtde_core::Report(&*e));
        std::process::exit(1);
    }
}

fn parse_args() -> Result<Option<Args>, Box<dyn Error>> {
    let mut args = Args {
        minutes: 10.0,
        frequency: 500.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| -> Result<f64, Box<dyn Error>> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            Ok(v.parse().map_err(|e| format!("{name} {v}: {e}"))?)
        };
        match arg.as_str() {
            "--minutes" => args.minutes = value("--minutes")?,
            "--frequency" => args.frequency = value("--frequency")?,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`; try --help").into()),
        }
    }
    if !(args.minutes > 0.0 && args.minutes.is_finite()) {
        return Err("--minutes must be a positive number".into());
    }
    Ok(Some(args))
}

/// The process's resident memory, in KiB, from `/proc/self/status` (Linux).
fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn rss() -> String {
    vm_rss_kib().map_or_else(|| "unknown".into(), |k| format!("{k} KiB"))
}

fn timestamp(recipe: &DynamicRecipe) -> f64 {
    match recipe.get("timestamp") {
        Some(Value::Double(t)) => *t,
        _ => f64::NAN,
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // whole, non-negative counts
fn run() -> Result<(), Box<dyn Error>> {
    let Some(args) = parse_args()? else {
        println!("usage: soak [--minutes M (10)] [--frequency HZ (500)]");
        return Ok(());
    };
    let duration = Duration::from_secs_f64(args.minutes * 60.0);
    let cut_at = (duration.as_secs_f64() * args.frequency * 0.55) as u64;
    let sim = Sim::builder()
        .controller_version("5.21.0")
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(cut_at)))
        .start()?;
    let (mut client, mut recipe) = connect(&sim, args.frequency)?;
    let first = timestamp(&recipe);
    let rss_start = rss();
    println!(
        "soak: {} min at {} Hz from a simulated {} on {}; cut at package {cut_at}; RSS at start {rss_start}",
        args.minutes,
        args.frequency,
        client.controller_version(),
        sim.addr(),
    );

    let began = Instant::now();
    let gap = stream(&mut client, &mut recipe, began, duration)?;
    let last = timestamp(&recipe);
    let stats = client.stats();
    let rss_end = rss();
    client.close()?;
    let sim_stats = sim.stats();
    sim.shutdown()?;

    let due = ((last - first) * args.frequency).round() as u64 + 1;
    let accounted = stats.received + stats.lost + stats.skipped + stats.discarded;
    println!("soak: done after {:?}", began.elapsed());
    print_accounting(&stats, due, accounted, &gap);
    println!(
        "  simulator: {} connections, {} packages sent",
        sim_stats.connections_accepted, sim_stats.data_packages_sent
    );
    println!("  RSS at start {rss_start}, at end {rss_end}");
    if due != accounted || stats.reconnects != 1 {
        return Err(
            "the run did not account for every package with exactly one reconnection".into(),
        );
    }
    Ok(())
}

/// A client that reconnects on its own, streaming the soak's recipe from `sim`, with the
/// first package received.
fn connect(sim: &Sim, frequency: f64) -> Result<(Client, DynamicRecipe), Box<dyn Error>> {
    let options = ConnectOptions::new()
        .read_timeout(Some(Duration::from_secs(1)))
        .reconnect(
            ReconnectPolicy::new()
                .attempts(10)
                .initial_backoff(Duration::from_millis(10))
                .max_backoff(Duration::from_secs(1)),
        );
    let mut client = Client::connect(sim.addr(), options)?;
    let mut recipe = DynamicRecipe::outputs([
        "timestamp",
        "actual_q",
        "actual_qd",
        "actual_TCP_pose",
        "robot_mode",
    ])?;
    client.setup_outputs(recipe.spec(), frequency)?;
    client.start()?;
    client.recv_into(&mut recipe)?;
    Ok((client, recipe))
}

/// What the stream saw of the cut: each reconnection's duration, and the longest wait for
/// a package.
#[derive(Default)]
struct Gap {
    reconnections: Vec<Duration>,
    longest_wait: Duration,
}

/// Receives until `duration` has passed since `began`, printing the reconnection as it
/// happens and the counts once a minute.
fn stream(
    client: &mut Client,
    recipe: &mut DynamicRecipe,
    began: Instant,
    duration: Duration,
) -> Result<Gap, Box<dyn Error>> {
    let mut gap = Gap::default();
    let mut next_report = began + Duration::from_secs(60);
    let mut last_at = Instant::now();
    let mut reconnects = 0;
    while began.elapsed() < duration {
        client.recv_into(recipe)?;
        let now = Instant::now();
        let waited = now - last_at;
        last_at = now;
        let stats = client.stats();
        if stats.reconnects != reconnects {
            reconnects = stats.reconnects;
            print_events(client, &mut gap.reconnections);
            // The wait for this package spans the cut, the reconnection and the replay.
            println!("  first package after the cut: {waited:?} after the last one before it");
            gap.longest_wait = gap.longest_wait.max(waited);
        }
        if now >= next_report {
            next_report += Duration::from_secs(60);
            println!(
                "  {:>5.1} min: received {}, lost {}, skipped {}, RSS {}",
                began.elapsed().as_secs_f64() / 60.0,
                stats.received,
                stats.lost,
                stats.skipped,
                rss()
            );
        }
    }
    Ok(gap)
}

/// The client's events since the last call, and each reconnection's duration into
/// `reconnections`.
fn print_events(client: &mut Client, reconnections: &mut Vec<Duration>) {
    for event in client.events() {
        match event {
            Event::LinkLost(e) => println!("  link lost: {}", rtde_core::Report(&e)),
            Event::AttemptFailed { attempt, error, .. } => {
                println!("  attempt {attempt} failed: {}", rtde_core::Report(&error));
            }
            Event::Reconnected(r) => {
                println!("  reconnected in {:?} ({} attempt(s))", r.took, r.attempts);
                reconnections.push(r.took);
            }
            Event::PackagesLost { count, estimated } => println!(
                "  {count} packages lost across the gap ({})",
                if estimated {
                    "estimated"
                } else {
                    "from timestamps"
                }
            ),
            _ => {}
        }
    }
}

/// Where every package due went, and what the reconnection cost.
fn print_accounting(stats: &Stats, due: u64, accounted: u64, gap: &Gap) {
    println!(
        "  packages received {}, lost {}, skipped by the controller {}, discarded {}",
        stats.received, stats.lost, stats.skipped, stats.discarded
    );
    println!(
        "  due from the first timestamp to the last: {due}; accounted for: {accounted} ({})",
        if due == accounted {
            "all of them"
        } else {
            "MISMATCH"
        }
    );
    println!(
        "  reconnections {} ({:?}); longest wait for a package {:?}",
        stats.reconnects, gap.reconnections, gap.longest_wait
    );
}
