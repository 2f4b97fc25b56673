//! The async driver (`rtde_core::tokio`) against rtde-sim on loopback, with the reference
//! recipe:
//!
//! - (a) unpaced, `--rate-seconds` (3): the highest sustained rate with every package
//!   received in order through the driver's queue and decoded, none skipped (gaps from
//!   `timestamp`, and the queue's overflow);
//! - (b) 500 Hz for `--seconds` (30), the async driver and the bare-socket floor **at the
//!   same time**, so they share the machine's noise: CPU per package of the runtime's one
//!   thread (a current-thread runtime, so the connection task and the consumer are both
//!   on it), latency from the simulator's send to the decoded value (p50, p99), packages
//!   lost;
//! - (c) `--fleet` (200) connections at 125 Hz to a simulated fleet, for `--fleet-seconds`
//!   (10), on one 2-thread runtime: the two workers' total CPU, per package and as a share
//!   of one core, and the packages lost.
//!
//! Allocations after setup are counted by `rtde-core/tests/zero_alloc.rs` (0).
//!
//! `cargo bench -p rtde-bench --bench async_driver [-- --seconds 30 --rate-seconds 3 --fleet 200 --fleet-seconds 10]`

use std::hint::black_box;
use std::time::{Duration, Instant};

use rtde_bench::Reference;
use rtde_bench::interleave::quantile;
use rtde_bench::live::{Gaps, Stamping, floor_500, latency_us, thread_cpu_time};
use rtde_core::tokio::{AsyncClient, Connection, Packages};
use rtde_core::{ConnectOptions, StaticRecipe};
use rtde_sim::Sim;
use tokio::net::TcpStream;

/// The targets.
const MAX_CPU_RATIO: f64 = 1.5;
const MIN_RATE: f64 = 1_000_000.0;
/// At most 15 bytes: Linux truncates thread names.
const WORKER: &str = "rtde-async-wk";

fn arg(flag: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "MISS" }
}

#[allow(clippy::cast_precision_loss)] // counts and nanoseconds far below 2^53
fn per_us(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n.max(1) as f64 / 1e3
}

async fn connect(
    addr: std::net::SocketAddr,
    queue: usize,
) -> (AsyncClient, Connection<TcpStream>, Packages) {
    let (client, connection) = rtde_core::tokio::connect(addr, ConnectOptions::new())
        .await
        .expect("connect to the simulator");
    let packages = client.packages(queue).expect("the in-order receiver");
    (client, connection, packages)
}

async fn start(client: &AsyncClient, frequency: f64) {
    client
        .setup_outputs(Reference::SPEC, frequency)
        .await
        .expect("set up the reference recipe");
    client.start().await.expect("start");
}

/// Runs `f` as a task of the runtime and waits for it.
async fn spawned<T: Send + 'static>(f: impl Future<Output = T> + Send + 'static) -> T {
    tokio::spawn(f).await.expect("the measuring task")
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// (a): unpaced for `seconds`: packages per second, and packages skipped or overflowed.
fn max_rate(epoch: Instant, seconds: u64) -> (f64, u64) {
    let sim = Sim::builder()
        .unpaced()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let rt = current_thread();
    // A spawned task, not the `block_on` future: waking it is a push on the runtime's own
    // queue, as for any task of an application; waking `block_on` writes an eventfd.
    let addr = sim.addr();
    let result = rt.block_on(spawned(async move {
        let (client, connection, mut packages) = connect(addr, 1 << 16).await;
        let task = tokio::spawn(connection);
        start(&client, 500.0).await;
        for _ in 0..10_000 {
            black_box(packages.recv_as::<Reference>().await.expect("a package"));
        }
        let mut gaps = Gaps::default();
        let mut n = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(seconds) {
            for _ in 0..1024 {
                let r: Reference = packages.recv_as().await.expect("a package");
                gaps.observe(r.timestamp);
                n += 1;
            }
        }
        let elapsed = start.elapsed();
        let stats = client.stats();
        drop((client, packages));
        let _ = task.await;
        #[allow(clippy::cast_precision_loss)] // counts far below 2^53
        let rate = n as f64 / elapsed.as_secs_f64();
        (rate, gaps.missing + stats.skipped + stats.overflowed)
    }));
    let _ = sim.shutdown();
    result
}

/// What the async driver measured at 500 Hz.
struct Run {
    packages: u64,
    cpu: Option<Duration>,
    latencies: Vec<f64>,
    lost: u64,
}

/// (b): 500 Hz for `seconds` on a current-thread runtime on this thread.
fn async_500(epoch: Instant, seconds: u64) -> Run {
    let sim = Sim::builder()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let rt = current_thread();
    let addr = sim.addr();
    let run = rt.block_on(spawned(async move {
        let (client, connection, mut packages) = connect(addr, 1024).await;
        let task = tokio::spawn(connection);
        start(&client, 500.0).await;
        for _ in 0..250 {
            black_box(packages.recv_as::<Reference>().await.expect("a package"));
        }
        let mut latencies = Vec::with_capacity(usize::try_from(seconds * 500 + 500).unwrap_or(0));
        let mut gaps = Gaps::default();
        let cpu0 = thread_cpu_time();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(seconds) {
            let r: Reference = packages.recv_as().await.expect("a package");
            latencies.push(latency_us(epoch, r.actual_digital_output_bits));
            gaps.observe(r.timestamp);
        }
        let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
        let stats = client.stats();
        let _ = client.close().await;
        let _ = task.await;
        Run {
            packages: latencies.len() as u64,
            cpu,
            latencies,
            lost: gaps.missing + stats.skipped + stats.overflowed,
        }
    }));
    let _ = sim.shutdown();
    run
}

/// The CPU time of every thread of this process named `name`, summed.
fn named_threads_cpu(name: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            total += Duration::from_nanos(stat.split_whitespace().next()?.parse().ok()?);
        }
    }
    Some(total)
}

/// (c): `robots` connections at 125 Hz on one 2-thread runtime for `seconds`.
fn fleet(epoch: Instant, robots: u16, seconds: u64) {
    let fleet = Sim::builder()
        .source(Stamping::new(epoch))
        .start_fleet(robots)
        .expect("start the fleet");
    let addrs: Vec<_> = fleet.addrs().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(WORKER)
        .enable_all()
        .build()
        .expect("a runtime");
    let (packages, lost, cpu, elapsed) = rt.block_on(async move {
        let mut clients = Vec::new();
        for addr in addrs {
            let (client, connection, packages) = connect(addr, 256).await;
            tokio::spawn(connection);
            start(&client, 125.0).await;
            clients.push((client, packages));
        }
        // Settled: every connection streams.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let cpu0 = named_threads_cpu(WORKER);
        let started = Instant::now();
        let deadline = started + Duration::from_secs(seconds);
        let mut consumers = Vec::new();
        for (client, mut packages) in clients {
            consumers.push(tokio::spawn(async move {
                // What queued while the others were set up is not part of the window.
                while packages.try_recv().is_some() {}
                let mut gaps = Gaps::every(4);
                let mut n = 0u64;
                let before = client.stats();
                while Instant::now() < deadline {
                    let r: Reference = packages.recv_as().await.expect("a package");
                    gaps.observe(r.timestamp);
                    n += 1;
                }
                let after = client.stats();
                let lost = gaps.missing
                    + (after.skipped - before.skipped)
                    + (after.overflowed - before.overflowed);
                (client, n, lost)
            }));
        }
        let mut total = 0u64;
        let mut lost = 0u64;
        let mut clients = Vec::new();
        for consumer in consumers {
            let (client, n, l) = consumer.await.expect("a consumer");
            total += n;
            lost += l;
            clients.push(client);
        }
        let elapsed = started.elapsed();
        let cpu = named_threads_cpu(WORKER).zip(cpu0).map(|(b, a)| b - a);
        for client in &clients {
            let _ = client.close().await;
        }
        (total, lost, cpu, elapsed)
    });
    drop(rt);
    let _ = fleet.shutdown();
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    let expected = f64::from(robots) * 125.0 * elapsed.as_secs_f64();
    println!(
        "(c) {robots} async connections at 125 Hz, one 2-thread runtime, {:.1} s: {packages} packages (≈{expected:.0} due), {lost} lost    target 0 lost: {}",
        elapsed.as_secs_f64(),
        verdict(lost == 0)
    );
    match cpu {
        Some(cpu) => println!(
            "    both workers: {:.2} s CPU, {:.1} % of one core, {:.2} µs per package",
            cpu.as_secs_f64(),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64(),
            per_us(cpu, packages)
        ),
        None => println!("    worker CPU: /proc/self/task unavailable"),
    }
}

fn main() {
    let seconds = arg("--seconds", 30);
    let rate_seconds = arg("--rate-seconds", 3);
    let robots = u16::try_from(arg("--fleet", 200)).unwrap_or(200);
    let fleet_seconds = arg("--fleet-seconds", 10);
    let epoch = Instant::now();
    println!(
        "reference recipe ({}-byte packages), rtde-sim in process on loopback, rtde_core::tokio",
        3 + 1 + Reference::PAYLOAD_SIZE
    );

    let (rate, skipped) = max_rate(epoch, rate_seconds);
    println!(
        "(a) unpaced, {rate_seconds} s: {rate:>12.0} packages/s, {skipped} skipped or overflowed    target ≥ {MIN_RATE:.0}/s, none skipped: {}",
        verdict(rate >= MIN_RATE && skipped == 0)
    );

    println!("(b) 500 Hz for {seconds} s, the async driver and the floor at the same time:");
    let (run, floor) = std::thread::scope(|s| {
        let a = s.spawn(|| async_500(epoch, seconds));
        let f = s.spawn(|| floor_500(epoch, seconds));
        (a.join().expect("async run"), f.join().expect("floor run"))
    });
    let floor_cpu = floor.cpu.map(|c| per_us(c, floor.packages));
    let cpu = run.cpu.map(|c| per_us(c, run.packages));
    println!(
        "    floor      {} packages; CPU per package {} µs; latency p50 {:.1} µs, p99 {:.1} µs",
        floor.packages,
        floor_cpu.map_or("?".into(), |c| format!("{c:.2}")),
        quantile(floor.latencies.clone(), 0.50),
        quantile(floor.latencies, 0.99),
    );
    let ratio = cpu.zip(floor_cpu).map(|(c, f)| c / f);
    println!(
        "    async      {} packages, {} lost; CPU per package {} µs, {}    target ≤ {MAX_CPU_RATIO}×: {}",
        run.packages,
        run.lost,
        cpu.map_or("?".into(), |c| format!("{c:.2}")),
        ratio.map_or("?".into(), |r| format!("{r:.2}× the floor")),
        ratio.map_or("?", |r| verdict(r <= MAX_CPU_RATIO)),
    );
    println!(
        "               latency p50 {:.1} µs, p99 {:.1} µs; packages lost {}    target 0: {}",
        quantile(run.latencies.clone(), 0.50),
        quantile(run.latencies, 0.99),
        run.lost,
        verdict(run.lost == 0)
    );

    fleet(epoch, robots, fleet_seconds);
}
