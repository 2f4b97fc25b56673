//! The broker connection's bookkeeping, whichever format the bridge publishes: what the
//! MQTT event loop has seen ([`poll`]), shared with the handle ([`BrokerState`]): whether
//! the connection is up, how many were made, why the last one failed, what was written
//! and acknowledged, and the publications lost in flight with each robot's share.
//!
//! What the formats decide for themselves stays with them: which publications a broken
//! connection took with it (the JSON and binary client keeps a persistent session, so the
//! ones the broker did not acknowledge are lost only if it comes back without it;
//! Sparkplug B opens a new client for each connection, so what the old one had not
//! written is lost at once), births, `seq` and `bdSeq`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rumqttc::{ConnAck, ConnectionError, Event, EventLoop, MqttOptions, Outgoing, Packet, Publish};
use tokio::sync::Notify;

use crate::config::Broker;
use crate::error::BrokerError;
use crate::payload;
use crate::queue::RobotQueue;

/// What one publication handed to the MQTT client carries that a lost connection can take
/// with it: a robot's batch, and its packages. `None` for a status, a birth or a death,
/// which the bridge publishes again.
pub(crate) type Carried = Option<(Arc<RobotQueue>, u64)>;

/// What the broker side has seen, shared by the event loop and the handle.
#[derive(Debug, Default)]
pub(crate) struct BrokerState {
    pub(crate) connected: AtomicBool,
    pub(crate) connections: AtomicU64,
    /// The broker node the bridge connects to, as an index into the configured nodes.
    pub(crate) node: AtomicUsize,
    /// Connections accepted by another node than the one before.
    pub(crate) failovers: AtomicU64,
    /// The node of the last accepted connection.
    last_accepted: AtomicUsize,
    /// Publications written on the current connection (any QoS).
    written: AtomicU64,
    /// QoS 1 publications written on the current connection, and acknowledged.
    pub(crate) sent: AtomicU64,
    pub(crate) acked: AtomicU64,
    /// Notified at each acknowledgement.
    acks: Notify,
    /// Publications the MQTT client held when a connection broke and that no connection
    /// will deliver: lost, and counted.
    pub(crate) lost_with_session: AtomicU64,
    /// Publications the MQTT client re-sent (DUP) on a connection that resumed the
    /// session: what the broker had not acknowledged when the connection before broke.
    pub(crate) resent: AtomicU64,
    /// Each robot's queue by its data topic, so that a JSON or binary publication lost in
    /// flight is counted against its robot.
    pub(crate) data_topics: Mutex<HashMap<String, Arc<RobotQueue>>>,
    pub(crate) last_error: Mutex<Option<BrokerError>>,
    pub(crate) connack: Notify,
    /// Reconnections to a broker that had no session of ours: a broker that lost its
    /// state, whose retained statuses may be gone too. The bridge and every robot then
    /// announce theirs again.
    pub(crate) fresh_sessions: AtomicU64,
    pub(crate) fresh_session: Notify,
}

impl BrokerState {
    /// The broker accepted a connection. `lost`, what the client held from the
    /// connections before that this one will not deliver, is counted first, so whoever
    /// sees the connection up sees the losses too; then the connection is counted, with
    /// nothing written on it yet, and up.
    pub(crate) fn accepted(&self, lost: impl IntoIterator<Item = Carried>) {
        self.lost_in_flight(lost);
        let node = self.node.load(Ordering::Relaxed);
        if self.was_connected() && self.last_accepted.swap(node, Ordering::Relaxed) != node {
            self.failovers.fetch_add(1, Ordering::Relaxed);
        }
        self.connections.fetch_add(1, Ordering::Relaxed);
        self.written.store(0, Ordering::Relaxed);
        self.sent.store(0, Ordering::Relaxed);
        self.acked.store(0, Ordering::Relaxed);
        self.connected.store(true, Ordering::Relaxed);
    }

    /// A connection to the current node failed: the next of `nodes` is tried, round the
    /// list (the same one when there is one). Its index.
    pub(crate) fn fail_over(&self, nodes: usize) -> usize {
        let next = (self.node.load(Ordering::Relaxed) + 1) % nodes.max(1);
        self.node.store(next, Ordering::Relaxed);
        next
    }

    /// Whether a connection was accepted before.
    pub(crate) fn was_connected(&self) -> bool {
        self.connections.load(Ordering::Relaxed) > 0
    }

    /// Publications written on the current connection so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// `held` was lost with a broken connection: each publication counted, and the
    /// packages of each batch against its robot.
    pub(crate) fn lost_in_flight(&self, held: impl IntoIterator<Item = Carried>) {
        for carried in held {
            self.lost_with_session.fetch_add(1, Ordering::Relaxed);
            if let Some((queue, packages)) = carried {
                queue.lost_in_flight(packages);
            }
        }
    }

    /// What a JSON or binary publication carries: a batch on a robot's data topic, its
    /// packages; anything else (a status) nothing.
    pub(crate) fn carried_by(&self, publication: &Publish) -> Carried {
        let robots = self
            .data_topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let queue = robots.get(publication.topic.as_str())?;
        let batch = payload::decode(&publication.payload).ok()?;
        Some((Arc::clone(queue), batch.count() as u64))
    }

    /// The connection failed: why, said before the state says so, so whoever sees it
    /// down reads this failure and not the one before.
    pub(crate) fn failed(&self, why: BrokerError) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
        self.connected.store(false, Ordering::Relaxed);
    }

    /// Waits for the next acknowledgement; registered when this is called, so an
    /// acknowledgement of a publication made after it is not missed.
    pub(crate) fn next_ack(&self) -> impl Future<Output = ()> + '_ {
        let mut ack = Box::pin(self.acks.notified());
        ack.as_mut().enable();
        ack
    }

    /// Waits for the next reconnection to a broker without our session, unless one came
    /// since `seen` (a count of them); the count now.
    pub(crate) async fn fresh_session_since(&self, seen: u64) -> u64 {
        let fresh = self.fresh_session.notified();
        tokio::pin!(fresh);
        // Registered before the count is read, so a reconnection between the two wakes it.
        fresh.as_mut().enable();
        let now = self.fresh_sessions.load(Ordering::Relaxed);
        if now != seen {
            return now;
        }
        fresh.await;
        self.fresh_sessions.load(Ordering::Relaxed)
    }
}

/// The MQTT options both formats start from for node `node` of the configured broker and
/// session `session` ([`Broker::session_client_id`]): the client id, the address, the
/// keep-alive, the packet size, the credentials and TLS. Each format adds its session and
/// will.
pub(crate) fn options_for(b: &Broker, node: usize, session: usize) -> MqttOptions {
    let (host, port) = b
        .nodes
        .get(node)
        .cloned()
        .unwrap_or((b.host.clone(), b.port));
    let mut options = MqttOptions::new(b.session_client_id(session), host, port);
    options
        .set_keep_alive(b.keep_alive)
        .set_max_packet_size(MAX_PACKET, MAX_PACKET);
    if let Some((user, password)) = &b.credentials {
        options.set_credentials(user.clone(), password.clone());
    }
    #[cfg(feature = "tls")]
    if let Some(tls) = &b.tls {
        tls.apply(&mut options);
    }
    options
}

/// The longest packet the bridge sends or accepts: a batch of 10,000 packages fits.
const MAX_PACKET: usize = 64 * 1024 * 1024;

/// What a poll of the event loop brought that the format acts on, once [`poll`] has kept
/// the books.
#[derive(Debug)]
pub(crate) enum Polled {
    /// The broker accepted the connection: the format calls [`BrokerState::accepted`]
    /// with what it lost.
    Accepted(ConnAck),
    /// A publication from the broker.
    Publication(Publish),
    /// The connection failed (or never came up), recorded with why.
    Failed(ConnectionError, BrokerError),
    /// The event loop is done: the bridge disconnected (and the DISCONNECT is seen out),
    /// or dropped the client.
    Ended,
    /// Nothing for the format.
    Nothing,
}

/// Polls the event loop once and keeps the books: publications written and
/// acknowledged, a failure and why, the connection down at a DISCONNECT.
pub(crate) async fn poll(eventloop: &mut EventLoop, broker: &BrokerState) -> Polled {
    match eventloop.poll().await {
        Ok(Event::Incoming(Packet::ConnAck(ack))) => Polled::Accepted(ack),
        Ok(Event::Incoming(Packet::Publish(p))) => Polled::Publication(p),
        Ok(Event::Outgoing(Outgoing::Publish(pkid))) => {
            broker.written.fetch_add(1, Ordering::Relaxed);
            // QoS 0 publications have packet id 0 and no acknowledgement.
            if pkid != 0 {
                broker.sent.fetch_add(1, Ordering::Relaxed);
            }
            Polled::Nothing
        }
        Ok(Event::Incoming(Packet::PubAck(_))) => {
            broker.acked.fetch_add(1, Ordering::Relaxed);
            broker.acks.notify_waiters();
            Polled::Nothing
        }
        Ok(Event::Outgoing(Outgoing::Disconnect)) => {
            broker.connected.store(false, Ordering::Relaxed);
            finish_disconnect(eventloop).await;
            Polled::Ended
        }
        Ok(_) => Polled::Nothing,
        Err(ConnectionError::RequestsDone) => Polled::Ended,
        Err(e) => {
            let (host, port) = eventloop.mqtt_options.broker_address();
            let why = BrokerError::of(&e, (&host, port));
            broker.failed(why.clone());
            Polled::Failed(e, why)
        }
    }
}

/// After the event loop sent DISCONNECT: polls on until the broker closes the
/// connection (a second at most), so the DISCONNECT and anything still buffered are
/// written.
async fn finish_disconnect(eventloop: &mut EventLoop) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while eventloop.poll().await.is_ok() {}
    })
    .await;
}

#[cfg(test)]
mod tests {
    use rumqttc::QoS;

    use super::*;
    use crate::queue::Out;

    fn queue(name: &str) -> Arc<RobotQueue> {
        Arc::new(RobotQueue::new(
            name.into(),
            1,
            10,
            Duration::from_millis(10),
            100,
            Duration::from_millis(2),
        ))
    }

    #[test]
    fn losses_are_counted_before_the_connection_is_up_each_batch_against_its_robot() {
        let broker = BrokerState::default();
        let (a, b) = (queue("a"), queue("b"));
        let held = [
            None,
            Some((Arc::clone(&a), 5)),
            Some((Arc::clone(&b), 2)),
            Some((Arc::clone(&a), 3)),
        ];
        broker.accepted(held);
        assert_eq!(broker.lost_with_session.load(Ordering::Relaxed), 4);
        assert_eq!(a.counts().lost_in_flight, 8);
        assert_eq!(b.counts().lost_in_flight, 2);
        assert!(broker.connected.load(Ordering::Relaxed));
        assert_eq!(broker.connections.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_json_publication_carries_its_batch_only_on_its_robots_data_topic() {
        let broker = BrokerState::default();
        let robot = queue("arm");
        broker
            .data_topics
            .lock()
            .unwrap()
            .insert("rtde/arm/data".into(), Arc::clone(&robot));
        robot.online(crate::fixtures::timestamp_stream());
        for t in [0.0, 0.002, 0.004] {
            robot.push(&f64::to_be_bytes(t), 1, 0, 0);
        }
        robot.close();
        let batch = std::iter::from_fn(|| robot.take().ok().flatten())
            .find_map(|out| match out {
                Out::Batch(batch) => Some(batch),
                Out::Status { .. } => None,
            })
            .unwrap();
        assert_eq!(batch.count(), 3);
        let carried = |topic: &str, bytes: Vec<u8>| {
            broker
                .carried_by(&Publish::new(topic, QoS::AtLeastOnce, bytes))
                .map(|(q, n)| (q.name.clone(), n))
        };
        assert_eq!(
            carried("rtde/arm/data", batch.to_json()),
            Some(("arm".into(), 3))
        );
        // Only a robot's data topic carries its packages, whatever the bytes.
        assert_eq!(carried("rtde/arm/status", batch.to_json()), None);
        assert_eq!(carried("rtde/arm/data", b"{}".to_vec()), None);
    }
}
