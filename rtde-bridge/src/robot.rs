//! Reading the robots: the one place that talks RTDE.
//!
//! Each robot is read by rtde-core's async driver ([`rtde_core::tokio`]) as a task on the
//! bridge's runtime ([`spawn_async`]); [`spawn`] reads it with the blocking [`Client`] on a
//! thread of its own instead (what the bridge did before the async driver existed, kept
//! for comparison). Both put everything into the robot's [`RobotQueue`] (packages,
//! online, offline); the publishing side sees nothing else.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_core::capture::Header;
use rtde_core::fields::{Direction, lookup};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, ReconnectPolicy};

use crate::config::Robot;
use crate::queue::RobotQueue;

/// How long one wait for a package lasts: the longest a stop waits to be noticed.
const RECV_WAIT: Duration = Duration::from_millis(200);

/// Microseconds since the Unix epoch, now.
pub(crate) fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Starts reading `robot` into `queue` until `stop`; reconnects under `policy`, round
/// after round, while the robot is unreachable.
pub(crate) fn spawn(
    robot: Robot,
    queue: Arc<RobotQueue>,
    stop: Arc<AtomicBool>,
    policy: ReconnectPolicy,
) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(format!("rtde-bridge-{}", robot.name))
        .spawn(move || {
            read(&robot, &queue, &stop, policy);
            queue.offline("the bridge stopped".into());
            queue.close();
        })
}

/// Sleeps `d`, or less when `stop` is set; returns whether to go on.
fn pause(d: Duration, stop: &AtomicBool) -> bool {
    let until = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        thread::sleep(left.min(Duration::from_millis(50)));
    }
    false
}

fn read(robot: &Robot, queue: &RobotQueue, stop: &AtomicBool, policy: ReconnectPolicy) {
    let options = ConnectOptions::new()
        .connect_timeout(Duration::from_secs(2))
        .read_timeout(Some(RECV_WAIT))
        .reconnect(policy);
    let names: Vec<&str> = robot.fields.iter().map(String::as_str).collect();
    let recipe = match DynamicRecipe::outputs(names.iter().copied()) {
        Ok(r) => r,
        Err(e) => {
            // The configuration checked every name: only a registry change gets here.
            queue.offline(format!("recipe refused: {e}"));
            return;
        }
    };
    let mut attempt = 0u32;
    // Totals of the connections before this one (a new client counts from zero).
    let (mut skipped_before, mut lost_before) = (0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        attempt = attempt.saturating_add(1);
        let backoff = policy
            .get_initial_backoff()
            .saturating_mul(1 << attempt.saturating_sub(1).min(16))
            .min(policy.get_max_backoff().max(policy.get_initial_backoff()));
        let mut client = match connect(robot, &options, &recipe) {
            Ok(c) => c,
            Err(why) => {
                queue.offline(why);
                if !pause(backoff, stop) {
                    return;
                }
                continue;
            }
        };
        attempt = 0;
        queue.online(stream_of(&client, robot));
        let mut last_reconnects = 0;
        let mut buf = Vec::new();
        loop {
            if stop.load(Ordering::Relaxed) {
                let _ = client.close();
                return;
            }
            match client.recv() {
                Ok(payload) => {
                    buf.clear();
                    buf.extend_from_slice(payload);
                    let now = unix_us();
                    let stats = client.stats();
                    if stats.reconnects != last_reconnects {
                        // The client reconnected within the call: a new stream and time map.
                        last_reconnects = stats.reconnects;
                        queue.online(stream_of(&client, robot));
                    }
                    queue.push(
                        &buf,
                        now,
                        skipped_before + stats.skipped,
                        lost_before + stats.lost,
                    );
                }
                Err(e) if e.is_timeout() => {}
                Err(e) => {
                    // The client's own reconnection round failed too.
                    queue.offline(format!("link lost: {e}"));
                    let stats = client.stats();
                    skipped_before += stats.skipped;
                    lost_before += stats.lost;
                    break;
                }
            }
        }
    }
}

/// Connects, sets the recipe up and starts streaming.
fn connect(
    robot: &Robot,
    options: &ConnectOptions,
    recipe: &DynamicRecipe,
) -> Result<Client, String> {
    let addr = robot
        .socket_addr()
        .map_err(|e| format!("cannot resolve `{}`: {e}", robot.address))?;
    let mut client = Client::connect(addr, options.clone()).map_err(|e| e.to_string())?;
    client
        .setup_outputs(recipe.spec(), robot.frequency)
        .map_err(|e| e.to_string())?;
    client.start().map_err(|e| e.to_string())?;
    Ok(client)
}

/// What a capture header says about the client's stream.
fn stream_of(client: &Client, robot: &Robot) -> Header {
    Header {
        protocol: client.protocol_version(),
        controller: client.controller_version(),
        frequency: robot.frequency,
        recipe_id: client.output_recipe_id(),
        started_unix_micros: unix_us(),
        fields: robot
            .fields
            .iter()
            .filter_map(|n| lookup(Direction::Output, n))
            .collect(),
    }
}

/// Starts reading `robot` into `queue` as a task on the current runtime, with the async
/// driver, until `stop` turns true; reconnects under `policy`, round after round.
pub(crate) fn spawn_async(
    robot: Robot,
    queue: Arc<RobotQueue>,
    stop: tokio::sync::watch::Receiver<bool>,
    policy: ReconnectPolicy,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        read_async(&robot, &queue, stop, policy).await;
        queue.offline("the bridge stopped".into());
        queue.close();
    })
}

/// Returns once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Waits `d`, or until `stop`; returns whether to go on.
async fn pause_async(d: Duration, stop: &mut tokio::sync::watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        () = stopped(stop) => false,
    }
}

async fn read_async(
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
    let mut attempt = 0u32;
    let (mut skipped_before, mut lost_before) = (0u64, 0u64);
    while !*stop.borrow() {
        attempt = attempt.saturating_add(1);
        let backoff = policy
            .get_initial_backoff()
            .saturating_mul(1 << attempt.saturating_sub(1).min(16))
            .min(policy.get_max_backoff().max(policy.get_initial_backoff()));
        let started = async {
            let addr = robot
                .socket_addr()
                .map_err(|e| format!("cannot resolve `{}`: {e}", robot.address))?;
            let (client, connection) = rtde_core::tokio::connect(addr, options.clone())
                .await
                .map_err(|e| e.to_string())?;
            let task = tokio::spawn(connection);
            let ready = async {
                client.setup_outputs(recipe.spec(), robot.frequency).await?;
                let packages = client.packages(4096)?;
                client.start().await?;
                Ok::<_, rtde_core::Error>(packages)
            }
            .await;
            match ready {
                Ok(packages) => Ok((client, packages, task)),
                Err(e) => {
                    task.abort();
                    Err(e.to_string())
                }
            }
        };
        let (client, mut packages, task) = match started.await {
            Ok(c) => c,
            Err(why) => {
                queue.offline(why);
                if !pause_async(backoff, &mut stop).await {
                    return;
                }
                continue;
            }
        };
        attempt = 0;
        let stream = |client: &rtde_core::tokio::AsyncClient| Header {
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
        };
        queue.online(stream(&client));
        let mut last_reconnects = 0;
        loop {
            tokio::select! {
                received = packages.recv() => match received {
                    Ok(payload) => {
                        let stats = client.stats();
                        if stats.reconnects != last_reconnects {
                            last_reconnects = stats.reconnects;
                            queue.online(stream(&client));
                        }
                        queue.push(
                            payload,
                            unix_us(),
                            skipped_before + stats.skipped,
                            lost_before + stats.lost + stats.overflowed,
                        );
                    }
                    Err(rtde_core::Error::ConnectionLost) => {
                        let why = match task.await {
                            Ok(Err(e)) => format!("link lost: {e}"),
                            _ => "link lost".to_owned(),
                        };
                        queue.offline(why);
                        let stats = client.stats();
                        skipped_before += stats.skipped;
                        lost_before += stats.lost + stats.overflowed;
                        break;
                    }
                    // A package that does not fit the recipe: the session counts it as
                    // skipped; the connection goes on.
                    Err(_) => {}
                },
                () = stopped(&mut stop) => {
                    let _ = client.close().await;
                    let _ = task.await;
                    return;
                }
            }
        }
    }
}
