//! Reading the robots: the one place that talks RTDE.
//!
//! Each robot is read by rtde-core's async driver ([`rtde_core::tokio`]) as a task on the
//! bridge's runtime ([`spawn`]), which puts everything into the robot's [`RobotQueue`]
//! (packages, online, offline); the publishing side sees nothing else.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::fields::{Direction, lookup};
use rtde_core::tokio::{AsyncClient, Packages};
use rtde_core::{ConnectOptions, DynamicRecipe, Recipe, ReconnectPolicy, Report};
use rtde_record::capture::Header;

use crate::backoff::Backoff;
use crate::config::Robot;
use crate::queue::{RobotQueue, timestamp_of};

/// How much of a robot's stream the async driver's package queue holds for the reader:
/// the reader empties it at every read, and a read is deferred by a batch at most
/// ([`rtde_core::tokio::MAX_READ_DEFERRAL`] at the very most), so a second covers a
/// stalled runtime too; what overflows is counted as lost. The robot's [`RobotQueue`] is
/// the buffer that rides out a broker outage. Every slot of the driver's queue holds a
/// buffer from the first package on: sized by time, 100 robots at 500 Hz keep 5 MiB,
/// where 4,096 slots a robot kept 35 MiB, and the smaller rings cost less CPU to go round.
const READ_QUEUE: Duration = Duration::from_secs(1);

/// The package queue's capacity for a robot streaming at `frequency`.
fn read_queue_capacity(frequency: f64) -> usize {
    // The configuration bounds the frequency to (0, 500] Hz.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let packages = (frequency * READ_QUEUE.as_secs_f64()).ceil().min(1e6) as usize;
    packages.max(16)
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Starts reading `robot` into `queue` as a task on the current runtime, with the async
/// driver, until `stop` turns true; reconnects under `policy`, round after round.
pub(crate) fn spawn(
    robot: Robot,
    queue: Arc<RobotQueue>,
    stop: tokio::sync::watch::Receiver<bool>,
    policy: ReconnectPolicy,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        read(&robot, &queue, stop, policy).await;
        queue.offline("the bridge stopped".into());
        queue.close();
    })
}

/// Returns once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Waits `d`, or until `stop`; returns whether to go on.
async fn pause(d: Duration, stop: &mut tokio::sync::watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        () = stopped(stop) => false,
    }
}

async fn read(
    robot: &Robot,
    queue: &RobotQueue,
    mut stop: tokio::sync::watch::Receiver<bool>,
    policy: ReconnectPolicy,
) {
    let options = ConnectOptions::new()
        .connect_timeout(Duration::from_secs(2))
        .reconnect(policy);
    let names: Vec<&str> = robot.fields.iter().map(String::as_str).collect();
    let recipe = match DynamicRecipe::outputs(names.iter().copied()) {
        Ok(r) => r,
        Err(e) => {
            queue.offline(format!("recipe refused: {e}"));
            return;
        }
    };
    let mut backoff = Backoff::new(policy);
    // What the rounds before this one skipped and lost: each round's client counts from 0.
    let mut before = Losses::default();
    while !*stop.borrow() {
        let (client, mut packages, task) = match start_stream(robot, &recipe, &options).await {
            Ok(c) => c,
            Err(why) => {
                queue.offline(why);
                if !pause(backoff.failed(), &mut stop).await {
                    return;
                }
                continue;
            }
        };
        backoff.succeeded();
        queue.online(stream_header(robot, &client));
        match relay(robot, queue, &client, &mut packages, &mut stop, before).await {
            Ended::Stopped => {
                let _ = client.close().await;
                let _ = task.await;
                return;
            }
            Ended::LinkLost => {
                let why = match task.await {
                    Ok(Err(e)) => format!("link lost: {}", Report(&e)),
                    _ => "link lost".to_owned(),
                };
                queue.offline(why);
                before = before.plus(&client.stats());
            }
        }
    }
}

/// The driver's task for one connection, which ends with the reason the link went.
type ConnectionTask = tokio::task::JoinHandle<Result<(), rtde_core::Error>>;

/// Connects to `robot`, sets up `recipe` and starts its stream; the error is what the
/// robot's queue is told when it goes offline.
async fn start_stream(
    robot: &Robot,
    recipe: &DynamicRecipe,
    options: &ConnectOptions,
) -> Result<(AsyncClient, Packages, ConnectionTask), String> {
    let addr = robot
        .socket_addr()
        .map_err(|e| format!("cannot resolve `{}`: {e}", robot.address))?;
    let (client, connection) = rtde_core::tokio::connect(addr, options.clone())
        .await
        .map_err(|e| Report(&e).to_string())?;
    let task = tokio::spawn(connection);
    let ready = async {
        client.setup_outputs(recipe.spec(), robot.frequency).await?;
        let packages = client.packages(read_queue_capacity(robot.frequency))?;
        client.start().await?;
        Ok::<_, rtde_core::Error>(packages)
    }
    .await;
    match ready {
        Ok(packages) => Ok((client, packages, task)),
        Err(e) => {
            task.abort();
            Err(Report(&e).to_string())
        }
    }
}

/// The header of the stream `client` is reading from `robot` now.
fn stream_header(robot: &Robot, client: &AsyncClient) -> Header {
    Header {
        protocol: client.protocol_version(),
        controller: client.controller_version(),
        frequency: robot.frequency,
        recipe_id: client.with_session(rtde_core::Session::output_recipe_id),
        started_unix_micros: unix_us(),
        fields: robot
            .fields
            .iter()
            .filter_map(|n| lookup(Direction::Output, n))
            .collect(),
    }
}

/// Packages skipped and lost, summed over a robot's connections.
#[derive(Debug, Default, Clone, Copy)]
struct Losses {
    skipped: u64,
    lost: u64,
}

impl Losses {
    /// These and what a connection with `stats` added.
    fn plus(self, stats: &rtde_core::Stats) -> Self {
        Self {
            skipped: self.skipped + stats.skipped,
            lost: self.lost + stats.lost + stats.overflowed,
        }
    }
}

/// Why [`relay`] returned.
enum Ended {
    /// `stop` turned true.
    Stopped,
    /// The driver gave up on the link.
    LinkLost,
}

/// Moves what `packages` receives into `queue` until `stop` or the link is lost; `before`
/// is what earlier connections skipped and lost.
async fn relay(
    robot: &Robot,
    queue: &RobotQueue,
    client: &AsyncClient,
    packages: &mut Packages,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    before: Losses,
) -> Ended {
    let mut last_reconnects = 0;
    let mut pace = Pace::default();
    let stop_now = stopped(stop);
    tokio::pin!(stop_now);
    loop {
        let first = tokio::select! {
            received = packages.recv() => received,
            () = &mut stop_now => return Ended::Stopped,
        };
        // Everything that came with it goes into the queue at once: one wake-up,
        // one look at the counters, for the whole read.
        let stats = client.stats();
        if stats.reconnects != last_reconnects {
            // The driver reconnected: a new stream and time map.
            last_reconnects = stats.reconnects;
            queue.online(stream_header(robot, client));
            pace = Pace::default();
        }
        let now = unix_us();
        let Losses { skipped, lost } = before.plus(&stats);
        let mut newest = None;
        let mut next = Some(first);
        while let Some(received) = next.take() {
            match received {
                Ok(payload) => {
                    queue.push(payload, now, skipped, lost);
                    newest = Some(timestamp_of(payload));
                }
                Err(rtde_core::Error::ConnectionLost) => return Ended::LinkLost,
                // A package that does not fit the recipe: the session counts it
                // as skipped; the connection goes on.
                Err(_) => {}
            }
            next = packages.try_recv();
        }
        if let Some(newest) = newest
            && let Some(until) = pace.next_read(newest, now, queue.due(newest), queue.period())
        {
            client.defer_reads(until);
        }
    }
}

/// When to read a robot next so that one read brings most of a batch: the packages wait
/// in the socket meanwhile (as they would have in the open batch), and the bridge wakes
/// once for them instead of once per package.
///
/// The read is asked for half a period before the package that closes the batch is due,
/// so that package is read as it arrives, as without pacing: no package is published
/// later for it. That read also keeps the mapping from the controller's clock to the
/// host's honest: it is the smallest delay seen between a package's `timestamp` and the
/// read that brought it (reads that come late only ever show a larger one), allowed to
/// grow by [`Pace::DRIFT_US`] per read for clocks that drift apart. Pacing pays only
/// when it saves reads: it asks for none unless at least [`Pace::MIN_SAVED`] packages
/// would come in the one read.
#[derive(Debug, Default)]
struct Pace {
    /// Host time (µs since the epoch) minus controller time (µs), at its smallest.
    offset_us: Option<i64>,
}

impl Pace {
    /// How much the offset may grow per read.
    const DRIFT_US: i64 = 1;
    /// The fewest packages one deferred read must bring to be worth its timer.
    const MIN_SAVED: f64 = 2.0;

    /// Given the newest package read (`newest`, read at `now_unix_us`), the timestamp of
    /// the package that closes the batch (`due`) and the period: when to read next, if
    /// not as packages come.
    fn next_read(
        &mut self,
        newest: f64,
        now_unix_us: i64,
        due: f64,
        period: Duration,
    ) -> Option<Instant> {
        let period = period.as_secs_f64();
        // The packages between the newest and the one that closes the batch.
        if period <= 0.0 || (due - newest) / period - 1.0 < Self::MIN_SAVED - 1e-6 {
            return None;
        }
        // Controller timestamps are seconds since its start: far inside i64 as µs.
        #[allow(clippy::cast_possible_truncation)]
        let us = |t: f64| (t * 1e6).round() as i64;
        let seen = now_unix_us - us(newest);
        let offset = self
            .offset_us
            .map_or(seen, |o| o.saturating_add(Self::DRIFT_US).min(seen));
        self.offset_us = Some(offset);
        let wait = us(due - period / 2.0) + offset - now_unix_us;
        u64::try_from(wait)
            .ok()
            .filter(|&w| w > 0)
            .map(|w| Instant::now() + Duration::from_micros(w))
    }
}
