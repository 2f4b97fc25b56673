//! Many robots from one process: distinct ports, the motion law on each, one clock
//! thread instead of a wake-up per robot per period, and robots that stop alone.

mod common;

use std::collections::HashSet;

use common::{Raw, double, outputs, tick_of, vector6};
use rtde_sim::{Error, Motion, Sim};

/// How long after the first robot the others are connected, in the shared-clock test.
const LATER: std::time::Duration = std::time::Duration::from_millis(200);

/// Connects to `addr`, streams `timestamp,actual_q` at `frequency`.
fn stream(addr: std::net::SocketAddr, frequency: f64) -> Raw {
    let mut c = Raw::connect_v(addr, 2);
    let (texts, id, types) = c.setup_outputs(frequency, "timestamp,actual_q");
    assert!(texts.is_empty(), "{texts:?}");
    assert_eq!((id, types.as_str()), (Some(1), "DOUBLE,VECTOR6D"));
    c.start();
    c
}

#[test]
fn every_robot_of_a_fleet_streams_the_motion_law_without_gaps() {
    let fleet = Sim::builder().deterministic().start_fleet(5).unwrap();
    let addrs: Vec<_> = fleet.addrs().collect();
    assert_eq!(addrs.len(), 5);
    assert_eq!(
        addrs.iter().map(|a| a.port()).collect::<HashSet<_>>().len(),
        5
    );
    assert!(addrs.iter().all(|a| a.ip().is_loopback()));

    // The first robot streams, then the others, a known while later: on one shared clock
    // their streams start that much further on; on a clock per robot they would start at 0.
    let mut clients: Vec<Raw> = vec![stream(addrs[0], 125.0)];
    std::thread::sleep(LATER);
    clients.extend(addrs[1..].iter().map(|&a| stream(a, 125.0)));
    let mut recipe = outputs(&["timestamp", "actual_q"]);
    let mut first = vec![None; clients.len()];
    let mut last = vec![None; clients.len()];
    // Round-robin over the robots: half a second of packages from each.
    for _ in 0..60 {
        for ((c, first), last) in clients.iter_mut().zip(&mut first).zip(&mut last) {
            c.recv_data(&mut recipe);
            let t = double(&recipe, "timestamp");
            let tick = tick_of(t, 500);
            first.get_or_insert(tick);
            if let Some(previous) = *last {
                assert_eq!(tick, previous + 4, "a gap in a fleet robot's stream");
            }
            *last = Some(tick);
            assert_eq!(vector6(&recipe, "actual_q"), Motion::DEFAULT.position(t));
        }
    }
    // One shared clock: each robot's stream starts no earlier than that of the robot
    // connected before it, and those connected after the pause at least that much later.
    // (How much later at most depends on how fast a loaded machine connects, so it is
    // not bounded here.)
    let first: Vec<u64> = first.into_iter().flatten().collect();
    assert!(
        first.windows(2).all(|w| w[0] <= w[1]),
        "robots on different clocks: {first:?}"
    );
    // Half the pause in 2 ms ticks: the other half is margin for where in a period each
    // stream's first package falls.
    let later_ticks = u64::try_from(LATER.as_millis()).unwrap() / 4;
    assert!(
        first[1..].iter().all(|&t| t >= first[0] + later_ticks),
        "robots on different clocks: {first:?}"
    );
    fleet.shutdown().unwrap();
}

#[test]
fn a_robot_stopped_alone_leaves_the_others_streaming() {
    let mut fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    let addrs: Vec<_> = fleet.addrs().collect();
    let mut clients: Vec<Raw> = addrs.iter().map(|&a| stream(a, 500.0)).collect();
    let mut recipe = outputs(&["timestamp", "actual_q"]);
    for c in &mut clients {
        c.recv_data(&mut recipe);
    }
    fleet.take(1).unwrap().shutdown().unwrap();
    assert!(clients[1].read_to_close().len() < 1 << 20);
    for i in [0, 2] {
        let before = {
            clients[i].recv_data(&mut recipe);
            tick_of(double(&recipe, "timestamp"), 500)
        };
        for n in 1..=100 {
            clients[i].recv_data(&mut recipe);
            assert_eq!(tick_of(double(&recipe, "timestamp"), 500), before + n);
        }
    }
    assert_eq!(fleet.addrs().count(), 2);
    fleet.shutdown().unwrap();
}

#[test]
fn fleet_ports_count_up_from_a_fixed_port_and_may_not_pass_65535() {
    let err = Sim::builder()
        .bind("127.0.0.1:65530".parse().unwrap())
        .start_fleet(7)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::FleetPorts {
                first: 65530,
                robots: 7
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "7 robots from port 65530 would pass port 65535"
    );
}

/// Voluntary context switches of this process's threads whose name starts with `prefix`.
#[cfg(target_os = "linux")]
fn wake_ups(prefix: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let path = task.path();
        let Ok(name) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if !name.starts_with(prefix) {
            continue;
        }
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

/// The point of a fleet: 10 robots streaming at 500 Hz wake the connection threads
/// almost never (the clock thread writes), where 10 separate simulators would wake
/// each connection 500 times a second.
#[cfg(target_os = "linux")]
#[test]
fn a_fleet_wakes_one_clock_thread_not_one_thread_per_robot() {
    let fleet = Sim::builder().deterministic().start_fleet(10).unwrap();
    let mut clients: Vec<Raw> = fleet.addrs().map(|a| stream(a, 500.0)).collect();
    let mut recipe = outputs(&["timestamp", "actual_q"]);
    for c in &mut clients {
        c.recv_data(&mut recipe);
    }
    let before = wake_ups("rtde-sim-conn");
    // 250 packages per robot: half a second of streaming.
    for _ in 0..250 {
        for c in &mut clients {
            c.recv_data(&mut recipe);
        }
    }
    let woken = wake_ups("rtde-sim-conn") - before;
    // Each connection thread wakes every 100 ms to look for shutdown: about 5 each.
    // Paced from their own threads they would wake 2,500 times.
    assert!(
        woken < 200,
        "connection threads woke {woken} times for 2,500 packages"
    );
    fleet.shutdown().unwrap();
}
