//! Sparkplug B against a real Mosquitto: births before data after every connection, one
//! `seq` for the whole edge node that wraps, a robot's DDEATH while the others flow, the
//! will (NDEATH) with the birth's `bdSeq` when the connection dies and the next birth's
//! `bdSeq` one on, rebirth on request, the births first on the next server when one
//! dies; and the subscriber reads DDATA back into the batches the end-to-end test checks
//! against the motion law.

#[path = "common/collect.rs"]
mod collect;
use rtde_testkit::mosquitto as common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use collect::{Collected, fast_reconnect, robots, subscriber_to};
use common::{Broker, Relay, config};
use rtde_bridge::sparkplug::device::{REBIRTH, bd_seq_of};
use rtde_bridge::sparkplug::proto::{Metric, Payload, Value, datatype};
use rtde_bridge::sparkplug::{parse_topic, topic};
use rtde_bridge::{Bridge, Config};
use rtde_sim::{Motion, Sim};
use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

const SPARKPLUG: &str =
    "format = \"sparkplug\"\nbatch_ms = 10\n\n[sparkplug]\ngroup_id = \"plant\"";

/// A message as a plain MQTT client saw it on `spBv1.0/#`.
#[derive(Debug, Clone)]
struct Seen {
    kind: String,
    device: Option<String>,
    qos: QoS,
    retain: bool,
    payload: Payload,
}

/// A plain MQTT client on the Sparkplug topics, which also sends node commands.
struct Sniffer {
    client: Client,
    rx: mpsc::Receiver<Seen>,
    seen: Vec<Seen>,
}

impl Sniffer {
    fn start(broker: &Broker, id: &str) -> Sniffer {
        let mut options = MqttOptions::new(id, "127.0.0.1", broker.port);
        options
            .set_keep_alive(Duration::from_secs(5))
            .set_max_packet_size(64 << 20, 64 << 20);
        let (client, mut connection) = Client::new(options, 64);
        client.subscribe("spBv1.0/#", QoS::AtLeastOnce).unwrap();
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for event in connection.iter() {
                match event {
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        let _ = ready_tx.send(());
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let (_, kind, _, device) = parse_topic(&p.topic).unwrap();
                        let seen = Seen {
                            kind: kind.to_owned(),
                            device: device.map(str::to_owned),
                            qos: p.qos,
                            retain: p.retain,
                            payload: Payload::decode(&p.payload).unwrap(),
                        };
                        if tx.send(seen).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        });
        ready_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        Sniffer {
            client,
            rx,
            seen: Vec::new(),
        }
    }

    /// Reads until `done`, at most 20 s.
    fn until(&mut self, done: impl Fn(&[Seen]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(&self.seen) {
            assert!(
                Instant::now() < deadline,
                "timed out; saw {}",
                self.summary()
            );
            if let Ok(s) = self.rx.recv_timeout(Duration::from_millis(100)) {
                self.seen.push(s);
            }
        }
    }

    fn summary(&self) -> String {
        let tail: Vec<String> = self
            .seen
            .iter()
            .rev()
            .take(12)
            .map(|s| format!("{}{:?}", s.kind, s.device))
            .collect();
        format!("{} messages, the last: {tail:?}", self.seen.len())
    }

    fn rebirth(&self) {
        let payload = Payload {
            timestamp: Some(1),
            metrics: vec![Metric::new(
                REBIRTH,
                datatype::BOOLEAN,
                1,
                Value::Boolean(true),
            )],
            seq: None,
        };
        self.client
            .publish(
                topic("plant", "NCMD", "test-bridge", None),
                QoS::AtMostOnce,
                false,
                payload.encode(),
            )
            .unwrap();
    }
}

fn is(kind: &str) -> impl Fn(&Seen) -> bool + '_ {
    move |s| s.kind == kind
}

fn data_of<'a>(seen: &'a [Seen], robot: &'a str) -> impl Iterator<Item = &'a Seen> + 'a {
    seen.iter()
        .filter(move |s| s.kind == "DDATA" && s.device.as_deref() == Some(robot))
}

/// The births of one connection: an NBIRTH (`seq` 0, `bdSeq`, `Node Control/Rebirth`
/// false, no alias on it), then a DBIRTH of each robot in `born` before any DDATA after it.
/// The specification's rule: a payload's stamped metrics in chronological order.
fn in_time_order(payload: &Payload) -> bool {
    let stamps: Vec<u64> = payload.metrics.iter().filter_map(|m| m.timestamp).collect();
    stamps.windows(2).all(|w| w[0] <= w[1])
}

fn assert_births(after: &[Seen], bd_seq: u64, born: &[String]) {
    let nbirth = &after[0];
    assert_eq!(nbirth.kind, "NBIRTH");
    assert_eq!(nbirth.payload.seq, Some(0));
    assert_eq!(bd_seq_of(&nbirth.payload), Some(bd_seq));
    let rebirth = nbirth
        .payload
        .metrics
        .iter()
        .find(|m| m.name.as_deref() == Some(REBIRTH))
        .unwrap();
    assert_eq!(
        (rebirth.datatype, rebirth.value.clone(), rebirth.alias),
        (Some(datatype::BOOLEAN), Some(Value::Boolean(false)), None)
    );
    for robot in born {
        let birth = after
            .iter()
            .position(|s| s.kind == "DBIRTH" && s.device.as_deref() == Some(robot))
            .unwrap_or_else(|| panic!("{robot} has no DBIRTH"));
        let data = after
            .iter()
            .position(|s| s.kind == "DDATA" && s.device.as_deref() == Some(robot));
        assert!(
            data.is_none_or(|d| birth < d),
            "{robot}: data before its birth"
        );
        assert!(
            in_time_order(&after[birth].payload),
            "{robot}: a birth in time order"
        );
        // Every metric named, aliased, typed and stamped in a birth.
        assert!(after[birth].payload.metrics.iter().all(|m| m.name.is_some()
            && m.alias.is_some()
            && m.datatype.is_some()
            && m.timestamp.is_some()));
    }
}

/// `seq` goes up by one in every message after an NBIRTH, across robots, wrapping at
/// 255; NDEATH has none. Returns how often it wrapped.
fn assert_seq_continuous(seen: &[Seen]) -> usize {
    let mut wraps = 0;
    let mut prev: Option<u64> = None;
    for (i, s) in seen.iter().enumerate() {
        match s.kind.as_str() {
            "NDEATH" => {
                assert_eq!(s.payload.seq, None, "NDEATH has no seq");
                prev = None;
            }
            "NBIRTH" => prev = Some(s.payload.seq.unwrap()),
            // The test's own rebirth request: a host's message, not the node's.
            "NCMD" => {}
            _ => {
                let seq = s.payload.seq.unwrap();
                let expected = (prev.expect("a message before any NBIRTH") + 1) % 256;
                assert_eq!(seq, expected, "message {i} ({} {:?})", s.kind, s.device);
                if seq == 0 {
                    wraps += 1;
                }
                prev = Some(seq);
            }
        }
    }
    wraps
}

fn start(broker_url: &str, robots: &[(String, std::net::SocketAddr)]) -> Bridge {
    let text = config(broker_url, robots, SPARKPLUG, 125.0);
    Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap()
}

/// Three robots through Sparkplug B: the births first, QoS 0 and no retain for births
/// and data, one `seq` over every robot's messages that wraps, aliases only in data, the
/// deaths at the end; and the DDATA read back gives every package with the motion law's
/// values, as in the JSON end-to-end test.
#[test]
fn births_first_one_seq_that_wraps_and_the_motion_law_read_back() {
    let Some(broker) = Broker::start("sparkplug-e2e") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let names: Vec<String> = robots.iter().map(|(n, _)| n.clone()).collect();
    let mut sniffer = Sniffer::start(&broker, "sp-sniffer");
    let sub = subscriber_to(&broker, "sp-sub", "spBv1.0/#");
    let bridge = start(&broker.url(), &robots);
    let mut got = Collected::default();
    // Two seconds: about 375 messages, so `seq` wraps.
    got.until(&sub, Duration::from_secs(30), |c| {
        names.iter().all(|n| c.count(n) >= 250)
    });
    let counts = bridge.shutdown();
    assert_eq!((counts.queued(), counts.dropped()), (0, 0));
    got.until(&sub, Duration::from_secs(20), |c| {
        counts.robots.iter().all(|(n, r)| c.count(n) == r.published)
            && c.statuses.iter().any(|s| s.0.is_none() && !s.1)
    });
    sub.close();
    sniffer.until(|seen| seen.iter().any(is("NDEATH")));

    let seen = &sniffer.seen;
    assert_births(seen, 0, &names);
    assert!(assert_seq_continuous(seen) >= 1, "seq wrapped");
    // The robots' messages interleave: the counter is the node's, not a robot's.
    let first_of = |robot: &str| seen.iter().position(|s| s.device.as_deref() == Some(robot));
    let last_of = |robot: &str| {
        seen.iter()
            .rposition(|s| s.device.as_deref() == Some(robot))
    };
    assert!(first_of("arm-1") < last_of("arm-0") && first_of("arm-0") < last_of("arm-1"));
    for s in seen {
        if s.kind == "NDEATH" {
            assert_eq!((s.qos, s.retain), (QoS::AtLeastOnce, false));
        } else {
            assert_eq!((s.qos, s.retain), (QoS::AtMostOnce, false), "{}", s.kind);
        }
        assert!(in_time_order(&s.payload), "{}: in time order", s.kind);
        if s.kind == "DDATA" {
            assert!(
                s.payload
                    .metrics
                    .iter()
                    .all(|m| m.name.is_none() && m.alias.is_some() && m.timestamp.is_some())
            );
        }
    }
    // Goodbye: each robot's DDEATH, then the node's NDEATH with its birth's bdSeq, last.
    let end = seen.len() - 1;
    assert_eq!(seen[end].kind, "NDEATH");
    assert_eq!(bd_seq_of(&seen[end].payload), Some(0));
    for robot in &names {
        let death = seen
            .iter()
            .rposition(|s| s.kind == "DDEATH" && s.device.as_deref() == Some(robot))
            .unwrap();
        assert!(data_of(&seen[death..], robot).next().is_none(), "{robot}");
    }
    assert_eq!(seen.iter().filter(|s| s.kind == "NBIRTH").count(), 1);
    // The subscriber side: the same checks as for JSON.
    got.assert_every_package_follows_the_motion_law(&robots);
    let statuses: Vec<_> = got.statuses.iter().filter(|s| s.0.is_none()).collect();
    assert_eq!(
        statuses.iter().map(|s| s.1).collect::<Vec<_>>(),
        [true, false],
        "NBIRTH and NDEATH as the bridge's status"
    );
}

/// A robot whose controller goes away: its DDEATH arrives, and the others' DDATA flow on
/// with no gap in their package numbers or in the node's `seq`.
#[test]
fn a_robot_killed_mid_stream_gets_its_ddeath_while_the_others_flow() {
    let Some(broker) = Broker::start("sparkplug-killed") else {
        return;
    };
    let mut fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let mut sniffer = Sniffer::start(&broker, "sp-killed-sniffer");
    let bridge = start(&broker.url(), &robots);
    sniffer.until(|seen| {
        ["arm-0", "arm-1", "arm-2"]
            .iter()
            .all(|r| data_of(seen, r).count() >= 20)
    });
    fleet.take(1).unwrap().shutdown().unwrap();
    sniffer.until(|seen| {
        seen.iter()
            .any(|s| s.kind == "DDEATH" && s.device.as_deref() == Some("arm-1"))
    });
    let at_death = sniffer.seen.len();
    sniffer.until(|seen| {
        ["arm-0", "arm-2"]
            .iter()
            .all(|r| data_of(&seen[at_death..], r).count() >= 30)
    });
    let _ = bridge.shutdown();
    sniffer.until(|seen| seen.iter().any(is("NDEATH")));
    let seen = &sniffer.seen;
    assert_seq_continuous(seen);
    assert!(
        data_of(&seen[at_death..], "arm-1").next().is_none(),
        "arm-1 is gone"
    );
    // The others' package numbers (Bridge/package, once per package) have no gap.
    for robot in ["arm-0", "arm-2"] {
        let mut numbers = Vec::new();
        let birth = seen
            .iter()
            .find(|s| s.kind == "DBIRTH" && s.device.as_deref() == Some(robot))
            .unwrap();
        let package_alias = birth
            .payload
            .metrics
            .iter()
            .find(|m| m.name.as_deref() == Some("Bridge/package"))
            .and_then(|m| m.alias)
            .unwrap();
        for d in data_of(seen, robot) {
            for m in &d.payload.metrics {
                if m.alias == Some(package_alias) {
                    let Some(Value::Long(n)) = m.value else {
                        panic!("{m:?}")
                    };
                    numbers.push(n);
                }
            }
        }
        assert!(numbers.len() > 50, "{robot}");
        assert!(
            numbers.windows(2).all(|w| w[1] == w[0] + 1),
            "{robot}: package numbers follow each other"
        );
    }
}

/// The bridge's connection dies without a DISCONNECT (the relay it goes through is cut):
/// the broker publishes its will, an NDEATH with the bdSeq of the NBIRTH before; the
/// bridge connects again and its next NBIRTH has the next bdSeq, `seq` 0, and every robot's
/// DBIRTH before any of their data. A rebirth request gets the births again with the same
/// bdSeq.
#[test]
fn the_will_carries_the_births_bdseq_and_the_next_birth_the_next() {
    let Some(broker) = Broker::start("sparkplug-will") else {
        return;
    };
    let relay = Relay::start(broker.port);
    let fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
    let robots = robots(&fleet);
    let names: Vec<String> = robots.iter().map(|(n, _)| n.clone()).collect();
    let mut sniffer = Sniffer::start(&broker, "sp-will-sniffer");
    let bridge = start(&relay.url(), &robots);
    sniffer.until(|seen| names.iter().all(|r| data_of(seen, r).count() >= 5));
    assert_births(&sniffer.seen, 0, &names);

    relay.cut();
    sniffer.until(|seen| seen.iter().any(is("NDEATH")));
    let will = sniffer.seen.iter().position(is("NDEATH")).unwrap();
    assert_eq!(
        bd_seq_of(&sniffer.seen[will].payload),
        Some(0),
        "the will's bdSeq"
    );
    sniffer.until(|seen| {
        seen.iter().skip(will).any(is("NBIRTH"))
            && names.iter().all(|r| data_of(&seen[will..], r).count() >= 5)
    });
    let reborn = will + sniffer.seen[will..].iter().position(is("NBIRTH")).unwrap();
    // Nothing of the old connection after its will: the next message is the new birth.
    assert_eq!(reborn, will + 1, "{}", sniffer.summary());
    assert_births(&sniffer.seen[reborn..], 1, &names);
    assert!(bridge.counts().broker_connections >= 2);

    sniffer.rebirth();
    sniffer.until(|seen| seen[reborn + 1..].iter().any(is("NBIRTH")));
    let asked = reborn
        + 1
        + sniffer.seen[reborn + 1..]
            .iter()
            .position(is("NBIRTH"))
            .unwrap();
    sniffer.until(|seen| {
        names
            .iter()
            .all(|r| data_of(&seen[asked..], r).count() >= 3)
    });
    assert_births(&sniffer.seen[asked..], 1, &names);
    let rebirths: Vec<_> = sniffer.seen[asked..]
        .iter()
        .filter(|s| s.kind == "DBIRTH")
        .collect();
    // Born again with their current values: the last package's number, not null.
    for birth in rebirths.iter().take(names.len()) {
        let package = birth
            .payload
            .metrics
            .iter()
            .find(|m| m.name.as_deref() == Some("Bridge/package"))
            .unwrap();
        assert!(!package.is_null && matches!(package.value, Some(Value::Long(_))));
    }

    let _ = bridge.shutdown();
    sniffer.until(|seen| seen[asked..].iter().any(is("NDEATH")));
    let last = sniffer.seen.last().unwrap();
    assert_eq!(
        (last.kind.as_str(), bd_seq_of(&last.payload)),
        ("NDEATH", Some(1))
    );
    assert_seq_continuous(&sniffer.seen);
}

/// A subscriber that comes after the births sees data of robots it does not know: it asks
/// the node for its births (NCMD `Node Control/Rebirth`), and reads on from them.
#[test]
fn a_late_subscriber_asks_for_the_births_and_reads_on() {
    let Some(broker) = Broker::start("sparkplug-late") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
    let robots = robots(&fleet);
    let mut sniffer = Sniffer::start(&broker, "sp-late-sniffer");
    let bridge = start(&broker.url(), &robots);
    sniffer.until(|seen| data_of(seen, "arm-1").count() >= 10);
    let sub = subscriber_to(&broker, "sp-late-sub", "spBv1.0/#");
    let mut got = Collected::default();
    got.until(&sub, Duration::from_secs(20), |c| {
        c.count("arm-0") >= 50 && c.count("arm-1") >= 50
    });
    let _ = bridge.shutdown();
    sub.close();
    assert!(got.unreadable.is_empty(), "{:?}", got.unreadable);
    sniffer.until(|seen| seen.iter().filter(|s| s.kind == "NBIRTH").count() >= 2);
    // It joined late: what came before its births was never expected, and the rest has
    // no gap.
    assert_eq!(got.check.unexplained(), 0);
    for robot in ["arm-0", "arm-1"] {
        assert_eq!(got.check.gaps(robot), 0, "{robot}");
        let list = &got.packages[robot];
        assert!(list.windows(2).all(|w| w[1].0 == w[0].0 + 1), "{robot}");
        assert!(
            got.statuses
                .iter()
                .any(|s| s.0.as_deref() == Some(robot) && s.1),
            "{robot}: its DBIRTH read as online"
        );
    }
}

/// The broker goes away and comes back: the attempts it refused sent no CONNECT, so the
/// next NBIRTH has the next bdSeq; the births come before the data the queues kept.
#[test]
fn after_a_broker_restart_the_births_come_first_with_the_next_bdseq() {
    let Some(mut broker) = Broker::start("sparkplug-restart") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
    let robots = robots(&fleet);
    let names: Vec<String> = robots.iter().map(|(n, _)| n.clone()).collect();
    let mut sniffer = Sniffer::start(&broker, "sp-restart-sniffer");
    let bridge = start(&broker.url(), &robots);
    sniffer.until(|seen| names.iter().all(|r| data_of(seen, r).count() >= 5));
    broker.stop();
    // Long enough for several refused attempts (the backoff starts at 50 ms).
    std::thread::sleep(Duration::from_millis(1500));
    broker.restart();
    let mut sniffer = Sniffer::start(&broker, "sp-restart-sniffer-2");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !bridge.counts().broker_connected {
        assert!(Instant::now() < deadline, "the bridge did not reconnect");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The bridge may have been born again before this sniffer subscribed: then a rebirth
    // request brings the same NBIRTH (same bdSeq) again.
    let waited = Instant::now();
    let mut asked = false;
    while !sniffer.seen.iter().any(is("NBIRTH")) {
        if let Ok(s) = sniffer.rx.recv_timeout(Duration::from_millis(50)) {
            sniffer.seen.push(s);
        }
        if waited.elapsed() > Duration::from_millis(500) && !asked {
            sniffer.rebirth();
            asked = true;
        }
        assert!(waited.elapsed() < Duration::from_secs(20), "no NBIRTH");
    }
    let birth = sniffer.seen.iter().position(is("NBIRTH")).unwrap();
    sniffer.until(|seen| {
        names
            .iter()
            .all(|r| data_of(&seen[birth..], r).count() >= 5)
    });
    assert_births(&sniffer.seen[birth..], 1, &names);
    assert_eq!(bridge.counts().broker_connections, 2);
    let counts = bridge.shutdown();
    assert_eq!(counts.dropped(), 0, "the queues held the outage");
    assert_seq_continuous(&sniffer.seen[birth..]);
}

/// Sparkplug's own answer to a server's death, its multiple-server topology (Debian's
/// nats-server 2.9.10 refuses Sparkplug's topics: docs/mqtt-scaling.md): the bridge lists
/// two Mosquittos and a host application reads both. The first dies (SIGKILL): the
/// bridge fails over to the second, where its first message is an NBIRTH with the next
/// bdSeq and `seq` 0, then every robot's DBIRTH before any more of its DDATA, `seq`
/// unbroken after it, and its goodbye an NDEATH with that bdSeq. Every robot's packages
/// arrive once and in order, read back with the motion law's values; QoS 0 (the
/// specification's, for births and data) may lose what was on its way through the dead
/// server, so a robot may miss packages at the kill only: one gap at most, no duplicate.
#[test]
fn a_dead_server_the_births_come_first_on_the_next_with_the_next_bdseq() {
    let (Some(mut first), Some(second)) = (
        Broker::start("sparkplug-failover-1"),
        Broker::start("sparkplug-failover-2"),
    ) else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let names: Vec<String> = robots.iter().map(|(n, _)| n.clone()).collect();
    let mut sniffer = Sniffer::start(&second, "sp-failover-sniffer");
    let subs = [
        subscriber_to(&first, "sp-failover-sub-1", "spBv1.0/#"),
        subscriber_to(&second, "sp-failover-sub-2", "spBv1.0/#"),
    ];
    let text = config("unused", &robots, SPARKPLUG, 125.0).replacen(
        "url = \"unused\"",
        &format!("urls = [\"{}\", \"{}\"]", first.url(), second.url()),
        1,
    );
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let mut got = Collected::default();
    got.until(&subs[0], Duration::from_secs(30), |c| {
        names.iter().all(|n| c.count(n) >= 125)
    });
    first.crash();
    // What the first server sent before it died, then the second's.
    while let Some(m) = subs[0].recv_timeout(Duration::from_millis(200)) {
        got.take(m);
    }
    let before: Vec<u64> = names.iter().map(|n| got.count(n)).collect();
    got.until(&subs[1], Duration::from_secs(30), |c| {
        names
            .iter()
            .zip(&before)
            .all(|(n, b)| c.count(n) >= b + 250)
    });
    let counts = bridge.shutdown();
    got.until(&subs[1], Duration::from_secs(20), |c| {
        c.statuses.iter().any(|s| s.0.is_none() && !s.1)
    });
    let [sub_first, sub_second] = subs;
    sub_first.close();
    sub_second.close();
    sniffer.until(|seen| seen.iter().any(is("NDEATH")));
    assert_eq!((counts.failovers, counts.broker_node), (1, 1), "{counts:?}");
    assert_eq!((counts.dropped(), counts.queued()), (0, 0), "{counts:?}");

    let seen = &sniffer.seen;
    assert_births(seen, 1, &names);
    assert_seq_continuous(seen);
    let goodbye = seen.iter().position(is("NDEATH")).unwrap();
    assert_eq!(goodbye, seen.len() - 1, "the goodbye, last");
    assert_eq!(bd_seq_of(&seen[goodbye].payload), Some(1));
    assert_eq!(seen.iter().filter(|s| s.kind == "NBIRTH").count(), 1);

    assert!(got.unreadable.is_empty(), "{:?}", got.unreadable);
    for (name, _) in &robots {
        let list = &got.packages[name];
        assert_eq!(got.check.duplicates(name), 0, "{name}");
        let gaps = list.windows(2).filter(|w| w[1].0 != w[0].0 + 1).count();
        assert!(gaps <= 1, "{name}: {gaps} gaps");
        assert!(list.windows(2).all(|w| w[1].0 > w[0].0), "{name}: in order");
        let published = counts
            .robots
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .published;
        assert_eq!(
            list.len() as u64 + got.check.gaps(name),
            published,
            "{name}: every package delivered or missing at the kill"
        );
        for (_, t, q, _) in list {
            assert_eq!(*q, Motion::DEFAULT.position(*t), "{name} at {t}");
        }
        eprintln!(
            "{name}: {} packages of {published} published, {} missing at the kill",
            list.len(),
            got.check.gaps(name),
        );
    }
}
