//! A fleet through a broker whose node dies: the bridge (in this process) publishes
//! `--robots` simulated robots at `--frequency` for `--seconds`; at a third of the run a
//! node is killed with SIGKILL, at two thirds it is started again. An independent
//! subscriber (persistent QoS 1 session) checks every package by robot and sequence.
//!
//! ```text
//! cargo bench -p rtde-bridge --bench cluster_failover -- --robots 100 --frequency 125 --seconds 90 --runs 3
//! ```
//!
//! `--connections N` (default 1) publishes on N MQTT sessions (`[broker] connections`),
//! the robots shared out; `--batch-ms MS` (default 10) is `[payload] batch_ms`;
//! `--only mosquitto|bridges-node|subscribers-node` (repeatable) runs only those.
//!
//! Three scenarios per run, one after the other on the same machine:
//! - `mosquitto`: one Mosquitto, the reference; its death is an outage until it restarts;
//! - `nats: bridge's node`: a 3-node NATS cluster, the bridge's node killed (one that
//!   does not lead `$MQTT_msgs`: see docs/mqtt-scaling.md for what nats-server 2.9.10
//!   loses when that one dies); the subscriber on another node;
//! - `nats: subscriber's node`: the same cluster, the subscriber's node killed.
//!
//! Figures: packages read, delivered (each once, waiting after the run until 10 s bring
//! nothing new and NATS's `ack_wait` has passed since the kill), not delivered (and of
//! those, what was still queued in the bridge when its 120 s drain ended), duplicate
//! batches with their bound (flagged if exceeded: what the bridge re-sent unacknowledged,
//! and what the broker can deliver again, for NATS its window `max_ack_pending` at the kill
//! and at the restart), the bridge's reconnection time (the kill to the
//! first connection a node accepted, polled every 2 ms), and the latency (subscriber's
//! clock at the batch's arrival minus the package's host time) p50/p99 outside the
//! failover window (the kill − 1 s to the reconnection + 5 s; for Mosquitto, to its
//! restart + 5 s), and the p99 before the kill alone (the steady state).
//!
//! Needs `mosquitto` and `nats-server` (Debian packages); skips a scenario without them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rtde_bridge::{Bridge, Config, Message, SequenceCheck, StartOptions, Subscriber, Verdict};
use rtde_testkit::{mosquitto, nats};

/// One scenario's figures.
#[derive(Debug)]
struct Figures {
    read: u64,
    delivered: u64,
    /// Still in the bridge's queues when its drain timeout ended: a broker too slow.
    queued: u64,
    duplicates: u64,
    /// Publications the bridge re-sent unacknowledged after a reconnection, and the
    /// broker's redeliveries to the subscriber (DUP).
    resent: u64,
    redelivered: u64,
    /// What was unacknowledged at the kill and the restart, the bound on `duplicates`:
    /// `resent` and what the broker can deliver again
    /// ([`Broker::redelivered_at_most`]).
    duplicate_bound: u64,
    unexplained: u64,
    reconnect_ms: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// p99 before the kill: the steady state, without the failover's backlog or the
    /// restarted node's catching up.
    p99_before_ms: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scenario {
    Mosquitto,
    BridgesNode,
    SubscribersNode,
}

impl Scenario {
    const ALL: [Scenario; 3] = [
        Scenario::Mosquitto,
        Scenario::BridgesNode,
        Scenario::SubscribersNode,
    ];

    /// Its name after `--only`.
    fn arg(self) -> &'static str {
        match self {
            Scenario::Mosquitto => "mosquitto",
            Scenario::BridgesNode => "bridges-node",
            Scenario::SubscribersNode => "subscribers-node",
        }
    }
}

/// What the scenario's broker is, and how to kill and restart its victim.
enum Broker {
    Mosquitto(mosquitto::Broker),
    Nats {
        cluster: nats::Cluster,
        victim: usize,
    },
}

impl Broker {
    fn kill(&mut self) {
        match self {
            Broker::Mosquitto(b) => b.crash(),
            Broker::Nats { cluster, victim } => cluster.kill(*victim),
        }
    }

    fn restart(&mut self) {
        match self {
            Broker::Mosquitto(b) => b.restart(),
            Broker::Nats { cluster, victim } => cluster.restart(*victim),
        }
    }

    /// How long after the kill the broker may still deliver what the dead node had sent
    /// the subscriber, unacknowledged: NATS delivers it again after its `ack_wait`;
    /// Mosquitto has no other node.
    fn redelivery_after_kill(&self) -> Duration {
        match self {
            Broker::Mosquitto(_) => Duration::ZERO,
            Broker::Nats { .. } => nats::ACK_WAIT,
        }
    }

    /// The most the broker can deliver again to the subscriber over the kill and the
    /// restart, `flagged` of them with MQTT's DUP: Mosquitto flags each; nats-server
    /// 2.9.10 does not always, so its share is its window for each of the two node
    /// changes.
    fn redelivered_at_most(&self, flagged: u64) -> u64 {
        match self {
            Broker::Mosquitto(_) => flagged,
            Broker::Nats { cluster, .. } => flagged.max(2 * u64::from(cluster.max_ack_pending())),
        }
    }
}

/// A scenario's broker, the bridge's broker URLs, and the subscriber's nodes.
type Setup = (Broker, Vec<String>, Vec<(String, u16)>);

/// Starts the broker of `scenario`.
fn broker(scenario: Scenario) -> Option<Setup> {
    if scenario == Scenario::Mosquitto {
        let b = mosquitto::Broker::start("bench-failover")?;
        let (url, port) = (b.url(), b.port);
        return Some((
            Broker::Mosquitto(b),
            vec![url],
            vec![("127.0.0.1".into(), port)],
        ));
    }
    // nats-server's own window: the subscriber takes the whole fleet.
    let cluster =
        nats::Cluster::start_with_window("bench-failover", nats::DEFAULT_MAX_ACK_PENDING)?;
    let msgs = cluster.stream_leader(0, "$MQTT_msgs");
    let victim = (0..3).find(|&i| Some(i) != msgs).unwrap_or(0);
    let other = (0..3).find(|&i| i != victim).unwrap_or(1);
    let order = |first: usize| {
        let mut nodes = vec![first];
        nodes.extend((0..3).filter(|&i| i != first));
        nodes
    };
    let (bridge_first, sub_first) = if scenario == Scenario::BridgesNode {
        (victim, other)
    } else {
        (other, victim)
    };
    let urls = order(bridge_first)
        .iter()
        .map(|&i| cluster.url(i))
        .collect();
    let sub = order(sub_first)
        .iter()
        .map(|&i| ("127.0.0.1".to_owned(), cluster.mqtt_port(i)))
        .collect();
    Some((Broker::Nats { cluster, victim }, urls, sub))
}

/// What the fleet sends, and how the bridge publishes it.
#[derive(Clone, Copy, Debug)]
struct Load {
    robots: u16,
    frequency: f64,
    seconds: u64,
    connections: usize,
    batch_ms: u64,
}

fn config(urls: &[String], robots: &[(String, SocketAddr)], load: &Load) -> String {
    let list = urls
        .iter()
        .map(|u| format!("\"{u}\""))
        .collect::<Vec<_>>()
        .join(", ");
    mosquitto::config(
        "x",
        robots,
        &format!(
            "batch_ms = {}\nbatch_packages = 1000\nqueue_packages = 100000",
            load.batch_ms
        ),
        load.frequency,
    )
    .replacen(
        "url = \"x\"",
        &format!("urls = [{list}]\nconnections = {}", load.connections),
        1,
    )
}

fn unix_us() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
}

/// Reads what arrived, checking each batch and timing each new package.
fn drain(sub: &Subscriber, check: &mut SequenceCheck, latencies: &mut Vec<(i64, i64)>) {
    while let Some(m) = sub.recv_timeout(Duration::from_millis(1)) {
        if let Message::Batch { batch, .. } = m {
            let now = unix_us();
            if check.check(&batch) == Verdict::Duplicate {
                continue;
            }
            for i in 0..batch.count() {
                if let Some(host) = batch.host_time_us(i) {
                    latencies.push((host, now - host));
                }
            }
        }
    }
}

fn percentile_ms(sorted: &[i64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn run(scenario: Scenario, load: &Load) -> Option<Figures> {
    let (mut broker, urls, sub_nodes) = broker(scenario)?;
    let fleet = rtde_sim::Sim::builder()
        .deterministic()
        .start_fleet(load.robots)
        .expect("start the fleet");
    let named: Vec<(String, SocketAddr)> = fleet
        .addrs()
        .enumerate()
        .map(|(i, a)| (format!("r{i:03}"), a))
        .collect();
    let sub = Subscriber::connect_any(
        &sub_nodes,
        "bench-failover-sub",
        &["rtde/+/data".to_owned()],
        Duration::from_secs(60),
    )
    .expect("the subscriber connects");
    let mut options = StartOptions::default();
    options.drain_timeout = Duration::from_secs(120);
    let bridge = Bridge::start(
        Config::parse(&config(&urls, &named, load), "bench.toml").expect("config"),
        options,
    )
    .expect("the bridge starts");
    let (mut check, mut latencies) = (SequenceCheck::default(), Vec::new());
    let started = Instant::now();
    let third = Duration::from_secs(load.seconds) / 3;
    while started.elapsed() < third {
        drain(&sub, &mut check, &mut latencies);
    }
    let connections = bridge.counts().broker_connections;
    let killed_us = unix_us();
    let killed = Instant::now();
    broker.kill();
    let mut reconnect = None;
    let mut restarted_us = None;
    while started.elapsed() < 3 * third {
        drain(&sub, &mut check, &mut latencies);
        let counts = bridge.counts();
        if reconnect.is_none() && counts.broker_connected && counts.broker_connections > connections
        {
            reconnect = Some(killed.elapsed());
        }
        if restarted_us.is_none() && started.elapsed() >= 2 * third {
            broker.restart();
            restarted_us = Some(unix_us());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let counts = bridge.shutdown();
    let quiet = Instant::now();
    // What the broker still holds for the subscriber: until 10 s bring nothing new, and
    // not before the broker's redelivery of what the dead node had in flight to the
    // subscriber (a short run ends before it: its packages were counted as unexplained
    // gaps, though they came 30 s after the kill).
    let redelivered_by = killed + broker.redelivery_after_kill() + Duration::from_secs(5);
    let mut last = check.summary();
    while quiet.elapsed() < Duration::from_secs(10)
        || Instant::now() < redelivered_by
        || check.summary() != last
    {
        if check.summary() != last {
            last = check.summary();
        }
        drain(&sub, &mut check, &mut latencies);
        if quiet.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    let redelivered = sub.redelivered();
    sub.close();
    let reconnect_ms = reconnect.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
    #[allow(clippy::cast_possible_truncation)]
    let window_end = match scenario {
        Scenario::Mosquitto => restarted_us.unwrap_or(i64::MAX),
        _ => killed_us + (reconnect_ms * 1e3) as i64,
    } + 5_000_000;
    let mut outside: Vec<i64> = latencies
        .iter()
        .filter(|(host, _)| *host < killed_us - 1_000_000 || *host > window_end)
        .map(|(_, l)| *l)
        .collect();
    outside.sort_unstable();
    let mut before: Vec<i64> = latencies
        .iter()
        .filter(|(host, _)| *host < killed_us - 1_000_000)
        .map(|(_, l)| *l)
        .collect();
    before.sort_unstable();
    let summary = check.summary();
    Some(Figures {
        read: counts.received(),
        delivered: summary.delivered,
        queued: counts.queued(),
        duplicates: summary.duplicates,
        resent: counts.resent,
        redelivered,
        duplicate_bound: counts.resent + broker.redelivered_at_most(redelivered),
        unexplained: summary.unexplained,
        reconnect_ms,
        p50_ms: percentile_ms(&outside, 0.5),
        p99_ms: percentile_ms(&outside, 0.99),
        p99_before_ms: percentile_ms(&before, 0.99),
    })
}

fn main() {
    let mut load = Load {
        robots: 100,
        frequency: 125.0,
        seconds: 90,
        connections: 1,
        batch_ms: 10,
    };
    let mut runs = 3usize;
    let mut only: Vec<Scenario> = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--robots" => load.robots = value().parse().expect("--robots N"),
            "--frequency" => load.frequency = value().parse().expect("--frequency HZ"),
            "--seconds" => load.seconds = value().parse().expect("--seconds S"),
            "--connections" => load.connections = value().parse().expect("--connections N"),
            "--batch-ms" => load.batch_ms = value().parse().expect("--batch-ms MS"),
            "--runs" => runs = value().parse().expect("--runs N"),
            "--only" => {
                let name = value();
                only.push(
                    Scenario::ALL
                        .into_iter()
                        .find(|s| s.arg() == name)
                        .unwrap_or_else(|| {
                            panic!("--only {name}: mosquitto, bridges-node or subscribers-node")
                        }),
                );
            }
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("{cpu}");
    println!("commit {commit}");
    let Load {
        robots,
        frequency,
        seconds,
        connections,
        batch_ms,
    } = load;
    let only_args: String = only
        .iter()
        .map(|s| format!(" --only {}", s.arg()))
        .collect();
    println!(
        "command: cargo bench -p rtde-bridge --bench cluster_failover -- --robots {robots} --frequency {frequency} --seconds {seconds} --connections {connections} --batch-ms {batch_ms} --runs {runs}{only_args}"
    );
    println!(
        "{robots} robots x {frequency} Hz for {seconds} s on {connections} MQTT session(s), {batch_ms} ms batches; SIGKILL at {}s, restart at {}s",
        seconds / 3,
        2 * seconds / 3
    );
    for run_no in 1..=runs {
        for scenario in Scenario::ALL
            .into_iter()
            .filter(|s| only.is_empty() || only.contains(s))
        {
            let Some(f) = run(scenario, &load) else {
                println!("run {run_no} {scenario:?}: skipped (broker not installed)");
                continue;
            };
            println!(
                "run {run_no} {scenario:?}: read {}, delivered {}, not delivered {} (of which still queued in the bridge after its 120 s drain {}), duplicate batches {} (bound {}: the bridge re-sent {} unacknowledged, the broker redelivered {} flagged{}), unexplained gaps {}, reconnected {:.0} ms after the kill, latency outside the window p50 {:.1} ms p99 {:.1} ms (p99 before the kill {:.1} ms)",
                f.read,
                f.delivered,
                f.read.saturating_sub(f.delivered),
                f.queued,
                f.duplicates,
                f.duplicate_bound,
                f.resent,
                f.redelivered,
                if f.duplicates > f.duplicate_bound {
                    ": MORE DUPLICATES THAN THE BOUND"
                } else {
                    ""
                },
                f.unexplained,
                f.reconnect_ms,
                f.p50_ms,
                f.p99_ms,
                f.p99_before_ms
            );
        }
    }
}
