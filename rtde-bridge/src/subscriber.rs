//! The subscriber side: batches and statuses read back from the broker, with every
//! robot's sequence numbers checked. Sparkplug B messages (on `spBv1.0/...`) are read
//! into the same batches and statuses ([`crate::sparkplug::Reader`]).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rumqttc::{Client, Connection, ConnectionError, Event, MqttOptions, Packet, QoS};

use crate::error::BrokerError;
use crate::payload::{self, Batch};
use crate::sparkplug;
use crate::tls::Tls;

pub use crate::payload::Message;

/// Why a subscriber could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubscriberError {
    /// The broker did not accept the connection and subscription in time.
    #[error("cannot subscribe at {}://{host}:{port}: {why}", if *tls { "mqtts" } else { "mqtt" })]
    Unreachable {
        /// Whether over TLS.
        tls: bool,
        /// The broker's host.
        host: String,
        /// The broker's port.
        port: u16,
        /// The last error.
        why: String,
    },
    /// The reading thread could not be started.
    #[error("cannot start the subscriber")]
    Start(#[source] std::io::Error),
}

/// A connection to the broker that reads batches and statuses, reconnecting after
/// outages; its session is persistent, so what is published while it reconnects is kept
/// for it by the broker. Each outage arrives among the messages as
/// [`Message::BrokerLost`], then [`Message::BrokerBack`], which says whether the broker
/// still had the session.
///
/// ```no_run
/// use std::time::Duration;
/// use rtde_bridge::{Message, Subscriber};
///
/// let sub = Subscriber::connect("127.0.0.1", 1883, "recorder", &["rtde/#".into()], Duration::from_secs(5))?;
/// while let Some(message) = sub.recv_timeout(Duration::from_secs(1)) {
///     if let Message::Batch { batch, .. } = message {
///         println!("{}: packages {}..{}", batch.robot, batch.first, batch.first + batch.count() as u64);
///     }
/// }
/// # Ok::<(), rtde_bridge::SubscriberError>(())
/// ```
pub struct Subscriber {
    client: Client,
    messages: Receiver<Message>,
    seq_gaps: Arc<AtomicU64>,
    redelivered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber").finish_non_exhaustive()
    }
}

impl Subscriber {
    /// Connects as `client_id`, subscribes to `filters` with QoS 1, and waits (at most
    /// `timeout`) for the broker to confirm.
    ///
    /// # Errors
    /// [`SubscriberError::Unreachable`]; [`SubscriberError::Start`].
    pub fn connect(
        host: &str,
        port: u16,
        client_id: &str,
        filters: &[String],
        timeout: Duration,
    ) -> Result<Subscriber, SubscriberError> {
        Subscriber::connect_any(&[(host.to_owned(), port)], client_id, filters, timeout)
    }

    /// [`Subscriber::connect`] to the nodes of a broker cluster, `(host, port)` each: to
    /// the first that answers, and when a connection breaks to the next, round the list,
    /// with the persistent session kept (a cluster that replicates sessions resumes it on
    /// any node).
    ///
    /// # Errors
    /// [`SubscriberError::Unreachable`] (naming the first node); [`SubscriberError::Start`].
    pub fn connect_any(
        nodes: &[(String, u16)],
        client_id: &str,
        filters: &[String],
        timeout: Duration,
    ) -> Result<Subscriber, SubscriberError> {
        Subscriber::start(nodes, None, client_id, filters, timeout)
    }

    /// [`Subscriber::connect_any`] over TLS (`mqtts://`), trusting the authorities of
    /// `tls`, as the bridge does with the same [`Tls`] (the `tls` feature).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use rtde_bridge::{Subscriber, Tls};
    ///
    /// let plant = Tls::read_ca_file("plant-ca.pem".as_ref())?;
    /// let sub = Subscriber::connect_tls(
    ///     &[("10.0.0.5".into(), 8883)],
    ///     &plant,
    ///     "recorder",
    ///     &["rtde/#".into()],
    ///     Duration::from_secs(5),
    /// )?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SubscriberError::Unreachable`] (naming the first node; a certificate the
    /// authorities did not sign among the reasons); [`SubscriberError::Start`].
    #[cfg(feature = "tls")]
    pub fn connect_tls(
        nodes: &[(String, u16)],
        tls: &Tls,
        client_id: &str,
        filters: &[String],
        timeout: Duration,
    ) -> Result<Subscriber, SubscriberError> {
        Subscriber::start(nodes, Some(tls), client_id, filters, timeout)
    }

    fn start(
        nodes: &[(String, u16)],
        tls: Option<&Tls>,
        client_id: &str,
        filters: &[String],
        timeout: Duration,
    ) -> Result<Subscriber, SubscriberError> {
        let (host, port) = nodes.first().cloned().unwrap_or(("127.0.0.1".into(), 1883));
        let host = host.as_str();
        let nodes: Vec<MqttOptions> = nodes
            .iter()
            .map(|(host, port)| {
                let mut options = MqttOptions::new(client_id, host, *port);
                options
                    .set_clean_session(false)
                    .set_keep_alive(Duration::from_secs(5))
                    .set_max_packet_size(64 * 1024 * 1024, 64 * 1024 * 1024)
                    .set_inflight(1000);
                #[cfg(feature = "tls")]
                if let Some(tls) = tls {
                    tls.apply(&mut options);
                }
                options
            })
            .collect();
        let options = nodes
            .first()
            .cloned()
            .unwrap_or_else(|| MqttOptions::new(client_id, host, port));
        let (client, connection) = Client::new(options, 1024);
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let stop = Arc::new(AtomicBool::new(false));
        let seq_gaps = Arc::new(AtomicU64::new(0));
        let redelivered = Arc::new(AtomicU64::new(0));
        let thread = {
            let listener = Listener {
                client: client.clone(),
                filters: filters.to_vec(),
                nodes,
                node: 0,
                tx,
                ready: Some(ready_tx),
                sparkplug: sparkplug::Reader::default(),
                seq_gaps: Arc::clone(&seq_gaps),
                redelivered: Arc::clone(&redelivered),
                connections: 0,
                connected: false,
            };
            let stop = Arc::clone(&stop);
            thread::Builder::new()
                .name("rtde-subscriber".into())
                .spawn(move || listener.run(connection, &stop))
                .map_err(SubscriberError::Start)?
        };
        if let Err(why) = wait_until_ready(&ready_rx, timeout) {
            stop.store(true, Ordering::Relaxed);
            let _ = client.try_disconnect();
            return Err(SubscriberError::Unreachable {
                tls: tls.is_some(),
                host: host.to_owned(),
                port,
                why,
            });
        }
        Ok(Subscriber {
            client,
            messages: rx,
            seq_gaps,
            redelivered,
            stop,
            thread: Some(thread),
        })
    }

    /// The next message, waiting at most `timeout`.
    #[must_use]
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Message> {
        self.messages.recv_timeout(timeout).ok()
    }

    /// Sparkplug B messages read so far whose `seq` did not follow their edge node's
    /// previous message ([`sparkplug::Reader::seq_gaps`]): messages lost on the way.
    #[must_use]
    pub fn sparkplug_seq_gaps(&self) -> u64 {
        self.seq_gaps.load(Ordering::Relaxed)
    }

    /// Publications the broker sent again, marked with MQTT's DUP flag: ones it had sent
    /// before without keeping the acknowledgement (after this subscriber's reconnection,
    /// or a cluster's failover of the subscription's state). Each may be a duplicate the
    /// bridge did not make.
    #[must_use]
    pub fn redelivered(&self) -> u64 {
        self.redelivered.load(Ordering::Relaxed)
    }

    /// Disconnects; the broker keeps the session (and queues for it) until it expires.
    pub fn close(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.client.try_disconnect();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits at most `timeout` for the reading thread to say the subscription is in place;
/// the error is the last reason it gave, or that none came.
fn wait_until_ready(ready: &Receiver<Result<(), String>>, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let mut why = format!("no answer within {timeout:?}");
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match ready.recv_timeout(left) {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => why = e,
            Err(_) => return Err(why),
        }
    }
}

/// The subscriber's reading thread: turns the broker's events into [`Message`]s.
struct Listener {
    client: Client,
    filters: Vec<String>,
    /// The broker's nodes, and the one connected to (or tried next).
    nodes: Vec<MqttOptions>,
    node: usize,
    tx: mpsc::Sender<Message>,
    /// Told once, when the first subscription is confirmed (or why not yet).
    ready: Option<mpsc::Sender<Result<(), String>>>,
    /// Sparkplug B data is read through the births seen before it.
    sparkplug: sparkplug::Reader,
    seq_gaps: Arc<AtomicU64>,
    redelivered: Arc<AtomicU64>,
    connections: u64,
    /// Outages are said once each: at the first error after a connection.
    connected: bool,
}

impl Listener {
    /// Reads `connection` until `stop` or until the [`Subscriber`] is gone.
    fn run(mut self, mut connection: Connection, stop: &AtomicBool) {
        // `recv` as `iter` does, with the connection free between events to change node.
        while let Ok(event) = connection.recv() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let failed = event.is_err();
            if self.handle(event).is_break() {
                return;
            }
            if failed && self.nodes.len() > 1 {
                self.node = (self.node + 1) % self.nodes.len();
                connection.eventloop.mqtt_options = self.nodes[self.node].clone();
            }
        }
    }

    /// Breaks once no one reads the messages any more.
    fn handle(&mut self, event: Result<Event, ConnectionError>) -> ControlFlow<()> {
        if let Ok(Event::Incoming(Packet::Publish(p))) = &event
            && p.dup
        {
            self.redelivered.fetch_add(1, Ordering::Relaxed);
        }
        match event {
            Ok(Event::Incoming(Packet::ConnAck(ack))) => self.connected(ack.session_present),
            Ok(Event::Incoming(Packet::SubAck(_))) => {
                if let Some(r) = self.ready.take() {
                    let _ = r.send(Ok(()));
                }
                ControlFlow::Continue(())
            }
            Ok(Event::Incoming(Packet::Publish(p)))
                if p.topic.split('/').next() == Some(sparkplug::NAMESPACE) =>
            {
                self.sparkplug(&p.topic, &p.payload)
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                let topic = p.topic.clone();
                self.send(read(topic, &p.payload, p.retain))
            }
            Ok(_) => ControlFlow::Continue(()),
            Err(e) => self.lost(&e),
        }
    }

    fn connected(&mut self, session_kept: bool) -> ControlFlow<()> {
        // Again after every reconnection: a broker that lost the session has lost the
        // subscriptions too.
        for f in &self.filters {
            let _ = self.client.try_subscribe(f.clone(), QoS::AtLeastOnce);
        }
        self.connections += 1;
        self.connected = true;
        if self.connections > 1 {
            return self.send(Message::BrokerBack { session_kept });
        }
        ControlFlow::Continue(())
    }

    fn sparkplug(&mut self, topic: &str, payload: &[u8]) -> ControlFlow<()> {
        let read = self.sparkplug.read(topic, payload);
        self.seq_gaps
            .store(self.sparkplug.seq_gaps(), Ordering::Relaxed);
        match read {
            sparkplug::Read::Message(m) => self.send(m),
            sparkplug::Read::AskRebirth { topic, payload } => {
                let _ = self
                    .client
                    .try_publish(topic, QoS::AtMostOnce, false, payload);
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Continue(()),
        }
    }

    fn lost(&mut self, e: &ConnectionError) -> ControlFlow<()> {
        let (host, port) = self
            .nodes
            .get(self.node)
            .map_or_else(|| (String::new(), 0), MqttOptions::broker_address);
        let why = BrokerError::of(e, (&host, port));
        if self.connected && self.ready.is_none() {
            let lost = Message::BrokerLost {
                why: why.to_string(),
            };
            if self.send(lost).is_break() {
                return ControlFlow::Break(());
            }
        } else if let Some(r) = &self.ready {
            let _ = r.send(Err(why.at_start()));
        }
        self.connected = false;
        thread::sleep(Duration::from_millis(50));
        ControlFlow::Continue(())
    }

    fn send(&self, message: Message) -> ControlFlow<()> {
        if self.tx.send(message).is_err() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

fn read(topic: String, bytes: &[u8], retained: bool) -> Message {
    if bytes.first() == Some(&b'{')
        && let Ok((robot, online, reason)) = payload::decode_status(bytes)
    {
        return Message::Status {
            topic,
            robot,
            online,
            reason,
            retained,
        };
    }
    match payload::decode(bytes) {
        Ok(batch) => Message::Batch { topic, batch },
        Err(e) => Message::Unreadable {
            topic,
            why: e.to_string(),
        },
    }
}

/// What [`SequenceCheck::check`] found about a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The next packages, with `gap` packages missing before them, of which the bridge
    /// counted `dropped` as dropped from its queue.
    New {
        /// Packages missing between the previous batch and this one.
        gap: u64,
        /// How much the bridge's drop count grew meanwhile.
        dropped: u64,
    },
    /// Packages already seen (QoS 1 delivers at least once; a bridge that failed over to
    /// another broker node re-sends what the dead node had not acknowledged): neither a
    /// gap nor a loss, counted apart.
    Duplicate,
    /// Packages that arrived after later ones, filling a gap counted before: no longer
    /// missing.
    Late,
}

/// What a subscriber got, over all robots ([`SequenceCheck::summary`]): packages
/// delivered, duplicate batches left out, and packages missing that the bridge's drop
/// counts do not explain.
///
/// ```
/// let summary = rtde_bridge::subscriber::Summary { delivered: 1200, duplicates: 3, unexplained: 0 };
/// assert_eq!(
///     summary.to_string(),
///     "1200 packages delivered, 3 duplicate batches left out, 0 packages in unexplained gaps"
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Packages received, each once.
    pub delivered: u64,
    /// Batches seen again, left out.
    pub duplicates: u64,
    /// Packages missing that the bridge did not count as dropped.
    pub unexplained: u64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} packages delivered, {} duplicate batches left out, {} packages in unexplained gaps",
            self.delivered, self.duplicates, self.unexplained
        )
    }
}

/// The most gaps a robot's check remembers, to recognise a batch that fills one later;
/// older ones stay counted as missing.
const REMEMBERED_GAPS: usize = 1024;

/// Checks each robot's package numbers: gaps, what the bridge's drop count explains of
/// them, duplicates.
///
/// A robot's count starts at the first batch seen of each bridge session: a subscriber
/// that joins late (or comes back after leaving) expects nothing published before it,
/// and reports none of it missing. From there on every package number is accounted for.
///
/// ```
/// # use std::sync::Arc;
/// # use rtde_bridge::payload::Batch;
/// # use rtde_bridge::subscriber::{SequenceCheck, Verdict};
/// # let stream = Arc::new(rtde_record::capture::Header {
/// #     protocol: rtde_core::protocol::ProtocolVersion::V2,
/// #     controller: rtde_core::fields::ControllerVersion::new(5, 21, 0, 0),
/// #     frequency: 500.0, recipe_id: Some(1), started_unix_micros: 0,
/// #     fields: vec![rtde_core::fields::lookup(rtde_core::fields::Direction::Output, "timestamp").unwrap()],
/// # });
/// let batch = |first: u64, dropped: u64| Batch {
///     robot: "a".into(), session: 1, seq: 0, first, dropped, skipped: 0, lost: 0,
///     t0_unix_us: 0, t0_timestamp: 0.0, stream: stream.clone(), payloads: vec![0; 16],
/// };
/// let mut check = SequenceCheck::default();
/// // Joined while the bridge was at package 100: the count starts there.
/// assert_eq!(check.check(&batch(100, 5)), Verdict::New { gap: 0, dropped: 0 });
/// assert_eq!(check.check(&batch(100, 5)), Verdict::Duplicate);
/// assert_eq!(check.check(&batch(110, 13)), Verdict::New { gap: 8, dropped: 8 });
/// assert_eq!(check.unexplained(), 0);
/// // A gap the bridge did not count.
/// assert_eq!(check.check(&batch(120, 13)), Verdict::New { gap: 8, dropped: 0 });
/// assert_eq!(check.unexplained(), 8);
/// ```
#[derive(Debug, Default)]
pub struct SequenceCheck {
    robots: HashMap<String, Track>,
}

#[derive(Debug)]
struct Track {
    session: u64,
    next: u64,
    /// The bridge's drop count at the first batch seen, and at the latest.
    dropped_before: u64,
    dropped: u64,
    packages: u64,
    gaps: u64,
    duplicates: u64,
    /// The gaps not filled yet, oldest first, as package number ranges.
    missing: std::collections::VecDeque<std::ops::Range<u64>>,
}

impl Track {
    /// A robot's session as first seen in `batch`: nothing before it is expected.
    fn from(batch: &Batch) -> Track {
        Track {
            session: batch.session,
            next: batch.first,
            dropped_before: batch.dropped,
            dropped: batch.dropped,
            packages: 0,
            gaps: 0,
            duplicates: 0,
            missing: std::collections::VecDeque::new(),
        }
    }

    /// Takes `packages` out of a gap that holds all of them: true if one did.
    fn fill(&mut self, packages: std::ops::Range<u64>) -> bool {
        let Some(i) = self
            .missing
            .iter()
            .position(|gap| gap.start <= packages.start && packages.end <= gap.end)
        else {
            return false;
        };
        let gap = self.missing.remove(i).unwrap_or_default();
        let after = packages.end..gap.end;
        if !after.is_empty() {
            self.missing.insert(i, after);
        }
        let before = gap.start..packages.start;
        if !before.is_empty() {
            self.missing.insert(i, before);
        }
        self.gaps -= packages.end - packages.start;
        self.packages += packages.end - packages.start;
        true
    }

    /// Missing packages beyond what the bridge counted as dropped since the first batch.
    /// Compared in total, not gap by gap: a loss the bridge learns of late (publications
    /// lost with a broken broker connection) is counted in the batches after its gap.
    fn unexplained(&self) -> u64 {
        self.gaps
            .saturating_sub(self.dropped.saturating_sub(self.dropped_before))
    }
}

impl SequenceCheck {
    /// Checks `batch` against the robot's previous ones. The first batch of a robot's
    /// session (the first seen, or one of a restarted bridge) starts its count.
    pub fn check(&mut self, batch: &Batch) -> Verdict {
        let t = self
            .robots
            .entry(batch.robot.clone())
            .or_insert_with(|| Track::from(batch));
        if t.session != batch.session {
            *t = Track::from(batch);
        }
        let count = batch.count() as u64;
        if batch.first < t.next {
            if t.fill(batch.first..batch.first + count) {
                return Verdict::Late;
            }
            t.duplicates += 1;
            return Verdict::Duplicate;
        }
        let gap = batch.first - t.next;
        if gap > 0 {
            if t.missing.len() == REMEMBERED_GAPS {
                t.missing.pop_front();
            }
            t.missing.push_back(t.next..batch.first);
        }
        let dropped = batch.dropped.saturating_sub(t.dropped);
        t.gaps += gap;
        t.dropped = t.dropped.max(batch.dropped);
        t.next = batch.first + count;
        t.packages += count;
        Verdict::New { gap, dropped }
    }

    /// Packages received, per robot.
    #[must_use]
    pub fn packages(&self, robot: &str) -> u64 {
        self.robots.get(robot).map_or(0, |t| t.packages)
    }

    /// Packages missing since the robot's first batch seen, per robot.
    #[must_use]
    pub fn gaps(&self, robot: &str) -> u64 {
        self.robots.get(robot).map_or(0, |t| t.gaps)
    }

    /// Duplicate batches, per robot.
    #[must_use]
    pub fn duplicates(&self, robot: &str) -> u64 {
        self.robots.get(robot).map_or(0, |t| t.duplicates)
    }

    /// Packages missing that the bridge's drop counts do not explain, over all robots:
    /// 0 unless something lost data silently.
    #[must_use]
    pub fn unexplained(&self) -> u64 {
        self.robots.values().map(Track::unexplained).sum()
    }

    /// Over all robots: packages delivered, duplicate batches, packages in unexplained
    /// gaps.
    #[must_use]
    pub fn summary(&self) -> Summary {
        Summary {
            delivered: self.robots.values().map(|t| t.packages).sum(),
            duplicates: self.robots.values().map(|t| t.duplicates).sum(),
            unexplained: self.unexplained(),
        }
    }

    /// The robots seen, sorted.
    #[must_use]
    pub fn robots(&self) -> Vec<&str> {
        let mut r: Vec<&str> = self.robots.keys().map(String::as_str).collect();
        r.sort_unstable();
        r
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A batch of 10 packages of robot `a` from package `first`, with the bridge's drop
    /// count at `dropped`.
    fn batch(session: u64, first: u64, dropped: u64) -> Batch {
        Batch {
            robot: "a".into(),
            session,
            seq: first / 10,
            first,
            dropped,
            skipped: 0,
            lost: 0,
            t0_unix_us: 0,
            t0_timestamp: 0.0,
            stream: Arc::new(crate::fixtures::timestamp_stream()),
            payloads: vec![0; 80],
        }
    }

    #[test]
    fn a_subscriber_that_joins_late_expects_nothing_from_before_its_first_batch() {
        let mut check = SequenceCheck::default();
        // The bridge had published 19,920 packages and dropped 30 before this one.
        for first in (19_920..20_000).step_by(10) {
            assert_eq!(
                check.check(&batch(1, first, 30)),
                Verdict::New { gap: 0, dropped: 0 }
            );
        }
        assert_eq!(
            (check.packages("a"), check.gaps("a"), check.unexplained()),
            (80, 0, 0)
        );
    }

    #[test]
    fn a_restarted_bridge_is_counted_from_its_first_batch_seen() {
        let mut check = SequenceCheck::default();
        check.check(&batch(1, 0, 0));
        check.check(&batch(1, 10, 0));
        // The bridge restarted; the subscriber was away while it began.
        assert_eq!(
            check.check(&batch(2, 500, 0)),
            Verdict::New { gap: 0, dropped: 0 }
        );
        check.check(&batch(2, 510, 0));
        assert_eq!(
            (check.packages("a"), check.gaps("a"), check.unexplained()),
            (20, 0, 0)
        );
    }

    #[test]
    fn a_gap_the_bridge_did_not_count_after_a_late_join_is_unexplained() {
        let mut check = SequenceCheck::default();
        check.check(&batch(1, 500, 7));
        // Ten packages missing, five counted as dropped.
        assert_eq!(
            check.check(&batch(1, 520, 12)),
            Verdict::New {
                gap: 10,
                dropped: 5
            }
        );
        assert_eq!((check.gaps("a"), check.unexplained()), (10, 5));
    }

    #[test]
    fn a_loss_counted_in_the_batch_after_its_gap_explains_it() {
        let mut check = SequenceCheck::default();
        check.check(&batch(1, 0, 0));
        // Lost in flight: the batch after the gap was stamped before the bridge knew.
        check.check(&batch(1, 20, 0));
        assert_eq!(check.unexplained(), 10);
        check.check(&batch(1, 30, 10));
        assert_eq!((check.gaps("a"), check.unexplained()), (10, 0));
    }

    #[test]
    fn a_batch_seen_twice_is_a_duplicate_and_neither_a_gap_nor_a_loss() {
        let mut check = SequenceCheck::default();
        for first in [0, 10, 20, 10, 20, 30, 0] {
            check.check(&batch(1, first, 0));
        }
        assert_eq!(
            check.summary(),
            Summary {
                delivered: 40,
                duplicates: 3,
                unexplained: 0
            }
        );
        assert_eq!(check.gaps("a"), 0);
    }

    #[test]
    fn a_batch_that_arrives_after_later_ones_fills_its_gap_and_is_no_duplicate() {
        let mut check = SequenceCheck::default();
        check.check(&batch(1, 0, 0));
        check.check(&batch(1, 30, 0));
        assert_eq!((check.gaps("a"), check.unexplained()), (20, 20));
        assert_eq!(check.check(&batch(1, 20, 0)), Verdict::Late);
        assert_eq!(check.check(&batch(1, 10, 0)), Verdict::Late);
        // Now seen: again, a duplicate.
        assert_eq!(check.check(&batch(1, 10, 0)), Verdict::Duplicate);
        assert_eq!(
            check.summary(),
            Summary {
                delivered: 40,
                duplicates: 1,
                unexplained: 0
            }
        );
    }
}
