//! The MQTT bridge at fleet size, through Mosquitto on loopback, to a subscriber that
//! checks every sequence number. Three processes and this one: `rtde sim --robots N`
//! (the fleet), `rtde bridge` (measured: CPU from /proc, resident memory), Mosquitto
//! (resident memory), and the subscriber here (delivery, latency).
//!
//! ```text
//! cargo bench -p rtde-cli --bench mqtt_fleet -- --robots 100 --frequency 125 --seconds 60
//! cargo bench -p rtde-cli --bench mqtt_fleet -- --robots 100 --frequency 500 --seconds 60
//! cargo bench -p rtde-cli --bench mqtt_fleet -- --curve --seconds 20   # 10, 50, 100, 200 robots at 125 Hz; writes docs/bridge-cpu.svg
//! ```
//!
//! `--format binary` publishes binary batches; `--bridge-bin PATH`
//! measures another build of `rtde` (to compare two builds under the same conditions,
//! run after run).
//!
//! Needs `mosquitto` (Debian: `apt-get install -y mosquitto`).
//!
//! - delivered / sent: distinct packages the subscriber received over the packages the
//!   bridge read from the robots, over the whole run; the bridge's drop count beside it.
//! - bridge CPU per package: the bridge process's user + system time over the steady
//!   window (after every robot's first batch arrived, until the bridge is told to stop),
//!   divided by the packages delivered in that window. It includes reading RTDE (the
//!   async driver's tasks), encoding and the MQTT client.
//! - latency: the subscriber's clock when a batch arrived minus when its package left the
//!   simulator (the fleet's clock started with the run, so package `T` left at
//!   `start + T`), for every package of the window; with `batch_ms = 10` a package waits up
//!   to 10 ms in its batch.
//! - memory: VmRSS and VmHWM (peak) from /proc for the bridge and for Mosquitto.
//! - the floor, before the bridge in the same run, on a fleet of its own through the same
//!   broker: one thread that reads every robot once per batch and publishes the bytes as
//!   one QoS 1 message ([`floor`]). Its CPU per package is what the machine charges for
//!   the reads, writes and acknowledgements alone (loopback TCP included, as for the
//!   bridge); the bridge over the floor is what the bridge adds. It writes each
//!   publication alone, as rumqttc does; a second floor writes each pass's publications
//!   in one write, to show what an MQTT client that coalesced them would save.
//!
//! Where the latency goes, per package (p50 / p99):
//! - batching: the package's wait in its batch, from the controller timestamps
//!   (the batch's last package minus this one);
//! - after the batch closed: the subscriber's socket read minus the time the batch's
//!   last package left the simulator (the simulator's send, the bridge, the broker);
//! - broker alone: probes the bench publishes (QoS 1) every 10 ms through the same
//!   Mosquitto to the same subscriber connection, send time to socket read;
//! - subscriber: socket read to decoded batch. The subscriber's thread CPU is printed
//!   too, to show it is not what limits the figures.

#[path = "mqtt_fleet/floor.rs"]
mod floor;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_bridge::payload::{self, Batch};
use rtde_bridge::{SequenceCheck, Verdict};
use rtde_testkit::mosquitto;

/// The batch time of every run (`batch_ms`): the issue's latency target is for 10 ms.
const BATCH_MS: u64 = 10;
/// The floor's measured time: at most this, at most the bridge's.
const FLOOR_SECONDS: u64 = 20;

struct Args {
    robots: u16,
    frequency: f64,
    seconds: u64,
    format: String,
    curve: bool,
    bridge_bin: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        robots: 100,
        frequency: 125.0,
        seconds: 60,
        format: "json".into(),
        curve: false,
        bridge_bin: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--robots" => a.robots = value().parse().expect("--robots N"),
            "--frequency" => a.frequency = value().parse().expect("--frequency HZ"),
            "--seconds" => a.seconds = value().parse().expect("--seconds S"),
            "--format" => a.format = value(),
            "--curve" => a.curve = true,
            "--bridge-bin" => a.bridge_bin = Some(value()),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn unix_us() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(d.as_micros()).unwrap()
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    cpu_seconds_of(&pid.to_string())
}

/// utime + stime of `/proc/{which}`: a process id, or `thread-self`.
fn cpu_seconds_of(which: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{which}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    // USER_HZ is 100 on Linux.
    ticks as f64 / 100.0
}

/// (VmRSS, VmHWM) of a process, in MiB.
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0)
}

/// A child whose stderr is collected; killed if still running when dropped.
struct Proc {
    child: Child,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Proc {
    fn spawn(mut cmd: Command) -> (Proc, mpsc::Receiver<String>) {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rtde");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        (
            Proc {
                child,
                stderr: Some(stderr),
            },
            rx,
        )
    }

    fn interrupt_and_wait(&mut self, timeout: Duration) -> String {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Latencies of one kind, in microseconds.
#[derive(Default)]
struct Samples(Vec<i64>);

impl Samples {
    fn percentile_ms(&self, p: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let mut v = self.0.clone();
        v.sort_unstable();
        // p is within 0..=1, so the index is within the vector.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let i = ((v.len() - 1) as f64 * p).round() as usize;
        v[i] as f64 / 1000.0
    }

    /// "p50 A, p99 B, max C ms".
    fn summary(&self) -> String {
        format!(
            "p50 {:.1}, p99 {:.1}, max {:.1} ms",
            self.percentile_ms(0.5),
            self.percentile_ms(0.99),
            self.percentile_ms(1.0)
        )
    }
}

/// One run's figures.
struct Figures {
    robots: u16,
    frequency: f64,
    read: u64,
    delivered: u64,
    dropped: u64,
    unexplained: u64,
    window_packages: u64,
    window_batches: u64,
    window_seconds: f64,
    bridge_cpu: f64,
    /// Controller timestamp to decoded at the subscriber, per package.
    latency: Samples,
    /// The package's wait in its batch (from the timestamps), per package.
    batching: Samples,
    /// The batch's last package leaving the simulator to the subscriber's socket read.
    after_close: Samples,
    /// Probes through the broker: sent to read by the subscriber.
    broker: Samples,
    /// Subscriber: socket read to decoded, per batch.
    decode: Samples,
    subscriber_cpu: f64,
    bridge_mem: (f64, f64),
    broker_mem: (f64, f64),
    broker_cpu: f64,
    /// One write per publication, as rumqttc writes.
    floor: floor::Floor,
    /// A pass's publications in one write.
    floor_coalesced: floor::Floor,
}

impl Figures {
    fn cpu_per_package_us(&self) -> f64 {
        self.bridge_cpu / self.window_packages.max(1) as f64 * 1e6
    }
}

/// What the bench's subscriber thread hands over.
enum Got {
    Batch {
        /// When the subscriber's MQTT client returned the message, µs since the epoch.
        read_us: i64,
        /// When it was decoded.
        decoded_us: i64,
        batch: Batch,
    },
    Probe {
        sent_us: i64,
        read_us: i64,
    },
    Cpu(f64),
}

const PROBE_TOPIC: &str = "bench/probe";

/// The subscriber: its own MQTT connection and thread, which stamps each message when the
/// client returns it and again once decoded. `subscribed` is told once the broker
/// confirmed both subscriptions; the thread's CPU time is sent when it ends.
fn subscriber(port: u16) -> (rumqttc::Client, mpsc::Receiver<Got>) {
    let mut options = rumqttc::MqttOptions::new("bench-sub", "127.0.0.1", port);
    options
        .set_keep_alive(Duration::from_secs(5))
        .set_max_packet_size(64 * 1024 * 1024, 64 * 1024 * 1024)
        .set_inflight(1000);
    let (client, mut connection) = rumqttc::Client::new(options, 1024);
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::channel();
    let subscribing = client.clone();
    std::thread::spawn(move || {
        let mut acks = 0;
        for event in connection.iter() {
            match event {
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::ConnAck(_))) => {
                    for topic in ["rtde/+/data", PROBE_TOPIC] {
                        subscribing
                            .try_subscribe(topic, rumqttc::QoS::AtLeastOnce)
                            .expect("subscribe");
                    }
                }
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::SubAck(_))) => {
                    acks += 1;
                    if acks == 2 {
                        let _ = ready_tx.send(());
                    }
                }
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                    let read_us = unix_us();
                    let got = if p.topic == PROBE_TOPIC {
                        let sent = p.payload.first_chunk::<8>().copied().unwrap_or_default();
                        Got::Probe {
                            sent_us: i64::from_be_bytes(sent),
                            read_us,
                        }
                    } else {
                        let batch = payload::decode(&p.payload).expect("a batch");
                        Got::Batch {
                            read_us,
                            decoded_us: unix_us(),
                            batch,
                        }
                    };
                    if tx.send(got).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(Got::Cpu(cpu_seconds_of("thread-self")));
    });
    ready_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the broker confirms the subscriptions");
    (client, rx)
}

/// Publishes a probe (its send time) every 10 ms until `stop`.
fn probes(port: u16, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let options = rumqttc::MqttOptions::new("bench-probe", "127.0.0.1", port);
    let (client, mut connection) = rumqttc::Client::new(options, 64);
    std::thread::spawn(move || for _ in connection.iter().map_while(Result::ok) {});
    std::thread::spawn(move || {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let sent = unix_us().to_be_bytes().to_vec();
            if client
                .publish(PROBE_TOPIC, rumqttc::QoS::AtLeastOnce, false, sent)
                .is_err()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = client.disconnect();
    });
}

#[allow(clippy::too_many_lines)] // one run, start to end, reads best in one place
fn run(
    robots: u16,
    frequency: f64,
    seconds: u64,
    format: &str,
    bridge_bin: Option<&str>,
) -> Option<Figures> {
    let broker = mosquitto::Broker::start(&format!("bench-{robots}-{frequency}"))?;
    let rtde = bridge_bin.unwrap_or(env!("CARGO_BIN_EXE_rtde"));
    // The floors first, each on a fleet of its own, through the same broker.
    let floor = |writes| {
        let fleet = rtde_sim::Sim::builder()
            .deterministic()
            .start_fleet(robots)
            .expect("start the floor's fleet");
        let addrs: Vec<SocketAddr> = fleet.addrs().collect();
        let period = Duration::from_secs_f64(1.0 / frequency);
        let batch = rtde_bridge::packages_per_batch(Duration::from_millis(BATCH_MS), period);
        let every = period * u32::try_from(batch).expect("a batch of a few packages");
        floor::run(
            &addrs,
            frequency,
            every,
            broker.port,
            seconds.min(FLOOR_SECONDS),
            writes,
        )
    };
    let floor_coalesced = floor(floor::Writes::Coalesced);
    let floor = floor(floor::Writes::Each);
    // The fleet runs here, so that its clock's start is known: a package stamped T left
    // the simulator at `epoch + T`, and latency is measured from there.
    let epoch_us = unix_us();
    let fleet = rtde_sim::Sim::builder()
        .deterministic()
        .start_fleet(robots)
        .expect("start the fleet");
    let addrs: Vec<SocketAddr> = fleet.addrs().collect();
    let named: Vec<(String, SocketAddr)> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("r{i:03}"), *a))
        .collect();
    let dir = broker.dir().to_owned();
    let config = dir.join("fleet.toml");
    std::fs::write(
        &config,
        mosquitto::config(
            &broker.url(),
            &named,
            &format!("format = \"{format}\"\nbatch_ms = {BATCH_MS}\nbatch_packages = 1000\nqueue_packages = 100000"),
            frequency,
        ),
    )
    .unwrap();
    let (sub, messages) = subscriber(broker.port);
    let stop_probes = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut bridge_cmd = Command::new(rtde);
    bridge_cmd.arg("bridge").arg(&config);
    let (mut bridge, _) = Proc::spawn(bridge_cmd);
    let pid = bridge.child.id();

    let mut check = SequenceCheck::default();
    let (mut latency, mut batching, mut after_close) =
        (Samples::default(), Samples::default(), Samples::default());
    let (mut broker_latency, mut decode) = (Samples::default(), Samples::default());
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut window: Option<(Instant, f64, u64, u64)> = None;
    let mut window_end: Option<(Instant, f64, u64, u64)> = None;
    let (mut delivered, mut batches) = (0u64, 0u64);
    let mut broker_cpu0 = 0.0;
    let started = Instant::now();
    let total = Duration::from_secs(seconds);
    let bridge_mem;
    // Whole microseconds of a simulated clock that started with the run.
    #[allow(clippy::cast_possible_truncation)]
    let left_sim = |t: f64| epoch_us + (t * 1e6).round() as i64;
    loop {
        let elapsed = started.elapsed();
        if window_end.is_none() && elapsed >= total {
            bridge_mem = memory_mib(pid);
            window_end = Some((Instant::now(), cpu_seconds(pid), delivered, batches));
            break;
        }
        let (read_us, now, batch) = match messages.recv_timeout(Duration::from_millis(100)) {
            Ok(Got::Batch {
                read_us,
                decoded_us,
                batch,
            }) => (read_us, decoded_us, batch),
            Ok(Got::Probe { sent_us, read_us }) => {
                if window.is_some() {
                    broker_latency.0.push(read_us - sent_us);
                }
                continue;
            }
            _ => continue,
        };
        if check.check(&batch) == Verdict::Duplicate {
            continue;
        }
        delivered += batch.count() as u64;
        batches += 1;
        if window.is_some() {
            let last = batch
                .count()
                .checked_sub(1)
                .and_then(|i| batch.timestamp(i));
            for i in 0..batch.count() {
                if let (Some(t), Some(last)) = (batch.timestamp(i), last) {
                    latency.0.push(now - left_sim(t));
                    batching.0.push(left_sim(last) - left_sim(t));
                }
            }
            if let Some(last) = last {
                after_close.0.push(read_us - left_sim(last));
            }
            decode.0.push(now - read_us);
        } else {
            seen.insert(batch.robot.clone(), ());
            if seen.len() == usize::from(robots) {
                window = Some((Instant::now(), cpu_seconds(pid), delivered, batches));
                broker_cpu0 = cpu_seconds(broker.pid().unwrap_or(0));
                probes(broker.port, std::sync::Arc::clone(&stop_probes));
            }
        }
    }
    stop_probes.store(true, std::sync::atomic::Ordering::Relaxed);
    let broker_mem = memory_mib(broker.pid().unwrap_or(0));
    let broker_cpu = cpu_seconds(broker.pid().unwrap_or(0)) - broker_cpu0;
    let stderr = bridge.interrupt_and_wait(Duration::from_secs(30));
    // The bridge's summary, a line per robot: "NAME: R packages read, P published in B
    // batches, D dropped, L lost in flight". Read by its labels, so a figure the bridge adds
    // later does not silently zero the others.
    let (mut read, mut published, mut dropped, mut summaries) = (0u64, 0u64, 0u64, 0usize);
    for line in stderr.lines() {
        let Some((_, rest)) = line.rsplit_once(": ") else {
            continue;
        };
        // Only the final per-robot lines name batches (the periodic ones do not).
        if !(rest.contains("packages read,") && rest.contains("batches")) {
            continue;
        }
        summaries += 1;
        for part in rest.split(", ") {
            let (n, label) = part.split_once(' ').unwrap_or((part, ""));
            let Ok(n) = n.parse::<u64>() else { continue };
            if label.starts_with("packages read") {
                read += n;
            } else if label.starts_with("published") {
                published += n;
            } else if label.starts_with("dropped") || label.starts_with("lost in flight") {
                dropped += n;
            }
        }
    }
    if summaries != usize::from(robots) {
        eprintln!(
            "the bridge's summary names {summaries} robots of {robots}: did its output change? \
             (its stderr ends: {:?})",
            stderr.lines().rev().take(3).collect::<Vec<_>>()
        );
        // Not a skip: a bench that cannot count what was sent must not print figures.
        std::process::exit(1);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while delivered < published && Instant::now() < deadline {
        if let Ok(Got::Batch { batch, .. }) = messages.recv_timeout(Duration::from_millis(200))
            && check.check(&batch) != Verdict::Duplicate
        {
            delivered += batch.count() as u64;
        }
    }
    let _ = sub.disconnect();
    let subscriber_cpu = loop {
        match messages.recv_timeout(Duration::from_secs(5)) {
            Ok(Got::Cpu(s)) => break s,
            Ok(_) => {}
            Err(_) => break f64::NAN,
        }
    };
    drop(fleet);
    let (w0, c0, d0, b0) = window.expect("every robot's first batch arrived");
    let (w1, c1, d1, b1) = window_end.expect("the window ended");
    Some(Figures {
        robots,
        frequency,
        read,
        delivered,
        dropped,
        unexplained: check.unexplained(),
        window_packages: d1 - d0,
        window_batches: b1 - b0,
        window_seconds: (w1 - w0).as_secs_f64(),
        bridge_cpu: c1 - c0,
        latency,
        batching,
        after_close,
        broker: broker_latency,
        decode,
        subscriber_cpu,
        bridge_mem,
        broker_mem,
        broker_cpu,
        floor,
        floor_coalesced,
    })
}

fn print(f: &Figures) {
    println!(
        "{robots} robots at {hz} Hz: delivered / sent {d} / {r} = {pct:.4} %, dropped {dr}, unexplained gaps {u}",
        robots = f.robots,
        hz = f.frequency,
        d = f.delivered,
        r = f.read,
        pct = f.delivered as f64 / f.read.max(1) as f64 * 100.0,
        dr = f.dropped,
        u = f.unexplained,
    );
    println!(
        "  bridge CPU per package {:.2} µs ({:.1} s of CPU for {} packages in {} batches in {:.1} s: {:.0} % of one core; {:.1} µs per batch)",
        f.cpu_per_package_us(),
        f.bridge_cpu,
        f.window_packages,
        f.window_batches,
        f.window_seconds,
        f.bridge_cpu / f.window_seconds * 100.0,
        f.bridge_cpu / f.window_batches.max(1) as f64 * 1e6,
    );
    let floor = &f.floor;
    println!(
        "  floor CPU per package {:.2} µs ({} packages in {:.1} s; {} of {} publications acknowledged; one thread reads each robot once per batch and publishes the bytes, nothing else): the bridge is {:.2}× the floor",
        floor.cpu_per_package_us(),
        floor.packages,
        floor.seconds,
        floor.acknowledged,
        floor.publications,
        f.cpu_per_package_us() / floor.cpu_per_package_us(),
    );
    let coalesced = &f.floor_coalesced;
    println!(
        "  floor with each pass's publications in one write (what a client that coalesced them would pay; rumqttc writes each alone): {:.2} µs per package ({} packages in {:.1} s; {} of {} acknowledged)",
        coalesced.cpu_per_package_us(),
        coalesced.packages,
        coalesced.seconds,
        coalesced.acknowledged,
        coalesced.publications,
    );
    println!(
        "  mosquitto CPU per package {:.2} µs ({:.0} % of one core)",
        f.broker_cpu / f.window_packages.max(1) as f64 * 1e6,
        f.broker_cpu / f.window_seconds * 100.0,
    );
    println!(
        "  latency, controller time to subscriber: {} ({} packages)",
        f.latency.summary(),
        f.latency.0.len()
    );
    println!(
        "    of which batching (wait in the batch): {}",
        f.batching.summary()
    );
    println!(
        "    after the batch closed (simulator send, bridge, broker, to the subscriber's read): {}",
        f.after_close.summary()
    );
    println!(
        "    broker alone (probes, send to the subscriber's read, {}): {}",
        f.broker.0.len(),
        f.broker.summary()
    );
    println!(
        "    subscriber (read to decoded, per batch): {}; its thread's CPU {:.0} % of one core",
        f.decode.summary(),
        f.subscriber_cpu / f.window_seconds * 100.0
    );
    println!(
        "  resident memory: bridge {:.1} MiB (peak {:.1}), mosquitto {:.1} MiB (peak {:.1})",
        f.bridge_mem.0, f.bridge_mem.1, f.broker_mem.0, f.broker_mem.1
    );
}

/// The CPU-per-package curve as an SVG line chart (no fonts needed to write it).
fn svg(points: &[(u16, f64)]) -> String {
    let (w, h, m) = (640.0, 400.0, 60.0);
    let max_y = points.iter().map(|p| p.1).fold(5.0f64, f64::max) * 1.2;
    let x = |n: f64| m + n / 200.0 * (w - 2.0 * m);
    let y = |v: f64| h - m - v / max_y * (h - 2.0 * m);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    s += &format!(
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">rtde bridge: CPU per package (125 Hz per robot, JSON, 10 ms batches)</text>\n",
        w / 2.0
    );
    s += &format!(
        "<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
        h - m,
        w - m,
        h - m
    );
    s += &format!(
        "<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\n",
        h - m
    );
    for n in [0, 50, 100, 150, 200] {
        let px = x(f64::from(n));
        s += &format!(
            "<text x=\"{px}\" y=\"{}\" text-anchor=\"middle\">{n}</text>\n",
            h - m + 20.0
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">robots</text>\n",
        w / 2.0,
        h - 15.0
    );
    let step = if max_y > 20.0 { 5.0 } else { 1.0 };
    let mut v = 0.0;
    while v <= max_y {
        s += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v}</text><line x1=\"{m}\" y1=\"{py}\" x2=\"{}\" y2=\"{py}\" stroke=\"#ddd\"/>\n",
            m - 8.0,
            y(v) + 4.0,
            w - m,
            py = y(v)
        );
        v += step;
    }
    s += &format!(
        "<text x=\"18\" y=\"{}\" transform=\"rotate(-90 18 {})\" text-anchor=\"middle\">µs of bridge CPU per package</text>\n",
        h / 2.0,
        h / 2.0
    );
    s += &format!(
        "<line x1=\"{m}\" y1=\"{t}\" x2=\"{}\" y2=\"{t}\" stroke=\"#c33\" stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" fill=\"#c33\" text-anchor=\"end\">target 5 µs</text>\n",
        w - m,
        w - m,
        y(5.0) - 6.0,
        t = y(5.0)
    );
    let path: Vec<String> = points
        .iter()
        .map(|(n, c)| format!("{:.1},{:.1}", x(f64::from(*n)), y(*c)))
        .collect();
    s += &format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n",
        path.join(" ")
    );
    for (n, c) in points {
        s += &format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#1f77b4\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{c:.1}</text>\n",
            x(f64::from(*n)),
            y(*c),
            x(f64::from(*n)),
            y(*c) - 10.0
        );
    }
    s + "</svg>\n"
}

fn main() {
    let a = args();
    if !a.curve {
        match run(
            a.robots,
            a.frequency,
            a.seconds,
            &a.format,
            a.bridge_bin.as_deref(),
        ) {
            Some(f) => print(&f),
            None => eprintln!("mqtt_fleet: skipped (no mosquitto)"),
        }
        return;
    }
    let mut points = Vec::new();
    for robots in [10u16, 50, 100, 200] {
        let Some(f) = run(robots, 125.0, a.seconds, &a.format, a.bridge_bin.as_deref()) else {
            eprintln!("mqtt_fleet: skipped (no mosquitto)");
            return;
        };
        print(&f);
        points.push((robots, f.cpu_per_package_us()));
    }
    println!("robots, bridge CPU per package (µs):");
    for (n, c) in &points {
        println!("  {n:>3}  {c:.2}");
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/bridge-cpu.svg");
    std::fs::write(path, svg(&points)).expect("write the plot");
    println!("plot: docs/bridge-cpu.svg");
}
