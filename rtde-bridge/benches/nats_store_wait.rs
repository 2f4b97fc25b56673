//! Where a QoS 1 publication's latency goes on a 3-node NATS cluster: before its PUBACK
//! (the broker's replicated JetStream store) or after it (the delivery to a persistent
//! QoS 1 subscriber on another node). The cluster failover bench
//! (`cluster_failover.rs`) shows the steady p99 growing with the fleet; this one says
//! which side grows it, and whether nats-server's own `mqtt {}` options change that.
//!
//! ```text
//! cargo bench -p rtde-bridge --bench nats_store_wait -- --rate 10000 --connections 32 --runs 3 \
//!     --options '' --options 'consumer_memory_storage: true'
//! ```
//!
//! `--connections` MQTT sessions (persistent, an in-flight window of 1,000, as the bridge
//! opens them) on node 0 publish 200-byte QoS 1 messages to 100 topics, each topic on a
//! 10 ms tick, `--rate` messages a second in all; one persistent QoS 1 subscriber on node 1
//! takes `rtde/+/data`. Each message is timed at its send, its write, its PUBACK (matched
//! by packet id) and its arrival. After `--warmup` seconds (4), `--seconds` (20) are
//! measured. Each `--options` (repeatable; `''`, nats-server's defaults, when none is
//! given) is one configuration on a fresh cluster; the configurations take turns within
//! each of `--runs` runs, so the machine's drift falls on all of them.
//!
//! Figures per configuration and run: the rates; p50/p99 from the send to the PUBACK, from
//! the PUBACK to the arrival, and end to end; the part of the slowest 1 % (end to end) that
//! fell before the PUBACK; and the PUBACK's wait split in two, since nats-server 2.9.10
//! stores one connection's QoS 1 publications one at a time: the wait for the same
//! connection's previous PUBACK, and the message's own store (from the later of its write
//! and that PUBACK), whose mean × each connection's rate is how busy a connection is. Then
//! the three nodes' CPU, the bench's, and the machine's.
//!
//! Needs `nats-server` (Debian's package); says so and ends without it.

// Statistics over microsecond counts and /proc tick counts: no value here comes near the
// limits these casts could break.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use rtde_testkit::nats::{Cluster, DEFAULT_MAX_ACK_PENDING};
use rumqttc::{AsyncClient, Event, MqttOptions, Outgoing, Packet, QoS};

/// The topics, as 100 robots' data topics.
const TOPICS: usize = 100;
/// Each topic publishes on this tick, as the bridge's 10 ms batches.
const TICK: Duration = Duration::from_millis(10);
const PAYLOAD: usize = 200;

#[derive(Clone, Debug)]
struct Args {
    rate: f64,
    connections: usize,
    warmup: f64,
    seconds: f64,
    runs: usize,
    options: Vec<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        rate: 10_000.0,
        connections: 32,
        warmup: 4.0,
        seconds: 20.0,
        runs: 3,
        options: Vec::new(),
    };
    let mut it = std::env::args().skip(1).filter(|s| s != "--bench");
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |what: &str| -> Result<f64, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("{what}: {value:?} is not a positive number"))
        };
        match flag.as_str() {
            "--rate" => a.rate = number("--rate")?,
            "--connections" => a.connections = number("--connections")? as usize,
            "--warmup" => a.warmup = number("--warmup")?,
            "--seconds" => a.seconds = number("--seconds")?,
            "--runs" => a.runs = number("--runs")? as usize,
            "--options" => a.options.push(value),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if !(1..=TOPICS).contains(&a.connections) {
        return Err(format!("--connections: 1 to {TOPICS}"));
    }
    if a.options.is_empty() {
        a.options.push(String::new());
    }
    Ok(a)
}

/// Each message's times, in µs since the start plus one (0: not seen yet).
#[derive(Debug)]
struct Times {
    start: Instant,
    send: Vec<AtomicU64>,
    write: Vec<AtomicU64>,
    ack: Vec<AtomicU64>,
    arrival: Vec<AtomicU64>,
    connection: Vec<AtomicU64>,
    next: AtomicU64,
    duplicates: AtomicU64,
    connection_errors: AtomicU64,
}

impl Times {
    fn new(capacity: usize) -> Times {
        let column = || (0..capacity).map(|_| AtomicU64::new(0)).collect();
        Times {
            start: Instant::now(),
            send: column(),
            write: column(),
            ack: column(),
            arrival: column(),
            connection: column(),
            next: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
            connection_errors: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64 + 1
    }

    fn at(column: &[AtomicU64], i: usize) -> i64 {
        column[i].load(Relaxed) as i64
    }

    /// A poll failed: counted, and the event loop reconnects at its next poll, a moment on.
    async fn lost_connection(&self) {
        self.connection_errors.fetch_add(1, Relaxed);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits, 30 s at most, for an event loop to say the broker sent its first `what`.
async fn acknowledged(ready: tokio::sync::oneshot::Receiver<()>, what: &str) {
    tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .unwrap_or_else(|_| panic!("no {what} within 30 s"))
        .unwrap_or_else(|_| panic!("the event loop ended before its {what}"));
}

fn options(id: &str, port: u16) -> MqttOptions {
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_clean_session(false)
        .set_keep_alive(Duration::from_secs(5))
        .set_inflight(1000);
    o
}

/// The subscriber: subscribed (SUBACK) when this returns.
async fn subscribe(port: u16, t: &Arc<Times>, tasks: &mut Vec<tokio::task::JoinHandle<()>>) {
    let (client, mut events) = AsyncClient::new(options("store-wait-sub", port), 1024);
    client
        .subscribe("rtde/+/data", QoS::AtLeastOnce)
        .await
        .expect("subscribe");
    let (ready, subscribed) = tokio::sync::oneshot::channel();
    let mut ready = Some(ready);
    let t = Arc::clone(t);
    tasks.push(tokio::spawn(async move {
        let _client = client;
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let now = t.now();
                    let id = p
                        .payload
                        .get(..8)
                        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize);
                    if let Some(id) = id.filter(|&i| i < t.arrival.len())
                        && t.arrival[id].swap(now, Relaxed) != 0
                    {
                        t.duplicates.fetch_add(1, Relaxed);
                    }
                }
                Ok(_) => {}
                Err(_) => t.lost_connection().await,
            }
        }
    }));
    acknowledged(subscribed, "SUBACK").await;
}

/// One publishing session: its event loop records each message's write and PUBACK; the
/// pacer sends its topics' share of the rate on every tick until `stop`.
async fn publisher(
    c: usize,
    port: u16,
    a: &Args,
    t: &Arc<Times>,
    stop: &Arc<AtomicBool>,
    tasks: &mut Vec<tokio::task::JoinHandle<()>>,
) {
    let (client, mut events) = AsyncClient::new(options(&format!("store-wait-{c}"), port), 4096);
    // The client writes requests in the order the pacer made them: ids in that order.
    let (ids, written) = std::sync::mpsc::channel::<usize>();
    let (ready, connected) = tokio::sync::oneshot::channel();
    let mut ready = Some(ready);
    let tr = Arc::clone(t);
    tasks.push(tokio::spawn(async move {
        let mut by_packet: HashMap<u16, usize> = HashMap::new();
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                }
                Ok(Event::Outgoing(Outgoing::Publish(packet))) => {
                    if let Ok(id) = written.try_recv() {
                        tr.write[id].store(tr.now(), Relaxed);
                        by_packet.insert(packet, id);
                    }
                }
                Ok(Event::Incoming(Packet::PubAck(ack))) => {
                    if let Some(id) = by_packet.remove(&ack.pkid) {
                        tr.ack[id].store(tr.now(), Relaxed);
                    }
                }
                Ok(_) => {}
                Err(_) => tr.lost_connection().await,
            }
        }
    }));
    acknowledged(connected, "CONNACK").await;
    let topics: Vec<usize> = (0..TOPICS).filter(|r| r % a.connections == c).collect();
    let per_tick = a.rate / TOPICS as f64 * TICK.as_secs_f64();
    let phase = TICK.mul_f64(c as f64 / a.connections as f64);
    let (t, stop) = (Arc::clone(t), Arc::clone(stop));
    tasks.push(tokio::spawn(async move {
        tokio::time::sleep(phase).await;
        let mut tick = tokio::time::interval(TICK);
        let mut owed = vec![0.0f64; topics.len()];
        let mut payload = vec![0u8; PAYLOAD];
        while !stop.load(Relaxed) {
            tick.tick().await;
            for (k, topic) in topics.iter().enumerate() {
                owed[k] += per_tick;
                while owed[k] >= 1.0 {
                    owed[k] -= 1.0;
                    let id = t.next.fetch_add(1, Relaxed) as usize;
                    if id >= t.send.len() {
                        return;
                    }
                    t.send[id].store(t.now(), Relaxed);
                    t.connection[id].store(c as u64, Relaxed);
                    payload[..8].copy_from_slice(&(id as u64).to_le_bytes());
                    let _ = ids.send(id);
                    let topic = format!("rtde/r{topic:03}/data");
                    if client
                        .publish(topic, QoS::AtLeastOnce, false, payload.clone())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    }));
}

/// CPU ticks (user + system, 1/100 s) of process `pid` so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum()
}

/// (busy, total) ticks of the whole machine so far.
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = f.iter().sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// The `p` quantile of `v` (sorted here), in ms.
fn quantile(v: &mut [i64], p: f64) -> f64 {
    v.sort_unstable();
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize] as f64 / 1000.0
}

fn p50_p99(v: &mut [i64]) -> String {
    format!("{:.1}/{:.1}", quantile(v, 0.5), quantile(v, 0.99))
}

/// One configuration, on a fresh cluster: its line of figures, or why there is none.
async fn measure(a: &Args, mqtt: &str, name: &str) -> Result<String, String> {
    let started = {
        let (name, mqtt) = (name.to_owned(), mqtt.to_owned());
        tokio::task::spawn_blocking(move || {
            Cluster::start_with_mqtt(&name, DEFAULT_MAX_ACK_PENDING, &mqtt)
        })
        .await
        .map_err(|e| e.to_string())?
    };
    let cluster = started.ok_or("nats-server is not installed")?;
    let capacity = (a.rate * (a.warmup + a.seconds + 2.0) * 1.05) as usize + 10_000;
    let t = Arc::new(Times::new(capacity));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    subscribe(cluster.mqtt_port(1), &t, &mut tasks).await;
    for c in 0..a.connections {
        publisher(c, cluster.mqtt_port(0), a, &t, &stop, &mut tasks).await;
    }
    let origin = t.now();
    let us = |s: f64| (s * 1e6) as u64;
    let window = (origin + us(a.warmup), origin + us(a.warmup + a.seconds));
    tokio::time::sleep(Duration::from_secs_f64(a.warmup)).await;
    let pids: Vec<u32> = (0..3).filter_map(|i| cluster.pid(i)).collect();
    let nodes_before: u64 = pids.iter().map(|&p| cpu_ticks(p)).sum();
    let own_before = cpu_ticks(std::process::id());
    let machine_before = machine_ticks();
    tokio::time::sleep(Duration::from_secs_f64(a.seconds)).await;
    let nodes = (pids.iter().map(|&p| cpu_ticks(p)).sum::<u64>() - nodes_before) as f64;
    let own = (cpu_ticks(std::process::id()) - own_before) as f64;
    let machine = machine_ticks();
    stop.store(true, Relaxed);
    // Until every message sent has its PUBACK and its arrival, or 15 s.
    let sent = (t.next.load(Relaxed) as usize).min(capacity);
    let drained_by = Instant::now() + Duration::from_secs(15);
    while Instant::now() < drained_by
        && (0..sent).any(|i| t.ack[i].load(Relaxed) == 0 || t.arrival[i].load(Relaxed) == 0)
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for task in &tasks {
        task.abort();
    }
    let msgs_leader = cluster.stream_leader(1, "$MQTT_msgs");
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .map_err(|e| e.to_string())?;

    let in_window = |i: usize| {
        let s = t.send[i].load(Relaxed);
        s >= window.0 && s < window.1
    };
    let at = Times::at;
    let (mut to_ack, mut after_ack, mut end_to_end, mut parts) = (vec![], vec![], vec![], vec![]);
    let mut unanswered = 0;
    for i in (0..sent).filter(|&i| in_window(i)) {
        let (s, k, r) = (at(&t.send, i), at(&t.ack, i), at(&t.arrival, i));
        if k == 0 || r == 0 {
            unanswered += 1;
            continue;
        }
        to_ack.push(k - s);
        after_ack.push(r - k);
        end_to_end.push(r - s);
        parts.push((r - s, k - s));
    }
    // Each connection's messages in the order written: the wait for the previous one's
    // PUBACK, and the message's own store after it.
    let mut by_connection: Vec<Vec<usize>> = vec![Vec::new(); a.connections];
    for i in (0..sent).filter(|&i| at(&t.write, i) != 0 && at(&t.ack, i) != 0) {
        by_connection[at(&t.connection, i) as usize].push(i);
    }
    let (mut behind, mut store) = (vec![], vec![]);
    for ids in &mut by_connection {
        ids.sort_unstable_by_key(|&i| at(&t.write, i));
        for pair in ids.windows(2) {
            let (previous, i) = (pair[0], pair[1]);
            if !in_window(i) {
                continue;
            }
            let (w, ack, before) = (at(&t.write, i), at(&t.ack, i), at(&t.ack, previous));
            behind.push((before - w).max(0));
            store.push(ack - w.max(before));
        }
    }
    parts.sort_unstable_by_key(|p| p.0);
    let slowest = &parts[parts.len() * 99 / 100..];
    let before_ack = 100.0 * slowest.iter().map(|p| p.1.max(0) as f64).sum::<f64>()
        / slowest.iter().map(|p| p.0 as f64).sum::<f64>().max(1.0);
    let store_mean = store.iter().sum::<i64>() as f64 / store.len().max(1) as f64 / 1000.0;
    let busy = store_mean / 1000.0 * a.rate / a.connections as f64 * 100.0;
    let ticks_per_s = a.seconds * 100.0;
    let machine_busy =
        100.0 * (machine.0 - machine_before.0) as f64 / (machine.1 - machine_before.1) as f64;
    Ok(format!(
        "acked {:.0}/s, delivered {}, unanswered {unanswered}, duplicates {}, connection errors {}; \
         p50/p99 ms: to the PUBACK {}, PUBACK to arrival {}, end to end {}; slowest 1 %: {before_ack:.0} % \
         before the PUBACK; behind the same connection p99 {:.1} ms, own store mean {store_mean:.2} ms \
         p99 {:.1} ms (a connection busy {busy:.0} %); CPU: nodes {:.2} cores, bench {:.2}, machine \
         {machine_busy:.0} % busy; $MQTT_msgs led by n{}",
        (0..sent)
            .filter(|&i| {
                let k = t.ack[i].load(Relaxed);
                k >= window.0 && k < window.1
            })
            .count() as f64
            / a.seconds,
        end_to_end.len(),
        t.duplicates.load(Relaxed),
        t.connection_errors.load(Relaxed),
        p50_p99(&mut to_ack),
        p50_p99(&mut after_ack),
        p50_p99(&mut end_to_end),
        quantile(&mut behind, 0.99),
        quantile(&mut store, 0.99),
        nodes / ticks_per_s,
        own / ticks_per_s,
        msgs_leader.map_or("?".to_owned(), |n| n.to_string()),
    ))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(why) => {
            eprintln!("nats_store_wait: {why}");
            std::process::exit(2);
        }
    };
    println!(
        "{} QoS 1 messages/s of {PAYLOAD} bytes on {} sessions to node 0, a persistent QoS 1 \
         subscriber on node 1; {} s measured after {} s; {} runs",
        a.rate, a.connections, a.seconds, a.warmup, a.runs
    );
    for run in 1..=a.runs {
        for (k, mqtt) in a.options.iter().enumerate() {
            let label = if mqtt.is_empty() { "defaults" } else { mqtt };
            match measure(&a, mqtt, &format!("store-wait-{run}-{k}")).await {
                Ok(figures) => println!("run {run} [{label}]: {figures}"),
                Err(why) => {
                    println!("run {run} [{label}]: skipped: {why}");
                    return;
                }
            }
        }
    }
}
