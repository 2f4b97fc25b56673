//! `rtde bridge`: a fleet's telemetry into MQTT, from a configuration file.

use crate::said;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rtde_bridge::{Bridge, Config, StartOptions};

use crate::args;

/// Publish the RTDE outputs of many robots to an MQTT broker.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Publish the RTDE outputs of many robots to an MQTT broker, batched, losing nothing silently.

The configuration file (TOML) lists the broker (or a cluster's nodes, `urls`: the bridge \
connects to the first that answers and, when that node is lost, resumes its persistent \
session on the next, re-sending what the lost node had not acknowledged), the topic layout, the payload format \
(JSON, or binary batches in the raw-capture format) and the robots. Every batch carries \
the robot's name, per-robot sequence numbers, the count of packages dropped so far, the \
controller timestamps and the robot-time to host-time mapping. Each robot's queue is \
bounded: while the broker is down the oldest batches are dropped, and counted. Robot \
status (online, offline and why) is retained on each robot's status topic; the bridge's \
birth and last will on its own topic. The format is documented in rtde_bridge::payload, \
the configuration in rtde_bridge::config.

With format = \"sparkplug\" the bridge is a Sparkplug B edge node and each robot a device \
(spBv1.0 topics, births and deaths instead of statuses, the same facts as metrics): see \
rtde_bridge::sparkplug.

Ctrl-C publishes what is queued, marks every robot offline and disconnects.",
    after_help = "Examples:
  rtde bridge fleet.toml
      until Ctrl-C
  rtde bridge fleet.toml --duration 60s
  rtde subscribe --broker mqtt://127.0.0.1:1883 --out recordings/
      the other end: one CSV and one raw capture per robot"
)]
pub(crate) struct BridgeArgs {
    /// The configuration file.
    #[arg(value_name = "CONFIG.toml")]
    config: PathBuf,
    /// Stop after this long: 10s, 2m, 1h [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = args::duration)]
    duration: Option<Duration>,
    /// How long to wait for the broker at start.
    #[arg(long, value_name = "DURATION", value_parser = args::duration, default_value = "5s")]
    broker_timeout: Duration,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// After a broker error, also print the MQTT client's own account of it.
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// Runs `rtde bridge`.
pub(crate) fn run(args: &BridgeArgs) -> Result<(), String> {
    let config = Config::read(&args.config).map_err(said)?;
    let say = |text: &str| {
        if !args.quiet {
            eprintln!("rtde bridge: {text}");
        }
    };
    let scheme = if config.broker.tls.is_some() {
        "mqtts"
    } else {
        "mqtt"
    };
    let nodes: Vec<String> = config
        .broker
        .nodes
        .iter()
        .map(|(host, port)| format!("{scheme}://{host}:{port}"))
        .collect();
    let url = if nodes.len() > 1 {
        format!("the first that answers of {}", nodes.join(", "))
    } else {
        nodes.join("")
    };
    let robots = config.robots.len();
    let mut options = StartOptions::default();
    options.broker_timeout = args.broker_timeout;
    crate::interrupt::handle()?;
    let bridge = Bridge::start(config, options).map_err(said)?;
    say(&format!(
        "{robots} robot{} to {url}, session {}; Ctrl-C stops",
        if robots == 1 { "" } else { "s" },
        bridge.session()
    ));
    let started = Instant::now();
    let mut last_report = started;
    let mut was_connected = true;
    // A broker lost and back between two looks shows only as one more connection.
    let mut connections_seen = bridge.counts().broker_connections;
    let mut lost_before = 0;
    while !crate::interrupt::asked() && args.duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(50));
        let counts = bridge.counts();
        let lost_unseen = was_connected && counts.broker_connections > connections_seen;
        if (was_connected && !counts.broker_connected) || lost_unseen {
            let why = bridge.broker_error();
            say(&format!(
                "{}; queueing, oldest dropped past the bound",
                why.as_ref()
                    .map_or_else(|| "broker lost".to_owned(), ToString::to_string)
            ));
            if let Some(why) = why.filter(|_| args.verbose) {
                say(&format!("  the MQTT client said: {}", why.detail()));
            }
        }
        if counts.broker_connected && (!was_connected || lost_unseen) {
            let node = nodes.get(counts.broker_node).map_or("", String::as_str);
            say(&format!("broker back ({node}); publishing what was queued"));
        }
        was_connected = counts.broker_connected;
        connections_seen = counts.broker_connections;
        // Said as soon as the bridge knows, not at the next report.
        if counts.lost_in_flight() > lost_before {
            lost_before = counts.lost_in_flight();
            let robots: Vec<String> = counts
                .robots
                .iter()
                .filter(|(_, c)| c.lost_in_flight > 0)
                .map(|(name, c)| format!("{name} {}", c.lost_in_flight))
                .collect();
            say(&format!(
                "{lost_before} packages lost in flight with a broken broker connection so far \
                 ({}); the robots' next batches count them as dropped",
                robots.join(", ")
            ));
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            say(&format!(
                "{} packages read, {} published, {} dropped, {} lost in flight, {} queued",
                counts.received(),
                counts.published(),
                counts.dropped(),
                counts.lost_in_flight(),
                counts.queued()
            ));
        }
    }
    say("stopping: publishing what is queued");
    let counts = bridge.shutdown();
    for (name, c) in &counts.robots {
        say(&format!(
            "{name}: {} packages read, {} published in {} batches, {} dropped, {} lost in flight",
            c.received, c.published, c.batches, c.dropped, c.lost_in_flight
        ));
    }
    if counts.reconnected() {
        say(&format!(
            "broker: {} connections, {} failovers to another node, {} publications re-sent \
             unacknowledged (each may reach a subscriber twice)",
            counts.broker_connections, counts.failovers, counts.resent
        ));
    }
    if counts.queued() > 0 {
        return Err(format!(
            "{} packages not delivered: the broker did not take them before the drain timeout",
            counts.queued()
        ));
    }
    Ok(())
}
