//! The bridge as a Sparkplug B edge node: one MQTT connection at a time, each with a
//! clean session and its own `bdSeq` in its will (NDEATH); after every connection the
//! node birth, then the births of the robots streaming, before any data; one task
//! publishes everything, so `seq` follows the publish order exactly.
//!
//! Each connection is a new MQTT client. What the old one still held dies with it (QoS 0
//! promises no more; it is counted in [`crate::Counts::lost_with_session`]), and nothing
//! of an old connection can reach the broker after the new one's births.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rumqttc::{AsyncClient, ConnectionError, EventLoop, LastWill, MqttOptions, QoS};
use tokio::runtime::Runtime;
use tokio::sync::{Notify, mpsc};

use super::device::{self, Device};
use super::proto::Payload;
use super::topic;
use crate::backoff::{self, Backoff};
use crate::broker::{self, BrokerState, Carried, Polled};
use crate::config::{Config, Sparkplug};
use crate::error::{BrokerError, Error};
use crate::queue::{Out, RobotQueue};
use crate::robot::unix_us;

/// Requests that may wait for the MQTT event loop.
const REQUESTS: usize = 64;

fn now_ms() -> u64 {
    u64::try_from(unix_us() / 1000).unwrap_or(0)
}

/// What a connection's event loop tells the node.
#[derive(Debug)]
enum LinkEvent {
    Connected,
    Rebirth,
    /// The connection ended (or never came up), with why.
    Lost(BrokerError),
}

/// One MQTT connection of the node.
struct Link {
    client: AsyncClient,
    events: mpsc::UnboundedReceiver<LinkEvent>,
    /// Publications handed to the client.
    accepted: u64,
    /// The publications not yet known written, oldest first, with what each carries.
    unwritten: VecDeque<Carried>,
}

impl Link {
    /// Drops from `unwritten` what the event loop has `written` (of this link's
    /// publications) by now.
    fn forget_written(&mut self, written: u64) {
        let written = written.min(self.accepted);
        let known = self.accepted - self.unwritten.len() as u64;
        for _ in known..written {
            self.unwritten.pop_front();
        }
    }
}

/// The edge node: its identity, its counters, its devices.
pub(crate) struct Node {
    group_id: String,
    edge_node_id: String,
    /// One per node of the broker, in the configured order.
    options: Vec<MqttOptions>,
    /// Whether a connection was tried before: each try after the first goes to the next
    /// node.
    tried: bool,
    broker: Arc<BrokerState>,
    /// The `bdSeq` of the next MQTT CONNECT.
    bd_seq: u8,
    /// The `seq` of the next message.
    seq: u8,
    link: Option<(Link, u8)>,
    devices: Vec<Device>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("group_id", &self.group_id)
            .field("edge_node_id", &self.edge_node_id)
            .finish_non_exhaustive()
    }
}

impl Node {
    /// Connects for the first time (waiting at most `timeout`).
    pub(crate) fn connect(
        runtime: &Runtime,
        config: &Config,
        sp: &Sparkplug,
        session: u64,
        broker: Arc<BrokerState>,
        url: &str,
        timeout: Duration,
    ) -> Result<Node, Error> {
        let b = &config.broker;
        let options: Vec<MqttOptions> = (0..b.nodes.len().max(1))
            .map(|i| {
                let mut options = broker::options_for(b, i, 0);
                // The specification's rule for MQTT 3.1.1: a clean session, always.
                options.set_clean_session(true);
                options
            })
            .collect();
        let mut node = Node {
            group_id: sp.group_id.clone(),
            edge_node_id: sp.edge_node_id.clone(),
            options,
            tried: false,
            broker,
            bd_seq: 0,
            seq: 0,
            link: None,
            devices: config
                .robots
                .iter()
                .enumerate()
                .map(|(i, r)| Device::new(r.name.clone(), i, session))
                .collect(),
        };
        // The first node that answers, each tried in turn until the timeout.
        let first = runtime.block_on(async {
            tokio::time::timeout(timeout, async {
                loop {
                    match node.open().await {
                        Ok(link) => return Ok(link),
                        Err(why)
                            if node.broker.node.load(Ordering::Relaxed) + 1
                                >= node.options.len() =>
                        {
                            return Err(why);
                        }
                        Err(_) => {}
                    }
                }
            })
            .await
            .unwrap_or_else(|_| Err(BrokerError::other(format!("no answer within {timeout:?}"))))
        });
        match first {
            Ok(link) => {
                node.link = Some(link);
                Ok(node)
            }
            Err(why) => Err(Error::BrokerUnreachable {
                url: url.to_owned(),
                why: why.at_start(),
            }),
        }
    }

    fn topic(&self, kind: &str, device: Option<&str>) -> String {
        topic(&self.group_id, kind, &self.edge_node_id, device)
    }

    /// One connection attempt, with the next `bdSeq` in its will: the link and its
    /// `bdSeq` once the broker accepted it and the node's command topic is subscribed.
    async fn open(&mut self) -> Result<(Link, u8), BrokerError> {
        let bd_seq = self.bd_seq;
        let node = if self.tried {
            self.broker.fail_over(self.options.len())
        } else {
            self.broker.node.load(Ordering::Relaxed)
        };
        self.tried = true;
        let mut options = self.options[node].clone();
        options.set_last_will(LastWill::new(
            self.topic("NDEATH", None),
            device::node_death(bd_seq, now_ms()).encode(),
            QoS::AtLeastOnce,
            false,
        ));
        let (client, eventloop) = AsyncClient::new(options, REQUESTS);
        let (tx, mut events) = mpsc::unbounded_channel();
        let sent_connect = Arc::new(AtomicBool::new(false));
        tokio::spawn(drive(
            eventloop,
            tx,
            Arc::clone(&self.broker),
            self.topic("NCMD", None),
            Arc::clone(&sent_connect),
        ));
        let up = events.recv().await;
        // Each new CONNECT packet takes the next bdSeq, whether or not it was accepted.
        if sent_connect.load(Ordering::Relaxed) {
            self.bd_seq = bd_seq.wrapping_add(1);
        }
        match up {
            Some(LinkEvent::Connected) => {}
            Some(LinkEvent::Lost(why)) => return Err(why),
            _ => return Err(BrokerError::other("the connection ended".into())),
        }
        // Subscribed before the births, so a rebirth asked for right after them is heard.
        client
            .subscribe(self.topic("NCMD", None), QoS::AtLeastOnce)
            .await
            .map_err(|e| {
                BrokerError::other(format!("cannot subscribe to the node's commands: {e}"))
            })?;
        Ok((
            Link {
                client,
                events,
                accepted: 0,
                unwritten: VecDeque::new(),
            },
            bd_seq,
        ))
    }

    /// Publishes `p` with the next `seq`; `batch` is what it carries.
    async fn publish(
        &mut self,
        link: &mut Link,
        topic: String,
        mut p: Payload,
        batch: Carried,
    ) -> bool {
        p.seq = Some(u64::from(self.seq));
        self.seq = self.seq.wrapping_add(1);
        link.forget_written(self.broker.written());
        link.accepted += 1;
        link.unwritten.push_back(batch);
        link.client
            .publish(topic, QoS::AtMostOnce, false, p.encode())
            .await
            .is_ok()
    }

    /// The node birth with `seq` 0, then the birth of every device born before.
    async fn births(&mut self, link: &mut Link, bd_seq: u8) -> bool {
        self.seq = 0;
        let now = now_ms();
        let topic = self.topic("NBIRTH", None);
        if !self
            .publish(link, topic, device::node_birth(bd_seq, now), None)
            .await
        {
            return false;
        }
        for i in 0..self.devices.len() {
            let Some(stream) = self.devices[i].born.clone() else {
                continue;
            };
            let birth = self.devices[i].birth(&stream, now);
            let topic = self.topic("DBIRTH", Some(&self.devices[i].name));
            if !self.publish(link, topic, birth, None).await {
                return false;
            }
        }
        true
    }

    /// Publishes one thing a robot's queue gave: a batch as DDATA (after a DBIRTH when
    /// the device is not born with this stream), an offline status as DDEATH. An online
    /// status publishes nothing: the device is born with its first batch, whose stream
    /// its birth declares.
    async fn out(&mut self, link: &mut Link, i: usize, queue: &Arc<RobotQueue>, out: Out) -> bool {
        let now = now_ms();
        match out {
            Out::Batch(batch) => {
                if self.devices[i].born.as_deref() != Some(&*batch.stream) {
                    let birth = self.devices[i].birth(&batch.stream, now);
                    let topic = self.topic("DBIRTH", Some(&self.devices[i].name));
                    if !self.publish(link, topic, birth, None).await {
                        return false;
                    }
                }
                let data = self.devices[i].data(&batch, now);
                let topic = self.topic("DDATA", Some(&self.devices[i].name));
                let packages = batch.count() as u64;
                self.publish(link, topic, data, Some((Arc::clone(queue), packages)))
                    .await
            }
            Out::Status { online: false, .. } if self.devices[i].born.is_some() => {
                self.devices[i].born = None;
                let death = Payload {
                    timestamp: Some(now),
                    metrics: Vec::new(),
                    seq: None,
                };
                let topic = self.topic("DDEATH", Some(&self.devices[i].name));
                self.publish(link, topic, death, None).await
            }
            Out::Status { .. } => true,
        }
    }

    /// Counts what the ended link's client held unwritten: it dies with the client.
    fn lost(&self, link: &mut Link) {
        link.forget_written(self.broker.written());
        self.broker
            .lost_in_flight(std::mem::take(&mut link.unwritten));
    }

    /// Publishes the queues until every one is closed and empty; reconnects (with the
    /// births first) whenever the connection ends; then the node's death and goodbye.
    pub(crate) async fn run(mut self, queues: Vec<Arc<RobotQueue>>) {
        let wake = Arc::new(Notify::new());
        let forwarders: Vec<_> = queues
            .iter()
            .map(|q| {
                let (q, wake) = (Arc::clone(q), Arc::clone(&wake));
                tokio::spawn(async move {
                    loop {
                        q.ready.notified().await;
                        wake.notify_one();
                    }
                })
            })
            .collect();
        let mut closed = vec![false; queues.len()];
        let mut backoff = Backoff::new(backoff::BROKER);
        'links: loop {
            let (mut link, bd_seq) = match self.link.take() {
                Some(l) => l,
                None => match self.open().await {
                    Ok(l) => l,
                    Err(why) => {
                        self.broker.failed(why);
                        tokio::time::sleep(backoff.failed()).await;
                        continue;
                    }
                },
            };
            backoff.succeeded();
            if !self.births(&mut link, bd_seq).await {
                self.lost(&mut link);
                continue;
            }
            loop {
                // One thing per robot per round, so no robot waits behind another's backlog.
                let mut progressed = false;
                for (i, q) in queues.iter().enumerate() {
                    if closed[i] {
                        continue;
                    }
                    match q.take() {
                        Err(()) => closed[i] = true,
                        Ok(None) => {}
                        Ok(Some(out)) => {
                            progressed = true;
                            if !self.out(&mut link, i, q, out).await {
                                self.lost(&mut link);
                                continue 'links;
                            }
                        }
                    }
                }
                if closed.iter().all(|c| *c) {
                    self.goodbye(link, bd_seq).await;
                    break 'links;
                }
                // What the event loop said meanwhile, before more data.
                loop {
                    match link.events.try_recv() {
                        Ok(LinkEvent::Rebirth) => {
                            if !self.births(&mut link, bd_seq).await {
                                self.lost(&mut link);
                                continue 'links;
                            }
                        }
                        Ok(LinkEvent::Connected) => {}
                        Ok(LinkEvent::Lost(_)) | Err(mpsc::error::TryRecvError::Disconnected) => {
                            self.lost(&mut link);
                            continue 'links;
                        }
                        Err(mpsc::error::TryRecvError::Empty) => break,
                    }
                }
                if progressed {
                    continue;
                }
                tokio::select! {
                    () = wake.notified() => {}
                    event = link.events.recv() => match event {
                        Some(LinkEvent::Rebirth) => {
                            if !self.births(&mut link, bd_seq).await {
                                self.lost(&mut link);
                                continue 'links;
                            }
                        }
                        Some(LinkEvent::Connected) => {}
                        Some(LinkEvent::Lost(_)) | None => {
                            self.lost(&mut link);
                            continue 'links;
                        }
                    },
                    // A queue closed while nothing woke the node: look again.
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
        }
        for f in forwarders {
            f.abort();
        }
    }

    /// The node's death before the DISCONNECT (the specification's rule for MQTT 3.1.1),
    /// acknowledged first, so it is not left in the client's buffer.
    async fn goodbye(&self, link: Link, bd_seq: u8) {
        let death = device::node_death(bd_seq, now_ms()).encode();
        // Registered before the publication, so its acknowledgement cannot come first.
        let acked = self.broker.next_ack();
        if link
            .client
            .publish(self.topic("NDEATH", None), QoS::AtLeastOnce, false, death)
            .await
            .is_ok()
        {
            let _ = tokio::time::timeout(Duration::from_secs(2), acked).await;
        }
        let _ = link.client.disconnect().await;
        let mut events = link.events;
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while events.recv().await.is_some() {}
        })
        .await;
        self.broker.connected.store(false, Ordering::Relaxed);
    }
}

/// Polls one connection's event loop until it ends: no reconnection here, the node
/// makes a new connection (with the next `bdSeq`).
async fn drive(
    mut eventloop: EventLoop,
    tx: mpsc::UnboundedSender<LinkEvent>,
    broker: Arc<BrokerState>,
    ncmd: String,
    sent_connect: Arc<AtomicBool>,
) {
    loop {
        match broker::poll(&mut eventloop, &broker).await {
            Polled::Accepted(_) => {
                sent_connect.store(true, Ordering::Relaxed);
                // A clean session: what the connections before held was counted as
                // each one ended.
                broker.accepted(std::iter::empty());
                let _ = tx.send(LinkEvent::Connected);
            }
            Polled::Publication(p) if p.topic == ncmd => {
                if Payload::decode(&p.payload).is_ok_and(|p| device::asks_rebirth(&p)) {
                    let _ = tx.send(LinkEvent::Rebirth);
                }
            }
            Polled::Failed(e, why) => {
                // A refused TCP connection sent no CONNECT; anything later did.
                let refused = matches!(&e, ConnectionError::Io(io)
                    if io.kind() == std::io::ErrorKind::ConnectionRefused);
                if !refused {
                    sent_connect.store(true, Ordering::Relaxed);
                }
                let _ = tx.send(LinkEvent::Lost(why));
                return;
            }
            Polled::Ended => return,
            Polled::Publication(_) | Polled::Nothing => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link whose client was handed `carried`, of which the event loop wrote `written`.
    fn link(carried: &[Carried], written: u64) -> Link {
        let (client, _eventloop) = AsyncClient::new(MqttOptions::new("t", "127.0.0.1", 1), 1);
        let mut link = Link {
            client,
            events: mpsc::unbounded_channel().1,
            accepted: carried.len() as u64,
            unwritten: carried.iter().cloned().collect(),
        };
        link.forget_written(written);
        link
    }

    #[test]
    fn what_a_broken_link_held_unwritten_is_lost_once() {
        let broker = Arc::new(BrokerState::default());
        let node = Node {
            group_id: "g".into(),
            edge_node_id: "e".into(),
            options: vec![MqttOptions::new("t", "127.0.0.1", 1)],
            tried: false,
            broker: Arc::clone(&broker),
            bd_seq: 0,
            seq: 0,
            link: None,
            devices: Vec::new(),
        };
        let queue = || {
            Arc::new(RobotQueue::new(
                "r".into(),
                1,
                10,
                Duration::from_millis(10),
                100,
                Duration::from_millis(2),
            ))
        };
        let queues = [queue(), queue()];
        let batch = |i: usize, packages| Some((Arc::clone(&queues[i]), packages));
        // The birth and robot 0's first batch were written; the rest was not.
        let carried = [
            None,
            batch(0, 5),
            batch(1, 2),
            None,
            batch(0, 3),
            batch(1, 4),
        ];
        let mut link = link(&carried, 2);
        node.lost(&mut link);
        assert_eq!(broker.lost_with_session.load(Ordering::Relaxed), 4);
        assert_eq!(queues[0].counts().lost_in_flight, 3);
        assert_eq!(queues[1].counts().lost_in_flight, 6);
        // Counted once: the link holds nothing more.
        node.lost(&mut link);
        assert_eq!(broker.lost_with_session.load(Ordering::Relaxed), 4);
    }
}
