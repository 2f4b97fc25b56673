//! The running bridge: one tokio runtime for every robot, and one MQTT session (or the
//! configured number, the robots shared out among them).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rtde_core::ReconnectPolicy;
use rumqttc::{AsyncClient, EventLoop, LastWill, MqttOptions, Publish, QoS, Request};
use tokio::runtime::Runtime;

use crate::backoff::{self, Backoff};
use crate::broker::{self, BrokerState, Polled};
use crate::config::{Config, Format, Robot};
use crate::error::{BrokerError, Error};
use crate::payload::{self, Batch};
use crate::queue::{Out, RobotCounts, RobotQueue};
use crate::robot::{self, unix_us};
use crate::sparkplug::node::Node;

/// QoS 1 publications the MQTT client may have unacknowledged at once.
const INFLIGHT: u16 = 1000;

/// How the bridge connects, beyond the configuration file.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct StartOptions {
    /// How long [`Bridge::start`] waits for the broker to accept the first connection.
    pub broker_timeout: Duration,
    /// The reconnection policy for robots whose link fails; rounds are repeated while
    /// the robot stays unreachable.
    pub robot_reconnect: ReconnectPolicy,
    /// How long [`Bridge::shutdown`] waits for the broker to take what is queued.
    pub drain_timeout: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            broker_timeout: Duration::from_secs(5),
            robot_reconnect: ReconnectPolicy::new(),
            drain_timeout: Duration::from_secs(5),
        }
    }
}

/// Counters of a running bridge, from [`Bridge::counts`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Per robot, in the configuration's order.
    pub robots: Vec<(String, RobotCounts)>,
    /// Whether the broker connection is up (every session's, with several).
    pub broker_connected: bool,
    /// The MQTT sessions the bridge publishes on,
    /// [`Broker::connections`](crate::config::Broker::connections).
    pub broker_sessions: usize,
    /// Connections made to the broker, over every session (one a session without an
    /// outage).
    pub broker_connections: u64,
    /// The broker node the first session is connected to (or tries next), as an index
    /// into [`Broker::nodes`](crate::config::Broker::nodes): 0 with one broker.
    pub broker_node: usize,
    /// Connections accepted by another node of a cluster than the one before, over every
    /// session.
    pub failovers: u64,
    /// Publications discarded by the MQTT client because the broker came back without
    /// the bridge's session (with Sparkplug B, which has no session to keep: what the
    /// client held when a connection broke), statuses included. Their packages are in
    /// each robot's [`RobotCounts::lost_in_flight`], and in the `dropped` count of the
    /// robot's next batches, so a subscriber can tell them from a gap nobody counted.
    pub lost_with_session: u64,
    /// Publications the JSON and binary formats' client re-sent, marked with MQTT's DUP
    /// flag, on a connection that kept the bridge's session: the ones the broker (or the
    /// node that died) had not acknowledged when the connection before broke. Each may
    /// reach a subscriber twice, so a subscriber's duplicate batches are at most this
    /// many, plus what its own broker delivers to it again after its own reconnection.
    /// Sparkplug B re-sends nothing (0).
    pub resent: u64,
}

impl Counts {
    /// Packages read from all robots.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.robots.iter().map(|(_, c)| c.received).sum()
    }

    /// Packages handed to the MQTT client.
    #[must_use]
    pub fn published(&self) -> u64 {
        self.robots.iter().map(|(_, c)| c.published).sum()
    }

    /// Packages dropped from full queues.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.robots.iter().map(|(_, c)| c.dropped).sum()
    }

    /// Packages still queued.
    #[must_use]
    pub fn queued(&self) -> u64 {
        self.robots.iter().map(|(_, c)| c.queued).sum()
    }

    /// Whether a broker connection broke and came back since the start: more
    /// connections than sessions.
    #[must_use]
    pub fn reconnected(&self) -> bool {
        self.broker_connections > self.broker_sessions as u64
    }

    /// Packages published but lost with a broken broker connection
    /// ([`RobotCounts::lost_in_flight`]).
    #[must_use]
    pub fn lost_in_flight(&self) -> u64 {
        self.robots.iter().map(|(_, c)| c.lost_in_flight).sum()
    }
}

/// A running bridge: robots read, batches published, until [`Bridge::shutdown`].
///
/// ```no_run
/// let config = rtde_bridge::Config::read("bridge.toml".as_ref())?;
/// let bridge = rtde_bridge::Bridge::start(config, rtde_bridge::StartOptions::default())?;
/// std::thread::sleep(std::time::Duration::from_secs(10));
/// let counts = bridge.shutdown();
/// println!("{} packages published, {} dropped", counts.published(), counts.dropped());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Bridge {
    runtime: Runtime,
    /// The JSON and binary formats' sessions; none for Sparkplug B, whose node owns its
    /// connection.
    links: Vec<Link>,
    queues: Vec<Arc<RobotQueue>>,
    readers: Vec<tokio::task::JoinHandle<()>>,
    stop_readers: tokio::sync::watch::Sender<bool>,
    publishers: Vec<tokio::task::JoinHandle<()>>,
    /// Each session's books: the links', or the Sparkplug B node's.
    brokers: Vec<Arc<BrokerState>>,
    stop: Arc<AtomicBool>,
    bridge_topic: String,
    client_id: String,
    session: u64,
    drain_timeout: Duration,
}

/// One MQTT session of the JSON and binary formats: its client, its event loop's task and
/// its books.
#[derive(Debug)]
struct Link {
    client: AsyncClient,
    driver: tokio::task::JoinHandle<()>,
    broker: Arc<BrokerState>,
}

impl std::fmt::Debug for RobotQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotQueue")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Bridge {
    /// Connects to the broker (waiting at most [`StartOptions::broker_timeout`]), then
    /// starts reading every robot.
    ///
    /// # Errors
    /// [`Error::BrokerUnreachable`]; [`Error::Start`].
    pub fn start(config: Config, options: StartOptions) -> Result<Bridge, Error> {
        let runtime = mqtt_runtime()?;
        let session = u64::try_from(unix_us()).unwrap_or(0);
        let b = &config.broker;
        let bridge_topic = config.topics.bridge_of(&b.client_id);
        let Connected {
            links,
            node,
            brokers,
        } = connect_broker(&runtime, &config, session, options.broker_timeout)?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut queues = Vec::new();
        let mut readers = Vec::new();
        let (stop_readers, stop_rx) = tokio::sync::watch::channel(false);
        let mut publishers = Vec::new();
        // The bridge's birth and will are the first session's.
        if let Some(first) = links.first() {
            let birth = payload::bridge_status(&b.client_id, session, true);
            announce(
                &runtime,
                first.client.clone(),
                bridge_topic.clone(),
                birth,
                &first.broker,
                &stop,
            );
        }
        for (i, robot) in config.robots.iter().enumerate() {
            let queue = robot_queue(&config, robot, session);
            if !links.is_empty() {
                let link = &links[i % links.len()];
                publishers.push(spawn_publisher(
                    &runtime,
                    &config,
                    robot,
                    &queue,
                    &link.client,
                    &link.broker,
                ));
            }
            {
                let _inside = runtime.enter();
                readers.push(robot::spawn(
                    robot.clone(),
                    Arc::clone(&queue),
                    stop_rx.clone(),
                    options.robot_reconnect,
                ));
            }
            queues.push(queue);
        }
        if let Some(node) = node {
            // One publisher for every robot: Sparkplug's `seq` counts the node's messages.
            publishers.push(runtime.spawn(node.run(queues.clone())));
        }
        runtime.spawn(sweep(
            queues.clone(),
            config.payload.batch_time,
            Arc::clone(&stop),
        ));
        Ok(Bridge {
            runtime,
            links,
            queues,
            readers,
            stop_readers,
            publishers,
            brokers,
            stop,
            bridge_topic,
            client_id: b.client_id.clone(),
            session,
            drain_timeout: options.drain_timeout,
        })
    }

    /// The session id in every message of this run (µs since the Unix epoch at start).
    #[must_use]
    pub fn session(&self) -> u64 {
        self.session
    }

    /// The counters so far.
    #[must_use]
    pub fn counts(&self) -> Counts {
        counts_of(&self.queues, &self.brokers)
    }

    /// Why the broker connection last failed, if it ever did (the first session's that
    /// did, with several).
    #[must_use]
    pub fn broker_error(&self) -> Option<BrokerError> {
        self.brokers.iter().find_map(|b| {
            b.last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
    }

    /// Stops reading, publishes what is queued and every robot's offline status, then
    /// the bridge's, and disconnects; waits at most the drain timeout for the broker.
    /// Returns the final counters: `queued` is what the broker did not take in time.
    #[must_use]
    pub fn shutdown(self) -> Counts {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.stop_readers.send(true);
        let readers = self.readers;
        self.runtime.block_on(async move {
            for r in readers {
                // A reader that panicked has closed nothing; its queue is closed below.
                let _ = tokio::time::timeout(Duration::from_secs(5), r).await;
            }
        });
        for q in &self.queues {
            q.close();
        }
        let drain = self.drain_timeout;
        let topic = self.bridge_topic.clone();
        let status = payload::bridge_status(&self.client_id, self.session, false);
        let publishers = self.publishers;
        let links = self.links;
        self.runtime.block_on(async move {
            let deadline = tokio::time::Instant::now() + drain;
            for p in publishers {
                if tokio::time::timeout_at(deadline, p).await.is_err() {
                    break;
                }
            }
            // Sparkplug B's node has said goodbye on its own connection (no links).
            let done = async {
                if let Some(first) = links.first() {
                    let _ = first
                        .client
                        .publish(topic, QoS::AtLeastOnce, true, status)
                        .await;
                }
                // Everything acknowledged before saying goodbye: a DISCONNECT right behind
                // the last publications could leave them unsent in the client's buffer.
                for link in &links {
                    let acks = &link.broker;
                    while acks.acked.load(Ordering::Relaxed) < acks.sent.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
                for link in links {
                    let _ = link.client.disconnect().await;
                    let _ = link.driver.await;
                }
            };
            let _ = tokio::time::timeout_at(deadline, done).await;
        });
        let counts = Counts {
            broker_connected: false,
            ..counts_of(&self.queues, &self.brokers)
        };
        self.runtime.shutdown_timeout(Duration::from_millis(100));
        counts
    }
}

/// The counters of `queues` and of the sessions' `brokers`, summed over the sessions.
fn counts_of(queues: &[Arc<RobotQueue>], brokers: &[Arc<BrokerState>]) -> Counts {
    let sum = |of: fn(&BrokerState) -> u64| brokers.iter().map(|b| of(b)).sum();
    Counts {
        robots: queues
            .iter()
            .map(|q| (q.name.clone(), q.counts()))
            .collect(),
        broker_connected: brokers.iter().all(|b| b.connected.load(Ordering::Relaxed)),
        broker_sessions: brokers.len(),
        broker_connections: sum(|b| b.connections.load(Ordering::Relaxed)),
        broker_node: brokers
            .first()
            .map_or(0, |b| b.node.load(Ordering::Relaxed)),
        failovers: sum(|b| b.failovers.load(Ordering::Relaxed)),
        lost_with_session: sum(|b| b.lost_with_session.load(Ordering::Relaxed)),
        resent: sum(|b| b.resent.load(Ordering::Relaxed)),
    }
}

/// The runtime the bridge's tasks run on.
fn mqtt_runtime() -> Result<Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        // One worker: the publishers and the MQTT event loop hand requests to each
        // other without waking a second thread.
        .worker_threads(1)
        .thread_name("rtde-bridge-mqtt")
        .enable_all()
        .build()
        .map_err(Error::Start)
}

/// The broker connections of the configured format: the JSON and binary formats'
/// sessions, or the Sparkplug B node; and the books of each.
struct Connected {
    links: Vec<Link>,
    node: Option<Node>,
    brokers: Vec<Arc<BrokerState>>,
}

/// Connects to the broker, every session, waiting at most `timeout` for each.
fn connect_broker(
    runtime: &Runtime,
    config: &Config,
    session: u64,
    timeout: Duration,
) -> Result<Connected, Error> {
    let b = &config.broker;
    let url = format!(
        "{}://{}:{}",
        if b.tls.is_some() { "mqtts" } else { "mqtt" },
        b.host,
        b.port
    );
    if let Some(sp) = &config.sparkplug {
        let broker = Arc::new(BrokerState::default());
        let node = Node::connect(
            runtime,
            config,
            sp,
            session,
            Arc::clone(&broker),
            &url,
            timeout,
        )?;
        return Ok(Connected {
            links: Vec::new(),
            node: Some(node),
            brokers: vec![broker],
        });
    }
    let mut links = Vec::with_capacity(b.connections);
    for k in 0..b.connections.max(1) {
        let broker = Arc::new(BrokerState::default());
        match connect(runtime, config, session, &broker, k, &url, timeout) {
            Ok((client, driver)) => links.push(Link {
                client,
                driver,
                broker,
            }),
            Err(e) => {
                for link in links {
                    link.driver.abort();
                }
                return Err(e);
            }
        }
    }
    let brokers = links.iter().map(|l| Arc::clone(&l.broker)).collect();
    Ok(Connected {
        links,
        node: None,
        brokers,
    })
}

/// Publishes the bridge's retained `birth` on `topic` now, and again whenever a broker
/// comes back without our session.
fn announce(
    runtime: &Runtime,
    client: AsyncClient,
    topic: String,
    birth: Vec<u8>,
    broker: &Arc<BrokerState>,
    stop: &Arc<AtomicBool>,
) {
    runtime
        .block_on(client.publish(topic.clone(), QoS::AtLeastOnce, true, birth.clone()))
        .ok();
    runtime.spawn(announce_again(
        client,
        topic,
        birth,
        Arc::clone(broker),
        Arc::clone(stop),
    ));
}

/// The queue between `robot`'s reader and its publisher.
fn robot_queue(config: &Config, robot: &Robot, session: u64) -> Arc<RobotQueue> {
    Arc::new(RobotQueue::new(
        robot.name.clone(),
        session,
        config.payload.batch_packages,
        config.payload.batch_time,
        config.payload.queue_packages,
        Duration::from_secs_f64(1.0 / robot.frequency),
    ))
}

/// Starts publishing `queue` in the JSON or binary format, with its data topic known to
/// the event loop.
fn spawn_publisher(
    runtime: &Runtime,
    config: &Config,
    robot: &Robot,
    queue: &Arc<RobotQueue>,
    client: &AsyncClient,
    broker: &Arc<BrokerState>,
) -> tokio::task::JoinHandle<()> {
    let b = &config.broker;
    let qos = if b.qos1 {
        QoS::AtLeastOnce
    } else {
        QoS::AtMostOnce
    };
    broker
        .data_topics
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(config.topics.data_of(&robot.name), Arc::clone(queue));
    runtime.spawn(
        Publisher {
            queue: Arc::clone(queue),
            client: client.clone(),
            data_topic: config.topics.data_of(&robot.name),
            status_topic: config.topics.status_of(&robot.name),
            bridge: b.client_id.clone(),
            binary: config.payload.format == Format::Binary,
            qos,
            broker: Arc::clone(broker),
        }
        .run(),
    )
}

/// Connects session `k` of the JSON and binary formats (a persistent session; the first
/// carries the bridge's retained last will), waiting at most `timeout` for the broker:
/// the client and its event loop's task.
fn connect(
    runtime: &Runtime,
    config: &Config,
    session: u64,
    broker: &Arc<BrokerState>,
    k: usize,
    url: &str,
    timeout: Duration,
) -> Result<(AsyncClient, tokio::task::JoinHandle<()>), Error> {
    let b = &config.broker;
    let bridge_topic = config.topics.bridge_of(&b.client_id);
    let nodes: Vec<MqttOptions> = (0..b.nodes.len().max(1))
        .map(|node| {
            let mut mqtt = broker::options_for(b, node, k);
            // A persistent session: after an outage the broker (or, in a cluster, another
            // node with the session's replica) keeps what it owes us, and the client
            // re-sends what the broker had not acknowledged.
            mqtt.set_clean_session(false).set_inflight(INFLIGHT);
            if k == 0 {
                mqtt.set_last_will(LastWill::new(
                    bridge_topic.clone(),
                    payload::bridge_status(&b.client_id, session, false),
                    QoS::AtLeastOnce,
                    true,
                ));
            }
            mqtt
        })
        .collect();
    let mqtt = nodes[0].clone();
    // No requests wait in the client's channel: while the broker is down the
    // publishers wait, and what waits is in the robots' bounded queues, counted.
    let (client, eventloop) = AsyncClient::new(mqtt, 0);
    let connected = {
        let broker = Arc::clone(broker);
        runtime.block_on(async move {
            let first = broker.connack.notified();
            let driver = tokio::spawn(drive(eventloop, Arc::clone(&broker), nodes));
            let ok = tokio::time::timeout(timeout, first).await.is_ok();
            (driver, ok)
        })
    };
    let (driver, ok) = connected;
    if !ok {
        driver.abort();
        let why = broker
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or_else(
                || format!("no answer within {timeout:?}"),
                BrokerError::at_start,
            );
        return Err(Error::BrokerUnreachable {
            url: url.to_owned(),
            why,
        });
    }
    Ok((client, driver))
}

/// Polls the MQTT event loop: reconnects after failures (backing off as
/// [`backoff::BROKER`] says), each time to the next of the broker's `nodes`, and notices a
/// session the broker lost.
async fn drive(mut eventloop: EventLoop, broker: Arc<BrokerState>, nodes: Vec<MqttOptions>) {
    let mut backoff = Backoff::new(backoff::BROKER);
    // What the client held unacknowledged when the connection broke: re-sent if the
    // broker kept our session, lost if it did not.
    let mut at_risk: Vec<Publish> = Vec::new();
    loop {
        match broker::poll(&mut eventloop, &broker).await {
            Polled::Accepted(ack) => {
                let held = std::mem::take(&mut at_risk);
                let fresh = broker.was_connected() && !ack.session_present;
                if !fresh {
                    // The session is back: the client re-sends what it held, first.
                    broker
                        .resent
                        .fetch_add(held.len() as u64, Ordering::Relaxed);
                }
                let lost = if fresh { held } else { Vec::new() };
                broker.accepted(lost.iter().map(|p| broker.carried_by(p)));
                if fresh {
                    broker.fresh_sessions.fetch_add(1, Ordering::Relaxed);
                    broker.fresh_session.notify_waiters();
                }
                backoff.succeeded();
                broker.connack.notify_waiters();
            }
            Polled::Failed(..) => {
                // The client moved what it held into `pending` as the connection broke,
                // to re-send first, with the same packet ids: marked as re-sent (MQTT's DUP
                // flag), and counted as at risk.
                at_risk.clear();
                for request in &mut eventloop.pending {
                    if let Request::Publish(p) = request {
                        p.dup = true;
                        at_risk.push(p.clone());
                    }
                }
                let next = broker.fail_over(nodes.len());
                eventloop.mqtt_options = nodes[next].clone();
                tokio::time::sleep(backoff.failed()).await;
            }
            Polled::Ended => return,
            Polled::Publication(_) | Polled::Nothing => {}
        }
    }
}

/// Closes batches that have waited their batch time while their robot sent nothing
/// more: one timer for every robot, not one per robot.
async fn sweep(queues: Vec<Arc<RobotQueue>>, every: Duration, stop: Arc<AtomicBool>) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        for q in &queues {
            if q.close_aged() {
                q.ready.notify_one();
            }
        }
    }
}

/// Publishes the bridge's retained birth message again after each reconnection to a
/// broker that lost our session (and so, maybe, its retained messages), until the bridge
/// stops.
async fn announce_again(
    client: AsyncClient,
    topic: String,
    birth: Vec<u8>,
    broker: Arc<BrokerState>,
    stop: Arc<AtomicBool>,
) {
    let mut seen = broker.fresh_sessions.load(Ordering::Relaxed);
    loop {
        seen = broker.fresh_session_since(seen).await;
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if client
            .publish(topic.as_str(), QoS::AtLeastOnce, true, birth.clone())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// One robot's publishing task.
struct Publisher {
    queue: Arc<RobotQueue>,
    client: AsyncClient,
    data_topic: String,
    status_topic: String,
    bridge: String,
    /// Binary batches, else JSON (Sparkplug B has a publisher of its own).
    binary: bool,
    qos: QoS,
    broker: Arc<BrokerState>,
}

impl Publisher {
    /// Publishes the queue, in order, until it is closed and empty; after a reconnection
    /// to a broker that lost our session, the robot's last status again, at once (it is
    /// retained, and a broker that lost its state may have lost it), with the packages
    /// lost in flight counted at that reconnection.
    async fn run(self) {
        let mut seen = self.broker.fresh_sessions.load(Ordering::Relaxed);
        let mut last_status: Option<(bool, Option<String>)> = None;
        loop {
            let now = self.broker.fresh_sessions.load(Ordering::Relaxed);
            if now != seen {
                seen = now;
                if let Some((online, reason)) = &last_status
                    && self.status(*online, reason.as_deref()).await.is_err()
                {
                    return;
                }
            }
            let out = match self.queue.take() {
                Err(()) => return,
                Ok(None) => {
                    tokio::select! {
                        () = self.queue.ready.notified() => {}
                        _ = self.broker.fresh_session_since(seen) => {}
                    }
                    continue;
                }
                Ok(Some(out)) => out,
            };
            let sent = match out {
                Out::Batch(batch) => {
                    let bytes = encode(&batch, self.binary);
                    self.client
                        .publish(self.data_topic.as_str(), self.qos, false, bytes)
                        .await
                }
                Out::Status { online, reason } => {
                    let sent = self.status(online, reason.as_deref()).await;
                    last_status = Some((online, reason));
                    sent
                }
            };
            if sent.is_err() {
                // The event loop is gone: the bridge is stopping.
                return;
            }
        }
    }

    async fn status(&self, online: bool, reason: Option<&str>) -> Result<(), rumqttc::ClientError> {
        let bytes = payload::robot_status(
            &self.queue.name,
            &self.bridge,
            self.queue.session,
            online,
            reason,
            self.queue.counts().lost_in_flight,
        );
        self.client
            .publish(self.status_topic.as_str(), QoS::AtLeastOnce, true, bytes)
            .await
    }
}

/// A batch's bytes: binary, or JSON.
fn encode(batch: &Batch, binary: bool) -> Vec<u8> {
    if binary {
        // Fails only for a robot name over 65535 bytes, which the configuration refuses,
        // or a recipe no controller accepts; JSON carries the batch then.
        batch.to_binary().unwrap_or_else(|_| batch.to_json())
    } else {
        batch.to_json()
    }
}
