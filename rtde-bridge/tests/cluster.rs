//! Simulated robots → bridge → a 3-node NATS cluster (MQTT on JetStream, sessions
//! replicated 3 ways) → subscriber on another node: a node killed with SIGKILL costs no
//! package. The bridge resumes its session on another node, re-sends what the dead one
//! had not acknowledged, and the subscriber counts what it sees twice as duplicates,
//! apart from gaps.

#[path = "common/collect.rs"]
mod collect;
use rtde_testkit::mosquitto as common;

use std::time::{Duration, Instant};

use collect::{Collected, fast_reconnect, robots};
use rtde_bridge::{Bridge, Config, Counts, StartOptions, Subscriber};
use rtde_sim::Sim;
use rtde_testkit::nats::Cluster;

/// Generous bounds: the tests share a loaded 2-core machine with others.
const WAIT: Duration = Duration::from_secs(60);

/// A bridge configuration for `robots` at 125 Hz on every node of `cluster`, in the
/// order of `nodes`.
fn cluster_config(
    cluster: &Cluster,
    nodes: [usize; 3],
    robots: &[(String, std::net::SocketAddr)],
    payload: &str,
) -> String {
    let urls = nodes
        .iter()
        .map(|&i| format!("\"{}\"", cluster.url(i)))
        .collect::<Vec<_>>()
        .join(", ");
    common::config("unused", robots, payload, 125.0).replacen(
        "url = \"unused\"",
        &format!("urls = [{urls}]"),
        1,
    )
}

/// The nodes of the bridge and of the subscriber: the bridge's, which the tests kill, one
/// that leads no MQTT stream if there is one, and never the leader of `$MQTT_msgs` (the
/// QoS 1 messages): Debian's nats-server 2.9.10 acknowledges QoS 1 publications it does
/// not store after that leader's death (docs/mqtt-scaling.md), a loss of the broker's
/// that no client can make up for. The subscriber's: another.
fn roles(cluster: &Cluster) -> (usize, usize) {
    let msgs = cluster.stream_leader(0, "$MQTT_msgs");
    let sess = cluster.stream_leader(0, "$MQTT_sess");
    let bridge = (0..3)
        .filter(|&i| Some(i) != msgs)
        .min_by_key(|&i| Some(i) == sess)
        .unwrap();
    let sub = (0..3).find(|&i| i != bridge).unwrap();
    eprintln!(
        "leaders: $MQTT_msgs {msgs:?}, $MQTT_sess {sess:?}; bridge on n{bridge}, subscriber on n{sub}"
    );
    (bridge, sub)
}

/// The bridge's options: robots reconnect fast, and the shutdown waits as long as a
/// loaded machine's cluster may take to acknowledge what is queued.
fn options() -> StartOptions {
    let mut options = fast_reconnect();
    options.drain_timeout = WAIT;
    options
}

/// A subscriber with a persistent QoS 1 session on node `node`.
fn subscriber_on(cluster: &Cluster, node: usize, id: &str) -> Subscriber {
    Subscriber::connect(
        "127.0.0.1",
        cluster.mqtt_port(node),
        id,
        &["rtde/#".to_owned()],
        WAIT,
    )
    .unwrap()
}

/// Waits until `done` says so of the bridge's counters, at most [`WAIT`], while the
/// subscriber's messages are collected.
fn wait_for(
    bridge: &Bridge,
    sub: &Subscriber,
    got: &mut Collected,
    what: &str,
    done: impl Fn(&Counts, &Collected) -> bool,
) {
    let deadline = Instant::now() + WAIT;
    loop {
        let counts = bridge.counts();
        if done(&counts, got) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {counts:?}"
        );
        if let Some(m) = sub.recv_timeout(Duration::from_millis(50)) {
            got.take(m);
        }
    }
}

/// The bridge's node dies mid-stream: the bridge fails over to another node with its
/// session, and every package of every robot arrives, each checked by robot and
/// sequence number, with nothing lost and each batch seen twice counted as a duplicate.
fn the_bridges_node_killed_loses_nothing(format: &str) {
    let Some(mut cluster) = Cluster::start(&format!("bridge-node-{format}")) else {
        return;
    };
    let fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let robots = robots(&fleet);
    let (bridge_node, sub_node) = roles(&cluster);
    let others: Vec<usize> = (0..3).filter(|&i| i != bridge_node).collect();
    let text = cluster_config(
        &cluster,
        [bridge_node, others[0], others[1]],
        &robots,
        &format!("format = \"{format}\"\nbatch_ms = 10"),
    );
    let sub = subscriber_on(&cluster, sub_node, &format!("cluster-sub-{format}"));
    let bridge = Bridge::start(Config::parse(&text, "test.toml").unwrap(), options()).unwrap();
    let mut got = Collected::default();
    wait_for(&bridge, &sub, &mut got, "a second of data", |_, c| {
        robots.iter().all(|(n, _)| c.count(n) >= 125)
    });
    assert_eq!(
        bridge.counts().broker_node,
        0,
        "the first node that answers"
    );
    cluster.kill(bridge_node);
    let killed = Instant::now();
    wait_for(&bridge, &sub, &mut got, "the failover", |counts, _| {
        counts.failovers >= 1 && counts.broker_connected
    });
    let failover = killed.elapsed();
    let published_then = bridge.counts().published();
    wait_for(
        &bridge,
        &sub,
        &mut got,
        "data after the failover",
        |counts, _| counts.published() >= published_then + 3 * 125,
    );
    let counts = bridge.shutdown();
    assert_ne!(counts.broker_node, 0, "{counts:?}");
    assert_eq!(counts.lost_in_flight(), 0, "{counts:?}");
    assert_eq!(counts.lost_with_session, 0, "{counts:?}");
    assert_eq!(counts.dropped(), 0, "{counts:?}");
    assert_eq!(counts.queued(), 0, "{counts:?}");
    let deadline = Instant::now() + WAIT;
    while !counts
        .robots
        .iter()
        .all(|(n, r)| got.count(n) == r.published)
    {
        if Instant::now() >= deadline {
            eprintln!(
                "{}",
                cluster.monitor(sub_node, "/jsz?consumers=true&accounts=true&config=true")
            );
        }
        assert!(
            Instant::now() < deadline,
            "not every package arrived: {:?} of {counts:?}",
            robots
                .iter()
                .map(|(n, _)| (got.count(n), got.check.gaps(n)))
                .collect::<Vec<_>>()
        );
        if let Some(m) = sub.recv_timeout(Duration::from_millis(100)) {
            got.take(m);
        }
    }
    sub.close();
    got.assert_every_package_follows_the_motion_law(&robots);
    let duplicates: u64 = robots.iter().map(|(n, _)| got.check.duplicates(n)).sum();
    eprintln!(
        "{format}: failover seen by the test after {failover:?}; {duplicates} duplicate batches"
    );
}

#[test]
fn the_bridges_node_killed_loses_nothing_json() {
    the_bridges_node_killed_loses_nothing("json");
}

#[test]
fn the_bridges_node_killed_loses_nothing_binary() {
    the_bridges_node_killed_loses_nothing("binary");
}
