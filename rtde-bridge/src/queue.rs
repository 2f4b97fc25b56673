//! Each robot's bounded queue between the side that reads the robot and the side that
//! publishes: packages are batched by count or age, status changes keep their place
//! among the batches, and past the bound the oldest batch is dropped and counted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rtde_record::capture::Header;
use tokio::sync::Notify;

use crate::payload::Batch;

/// What the publishing side takes from a queue, in order.
#[derive(Debug)]
pub(crate) enum Out {
    /// A batch to publish on the robot's data topic.
    Batch(Batch),
    /// The robot came online (with its stream) or went offline (with the reason).
    Status {
        online: bool,
        reason: Option<String>,
    },
}

/// Counters of one robot, for the summary and the benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RobotCounts {
    /// Packages read from the robot.
    pub received: u64,
    /// Packages dropped from the queue, oldest first, because it was full.
    pub dropped: u64,
    /// Packages published but lost with a broken broker connection: the broker came back
    /// without the session that held them, or (Sparkplug B) the client had not written
    /// them yet. Counted when the bridge learns of it, at the reconnection.
    pub lost_in_flight: u64,
    /// Packages handed to the MQTT client.
    pub published: u64,
    /// Batches handed to the MQTT client.
    pub batches: u64,
    /// Packages still queued.
    pub queued: u64,
}

struct Open {
    started: Instant,
    first: u64,
    /// The controller `timestamp` of the batch's first package.
    first_timestamp: f64,
    payloads: Vec<u8>,
    count: usize,
}

/// Slack for comparing controller timestamps, which are doubles: far below any period.
const TIMESTAMP_SLACK: f64 = 1e-6;

struct Inner {
    stream: Option<Arc<Header>>,
    t0_unix_us: i64,
    t0_timestamp: f64,
    open: Option<Open>,
    out: VecDeque<Out>,
    /// Packages in `out`'s batches and the open batch.
    queued: usize,
    next_package: u64,
    next_seq: u64,
    dropped: u64,
    lost_in_flight: u64,
    skipped: u64,
    lost: u64,
    received: u64,
    published: u64,
    batches: u64,
    /// The status last queued: `None` before the first.
    announced: Option<bool>,
    closed: bool,
}

impl Inner {
    /// What a batch's `dropped` says: every package the bridge lost, from the queue or
    /// in flight, so that a subscriber can account for each gap.
    fn bridge_lost(&self) -> u64 {
        self.dropped + self.lost_in_flight
    }
}

/// One robot's queue; shared by its reader and its publisher.
pub(crate) struct RobotQueue {
    pub(crate) name: String,
    pub(crate) session: u64,
    batch_packages: usize,
    batch_time: Duration,
    /// The robot's output period: a batch closes when the next package would come a
    /// batch time or more after its first (by the controller's timestamps), so no
    /// package waits for its batch longer than the batch time, however late the reads.
    period: Duration,
    bound: usize,
    inner: Mutex<Inner>,
    /// Wakes the publisher when something is ready.
    pub(crate) ready: Notify,
}

impl RobotQueue {
    pub(crate) fn new(
        name: String,
        session: u64,
        batch_packages: usize,
        batch_time: Duration,
        bound: usize,
        period: Duration,
    ) -> Self {
        RobotQueue {
            name,
            session,
            batch_packages: batch_packages.max(1),
            batch_time,
            period,
            bound: bound.max(batch_packages.max(1)),
            inner: Mutex::new(Inner {
                stream: None,
                t0_unix_us: 0,
                t0_timestamp: 0.0,
                open: None,
                out: VecDeque::new(),
                queued: 0,
                next_package: 0,
                next_seq: 0,
                dropped: 0,
                lost_in_flight: 0,
                skipped: 0,
                lost: 0,
                received: 0,
                published: 0,
                batches: 0,
                announced: None,
                closed: false,
            }),
            ready: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panicked holder leaves counters, not broken invariants that matter here.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection to the robot streams `stream`: the time mapping starts again at
    /// its first package, and the robot is online.
    pub(crate) fn online(&self, stream: Header) {
        let mut q = self.lock();
        self.close_open(&mut q);
        q.stream = Some(Arc::new(stream));
        q.t0_unix_us = 0;
        if q.announced != Some(true) {
            q.announced = Some(true);
            q.out.push_back(Out::Status {
                online: true,
                reason: None,
            });
        }
        drop(q);
        self.ready.notify_one();
    }

    /// The robot is unreachable: what is batched goes out first, then the offline status.
    /// Repeated while it stays offline, only the first counts.
    pub(crate) fn offline(&self, reason: String) {
        let mut q = self.lock();
        self.close_open(&mut q);
        if q.announced != Some(false) {
            q.announced = Some(false);
            q.out.push_back(Out::Status {
                online: false,
                reason: Some(reason),
            });
        }
        drop(q);
        self.ready.notify_one();
    }

    /// One package from the robot: `payload` (its values), received at host time
    /// `now_unix_us`, with the client's skipped and lost totals for this connection
    /// added to the session's.
    ///
    /// Returns whether a batch closed (the publisher has been woken).
    pub(crate) fn push(&self, payload: &[u8], now_unix_us: i64, skipped: u64, lost: u64) -> bool {
        let now = Instant::now();
        let timestamp = timestamp_of(payload);
        let mut guard = self.lock();
        let q = &mut *guard;
        q.received += 1;
        q.skipped = skipped;
        q.lost = lost;
        if q.t0_unix_us == 0 {
            q.t0_unix_us = now_unix_us;
            q.t0_timestamp = timestamp;
        }
        // A batch whose robot went quiet: its packages have waited long enough.
        if q.open
            .as_ref()
            .is_some_and(|o| now.duration_since(o.started) >= self.batch_time)
        {
            self.close_open(q);
        }
        let first = q.next_package;
        let open = q.open.get_or_insert_with(|| Open {
            started: now,
            first,
            first_timestamp: timestamp,
            payloads: Vec::with_capacity(payload.len() * self.batch_packages.min(64)),
            count: 0,
        });
        open.payloads.extend_from_slice(payload);
        open.count += 1;
        q.next_package += 1;
        q.queued += 1;
        let full = open.count >= self.batch_packages
            || timestamp - open.first_timestamp + self.period.as_secs_f64()
                >= self.batch_time.as_secs_f64() - TIMESTAMP_SLACK;
        if full {
            self.close_open(q);
        }
        drop(guard);
        if full {
            self.ready.notify_one();
        }
        full
    }

    /// The robot's output period.
    pub(crate) fn period(&self) -> Duration {
        self.period
    }

    /// The controller `timestamp` of the package that will close the open batch (or the
    /// next one, if none is open), from the last package pushed: when a reader that
    /// defers its reads should read next.
    pub(crate) fn due(&self, last_timestamp: f64) -> f64 {
        let period = self.period.as_secs_f64();
        if period <= 0.0 {
            return last_timestamp;
        }
        let q = self.lock();
        let first = q
            .open
            .as_ref()
            .map_or(last_timestamp + period, |o| o.first_timestamp);
        let filled_by = packages_per_batch(self.batch_time, self.period).min(self.batch_packages);
        // The package that fills the batch, counted from its first.
        #[allow(clippy::cast_precision_loss)] // batch sizes are far below 2^52
        let index = filled_by.saturating_sub(1) as f64;
        first + index * period
    }

    /// Closes the open batch if it is older than the batch time; returns whether a
    /// batch is ready.
    pub(crate) fn close_aged(&self) -> bool {
        let mut q = self.lock();
        if q.open
            .as_ref()
            .is_some_and(|o| o.started.elapsed() >= self.batch_time)
        {
            self.close_open(&mut q);
        }
        !q.out.is_empty()
    }

    /// Ends the queue: what is in it is still taken, then [`RobotQueue::take`] says so.
    pub(crate) fn close(&self) {
        let mut q = self.lock();
        self.close_open(&mut q);
        q.closed = true;
        drop(q);
        self.ready.notify_one();
    }

    /// The next thing to publish; `Err(())` once the queue is closed and empty.
    pub(crate) fn take(&self) -> Result<Option<Out>, ()> {
        let mut q = self.lock();
        match q.out.pop_front() {
            Some(Out::Batch(mut b)) => {
                // Stamped now: every older batch has been taken or dropped, so the
                // count covers exactly the gap before this batch (a loss in flight found
                // later is counted in the batches taken after it is found).
                b.dropped = q.bridge_lost();
                let n = b.count();
                q.queued -= n;
                q.published += n as u64;
                q.batches += 1;
                Ok(Some(Out::Batch(b)))
            }
            Some(status) => Ok(Some(status)),
            None if q.closed => Err(()),
            None => Ok(None),
        }
    }

    /// `packages` of this robot, published, were lost with a broken broker connection.
    pub(crate) fn lost_in_flight(&self, packages: u64) {
        self.lock().lost_in_flight += packages;
    }

    /// The counters so far.
    pub(crate) fn counts(&self) -> RobotCounts {
        let q = self.lock();
        RobotCounts {
            received: q.received,
            dropped: q.dropped,
            lost_in_flight: q.lost_in_flight,
            published: q.published,
            batches: q.batches,
            queued: q.queued as u64,
        }
    }

    /// Moves the open batch to the queue, then drops the oldest batches while more
    /// packages wait than the bound allows.
    fn close_open(&self, q: &mut Inner) {
        let Some(open) = q.open.take() else {
            return;
        };
        let Some(stream) = q.stream.clone() else {
            return;
        };
        let batch = Batch {
            robot: self.name.clone(),
            session: self.session,
            seq: q.next_seq,
            first: open.first,
            dropped: q.bridge_lost(),
            skipped: q.skipped,
            lost: q.lost,
            t0_unix_us: q.t0_unix_us,
            t0_timestamp: q.t0_timestamp,
            stream,
            payloads: open.payloads,
        };
        debug_assert_eq!(batch.count(), open.count);
        q.next_seq += 1;
        q.out.push_back(Out::Batch(batch));
        while q.queued > self.bound {
            let Some(at) = q.out.iter().position(|o| matches!(o, Out::Batch(_))) else {
                break;
            };
            if let Some(Out::Batch(b)) = q.out.remove(at) {
                let n = b.count();
                q.queued -= n;
                q.dropped += n as u64;
            }
        }
    }
}

/// How many packages a batch holds when batches close by time: a robot streaming every
/// `period` fills one with the most packages whose first waits less than `batch_time`
/// for the last (the rule the bridge's robot queue closes batches by, for packages that
/// come without gaps). A batch count below it closes batches sooner.
///
/// ```
/// use std::time::Duration;
/// use rtde_bridge::packages_per_batch;
///
/// let ms = Duration::from_millis;
/// // 10 ms batches: five packages at 500 Hz (the first waits 8 ms), two at 125 Hz.
/// assert_eq!(packages_per_batch(ms(10), Duration::from_secs_f64(1.0 / 500.0)), 5);
/// assert_eq!(packages_per_batch(ms(10), Duration::from_secs_f64(1.0 / 125.0)), 2);
/// // A period longer than the batch time: every package is a batch.
/// assert_eq!(packages_per_batch(ms(10), ms(20)), 1);
/// ```
#[must_use]
pub fn packages_per_batch(batch_time: Duration, period: Duration) -> usize {
    let period = period.as_secs_f64();
    if period <= 0.0 {
        return 1;
    }
    let after_first = ((batch_time.as_secs_f64() - TIMESTAMP_SLACK) / period - 1.0)
        .ceil()
        .max(0.0);
    // Saturates for absurd ratios; the configuration bounds both.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let after_first = after_first.min(1e9) as usize;
    after_first + 1
}

/// The controller `timestamp` of a package: its first field (the configuration puts
/// `timestamp` first).
pub(crate) fn timestamp_of(payload: &[u8]) -> f64 {
    payload
        .first_chunk::<8>()
        .map_or(0.0, |b| f64::from_be_bytes(*b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::timestamp_stream as stream;

    fn batches(q: &RobotQueue) -> Vec<Batch> {
        let mut out = Vec::new();
        while let Ok(Some(o)) = q.take() {
            if let Out::Batch(b) = o {
                out.push(b);
            }
        }
        out
    }

    #[test]
    fn batches_close_by_count_and_past_the_bound_the_oldest_are_dropped_and_counted() {
        let q = RobotQueue::new(
            "a".into(),
            1,
            4,
            Duration::from_secs(60),
            10,
            Duration::from_millis(2),
        );
        q.online(stream());
        for i in 0..30u32 {
            q.push(&f64::from(i).to_be_bytes(), 1, 0, 0);
        }
        // 30 packages in batches of 4: 7 closed and 2 open; at most 10 closed or open
        // wait, so the 5 oldest closed batches (20 packages) went.
        let counts = q.counts();
        assert_eq!(
            (counts.received, counts.dropped, counts.queued),
            (30, 20, 10)
        );
        let got = batches(&q);
        assert_eq!(got.iter().map(|b| b.first).collect::<Vec<_>>(), [20, 24]);
        assert_eq!(got.iter().map(|b| b.dropped).collect::<Vec<_>>(), [20, 20]);
        assert_eq!(got[0].seq, 5);
        assert_eq!(got[1].timestamp(3), Some(27.0));
        q.close();
        let last = batches(&q);
        assert_eq!((last[0].first, last[0].count()), (28, 2));
    }

    #[test]
    fn a_batch_closes_before_a_package_would_wait_longer_than_the_batch_time() {
        // The period is longer than the batch time: the next package always comes too late.
        let q = RobotQueue::new(
            "a".into(),
            1,
            50,
            Duration::from_millis(8),
            1000,
            Duration::from_millis(9),
        );
        q.online(stream());
        for i in 0..3u32 {
            q.push(&f64::from(i).to_be_bytes(), 1, 0, 0);
        }
        let got = batches(&q);
        assert_eq!(
            got.iter().map(|b| (b.first, b.count())).collect::<Vec<_>>(),
            [(0, 1), (1, 1), (2, 1)]
        );
    }

    #[test]
    fn packages_read_together_batch_by_their_timestamps_and_the_next_closing_one_is_known() {
        // 500 Hz, 10 ms batches: five packages a batch (the first waits 8 ms), however
        // the reads bunch them.
        let q = RobotQueue::new(
            "a".into(),
            1,
            1000,
            Duration::from_millis(10),
            1000,
            Duration::from_millis(2),
        );
        q.online(stream());
        let closed: Vec<bool> = (0..12u32)
            .map(|i| q.push(&(f64::from(i) * 0.002).to_be_bytes(), 1, 0, 0))
            .collect();
        assert_eq!(closed.iter().filter(|c| **c).count(), 2);
        assert!(closed[4] && closed[9]);
        // Packages 10 and 11 are open: the batch closes with package 14.
        assert!((q.due(0.022) - 0.028).abs() < 1e-9, "{}", q.due(0.022));
        let got = batches(&q);
        assert_eq!(
            got.iter().map(|b| (b.first, b.count())).collect::<Vec<_>>(),
            [(0, 5), (5, 5)]
        );
        // Just closed, none open: the next batch, 5 packages on, closes at package 19.
        for i in 12..15u32 {
            q.push(&(f64::from(i) * 0.002).to_be_bytes(), 1, 0, 0);
        }
        assert!((q.due(0.028) - 0.038).abs() < 1e-9, "{}", q.due(0.028));
    }

    #[test]
    fn status_changes_keep_their_place_and_are_never_dropped() {
        let q = RobotQueue::new(
            "a".into(),
            1,
            2,
            Duration::from_secs(60),
            2,
            Duration::from_millis(2),
        );
        q.offline("not yet reachable".into());
        q.online(stream());
        for i in 0..3u32 {
            q.push(&f64::from(i).to_be_bytes(), 1, 0, 0);
        }
        q.offline("link lost".into());
        q.offline("still lost".into());
        let mut seen = Vec::new();
        while let Ok(Some(o)) = q.take() {
            seen.push(match o {
                Out::Batch(b) => format!("batch {}+{}", b.first, b.count()),
                Out::Status { online, reason } => format!("{online} {reason:?}"),
            });
        }
        assert_eq!(
            seen,
            [
                "false Some(\"not yet reachable\")",
                "true None",
                "batch 2+1",
                "false Some(\"link lost\")"
            ]
        );
        assert_eq!(q.counts().dropped, 2);
    }
}
