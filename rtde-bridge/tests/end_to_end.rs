//! Simulated robots → bridge → Mosquitto → subscriber: every package arrives with the
//! simulator's values; a broker restart loses exactly what the bridge counts as dropped;
//! a broker that comes back without its state gets the retained statuses again; a robot
//! that dies goes offline while the others keep flowing; a subscriber says each outage and
//! whether the broker kept its session.

#[path = "common/collect.rs"]
mod collect;
use rtde_testkit::mosquitto as common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use collect::{Collected, fast_reconnect, robots, subscriber, unix_us};
use common::{Broker, config};
use rtde_bridge::{Bridge, Config, Message};
use rtde_sim::Sim;

/// Every package of three robots arrives once, in order, with the motion law's values.
fn three_robots_every_package_arrives(format: &str) {
    let Some(broker) = Broker::start(&format!("e2e-{format}")) else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let text = config(
        &broker.url(),
        &robots,
        &format!("format = \"{format}\"\nbatch_ms = 10"),
        125.0,
    );
    let sub = subscriber(&broker, &format!("e2e-sub-{format}"));
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let mut got = Collected::default();
    // A second of streaming: about 125 packages per robot.
    got.until(&sub, Duration::from_secs(20), |c| {
        robots.iter().all(|(n, _)| c.count(n) >= 125)
    });
    let counts = bridge.shutdown();
    assert_eq!(counts.queued(), 0);
    assert_eq!(counts.dropped(), 0);
    for (name, c) in &counts.robots {
        assert_eq!(c.received, c.published, "{name}");
    }
    got.until(&sub, Duration::from_secs(20), |c| {
        counts.robots.iter().all(|(n, r)| c.count(n) == r.published)
            && c.statuses
                .iter()
                .any(|(r, online, _)| r.is_none() && !online)
            && counts.robots.iter().all(|(n, _)| {
                c.statuses
                    .iter()
                    .any(|(r, online, _)| r.as_deref() == Some(n.as_str()) && !online)
            })
    });
    sub.close();
    got.assert_every_package_follows_the_motion_law(&robots);
    for (name, _) in &robots {
        // Online, then offline when the bridge stopped; retained on the status topic.
        let mine: Vec<_> = got
            .statuses
            .iter()
            .filter(|(r, _, _)| r.as_deref() == Some(name.as_str()))
            .collect();
        assert_eq!(mine.first().map(|s| s.1), Some(true), "{name}: {mine:?}");
        assert_eq!(
            mine.last().map(|s| (s.1, s.2.as_deref())),
            Some((false, Some("the bridge stopped"))),
            "{name}: {mine:?}"
        );
    }
    // The bridge's birth, then its goodbye.
    let bridge_status: Vec<bool> = got
        .statuses
        .iter()
        .filter(|(r, _, _)| r.is_none())
        .map(|s| s.1)
        .collect();
    assert_eq!(bridge_status, [true, false]);
}

#[test]
fn three_robots_every_package_arrives_as_json() {
    three_robots_every_package_arrives("json");
}

#[test]
fn three_robots_every_package_arrives_as_binary() {
    three_robots_every_package_arrives("binary");
}

/// The broker goes away for a second: the bridge keeps the newest `queue_packages`
/// packages and drops the older ones, counting each; after the restart the subscriber
/// gets everything else, and every gap it sees is exactly what the bridge counted.
#[test]
fn a_broker_restart_loses_exactly_the_packages_counted_as_dropped() {
    let Some(mut broker) = Broker::start("restart") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(1).unwrap();
    let robots = robots(&fleet);
    const BOUND: u64 = 100;
    let text = config(
        &broker.url(),
        &robots,
        &format!("batch_packages = 10\nbatch_ms = 20\nqueue_packages = {BOUND}"),
        500.0,
    );
    let sub = subscriber(&broker, "restart-sub");
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let mut got = Collected::default();
    got.until(&sub, Duration::from_secs(20), |c| c.count("arm-0") >= 100);

    broker.stop();
    let down = Instant::now();
    let down_unix = unix_us();
    // 500 packages a second: a second down is five times the bound.
    while down.elapsed() < Duration::from_secs(1) {
        if let Some(m) = sub.recv_timeout(Duration::from_millis(50)) {
            got.take(m);
        }
    }
    let during = bridge.counts();
    assert!(!during.broker_connected);
    broker.restart();
    let up = Instant::now();
    got.until(&sub, Duration::from_secs(20), |_| {
        bridge.counts().broker_connected
    });
    let reconnected_unix = unix_us();
    // Half a second more after the broker is back.
    while up.elapsed() < Duration::from_millis(500) {
        if let Some(m) = sub.recv_timeout(Duration::from_millis(50)) {
            got.take(m);
        }
    }
    let counts = bridge.shutdown();
    let robot = counts.robots[0].1;
    assert_eq!(robot.received, robot.published + robot.dropped, "{robot:?}");
    assert_eq!(counts.lost_with_session, 0, "the broker kept the session");
    got.until(&sub, Duration::from_secs(20), |c| {
        c.count("arm-0") == robot.published
    });
    sub.close();

    // Packages went missing only where the bridge dropped them, and exactly as many.
    assert!(
        robot.dropped >= 200,
        "a second down at 500 Hz overflows {BOUND}: {robot:?}"
    );
    assert_eq!(got.check.gaps("arm-0"), robot.dropped);
    assert_eq!(got.check.unexplained(), 0);
    // What the queue held while the bridge could not publish arrived after the restart:
    // the newest BOUND packages of the outage (give or take a batch in the publisher's
    // hands, and the 100 ms the test takes to notice the reconnection).
    let kept = got.packages["arm-0"]
        .iter()
        .filter(|p| (down_unix..reconnected_unix).contains(&p.3))
        .count() as u64;
    assert!(
        (BOUND - 10..=BOUND + 60).contains(&kept),
        "{kept} packages of the outage arrived; the bound is {BOUND}"
    );
}

/// The broker stops answering while the bridge publishes, then dies and comes back
/// without the bridge's session: what the client held unacknowledged is lost in flight.
/// The loss is in `Counts` as soon as the bridge is back, before any shutdown, against
/// the robots whose batches were lost, and the robots' next batches count it in `dropped`.
#[test]
fn publications_lost_in_flight_are_counted_when_the_broker_comes_back() {
    let Some(mut broker) = Broker::start("in-flight") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
    let robots = robots(&fleet);
    let text = config(&broker.url(), &robots, "batch_ms = 10", 125.0);
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !bridge
        .counts()
        .robots
        .iter()
        .all(|(_, c)| c.published >= 50)
    {
        assert!(Instant::now() < deadline, "the bridge did not publish");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Frozen, the broker acknowledges nothing: the batches of these 300 ms are in flight.
    broker.freeze();
    std::thread::sleep(Duration::from_millis(300));
    let before = bridge.counts();
    assert_eq!(before.lost_in_flight(), 0, "{before:?}");
    broker.crash();
    broker.forget();
    broker.restart();
    while !(bridge.counts().broker_connected && bridge.counts().broker_connections >= 2) {
        assert!(Instant::now() < deadline, "the bridge did not reconnect");
        std::thread::sleep(Duration::from_millis(20));
    }
    let counts = bridge.counts();
    assert!(counts.lost_with_session > 0, "{counts:?}");
    for (name, c) in &counts.robots {
        // 300 ms at 125 Hz, less what went out before the freeze took hold.
        assert!(c.lost_in_flight >= 10, "{name}: {c:?}");
        assert_eq!(c.dropped, 0, "{name}: the queue held the rest");
    }
    // The batches published from now on carry the loss in their drop count (but for one
    // a publisher took before the reconnection).
    let sub = subscriber(&broker, "in-flight-sub");
    let mut seen: HashMap<String, Vec<u64>> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < robots.len() || seen.values().any(|d| d.len() < 3) {
        assert!(
            Instant::now() < deadline,
            "no batches after the reconnection"
        );
        if let Some(Message::Batch { batch, .. }) = sub.recv_timeout(Duration::from_millis(100)) {
            seen.entry(batch.robot.clone())
                .or_default()
                .push(batch.dropped);
        }
    }
    for (name, c) in &counts.robots {
        assert_eq!(seen[name].last(), Some(&c.lost_in_flight), "{name}");
    }
    // Each robot's retained status says so too, published again at the reconnection.
    let statuses = retained_statuses(&broker, robots.len());
    for (name, c) in &counts.robots {
        assert_eq!(
            statuses[name]["lost_in_flight"].as_u64(),
            Some(c.lost_in_flight),
            "{name}: {}",
            statuses[name]
        );
    }
    sub.close();
    let end = bridge.shutdown();
    assert_eq!(end.lost_in_flight(), counts.lost_in_flight());
}

/// The robots' retained statuses as JSON, by robot, read with an MQTT client of the
/// test's own (a `Subscriber` reads a status as online or offline only); waits at most
/// 20 s for `robots` of them.
fn retained_statuses(broker: &Broker, robots: usize) -> HashMap<String, serde_json::Value> {
    let options = rumqttc::MqttOptions::new("statuses", "127.0.0.1", broker.port);
    let (client, mut connection) = rumqttc::Client::new(options, 16);
    client
        .subscribe("rtde/+/status", rumqttc::QoS::AtLeastOnce)
        .unwrap();
    let mut statuses = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while statuses.len() < robots {
        assert!(Instant::now() < deadline, "statuses: {statuses:?}");
        if let Ok(Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p)))) =
            connection.recv_timeout(Duration::from_millis(100))
        {
            let status: serde_json::Value = serde_json::from_slice(&p.payload).unwrap();
            let robot = status["robot"].as_str().unwrap().to_owned();
            statuses.insert(robot, status);
        }
    }
    let _ = client.disconnect();
    statuses
}

/// A broker that comes back having lost everything (no session, no retained message):
/// the bridge's and every robot's retained status are published again, so a subscriber
/// that arrives afterwards still learns who is online.
#[test]
fn a_broker_that_lost_its_state_is_told_every_status_again() {
    let Some(mut broker) = Broker::start("forgot") else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
    let robots = robots(&fleet);
    let text = config(&broker.url(), &robots, "", 125.0);
    let online = |c: &Collected, who: Option<&str>| {
        c.statuses
            .iter()
            .any(|(robot, on, _)| robot.as_deref() == who && *on)
    };
    let everyone =
        |c: &Collected| online(c, None) && online(c, Some("arm-0")) && online(c, Some("arm-1"));
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let first = subscriber(&broker, "forgot-first");
    let mut before = Collected::default();
    before.until(&first, Duration::from_secs(20), everyone);
    first.close();

    broker.stop();
    broker.forget();
    broker.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(bridge.counts().broker_connected && bridge.counts().broker_connections >= 2) {
        assert!(Instant::now() < deadline, "the bridge did not reconnect");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Subscribes after the bridge came back: only retained statuses can tell it.
    let late = subscriber(&broker, "forgot-late");
    let mut after = Collected::default();
    after.until(&late, Duration::from_secs(20), everyone);
    late.close();
    let counts = bridge.shutdown();
    assert!(counts.broker_connections >= 2, "{counts:?}");
}

/// A robot whose controller goes away mid-stream: its offline status arrives (with the
/// reason), and the other robots' streams have no gap.
#[test]
fn a_robot_killed_mid_stream_goes_offline_and_the_others_flow_on() {
    let Some(broker) = Broker::start("killed") else {
        return;
    };
    let mut fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let text = config(&broker.url(), &robots, "batch_ms = 10", 125.0);
    let sub = subscriber(&broker, "killed-sub");
    let bridge =
        Bridge::start(Config::parse(&text, "test.toml").unwrap(), fast_reconnect()).unwrap();
    let mut got = Collected::default();
    got.until(&sub, Duration::from_secs(20), |c| {
        robots.iter().all(|(n, _)| c.count(n) >= 50)
    });
    fleet.take(1).unwrap().shutdown().unwrap();
    got.until(&sub, Duration::from_secs(20), |c| {
        c.statuses
            .iter()
            .any(|(r, online, _)| r.as_deref() == Some("arm-1") && !online)
    });
    let at_offline = bridge.counts();
    let others_then = [got.count("arm-0"), got.count("arm-2")];
    got.until(&sub, Duration::from_secs(20), |c| {
        c.count("arm-0") >= others_then[0] + 60 && c.count("arm-2") >= others_then[1] + 60
    });
    let counts = bridge.shutdown();
    got.until(&sub, Duration::from_secs(20), |c| {
        counts.robots.iter().all(|(n, r)| c.count(n) == r.published)
    });
    sub.close();
    let reason = got
        .statuses
        .iter()
        .find(|(r, online, _)| r.as_deref() == Some("arm-1") && !online)
        .and_then(|s| s.2.clone())
        .unwrap();
    assert!(reason.starts_with("link lost"), "{reason}");
    assert_eq!(
        counts.robots[1].1.received, at_offline.robots[1].1.received,
        "arm-1 is gone"
    );
    for name in ["arm-0", "arm-2"] {
        assert_eq!(got.check.gaps(name), 0, "{name}");
        let list = &got.packages[name];
        for w in list.windows(2) {
            assert_eq!(
                ((w[1].1 - w[0].1) * 500.0).round(),
                4.0,
                "{name}: no gap in time"
            );
        }
    }
    assert_eq!(got.check.unexplained(), 0);
}

/// The subscriber says when it loses the broker and whether the broker it comes back to
/// kept its session: kept across a restart that saved it, lost across a crash that left
/// nothing (then what the broker held for it is gone, and its gaps are the broker's).
#[test]
fn a_subscriber_says_each_outage_and_whether_the_broker_kept_its_session() {
    let Some(mut broker) = Broker::start("subscriber-outages") else {
        return;
    };
    let sub = rtde_bridge::Subscriber::connect(
        "127.0.0.1",
        broker.port,
        "outages",
        &["rtde/#".to_owned()],
        Duration::from_secs(5),
    )
    .unwrap();
    let next_outage = || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut said = Vec::new();
        while Instant::now() < deadline {
            match sub.recv_timeout(Duration::from_millis(100)) {
                Some(Message::BrokerBack { session_kept }) => return (said, session_kept),
                Some(m) => said.push(m),
                None => {}
            }
        }
        panic!("the subscriber never came back: {said:?}");
    };
    broker.stop();
    broker.restart();
    let (said, kept) = next_outage();
    assert!(kept, "a broker that saved its state lost the session");
    assert!(
        matches!(said.as_slice(), [Message::BrokerLost { why }] if why.contains("broker")),
        "{said:?}"
    );
    broker.crash();
    broker.forget();
    broker.restart();
    let (said, kept) = next_outage();
    assert!(!kept, "a broker that forgot everything kept the session");
    assert!(
        matches!(said.as_slice(), [Message::BrokerLost { .. }]),
        "{said:?}"
    );
    sub.close();
}
