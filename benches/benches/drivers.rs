//! The drivers side by side, against rtde-sim on loopback with the reference recipe:
//!
//! - unpaced: the highest sustained rate of each driver with every package received and
//!   decoded in order, none missing (gaps in `timestamp`; of those, the driver's counts say
//!   which the background queue dropped);
//! - 500 Hz for `--seconds` (60) each: every driver against a floor of its own
//!   architecture. Six cases take turns, in rounds of 3 s, each alone with a simulator of
//!   its own: the blocking floor and the blocking client (`Client::recv_as`), the
//!   background floor and the background driver (a reader thread and a consumer parked in
//!   `Receiver::recv`), the async floor and the async driver (its connection task and the
//!   consumer on a current-thread runtime). A floor and its driver run next to each other,
//!   the floor first in one round and the driver first in the next, and the pairs take
//!   turns at leading a round (`rtde_bench::interleave::paired_order` says why). The
//!   floors are what a competent engineer would write by hand for each shape, with no RTDE
//!   client in them: a `read_exact` loop with the client's default read timeout (the same
//!   socket options as the client's); a reader thread reading each package, with the 50 ms
//!   read timeout the driver's reader thread has, and pushing it on a
//!   `Mutex<VecDeque<[u8; 276]>>` with a `Condvar` its consumer waits on, no spinning; a
//!   tokio `read_exact` loop in a task of the same kind of runtime. Each decodes with the
//!   hand-written floor decoder (`rtde_bench::floor::decode`). A ratio is the median over
//!   rounds of a case's CPU per package over another's in the same round, so the cases
//!   share the machine's drift but not each other's wake-ups on two cores: each driver
//!   over its own floor (target ≤ 1.15×), and each driver over the blocking client
//!   (reported); the spread over the rounds is printed beside it. CPU counts every thread
//!   a case uses (the background cases: the reader thread and the consumer; the async
//!   cases: the runtime's one thread); latency is from the simulator's send to the decoded
//!   value (p50, p99); packages missing, and of those the ones the simulator did not send
//!   (it fell behind on a busy machine), which are no loss of the driver's;
//! - allocations per package after setup, counted by a global allocator over a window of
//!   each driver alone with its simulator (everything in the process is counted, the
//!   simulator included: the blocking client's figure is the baseline);
//! - the hand-off, the background driver alone with its simulator, per package from the
//!   reader thread's read (`Receiver::received_at`): to the handle, seen by a consumer that
//!   polls `Receiver::newest_seq` (what the background thread adds); to a consumer parked
//!   in `recv` (what the operating system's wake-up adds on top), with the reader and the
//!   consumer unpinned, on one core and on two; and to a consumer in `recv` with
//!   `SpawnOptions::spin_before_arrival`, with the CPU each way costs. A consumer pinned to
//!   the second core has it to itself: the simulator, which stands for another machine,
//!   runs on the reader's.
//!
//! Why a driver and its floor compare fairly: both read the same sender, a paced rtde-sim
//! in this process streaming the same 276-byte packages, one write per package, from the
//! same source. The floors set up the recipe by hand (`rtde_bench::live::bare_stream`) and
//! then read data packages only; the drivers' setup is not measured. Only the receiving
//! side differs: framing, the session's bookkeeping (gaps, staleness, statistics) and the
//! driver's delivery against a bare read and hand-off. An earlier floor had a writer
//! thread of its own (`thread::sleep` to each due time, then one `write_all`), where the
//! simulator's connection thread waits on a channel with a timeout, samples and encodes
//! before it writes; the blocking client then measured below that floor (0.68 to 0.96×)
//! on one machine, so a ratio against it said little.
//!
//! `cargo bench -p rtde-bench --bench drivers [-- --seconds 60 --rate-seconds 3]`
//!
//! `-- --only "blocking" --seconds 10` runs one 500 Hz case alone (any name of phase (b),
//! "floor, blocking" for instance), for `strace -f`, `perf record` or `ss -tni` on it.

// One counting allocator, shared with rtde-core's zero_alloc test.
#[global_allocator]
static ALLOCATOR: rtde_testkit::counting_allocator::CountingAllocator =
    rtde_testkit::counting_allocator::CountingAllocator;

use std::collections::VecDeque;
use std::hint::black_box;
use std::io::{self, Read};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rtde_bench::interleave::{paired_order, quantile};
use rtde_bench::live::{
    Gaps, REFERENCE_PACKAGE, Stamping, bare_stream, nanos_since, thread_cpu_time,
};
use rtde_bench::report::{arg, per_us, verdict};
use rtde_bench::{Reference, floor};
use rtde_core::background::{Background, SpawnOptions};
use rtde_core::{Client, ConnectOptions, StaticRecipe, Stats};
use rtde_sim::Sim;
use rtde_testkit::counting_allocator::ProcessWide;

/// The targets.
const MAX_CPU_RATIO: f64 = 1.15;
const MAX_ADDED_US: f64 = 5.0;
const MIN_RATE: f64 = 1_000_000.0;
/// Phase (b)'s rounds.
const ROUND_SECONDS: u64 = 3;
/// The hand-off phase's `SpawnOptions::spin_before_arrival` window.
const SPIN_WINDOW: Duration = Duration::from_micros(150);
// At most 15 bytes: Linux keeps no more of a thread name.
const READER: &str = "rtde-bench-rx";
/// The background floor's reader thread.
const FLOOR_READER: &str = "rtde-bench-flr";

fn connect(addr: SocketAddr) -> Client {
    let mut client =
        Client::connect(addr, ConnectOptions::new()).expect("connect to the simulator");
    client
        .setup_outputs(Reference::SPEC, 500.0)
        .expect("set up the reference recipe");
    client.start().expect("start");
    client
}

fn spawn(client: Client, queue: usize) -> Background {
    client
        .spawn(SpawnOptions::new().name(READER).queue_capacity(queue))
        .expect("spawn the background driver")
}

/// The CPU time of this process's thread named `name`.
fn named_thread_cpu(name: &str) -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        // A thread that ended since the listing (the async runs' runtimes, say) is skipped,
        // not the end of the search.
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            return Some(Duration::from_nanos(
                stat.split_whitespace().next()?.parse().ok()?,
            ));
        }
    }
    None
}

/// Unpaced, `seconds`: packages per second and packages lost.
fn max_rate(epoch: Instant, seconds: u64, background: bool) -> (f64, Losses) {
    let sim = Sim::builder()
        .unpaced()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let client = connect(sim.addr());
    let mut gaps = Gaps::default();
    let mut n = 0u64;
    let duration = Duration::from_secs(seconds);
    let result = if background {
        let driver = spawn(client, 1 << 16);
        let mut receiver = driver.receiver();
        for _ in 0..10_000 {
            black_box(receiver.recv_as::<Reference>(None).expect("a package"));
        }
        let before = driver.stats();
        let start = Instant::now();
        while start.elapsed() < duration {
            for _ in 0..1024 {
                let r: Reference = receiver.recv_as(None).expect("a package");
                gaps.observe(r.timestamp);
                n += 1;
            }
        }
        let elapsed = start.elapsed();
        let losses = Losses::seen(gaps.missing).counted(before, driver.stats());
        drop(driver);
        (n as f64 / elapsed.as_secs_f64(), losses)
    } else {
        let mut client = client;
        for _ in 0..10_000 {
            black_box(client.recv_as::<Reference>().expect("a package"));
        }
        let before = client.stats();
        let start = Instant::now();
        while start.elapsed() < duration {
            for _ in 0..1024 {
                let r: Reference = client.recv_as().expect("a package");
                gaps.observe(r.timestamp);
                n += 1;
            }
        }
        let elapsed = start.elapsed();
        let losses = Losses::seen(gaps.missing).counted(before, client.stats());
        drop(client);
        (n as f64 / elapsed.as_secs_f64(), losses)
    };
    let _ = sim.shutdown();
    result
}

/// The packages a case's consumer never saw, from the gaps in `timestamp`, and what the
/// driver counted of their causes over the same window. The driver's counts are parts of
/// the gaps, not more of them: each package is counted once.
#[derive(Clone, Copy, Debug, Default)]
struct Losses {
    /// Gaps the consumer saw.
    missing: u64,
    /// Of those, ticks the simulator did not send (`Stats::skipped`): it fell further
    /// behind than its catch-up window and sent the newest, as a controller does.
    skipped: u64,
    /// Of those, packages the background driver's queue had no room for
    /// (`Stats::overflowed`): the consumer was too slow.
    overflowed: u64,
}

impl Losses {
    /// A floor's: the gaps, with no driver to tell their causes.
    fn seen(missing: u64) -> Losses {
        Losses {
            missing,
            ..Losses::default()
        }
    }

    /// With the causes the driver counted between `before` and `after`.
    fn counted(self, before: Stats, after: Stats) -> Losses {
        Losses {
            skipped: after.skipped - before.skipped,
            overflowed: after.overflowed - before.overflowed,
            ..self
        }
    }

    fn add(&mut self, other: Losses) {
        self.missing += other.missing;
        self.skipped += other.skipped;
        self.overflowed += other.overflowed;
    }

    /// The packages the driver lost: the gaps the simulator did not make.
    fn by_driver(self) -> u64 {
        self.missing.saturating_sub(self.skipped)
    }
}

impl std::fmt::Display for Losses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} missing", self.missing)?;
        if self.skipped + self.overflowed > 0 {
            write!(
                f,
                " ({} not sent by the simulator, {} overflowed the queue)",
                self.skipped, self.overflowed
            )?;
        }
        Ok(())
    }
}

/// What one driver measured at 500 Hz.
struct Run {
    /// Socket to handle, µs: the background driver's hand-off, measured per package.
    handoff: Vec<f64>,
    packages: u64,
    cpu: Option<Duration>,
    latencies: Vec<f64>,
    losses: Losses,
    /// The background driver's reader thread alone.
    reader: Option<Duration>,
}

impl Run {
    /// With the causes of its losses the driver counted between `before` and `after`.
    fn counted(self, before: Stats, after: Stats) -> Run {
        Run {
            losses: self.losses.counted(before, after),
            ..self
        }
    }

    fn cpu_us(&self) -> Option<f64> {
        self.cpu.map(|c| per_us(c, self.packages))
    }

    /// Packages, losses, CPU per package and latency, as a case's line prints them.
    fn summary(&self) -> String {
        format!(
            "{} packages, {}; CPU per package {} µs; latency p50 {:.1} µs, p99 {:.1} µs",
            self.packages,
            self.losses,
            self.cpu_us().map_or("?".into(), |c| format!("{c:.2}")),
            quantile(self.latencies.clone(), 0.50),
            quantile(self.latencies.clone(), 0.99),
        )
    }

    /// This round's figures added to the rounds' before.
    fn add(&mut self, round: Run) {
        let sum = |a: Option<Duration>, b: Option<Duration>| a.zip(b).map(|(a, b)| a + b);
        self.handoff.extend(round.handoff);
        self.packages += round.packages;
        self.cpu = sum(self.cpu, round.cpu);
        self.latencies.extend(round.latencies);
        self.losses.add(round.losses);
        self.reader = sum(self.reader, round.reader);
    }

    fn empty() -> Run {
        Run {
            handoff: Vec::new(),
            packages: 0,
            cpu: Some(Duration::ZERO),
            latencies: Vec::new(),
            losses: Losses::default(),
            reader: Some(Duration::ZERO),
        }
    }
}

fn latency_us(epoch: Instant, stamp: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // nanoseconds of a run, far below 2^53
    let us = nanos_since(epoch, Instant::now()).saturating_sub(stamp) as f64 / 1e3;
    us
}

/// What a 500 Hz case keeps of each decoded package: its latency and its place in the
/// sequence.
struct Tally {
    epoch: Instant,
    latencies: Vec<f64>,
    gaps: Gaps,
}

impl Tally {
    /// Room for `seconds` of packages, so that keeping them allocates nothing.
    fn new(epoch: Instant, seconds: u64) -> Tally {
        Tally {
            epoch,
            latencies: Vec::with_capacity(usize::try_from(seconds * 500 + 500).unwrap_or(0)),
            gaps: Gaps::default(),
        }
    }

    fn note(&mut self, r: &Reference) {
        self.latencies
            .push(latency_us(self.epoch, r.actual_digital_output_bits));
        self.gaps.observe(r.timestamp);
    }

    /// The case's figures; a driver's add the causes of its losses with [`Run::counted`].
    fn run(self, cpu: Option<Duration>) -> Run {
        Run {
            handoff: Vec::new(),
            packages: self.latencies.len() as u64,
            cpu,
            latencies: self.latencies,
            losses: Losses::seen(self.gaps.missing),
            reader: None,
        }
    }
}

fn blocking_500(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    let mut client = connect(sim.addr());
    for _ in 0..250 {
        black_box(client.recv_as::<Reference>().expect("a package"));
    }
    let mut tally = Tally::new(epoch, seconds);
    let before = client.stats();
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(seconds) {
        tally.note(&client.recv_as().expect("a package"));
    }
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let after = client.stats();
    let _ = client.close();
    tally.run(cpu).counted(before, after)
}

fn background_500(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    let driver = spawn(connect(sim.addr()), 1024);
    let mut receiver = driver.receiver();
    for _ in 0..250 {
        black_box(receiver.recv_as::<Reference>(None).expect("a package"));
    }
    let mut tally = Tally::new(epoch, seconds);
    let mut handoff = Vec::with_capacity(tally.latencies.capacity());
    let before = driver.stats();
    let cpu0 = thread_cpu_time();
    let reader0 = named_thread_cpu(READER);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(seconds) {
        let r: Reference = receiver.recv_as(None).expect("a package");
        if let Some(at) = receiver.received_at() {
            handoff.push(at.elapsed().as_secs_f64() * 1e6);
        }
        tally.note(&r);
    }
    let consumer = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    let reader = named_thread_cpu(READER).zip(reader0).map(|(b, a)| b - a);
    let after = driver.stats();
    let _ = driver.close();
    Run {
        handoff,
        reader,
        ..tally
            .run(consumer.zip(reader).map(|(a, b)| a + b))
            .counted(before, after)
    }
}

/// A 500 Hz case: the bench's epoch, the simulator it reads, the seconds it runs.
type Case = fn(Instant, &Sim, u64) -> Run;

/// Phase (b)'s cases, each floor before its driver: the pairs take turns in
/// [`paired_order`].
const CASES: [(&str, Case); 6] = [
    ("floor, blocking", floor_blocking),
    ("blocking", blocking_500),
    ("floor, background", floor_background),
    ("background", background_500),
    ("floor, async", floor_async),
    ("async", async_500),
];
/// The drivers' places in [`CASES`].
const BLOCKING: usize = 1;
const BACKGROUND: usize = 3;
const ASYNC: usize = 5;

/// A simulator at its default 500 Hz pace, stamping each package's send time.
fn paced_sim(epoch: Instant) -> Sim {
    Sim::builder()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator")
}

/// `run` against a simulator of its own, stopped after.
fn alone(epoch: Instant, run: impl FnOnce(&Sim) -> Run) -> Run {
    let sim = paced_sim(epoch);
    let result = run(&sim);
    let _ = sim.shutdown();
    result
}

/// A current-thread runtime: the connection task and the consumer on the calling thread.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The async driver connected, set up, started, with its in-order receiver (`queue`
/// packages), as a task of the runtime (waking a task is a push on the runtime's queue;
/// waking `block_on` writes an eventfd).
async fn connect_async(
    addr: SocketAddr,
    queue: usize,
) -> (
    rtde_core::tokio::AsyncClient,
    rtde_core::tokio::Packages,
    tokio::task::JoinHandle<Result<(), rtde_core::Error>>,
) {
    let (client, connection) = rtde_core::tokio::connect(addr, ConnectOptions::new())
        .await
        .expect("connect to the simulator");
    let task = tokio::spawn(connection);
    client
        .setup_outputs(Reference::SPEC, 500.0)
        .await
        .expect("set up the reference recipe");
    let packages = client.packages(queue).expect("the in-order receiver");
    client.start().await.expect("start");
    (client, packages, task)
}

/// Unpaced, `seconds`, the async driver: packages per second and packages lost.
fn max_rate_async(epoch: Instant, seconds: u64) -> (f64, Losses) {
    let sim = Sim::builder()
        .unpaced()
        .source(Stamping::new(epoch))
        .start()
        .expect("start the simulator");
    let addr = sim.addr();
    let result = current_thread().block_on(async move {
        tokio::spawn(async move {
            let (client, mut packages, task) = connect_async(addr, 1 << 16).await;
            for _ in 0..10_000 {
                black_box(packages.recv_as::<Reference>().await.expect("a package"));
            }
            let mut gaps = Gaps::default();
            let mut n = 0u64;
            let before = client.stats();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(seconds) {
                for _ in 0..1024 {
                    let r: Reference = packages.recv_as().await.expect("a package");
                    gaps.observe(r.timestamp);
                    n += 1;
                }
            }
            let elapsed = start.elapsed();
            let losses = Losses::seen(gaps.missing).counted(before, client.stats());
            drop((client, packages));
            let _ = task.await;
            (n as f64 / elapsed.as_secs_f64(), losses)
        })
        .await
        .expect("the measuring task")
    });
    let _ = sim.shutdown();
    result
}

fn async_500(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    let addr = sim.addr();
    current_thread().block_on(async move {
        tokio::spawn(async move {
            let (client, mut packages, task) = connect_async(addr, 1024).await;
            for _ in 0..250 {
                black_box(packages.recv_as::<Reference>().await.expect("a package"));
            }
            let mut tally = Tally::new(epoch, seconds);
            let before = client.stats();
            let cpu0 = thread_cpu_time();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(seconds) {
                tally.note(&packages.recv_as().await.expect("a package"));
            }
            let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
            let after = client.stats();
            let _ = client.close().await;
            let _ = task.await;
            tally.run(cpu).counted(before, after)
        })
        .await
        .expect("the measuring task")
    })
}

/// A data package of the reference recipe, decoded by the hand-written floor decoder.
fn decode_bare(package: &[u8; REFERENCE_PACKAGE]) -> Reference {
    floor::decode(&package[REFERENCE_PACKAGE - rtde_bench::REFERENCE_PAYLOAD..])
        .expect("the reference recipe's payload")
}

/// The blocking floor: a `read_exact` loop on a bare socket to the simulator, with the
/// read timeout the blocking client has by default.
fn floor_blocking(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    let mut stream = bare_stream(sim.addr(), 500.0).expect("set up a bare socket");
    // A socket with a read timeout has the kernel arm a timer for every wait; on a virtual
    // machine that can cost a sixth of a package. Without it, the floor would charge the
    // client for the timeout any link to a robot needs (`docs/performance.md`).
    stream
        .set_read_timeout(ConnectOptions::new().get_read_timeout())
        .expect("a read timeout");
    let mut package = [0u8; REFERENCE_PACKAGE];
    for _ in 0..250 {
        stream.read_exact(&mut package).expect("a package");
    }
    let mut tally = Tally::new(epoch, seconds);
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(seconds) {
        stream.read_exact(&mut package).expect("a package");
        tally.note(&decode_bare(&package));
    }
    let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
    tally.run(cpu)
}

/// The background floor's hand-off: the packages the reader thread has read, and whether
/// it has stopped reading.
struct Handoff {
    queue: Mutex<(VecDeque<[u8; REFERENCE_PACKAGE]>, bool)>,
    ready: Condvar,
}

/// The background driver's reader thread reads with this timeout when no staleness limit
/// is set (its private `IDLE_TICK`): it wakes that often to notice a close or a silence.
const READER_TICK: Duration = Duration::from_millis(50);

/// `read_exact` through read timeouts: the background floor's socket has one only so that
/// the kernel arms a timer for each wait, as it does for the driver's reader.
fn read_package(stream: &mut TcpStream, package: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < package.len() {
        match stream.read(&mut package[filled..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The background floor: a reader thread that reads each package, with the driver's
/// reader's read timeout, and pushes it on a queue behind a mutex, and this thread, parked
/// on the condition variable until a package is there.
fn floor_background(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    let mut stream = bare_stream(sim.addr(), 500.0).expect("set up a bare socket");
    // As for the blocking floor: without the timeout, the floor would charge the driver for
    // the timer that every wait of a reader which must notice a close or a silence arms
    // (measured in `docs/performance.md`, at `dcd78b5`).
    stream
        .set_read_timeout(Some(READER_TICK))
        .expect("a read timeout");
    let closer = stream.try_clone().expect("a second handle on the socket");
    let handoff = Handoff {
        queue: Mutex::new((VecDeque::with_capacity(1024), false)),
        ready: Condvar::new(),
    };
    let lock = || handoff.queue.lock().unwrap_or_else(PoisonError::into_inner);
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(FLOOR_READER.into())
            .spawn_scoped(s, || {
                let mut package = [0u8; REFERENCE_PACKAGE];
                while read_package(&mut stream, &mut package).is_ok() {
                    lock().0.push_back(package);
                    handoff.ready.notify_one();
                }
                lock().1 = true;
                handoff.ready.notify_one();
            })
            .expect("spawn the floor's reader");
        let next = || {
            let mut queue = lock();
            loop {
                if let Some(package) = queue.0.pop_front() {
                    return package;
                }
                assert!(!queue.1, "the floor's reader stopped");
                queue = handoff
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        for _ in 0..250 {
            black_box(next());
        }
        let mut tally = Tally::new(epoch, seconds);
        let cpu0 = thread_cpu_time();
        let reader0 = named_thread_cpu(FLOOR_READER);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(seconds) {
            tally.note(&decode_bare(&next()));
        }
        let consumer = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
        let reader = named_thread_cpu(FLOOR_READER)
            .zip(reader0)
            .map(|(b, a)| b - a);
        // Ends the reader's read; the scope joins it.
        let _ = closer.shutdown(Shutdown::Both);
        Run {
            reader,
            ..tally.run(consumer.zip(reader).map(|(a, b)| a + b))
        }
    })
}

/// The async floor: a tokio `read_exact` loop on a bare socket, in a task of a
/// current-thread runtime, as the async driver's case runs.
fn floor_async(epoch: Instant, sim: &Sim, seconds: u64) -> Run {
    use tokio::io::AsyncReadExt;

    let stream = bare_stream(sim.addr(), 500.0).expect("set up a bare socket");
    stream.set_nonblocking(true).expect("a non-blocking socket");
    current_thread().block_on(async move {
        tokio::spawn(async move {
            let mut stream = tokio::net::TcpStream::from_std(stream).expect("a tokio socket");
            let mut package = [0u8; REFERENCE_PACKAGE];
            for _ in 0..250 {
                stream.read_exact(&mut package).await.expect("a package");
            }
            let mut tally = Tally::new(epoch, seconds);
            let cpu0 = thread_cpu_time();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(seconds) {
                stream.read_exact(&mut package).await.expect("a package");
                tally.note(&decode_bare(&package));
            }
            let cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
            tally.run(cpu)
        })
        .await
        .expect("the measuring task")
    })
}

/// Allocations per package over `seconds` of one driver alone with its simulator.
fn allocations(epoch: Instant, seconds: u64, background: bool) -> f64 {
    let sim = paced_sim(epoch);
    let client = connect(sim.addr());
    let n;
    let count;
    if background {
        let driver = spawn(client, 1024);
        let mut receiver = driver.receiver();
        for _ in 0..250 {
            black_box(receiver.recv_as::<Reference>(None).expect("a package"));
        }
        let before = driver.stats().received;
        let counting = ProcessWide::start();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(seconds) {
            black_box(receiver.recv_as::<Reference>(None).expect("a package"));
        }
        count = counting.stop();
        n = driver.stats().received - before;
        let _ = driver.close();
    } else {
        let mut client = client;
        for _ in 0..250 {
            black_box(client.recv_as::<Reference>().expect("a package"));
        }
        let before = client.stats().received;
        let counting = ProcessWide::start();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(seconds) {
            black_box(client.recv_as::<Reference>().expect("a package"));
        }
        count = counting.stop();
        n = client.stats().received - before;
        let _ = client.close();
    }
    let _ = sim.shutdown();
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    let per = count as f64 / n.max(1) as f64;
    println!(
        "    {:<10} {count} allocations over {n} packages: {per:.3} per package (process-wide, the simulator included)",
        if background { "background" } else { "blocking" }
    );
    per
}

/// Allocations per package over `seconds` of the async driver alone with its simulator,
/// on a current-thread runtime (process-wide, as [`allocations`]).
fn allocations_async(epoch: Instant, seconds: u64) -> f64 {
    let sim = paced_sim(epoch);
    let addr = sim.addr();
    let (count, n) = current_thread().block_on(async move {
        tokio::spawn(async move {
            let (client, mut packages, task) = connect_async(addr, 1024).await;
            for _ in 0..250 {
                black_box(packages.recv_as::<Reference>().await.expect("a package"));
            }
            let before = client.stats().received;
            let counting = ProcessWide::start();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(seconds) {
                black_box(packages.recv_as::<Reference>().await.expect("a package"));
            }
            let count = counting.stop();
            let n = client.stats().received - before;
            let _ = client.close().await;
            let _ = task.await;
            (count, n)
        })
        .await
        .expect("the measuring task")
    });
    let _ = sim.shutdown();
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    let per = count as f64 / n.max(1) as f64;
    println!(
        "    {:<10} {count} allocations over {n} packages: {per:.3} per package (process-wide, the simulator included)",
        "async"
    );
    per
}

/// Where the hand-off phase puts the reader thread and the consumer.
#[derive(Clone, Copy)]
enum Placement {
    /// Wherever the scheduler puts them.
    Free,
    /// Both on CPU 0: the consumer runs once the reader blocks.
    OneCore,
    /// Reader on CPU 0, consumer on CPU 1: the wake crosses cores.
    TwoCores,
}

/// How the hand-off phase's consumer waits for a package.
#[derive(Clone, Copy)]
enum Consumer {
    /// Polls [`rtde_core::background::Receiver::newest_seq`] on the other core: the package
    /// reaching the handle.
    Polls,
    /// Parks in `recv` and is woken by the reader thread.
    Parked(Placement),
    /// `recv` with [`SpawnOptions::spin_before_arrival`], on the other core.
    Spins(Duration),
}

/// The background driver alone with its simulator for `seconds`: per package, µs from the
/// reader thread's read to the consumer holding the decoded value; and the CPU per
/// package of the reader and the consumer together, µs.
fn handoff_alone(epoch: Instant, seconds: u64, consumer: Consumer) -> (Vec<f64>, Option<f64>) {
    let mut options = SpawnOptions::new().name(READER).queue_capacity(1024);
    // A consumer that spins is kept off the reader's core, where the reader would wait for it.
    let cpu = match consumer {
        Consumer::Parked(Placement::Free) => None,
        Consumer::Parked(Placement::OneCore) => Some(0),
        Consumer::Parked(Placement::TwoCores) | Consumer::Polls => Some(1),
        Consumer::Spins(window) => {
            options = options.spin_before_arrival(window);
            Some(1)
        }
    };
    // The robot is another machine: a consumer given a core of its own keeps it, and the
    // simulator runs on the reader's. Left free, the simulator's threads woke on the
    // spinning consumer's core in some runs and not in others, and the spinning p50 was
    // 0.9 to 2.5 µs or 22 to 33 µs by run.
    let sim = if cpu == Some(1) {
        on_core(0, || paced_sim(epoch))
    } else {
        paced_sim(epoch)
    };
    if cpu.is_some() {
        options = options.cpu_affinity(0);
    }
    let driver = connect(sim.addr()).spawn(options).expect("spawn");
    // On a thread of its own, so the pinning ends with it.
    let (handoff, consumer_cpu, reader_cpu) = std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(cpu) = cpu {
                pin(cpu);
            }
            let mut receiver = driver.receiver();
            for _ in 0..250 {
                black_box(receiver.recv_as::<Reference>(None).expect("a package"));
            }
            let mut handoff = Vec::with_capacity(usize::try_from(seconds * 500 + 500).unwrap_or(0));
            let (cpu0, reader0) = (thread_cpu_time(), named_thread_cpu(READER));
            let start = Instant::now();
            let end = Duration::from_secs(seconds);
            while start.elapsed() < end {
                let r: Reference = if let Consumer::Polls = consumer {
                    while receiver.newest_seq() <= receiver.seq() && start.elapsed() < end {
                        std::hint::spin_loop();
                    }
                    match receiver.latest_as().expect("a package") {
                        Some(r) => r,
                        None => continue,
                    }
                } else {
                    receiver.recv_as(None).expect("a package")
                };
                if let Some(at) = receiver.received_at() {
                    handoff.push(at.elapsed().as_secs_f64() * 1e6);
                }
                black_box(r);
            }
            let consumer_cpu = thread_cpu_time().zip(cpu0).map(|(b, a)| b - a);
            let reader_cpu = named_thread_cpu(READER).zip(reader0).map(|(b, a)| b - a);
            (handoff, consumer_cpu, reader_cpu)
        })
        .join()
        .expect("the consumer")
    });
    let _ = driver.close();
    let _ = sim.shutdown();
    let cpu = consumer_cpu
        .zip(reader_cpu)
        .map(|(c, r)| per_us(c + r, handoff.len() as u64));
    (handoff, cpu)
}

/// `f` on a thread pinned to `cpu`: the threads it starts inherit the pinning.
fn on_core<T: Send>(cpu: usize, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(cpu);
            f()
        })
        .join()
        .expect("a thread pinned to one core")
    })
}

fn pin(cpu: usize) {
    let mut set = nix::sched::CpuSet::new();
    if set.set(cpu).is_ok() {
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
    }
}

/// The case `--only NAME` names, if given: one of [`CASES`]' names.
fn only() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--only")?;
    Some(args.get(at + 1).cloned().unwrap_or_default())
}

/// One 500 Hz case alone for `seconds`, nothing else in the process but its simulator:
/// for a profiler or a system-call count on that case's thread, which the main thread
/// runs (the blocking and async cases; the background ones add a reader thread).
fn run_only(epoch: Instant, name: &str, seconds: u64) {
    let Some((name, case)) = CASES.iter().find(|(n, _)| *n == name) else {
        let names: Vec<String> = CASES.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        eprintln!("--only takes one of {}", names.join(", "));
        std::process::exit(2);
    };
    println!(
        "{name}, alone with its simulator at 500 Hz for {seconds} s (main thread: pid {})",
        std::process::id()
    );
    let run = alone(epoch, |sim| case(epoch, sim, seconds));
    println!("    {}", run.summary());
}

fn main() {
    let seconds = arg("--seconds", 60);
    let rate_seconds = arg("--rate-seconds", 3);
    let epoch = Instant::now();
    if let Some(name) = only() {
        run_only(epoch, &name, seconds);
        return;
    }
    println!(
        "reference recipe ({REFERENCE_PACKAGE}-byte packages), rtde-sim in process on loopback"
    );

    println!(
        "(a) unpaced simulator, {rate_seconds} s each: every package received, decoded, in order"
    );
    for driver in ["blocking", "background", "async"] {
        let (rate, losses) = match driver {
            "async" => max_rate_async(epoch, rate_seconds),
            other => max_rate(epoch, rate_seconds, other == "background"),
        };
        println!(
            "    {driver:<10} {rate:>12.0} packages/s, {losses}    target ≥ {MIN_RATE:.0}/s, none missing: {}",
            verdict(rate >= MIN_RATE && losses.missing == 0)
        );
    }

    let rounds = (seconds / ROUND_SECONDS).max(1);
    println!(
        "(b) 500 Hz, {rounds} rounds of {ROUND_SECONDS} s per case ({} s each in all), each case alone with its simulator; each floor next to its driver, first in even rounds and second in odd ones",
        rounds * ROUND_SECONDS
    );
    let mut runs: [Run; 6] = std::array::from_fn(|_| Run::empty());
    // Per round, each case's CPU per package.
    let mut cpu: [Vec<Option<f64>>; 6] = Default::default();
    for round in 0..usize::try_from(rounds).unwrap_or(usize::MAX) {
        for i in paired_order::<6>(round) {
            let run = alone(epoch, |sim| (CASES[i].1)(epoch, sim, ROUND_SECONDS));
            cpu[i].push(run.cpu_us());
            runs[i].add(run);
        }
    }
    for ((name, _), run) in CASES.iter().zip(&runs) {
        println!("    {name:<18} {}", run.summary());
        if let Some(r) = run.reader {
            println!(
                "                       its reader thread alone: {:.2} µs CPU per package",
                per_us(r, run.packages)
            );
        }
    }
    // Case `of` over case `over`, round by round: the median and the spread.
    let ratio = |of: usize, over: usize| {
        let per_round: Vec<f64> = cpu[of]
            .iter()
            .zip(&cpu[over])
            .filter_map(|(a, b)| a.zip(*b).map(|(a, b)| a / b))
            .collect();
        (!per_round.is_empty()).then(|| {
            (
                quantile(per_round.clone(), 0.5),
                quantile(per_round.clone(), 0.0),
                quantile(per_round, 1.0),
            )
        })
    };
    let shown = |r: Option<(f64, f64, f64)>| {
        r.map_or("CPU time unavailable".into(), |(median, lo, hi)| {
            format!("{median:.2}× ({lo:.2} to {hi:.2} over the rounds)")
        })
    };
    println!(
        "    CPU per package over its own floor's, the median of the rounds' ratios    target ≤ {MAX_CPU_RATIO}× each"
    );
    for (driver, floor) in [(BLOCKING, 0), (BACKGROUND, 2), (ASYNC, 4)] {
        let r = ratio(driver, floor);
        println!(
            "        {:<10} over {:<18} {}: {}",
            CASES[driver].0,
            CASES[floor].0,
            shown(r),
            r.map_or("?", |(median, ..)| verdict(median <= MAX_CPU_RATIO))
        );
    }
    println!("    CPU per package over the blocking client's, the same way (reported)");
    for driver in [BACKGROUND, ASYNC] {
        println!(
            "        {:<10} {}",
            CASES[driver].0,
            shown(ratio(driver, BLOCKING))
        );
    }
    println!(
        "    the background driver's reader thread's read to the consumer's decoded value: p50 {:.1} µs, p99 {:.1} µs (placements and the spinning receiver in (d))",
        quantile(runs[BACKGROUND].handoff.clone(), 0.50),
        quantile(runs[BACKGROUND].handoff.clone(), 0.99),
    );
    let lost = [BLOCKING, BACKGROUND, ASYNC].map(|i| runs[i].losses.by_driver());
    println!(
        "    packages the drivers lost (missing, less those the simulator did not send): blocking {}, background {}, async {}    target 0: {}",
        lost[0],
        lost[1],
        lost[2],
        verdict(lost.iter().all(|&n| n == 0))
    );

    let window = (seconds / 6).max(2);
    println!("(c) allocations after setup, {window} s at 500 Hz each:");
    let a = allocations(epoch, window, false);
    let b = allocations(epoch, window, true);
    let c = allocations_async(epoch, window);
    println!(
        "    beyond the blocking baseline: background {:.3}, async {:.3} per package    target 0: {}",
        b - a,
        c - a,
        verdict(b - a <= 0.0 && c - a <= 0.0)
    );

    println!(
        "(d) the hand-off alone: the background driver and its simulator, {window} s at 500 Hz each, from the reader thread's read"
    );
    let cpu_text = |cpu: Option<f64>| cpu.map_or("?".into(), |c| format!("{c:.1}"));
    let (polled, cpu) = handoff_alone(epoch, window, Consumer::Polls);
    let added = quantile(polled.clone(), 0.50);
    println!(
        "    to the handle (a consumer polling `newest_seq` on the other core): p50 {added:.1} µs, p99 {:.1} µs    target p50 ≤ {MAX_ADDED_US} µs: {}",
        quantile(polled, 0.99),
        verdict(added <= MAX_ADDED_US)
    );
    println!(
        "        (reader + polling consumer: {} µs CPU per package)",
        cpu_text(cpu)
    );
    for (name, consumer) in [
        (
            "parked in `recv`, unpinned",
            Consumer::Parked(Placement::Free),
        ),
        (
            "parked in `recv`, reader and consumer on one core",
            Consumer::Parked(Placement::OneCore),
        ),
        (
            "parked in `recv`, reader and consumer on two cores",
            Consumer::Parked(Placement::TwoCores),
        ),
        (
            "in `recv` spinning from 150 µs before each package is due, on the other core",
            Consumer::Spins(SPIN_WINDOW),
        ),
    ] {
        let (woken, cpu) = handoff_alone(epoch, window, consumer);
        let p50 = quantile(woken.clone(), 0.50);
        println!(
            "    to a consumer {name}: p50 {p50:.1} µs, p99 {:.1} µs; reader + consumer {} µs CPU per package{}",
            quantile(woken, 0.99),
            cpu_text(cpu),
            if let Consumer::Spins(_) = consumer {
                format!(
                    "    target p50 ≤ {MAX_ADDED_US} µs: {}",
                    verdict(p50 <= MAX_ADDED_US)
                )
            } else {
                String::new()
            }
        );
    }
}
