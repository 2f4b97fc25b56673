//! Many async connections on one small runtime: `--fleet` (200) connections at 125 Hz
//! to a simulated fleet in this process, for `--fleet-seconds` (10), on one 2-thread
//! tokio runtime, with the reference recipe: the two workers' total CPU (per package and
//! as a share of one core) and the packages lost. The async driver's unpaced rate, its CPU
//! and latency at 500 Hz next to a bare tokio `read_exact` floor, and its allocations are
//! in the drivers bench (`--bench drivers`), beside the other drivers.
//!
//! `cargo bench -p rtde-bench --bench async_driver [-- --fleet 200 --fleet-seconds 10]`

use std::time::{Duration, Instant};

use rtde_bench::Reference;
use rtde_bench::live::{Gaps, Stamping};
use rtde_bench::report::{arg, per_us, verdict};
use rtde_core::tokio::{AsyncClient, Connection, Packages};
use rtde_core::{ConnectOptions, StaticRecipe};
use rtde_sim::Sim;
use tokio::net::TcpStream;

/// At most 15 bytes: Linux truncates thread names.
const WORKER: &str = "rtde-async-wk";

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
        "{robots} async connections at 125 Hz, one 2-thread runtime, {:.1} s: {packages} packages (≈{expected:.0} due), {lost} lost    target 0 lost: {}",
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
    let robots = u16::try_from(arg("--fleet", 200)).unwrap_or(200);
    let fleet_seconds = arg("--fleet-seconds", 10);
    println!(
        "reference recipe ({}-byte packages), rtde-sim fleet in process on loopback, rtde_core::tokio",
        3 + 1 + Reference::PAYLOAD_SIZE
    );
    fleet(Instant::now(), robots, fleet_seconds);
}
