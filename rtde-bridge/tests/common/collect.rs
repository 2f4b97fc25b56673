//! What a subscriber collected, and the checks every end-to-end test makes of it: shared
//! by the tests of each payload format.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rtde_bridge::{Message, SequenceCheck, StartOptions, Subscriber, Verdict};
use rtde_core::ReconnectPolicy;
use rtde_sim::Motion;

use crate::common::Broker;

/// A package as the subscriber saw it: number, timestamp, `actual_q`, host time (µs).
pub type Package = (u64, f64, [f64; 6], i64);

/// What the subscriber collected.
#[derive(Default)]
pub struct Collected {
    pub check: SequenceCheck,
    /// Per robot: (package number, timestamp, actual_q, host time µs) of each new package.
    pub packages: HashMap<String, Vec<Package>>,
    /// Per robot (None: the bridge): the statuses, in order, with the reason.
    pub statuses: Vec<(Option<String>, bool, Option<String>)>,
    pub unreadable: Vec<String>,
}

impl Collected {
    pub fn take(&mut self, message: Message) {
        match message {
            Message::Batch { batch, .. } => {
                if self.check.check(&batch) == Verdict::Duplicate {
                    return;
                }
                let list = self.packages.entry(batch.robot.clone()).or_default();
                for i in 0..batch.count() {
                    let p = batch.payload(i).unwrap();
                    let t = f64::from_be_bytes(p[..8].try_into().unwrap());
                    let mut q = [0.0; 6];
                    for (j, v) in q.iter_mut().enumerate() {
                        *v = f64::from_be_bytes(p[8 + 8 * j..16 + 8 * j].try_into().unwrap());
                    }
                    list.push((batch.first + i as u64, t, q, batch.host_time_us(i).unwrap()));
                }
            }
            Message::Status {
                robot,
                online,
                reason,
                ..
            } => self.statuses.push((robot, online, reason)),
            Message::Unreadable { why, .. } => self.unreadable.push(why),
            _ => {}
        }
    }

    /// Reads until `done` says so, at most `timeout`.
    pub fn until(
        &mut self,
        sub: &Subscriber,
        timeout: Duration,
        done: impl Fn(&Collected) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for the subscriber"
            );
            if let Some(m) = sub.recv_timeout(Duration::from_millis(100)) {
                self.take(m);
            }
        }
    }

    pub fn count(&self, robot: &str) -> u64 {
        self.check.packages(robot)
    }

    /// Every package of `robots` arrived once, numbered from 0, 125 Hz apart
    /// with no gap, host times increasing, with the simulator's motion law's values;
    /// nothing unreadable, no gap the bridge did not count.
    pub fn assert_every_package_follows_the_motion_law(
        &self,
        robots: &[(String, std::net::SocketAddr)],
    ) {
        assert!(self.unreadable.is_empty(), "{:?}", self.unreadable);
        assert_eq!(self.check.unexplained(), 0);
        for (name, _) in robots {
            // By number: a batch that arrives after later ones (a broker's failover may
            // deliver it so) fills its gap, and `SequenceCheck` counts it as late.
            let mut list = self.packages[name].clone();
            list.sort_by_key(|p| p.0);
            assert_eq!(self.check.gaps(name), 0, "{name}");
            for (k, (n, t, q, host)) in list.iter().enumerate() {
                assert_eq!(*n, k as u64, "{name}: package numbers in order from 0");
                assert_eq!(*q, Motion::DEFAULT.position(*t), "{name} at {t}");
                if k > 0 {
                    let (_, t0, _, h0) = list[k - 1];
                    assert_eq!(((t - t0) * 500.0).round(), 4.0, "{name}: 125 Hz, no gap");
                    assert!(host > &h0, "{name}: host times increase");
                }
            }
        }
    }
}

pub fn subscriber(broker: &Broker, id: &str) -> Subscriber {
    subscriber_to(broker, id, "rtde/#")
}

/// A subscriber to `filter`.
pub fn subscriber_to(broker: &Broker, id: &str, filter: &str) -> Subscriber {
    Subscriber::connect(
        "127.0.0.1",
        broker.port,
        id,
        &[filter.to_owned()],
        Duration::from_secs(5),
    )
    .unwrap()
}

pub fn unix_us() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_micros()).unwrap()
}

pub fn fast_reconnect() -> StartOptions {
    let mut options = StartOptions::default();
    options.robot_reconnect = ReconnectPolicy::new()
        .attempts(1)
        .initial_backoff(Duration::from_millis(50))
        .max_backoff(Duration::from_millis(200));
    options
}

pub fn robots(fleet: &rtde_sim::Fleet) -> Vec<(String, std::net::SocketAddr)> {
    fleet
        .addrs()
        .enumerate()
        .map(|(i, a)| (format!("arm-{i}"), a))
        .collect()
}
