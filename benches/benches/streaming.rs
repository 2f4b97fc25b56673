//! Streaming the reference recipe from rtde-sim over loopback, received and decoded with
//! `Client::recv_as` in user code:
//!
//! - (a) the simulator unpaced: the highest sustained rate with every package received and
//!   decoded, none skipped (gaps are counted from `timestamp`);
//! - (b) the simulator at 500 Hz for 30 s: CPU time of the receiving thread per package,
//!   latency from the simulator's send to the decoded value, packages lost;
//! - the floor of (b): the same 276-byte writes at 500 Hz through a bare `TcpStream` pair,
//!   read with `read_exact`, no protocol and no decoding: what the kernel and the machine's
//!   scheduler cost before any RTDE code runs;
//! - with `--peer PYTHON` (a Python with `ur_rtde` installed, as `benches/peers/run.sh`
//!   sets up), ur_rtde's `RTDEReceiveInterface` at 500 Hz with the same recipe, and the CPU
//!   time of its receive thread per package, next to ours.
//!
//! `cargo bench -p rtde-bench --bench streaming [-- --seconds 30 --peer PYTHON]`

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use rtde_bench::interleave::quantile;
use rtde_bench::live::{Stamping, nanos_since, thread_cpu_time, tick_of};
use rtde_bench::report::verdict;
use rtde_bench::{REFERENCE_NAMES, Reference};
use rtde_core::{Client, ConnectOptions, StaticRecipe};
use rtde_sim::Sim;

/// The targets.
const MIN_RATE: f64 = 500_000.0;
const MAX_CPU_US: f64 = 25.0;
const MAX_P99_US: f64 = 100.0;
const MIN_PEER_RATIO: f64 = 15.0;

struct Args {
    seconds: u64,
    rate_seconds: u64,
    peer: Option<String>,
}

fn args() -> Args {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    Args {
        seconds: value("--seconds")
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
        rate_seconds: value("--rate-seconds")
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
        peer: value("--peer"),
    }
}

fn connect(addr: SocketAddr) -> Client {
    let mut client =
        Client::connect(addr, ConnectOptions::new()).expect("connect to the simulator");
    client
        .setup_outputs(Reference::SPEC, 500.0)
        .expect("set up the reference recipe");
    client.start().expect("start");
    client
}

/// Follows the ticks of consecutive packages; counts the ones missing in between.
#[derive(Default)]
struct Gaps {
    last: Option<i64>,
    missing: u64,
}

impl Gaps {
    fn observe(&mut self, timestamp: f64) {
        let tick = tick_of(timestamp);
        if let Some(last) = self.last {
            assert!(tick > last, "package {tick} after {last}");
            self.missing += u64::try_from(tick - last - 1).unwrap_or(0);
        }
        self.last = Some(tick);
    }
}

#[allow(clippy::cast_precision_loss)] // counts and nanoseconds far below 2^53
fn per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// (a): as many packages as the simulator can send, for `seconds`.
fn max_rate(epoch: Instant, seconds: u64) {
    let sim = Sim::builder()
        .unpaced()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let mut client = connect(sim.addr());
    for _ in 0..10_000 {
        black_box(client.recv_as::<Reference>().expect("a package"));
    }
    let mut gaps = Gaps::default();
    let mut n: u64 = 0;
    let duration = Duration::from_secs(seconds);
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    'run: loop {
        for _ in 0..1024 {
            let r: Reference = client.recv_as().expect("a package");
            gaps.observe(r.timestamp);
            black_box(&r);
            n += 1;
        }
        if start.elapsed() >= duration {
            break 'run;
        }
    }
    let elapsed = start.elapsed();
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let skipped = gaps.missing + client.stats().skipped;
    let _ = client.close();
    let _ = sim.shutdown();

    let rate = n as f64 / elapsed.as_secs_f64();
    println!("(a) unpaced simulator, {seconds} s: every package received and decoded");
    println!(
        "    {rate:>12.0} packages/s   {n} packages, {skipped} skipped    target ≥ {MIN_RATE:.0}/s with none skipped: {}",
        verdict(rate >= MIN_RATE && skipped == 0)
    );
    if let Some(cpu) = cpu {
        println!(
            "    receiving thread: {:.0} ns CPU per package, busy {:.0} % of the time (the rest it waited for the simulator)",
            per(cpu, n),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64()
        );
    }
}

/// (b): 500 Hz for `seconds`; returns our CPU time per package in microseconds.
fn at_500_hz(epoch: Instant, seconds: u64) -> Option<f64> {
    let sim = Sim::builder()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let mut client = connect(sim.addr());
    for _ in 0..250 {
        black_box(client.recv_as::<Reference>().expect("a package"));
    }
    let expected = usize::try_from(seconds * 500 + 1_000).unwrap_or(usize::MAX);
    let mut latencies: Vec<f64> = Vec::with_capacity(expected);
    let mut gaps = Gaps::default();
    let duration = Duration::from_secs(seconds);
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    while start.elapsed() < duration {
        let r: Reference = client.recv_as().expect("a package");
        let now = nanos_since(epoch, Instant::now());
        #[allow(clippy::cast_precision_loss)] // nanoseconds of a run, far below 2^53
        latencies.push(now.saturating_sub(r.actual_digital_output_bits) as f64 / 1e3);
        gaps.observe(r.timestamp);
    }
    let elapsed = start.elapsed();
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let lost = gaps.missing + client.stats().skipped;
    let _ = client.close();
    let _ = sim.shutdown();

    let n = latencies.len() as u64;
    let p50 = quantile(latencies.clone(), 0.50);
    let p99 = quantile(latencies.clone(), 0.99);
    let max = quantile(latencies, 1.0);
    println!(
        "(b) simulator at 500 Hz, {seconds} s: {n} packages in {:.1} s, {lost} lost    target 0 lost: {}",
        elapsed.as_secs_f64(),
        verdict(lost == 0)
    );
    let cpu_us = cpu.map(|cpu| per(cpu, n) / 1e3);
    match cpu_us {
        Some(us) => println!(
            "    receiving thread CPU per package: {us:>8.2} µs    target ≤ {MAX_CPU_US} µs: {}",
            verdict(us <= MAX_CPU_US)
        ),
        None => println!("    receiving thread CPU: /proc/thread-self/schedstat unavailable"),
    }
    println!(
        "    latency, simulator send to decoded value: p50 {p50:.1} µs, p99 {p99:.1} µs, max {max:.1} µs    target p99 ≤ {MAX_P99_US} µs: {}",
        verdict(p99 <= MAX_P99_US)
    );
    cpu_us
}

/// The floor of (b): a thread writes a 276-byte package every 2 ms, stamped like the
/// simulator's, into a bare loopback `TcpStream`; this thread reads each with `read_exact`.
fn raw_socket_floor(epoch: Instant, seconds: u64) {
    const LEN: usize = 3 + 1 + Reference::PAYLOAD_SIZE;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("an address");
    let total = seconds * 500 + 250;
    let sender = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let start = Instant::now();
        let mut package = [0u8; LEN];
        for i in 0..total {
            let due = start + Duration::from_micros(2_000 * i);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            let stamp = nanos_since(epoch, Instant::now());
            package[..8].copy_from_slice(&stamp.to_ne_bytes());
            if stream.write_all(&package).is_err() {
                return;
            }
        }
    });
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let mut package = [0u8; LEN];
    for _ in 0..250 {
        stream.read_exact(&mut package).expect("a package");
    }
    let mut latencies: Vec<f64> = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let cpu0 = thread_cpu_time();
    for _ in 250..total {
        stream.read_exact(&mut package).expect("a package");
        let now = nanos_since(epoch, Instant::now());
        let mut stamp = [0u8; 8];
        stamp.copy_from_slice(&package[..8]);
        #[allow(clippy::cast_precision_loss)] // nanoseconds of a run, far below 2^53
        latencies.push(now.saturating_sub(u64::from_ne_bytes(stamp)) as f64 / 1e3);
    }
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let _ = sender.join();
    let n = latencies.len() as u64;
    println!(
        "    floor, a bare loopback TcpStream at 500 Hz, {seconds} s, {n} packages of {LEN} bytes:"
    );
    if let Some(cpu) = cpu {
        println!(
            "        reading thread CPU per package {:>8.2} µs",
            per(cpu, n) / 1e3
        );
    }
    println!(
        "        latency p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        quantile(latencies.clone(), 0.50),
        quantile(latencies.clone(), 0.99),
        quantile(latencies, 1.0)
    );
}

/// A simulator on `127.0.0.N:30004`, the only port ur_rtde connects to; N is chosen so
/// that neither another run nor a simulator on 127.0.0.1 collides with it.
fn sim_on_port_30004(epoch: Instant) -> (Sim, IpAddr) {
    let first = 2 + u8::try_from(std::process::id() % 200).unwrap_or(0);
    for n in (first..=254).chain(2..first) {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
        if let Ok(sim) = Sim::builder()
            .source(Stamping::new(epoch))
            .bind(SocketAddr::new(ip, 30004))
            .start()
        {
            return (sim, ip);
        }
    }
    panic!("no free 127.0.0.N:30004 for the simulator");
}

/// ur_rtde at 500 Hz for `seconds`; prints its CPU per package next to `ours`.
fn peer(python: &str, epoch: Instant, seconds: u64, ours: Option<f64>) {
    let (sim, ip) = sim_on_port_30004(epoch);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/ur_rtde_cpu.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(ip.to_string())
        .arg(seconds.to_string())
        .args(REFERENCE_NAMES)
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the ur_rtde script");
    let deadline = Instant::now() + Duration::from_secs(seconds + 60);
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("the script's output");
    let _ = sim.shutdown();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout.lines().find(|l| l.starts_with("ur_rtde ")) else {
        println!(
            "peer ur_rtde: no result ({}); output:\n{stdout}",
            out.status
        );
        return;
    };
    let field = |key: &str| -> Option<f64> {
        let mut words = line.split_whitespace();
        words.position(|w| w == key)?;
        words.next()?.parse().ok()
    };
    let (Some(packages), Some(cpu_ns)) = (field("packages"), field("cpu_ns")) else {
        println!("peer ur_rtde: unreadable result: {line}");
        return;
    };
    let theirs = cpu_ns / packages / 1e3;
    println!(
        "peer ur_rtde {} RTDEReceiveInterface, 500 Hz, {seconds} s: {packages:.0} packages, {} receive thread(s)",
        line.split_whitespace().nth(1).unwrap_or("?"),
        field("threads").unwrap_or(f64::NAN)
    );
    match ours {
        Some(ours) => {
            let ratio = theirs / ours;
            println!(
                "    receive-thread CPU per package: ur_rtde {theirs:.2} µs, rtde {ours:.2} µs: {ratio:.1}× less    target ≥ {MIN_PEER_RATIO}×: {}",
                verdict(ratio >= MIN_PEER_RATIO)
            );
        }
        None => println!("    receive-thread CPU per package: ur_rtde {theirs:.2} µs"),
    }
}

fn main() -> ExitCode {
    let args = args();
    let epoch = Instant::now();
    println!(
        "reference recipe (10 fields, {}-byte packages), rtde-sim in process on loopback, rtde_core::Client::recv_as",
        3 + 1 + Reference::PAYLOAD_SIZE
    );
    max_rate(epoch, args.rate_seconds);
    let ours = at_500_hz(epoch, args.seconds);
    raw_socket_floor(epoch, args.seconds);
    match &args.peer {
        Some(python) => peer(python, epoch, args.seconds, ours),
        None => println!("peer ur_rtde: skipped (benches/peers/run.sh runs it: --peer PYTHON)"),
    }
    ExitCode::SUCCESS
}
