//! `rtde subscribe`: the bridge's batches from the broker, to the same CSV and raw
//! captures `rtde record` writes, one pair per robot, with every sequence number checked.

use crate::said;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rtde_bridge::config::BrokerUrl;
use rtde_bridge::payload::Batch;
use rtde_bridge::{Message, SequenceCheck, Subscriber, Verdict};
use rtde_core::{DynamicRecipe, OutputRecipe};
use rtde_record::capture::{self, Header};

use crate::args;
use crate::outfile::PendingFile;
use crate::table;

/// Record the robots an `rtde bridge` publishes, from the broker.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Record the robots an `rtde bridge` publishes, from the MQTT broker: for each robot \
NAME, OUT/NAME.csv (as `rtde record` writes it) and OUT/NAME.rtde (a raw capture that \
`rtde replay` serves).

Every batch's package numbers are checked: duplicates (QoS 1 delivers at least once, and \
a bridge that failed over to another broker node re-sends what the dead node had not \
acknowledged) are left out and counted apart, neither a gap nor a loss; a batch that \
arrives after later ones fills its gap. Every gap is compared with the bridge's count of \
dropped packages. Each robot is counted from the first batch received of its bridge \
session, so what was published before the command joined is not missing. The summary \
gives, per robot and in all, the packages delivered, the duplicate batches, and the \
packages in gaps the bridge did not count, which make the command fail.

A robot whose stream changes (it reconnected to another controller version or recipe) \
continues in OUT/NAME.2.rtde, and so on. The session is persistent (client id --client-id): \
what is published while the subscriber reconnects is kept for it by the broker.",
    after_help = "Examples:
  rtde subscribe --broker mqtt://127.0.0.1:1883 --out recordings/
      until Ctrl-C
  rtde subscribe --broker mqtt://10.0.0.5 --topic 'plant/+/data' --out rec/ --until-offline
      until the bridge says it stopped
  rtde subscribe --broker mqtt://127.0.0.1:1883 --topic 'spBv1.0/#' --out rec/
      from a bridge with format = \"sparkplug\"; a late start asks it for its births
  rtde subscribe --broker mqtts://10.0.0.5 --ca-file plant-ca.pem --out rec/
      over TLS (rtde built with the `tls` feature), trusting the plant's own CA
  rtde subscribe --broker mqtt://10.0.0.1 --broker mqtt://10.0.0.2 -o rec/
      from a broker cluster's nodes: the first that answers, the next when it is lost"
)]
pub(crate) struct SubscribeArgs {
    /// The broker: `mqtt://HOST[:PORT]`, or `mqtts://HOST[:PORT]` for TLS (port 8883
    /// unless given; rtde built with the `tls` feature). Given again for each node of a
    /// broker cluster (all mqtt:// or all mqtts://): the subscriber connects to the first
    /// that answers and resumes its session on the next when its node is lost.
    #[arg(long, value_name = "URL", required = true)]
    broker: Vec<String>,
    /// With an `mqtts://` broker: trust the certificate authorities in this file (PEM)
    /// instead of the platform's, as the bridge's `[broker] ca_file`.
    #[arg(long, value_name = "PATH")]
    ca_file: Option<PathBuf>,
    /// Topic filters to subscribe to; status topics are recognised by their messages.
    /// Sparkplug B (`spBv1.0/#`) is read through its births.
    #[arg(long, value_name = "FILTER", default_values = ["rtde/#"])]
    topic: Vec<String>,
    /// The directory to write into (created if missing).
    #[arg(long, short = 'o', value_name = "DIR")]
    out: PathBuf,
    /// The MQTT client id, which names the persistent session.
    #[arg(long, value_name = "ID", default_value = "rtde-subscribe")]
    client_id: String,
    /// Stop after this long [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = args::duration)]
    duration: Option<Duration>,
    /// Stop once a bridge announces (live, not retained) that it went offline.
    #[arg(long)]
    until_offline: bool,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// One robot's files.
struct Recording {
    csv: PendingFile,
    /// The raw capture being written, its stream's header, and where it is written.
    raw: Option<(capture::Writer<PendingFile>, Header, PathBuf)>,
    /// Raw captures finished because the stream changed.
    finished: Vec<PendingFile>,
    recipe: DynamicRecipe,
    parts: usize,
    skipped: u64,
}

/// Runs `rtde subscribe`.
pub(crate) fn run(args: &SubscribeArgs) -> Result<(), String> {
    let sub = subscribe(args)?;
    let mut received = Received::default();
    let result = receive(args, &sub, &mut received);
    let seq_gaps = sub.sparkplug_seq_gaps();
    sub.close();
    let mut outputs = Vec::new();
    let mut failure = result.err();
    for (name, rec) in std::mem::take(&mut received.files) {
        match finish(rec) {
            Ok(mut names) => outputs.append(&mut names),
            Err(e) => {
                failure.get_or_insert(format!("{name}: {e}"));
            }
        }
    }
    if !args.quiet {
        summarize(&received.check, seq_gaps, &outputs);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    verdict(&received)
}

/// Creates the output directory, takes Ctrl-C and subscribes.
fn subscribe(args: &SubscribeArgs) -> Result<Subscriber, String> {
    let urls = args
        .broker
        .iter()
        .map(|u| BrokerUrl::parse(u))
        .collect::<Result<Vec<_>, _>>()?;
    let tls = urls.first().is_some_and(|u| u.tls);
    if urls.iter().any(|u| u.tls != tls) {
        return Err("every --broker is mqtt:// or every one mqtts://, not a mix".into());
    }
    if args.ca_file.is_some() && !tls {
        return Err("--ca-file is for TLS: use an mqtts:// broker URL".into());
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create `{}`: {e}", args.out.display(), e = said(e)))?;
    crate::interrupt::handle()?;
    let sub = connect(args, urls, tls)?;
    // On stdout and first, for scripts that wait for the subscription.
    println!(
        "rtde subscribe: subscribed to {} at {}",
        args.topic.join(", "),
        args.broker.join(", ")
    );
    Ok(sub)
}

/// What the subscription brought: the robots' files and what was checked and counted.
#[derive(Default)]
struct Received {
    check: SequenceCheck,
    files: BTreeMap<String, Recording>,
    unreadable: u64,
    sessions_lost: u64,
}

/// Writes what `sub` receives into `received` until Ctrl-C, `--duration` or (with
/// `--until-offline`) a bridge's death; the error is a file that could not be written.
fn receive(args: &SubscribeArgs, sub: &Subscriber, received: &mut Received) -> Result<(), String> {
    let started = Instant::now();
    loop {
        if crate::interrupt::asked() {
            return Ok(());
        }
        if args.duration.is_some_and(|d| started.elapsed() >= d) {
            return Ok(());
        }
        let Some(message) = sub.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        match message {
            Message::Batch { batch, .. } => {
                // New, or late and filling its gap: written; a duplicate left out.
                let verdict = received.check.check(&batch);
                if verdict != Verdict::Duplicate {
                    write(args, &mut received.files, &batch)?;
                }
            }
            Message::Status {
                robot: None,
                online: false,
                retained: false,
                ..
            } if args.until_offline => return Ok(()),
            Message::Unreadable { topic, why } => {
                received.unreadable += 1;
                if !args.quiet {
                    eprintln!("rtde subscribe: left out a message on `{topic}`: {why}");
                }
            }
            Message::BrokerLost { why } if !args.quiet => {
                eprintln!("rtde subscribe: {why}; reconnecting");
            }
            Message::BrokerBack { session_kept } => {
                received.sessions_lost += u64::from(!session_kept);
                if !args.quiet {
                    eprintln!(
                        "rtde subscribe: broker back; {}",
                        if session_kept {
                            "it kept this subscriber's session and what it queued for it"
                        } else {
                            "it had lost this subscriber's session, and with it what it held \
                             for it (a broker without persistence, or a lost disk)"
                        }
                    );
                }
            }
            _ => {}
        }
    }
}

/// Says on stderr what each robot brought, what Sparkplug B lost and what was written.
fn summarize(check: &SequenceCheck, seq_gaps: u64, outputs: &[String]) {
    for robot in check.robots() {
        eprintln!(
            "rtde subscribe: {robot}: {} packages, {} missing, {} duplicate batches left out",
            check.packages(robot),
            check.gaps(robot),
            check.duplicates(robot)
        );
    }
    eprintln!("rtde subscribe: {}", check.summary());
    if seq_gaps > 0 {
        eprintln!(
            "rtde subscribe: {seq_gaps} Sparkplug B message{} out of sequence (`seq` did \
             not follow the edge node's previous message): messages were lost on the way",
            if seq_gaps == 1 { "" } else { "s" }
        );
    }
    if !outputs.is_empty() {
        eprintln!("rtde subscribe: wrote {}", outputs.join(", "));
    }
}

/// Fails for packages missing that the bridge did not count, then for unreadable messages.
fn verdict(received: &Received) -> Result<(), String> {
    let Received {
        check,
        unreadable,
        sessions_lost,
        ..
    } = received;
    if check.unexplained() > 0 {
        let why = if *sessions_lost > 0 {
            format!(
                "; the broker lost this subscriber's session {sessions_lost} time{} and the \
                 messages it held for it",
                if *sessions_lost == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        return Err(format!(
            "{} packages missing that the bridge did not count as dropped{why}",
            check.unexplained()
        ));
    }
    if *unreadable > 0 {
        return Err(format!(
            "{unreadable} messages were no batch or status this rtde reads"
        ));
    }
    Ok(())
}

/// Connects to the first of the broker's nodes that answers, over TLS if `tls`
/// (`mqtts://`).
fn connect(args: &SubscribeArgs, urls: Vec<BrokerUrl>, tls: bool) -> Result<Subscriber, String> {
    let nodes: Vec<(String, u16)> = urls.into_iter().map(|u| (u.host, u.port)).collect();
    let timeout = Duration::from_secs(5);
    // Without the `tls` feature `BrokerUrl::parse` refuses `mqtts://`.
    #[cfg(not(feature = "tls"))]
    debug_assert!(!tls);
    #[cfg(feature = "tls")]
    if tls {
        let tls = match &args.ca_file {
            Some(path) => rtde_bridge::Tls::read_ca_file(path)
                .map_err(|e| format!("cannot read `{}`: {}", path.display(), said(e)))?,
            None => rtde_bridge::Tls::platform(),
        };
        return Subscriber::connect_tls(&nodes, &tls, &args.client_id, &args.topic, timeout)
            .map_err(said);
    }
    Subscriber::connect_any(&nodes, &args.client_id, &args.topic, timeout).map_err(said)
}

/// Appends a batch to its robot's files, opening them on its first batch.
fn write(
    args: &SubscribeArgs,
    files: &mut BTreeMap<String, Recording>,
    batch: &Batch,
) -> Result<(), String> {
    let header = Header {
        started_unix_micros: batch.t0_unix_us,
        ..(*batch.stream).clone()
    };
    if !files.contains_key(&batch.robot) {
        let mut csv = PendingFile::create(&args.out.join(format!("{}.csv", batch.robot)))?;
        let fields: Vec<_> = header.fields.clone();
        table::write_header(csv.writer(), &fields).map_err(said)?;
        let names: Vec<&str> = fields.iter().map(|f| f.name()).collect();
        let recipe = DynamicRecipe::outputs(&names).map_err(said)?;
        files.insert(
            batch.robot.clone(),
            Recording {
                csv,
                raw: None,
                finished: Vec::new(),
                recipe,
                parts: 0,
                skipped: 0,
            },
        );
    }
    let Some(rec) = files.get_mut(&batch.robot) else {
        return Ok(());
    };
    let same_stream = rec.raw.as_ref().is_some_and(|(_, h, _)| {
        h.protocol == header.protocol
            && h.controller == header.controller
            && h.recipe_id == header.recipe_id
            && h.fields == header.fields
    });
    if !same_stream {
        if let Some((writer, ..)) = rec.raw.take() {
            rec.finished.push(writer.finish(rec.skipped).map_err(said)?);
        }
        rec.parts += 1;
        let name = if rec.parts == 1 {
            format!("{}.rtde", batch.robot)
        } else {
            format!("{}.{}.rtde", batch.robot, rec.parts)
        };
        let file = PendingFile::create(&args.out.join(name))?;
        let path = file.temp_path().to_path_buf();
        let writer = capture::Writer::new(file, &header).map_err(said)?;
        rec.raw = Some((writer, header, path));
    }
    rec.skipped = batch.skipped;
    // A failed write names its file: the run then keeps what it wrote under that name.
    let cannot = |path: &Path, e: &(dyn std::error::Error + 'static)| {
        format!(
            "cannot write `{}`: {}",
            path.display(),
            rtde_core::Report(e)
        )
    };
    for i in 0..batch.count() {
        let Some(payload) = batch.payload(i) else {
            break;
        };
        if let Some((writer, _, path)) = rec.raw.as_mut() {
            writer.package(payload).map_err(|e| cannot(path, &e))?;
        }
        // The CSV's columns are the first stream's; a changed recipe goes to the raw
        // capture only.
        if rec.recipe.decode_into(payload).is_ok() {
            let values = rec.recipe.values();
            table::write_row(rec.csv.writer(), values)
                .map_err(|e| cannot(rec.csv.temp_path(), &e))?;
        }
    }
    Ok(())
}

/// Finishes and renames a robot's files; returns their names.
fn finish(rec: Recording) -> Result<Vec<String>, String> {
    let mut names = vec![format!("`{}`", rec.csv.path().display())];
    rec.csv.commit()?;
    let mut raws = rec.finished;
    if let Some((writer, ..)) = rec.raw {
        raws.push(writer.finish(rec.skipped).map_err(said)?);
    }
    for raw in raws {
        names.push(format!("`{}`", raw.path().display()));
        raw.commit()?;
    }
    Ok(names)
}
