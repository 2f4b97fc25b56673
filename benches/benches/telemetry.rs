//! MCAP recording and the live Foxglove view at 500 Hz, against the raw capture and the CSV
//! recorder, in one run: rtde-sim streams the reference recipe over loopback for 30 s, and
//! every package goes to all of them in turn.
//!
//! - recorder CPU per package: each writer's own work (the raw capture's `package`, the
//!   CSV recorder's decode and row, the MCAP recorder's `package`, `finish` included),
//!   measured as thread CPU time over the packages of the run written again into fresh
//!   files, writer after writer, three rounds (the median is printed; timing each call
//!   on a shared machine measures its waits); and the whole recorder: that plus receiving,
//!   whose CPU per package is measured on the same connection with no writer at all;
//! - bytes per package of each file;
//! - the view, with one client that reads everything and one that never reads: the
//!   server thread's CPU time per package (from `/proc`), `publish` on the receiving thread
//!   (receiving and publishing less receiving alone), the latency from a package's arrival
//!   to its frames written, p50 and p99;
//! - packages lost: in the MCAP file (read back), and frames dropped for the slow client
//!   (counted by the view) while the fast one gets every package.
//!
//! `cargo bench -p rtde-bench --bench telemetry [-- --seconds 30]`

use std::fs::File;
use std::io::BufWriter;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rtde_bench::REFERENCE_NAMES;
use rtde_bench::interleave::{median, quantile};
use rtde_bench::live::thread_cpu_time;
use rtde_bench::report::{arg, cpu_model, per_us, verdict};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, OutputRecipe, Recipe};
use rtde_record::capture::{self, Header};
use rtde_record::csv::CsvWriter;
use rtde_sim::Sim;
use rtde_testkit::foxglove;
use rtde_view::{OUTPUTS_TOPIC, Recorder, RecorderOptions, SUBPROTOCOLS, ViewOptions, ViewServer};

/// The targets.
const MAX_MCAP_OVER_RAW: f64 = 1.5;
const MAX_VIEW_P99_MS: f64 = 5.0;

fn unix_us() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The CPU time of this process's thread named `name` (Linux: its schedstat).
fn named_thread_cpu(name: &str) -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            return Some(Duration::from_nanos(
                stat.split_whitespace().next()?.parse().ok()?,
            ));
        }
    }
    None
}

#[allow(clippy::too_many_lines)] // one run, its figures printed in order
fn main() -> ExitCode {
    let seconds = arg("--seconds", 30);
    let dir = std::env::temp_dir().join(format!("rtde-telemetry-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    println!(
        "machine: {} ({} CPUs)",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "reference recipe ({} fields), rtde-sim in process at 500 Hz for {seconds} s, loopback",
        REFERENCE_NAMES.len()
    );

    let sim = Sim::builder().start().expect("start the simulator");
    let mut recipe = DynamicRecipe::outputs(REFERENCE_NAMES).expect("the reference recipe");
    let mut client = Client::connect(sim.addr(), ConnectOptions::new()).expect("connect");
    client.setup_outputs(recipe.spec(), 500.0).expect("set up");
    let header = Header::of_client(&client, &recipe).expect("the stream's header");
    let file = |name: &str| {
        BufWriter::with_capacity(256 * 1024, File::create(dir.join(name)).expect("create"))
    };
    let mut raw = capture::Writer::new(file("run.rtde"), &header).expect("raw");
    let mut csv = CsvWriter::new(file("run.csv"), recipe.fields()).expect("csv");
    let mut mcap = Recorder::new(
        file("run.mcap"),
        &header,
        &RecorderOptions::new().robot("bench"),
    )
    .expect("mcap");

    let view = ViewServer::start(&header, ViewOptions::new().addr(([127, 0, 0, 1], 0).into()))
        .expect("view");
    let mut fast = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).expect("client");
    let mut slow = foxglove::Client::connect(view.addr(), &[SUBPROTOCOLS[0]]).expect("client");
    fast.subscribe(&[]).expect("subscribe");
    slow.subscribe(&[]).expect("subscribe");
    let outputs_index = fast
        .channels
        .iter()
        .position(|c| c.topic == OUTPUTS_TOPIC)
        .expect("outputs");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut outputs = 0u64;
            while !done.load(Ordering::Relaxed) {
                match fast.frame() {
                    Ok((i, ..)) if i == outputs_index => outputs += 1,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            outputs
        })
    };
    // The server reads subscriptions every 10 ms.
    std::thread::sleep(Duration::from_millis(200));

    client.start().expect("start");
    let n_target = seconds * 500;
    // Warm-up: one second, not recorded.
    for _ in 0..500 {
        let _ = client.recv().expect("a package");
    }
    // Receiving alone, then receiving and publishing to the view: three seconds each.
    let phase = |publish: bool, client: &mut Client| {
        let cpu0 = thread_cpu_time().unwrap_or_default();
        for _ in 0..1500 {
            let payload = client.recv().expect("a package");
            if publish {
                view.publish(payload, Instant::now(), unix_us());
            }
        }
        per_us(
            thread_cpu_time().unwrap_or_default().saturating_sub(cpu0),
            1500,
        )
    };
    let receive_us = phase(false, &mut client);
    let publish_us = (phase(true, &mut client) - receive_us).max(0.0);

    // The figures below are the run's alone.
    std::thread::sleep(Duration::from_millis(100));
    let _ = view.take_latencies();
    // How late a thread that sleeps 1 ms wakes, meanwhile: what the machine's scheduler
    // does to every thread of the run (the view's included) under the load it is under.
    let canary = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut late = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let t = Instant::now();
                std::thread::sleep(Duration::from_millis(1));
                late.push((t.elapsed().as_secs_f64() - 1e-3) * 1e3);
            }
            late
        })
    };
    let stats0 = view.stats();
    let view_cpu0 = named_thread_cpu("rtde-view").unwrap_or_default();
    let started = Instant::now();
    let mut payloads = Vec::with_capacity(usize::try_from(n_target).unwrap_or(0) * 272);
    let mut arrivals = Vec::with_capacity(usize::try_from(n_target).unwrap_or(0));
    let mut n = 0u64;
    while n < n_target {
        let payload = client.recv().expect("a package");
        let arrived = Instant::now();
        let arrived_us = unix_us();
        raw.package(payload).expect("raw");
        recipe.decode_into(payload).expect("decode");
        csv.row(recipe.values()).expect("csv");
        mcap.package(payload, arrived_us).expect("mcap");
        view.publish(payload, arrived, arrived_us);
        payloads.extend_from_slice(payload);
        arrivals.push(arrived_us);
        n += 1;
    }
    let wall = started.elapsed();
    // Let the view write the last frames before it is measured.
    std::thread::sleep(Duration::from_millis(200));
    let view_cpu = named_thread_cpu("rtde-view")
        .unwrap_or_default()
        .saturating_sub(view_cpu0);
    let skipped = client.stats().skipped;
    drop(raw.finish(skipped).expect("finish raw"));
    drop(csv.finish().expect("finish csv"));
    drop(mcap.finish().expect("finish mcap"));
    let sizes = ["run.rtde", "run.csv", "run.mcap"]
        .map(|name| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len()));

    // Each writer's CPU over the same packages, into fresh files: three rounds.
    let size = recipe.payload_size();
    let mut per_writer: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _round in 0..3 {
        let cpu0 = thread_cpu_time().unwrap_or_default();
        let mut w = capture::Writer::new(file("again.rtde"), &header).expect("raw");
        for p in payloads.chunks_exact(size) {
            w.package(p).expect("raw");
        }
        drop(w.finish(skipped).expect("finish"));
        per_writer[0].push(per_us(
            thread_cpu_time().unwrap_or_default().saturating_sub(cpu0),
            n,
        ));

        let cpu0 = thread_cpu_time().unwrap_or_default();
        let mut w = CsvWriter::new(file("again.csv"), recipe.fields()).expect("csv");
        for p in payloads.chunks_exact(size) {
            recipe.decode_into(p).expect("decode");
            w.row(recipe.values()).expect("csv");
        }
        drop(w.finish().expect("finish"));
        per_writer[1].push(per_us(
            thread_cpu_time().unwrap_or_default().saturating_sub(cpu0),
            n,
        ));

        let cpu0 = thread_cpu_time().unwrap_or_default();
        let mut w = Recorder::new(
            file("again.mcap"),
            &header,
            &RecorderOptions::new().robot("bench"),
        )
        .expect("mcap");
        for (p, &at) in payloads.chunks_exact(size).zip(&arrivals) {
            w.package(p, at).expect("mcap");
        }
        drop(w.finish().expect("finish"));
        per_writer[2].push(per_us(
            thread_cpu_time().unwrap_or_default().saturating_sub(cpu0),
            n,
        ));
    }
    let [raw_us, csv_us, mcap_us] = per_writer.map(median);

    let latencies: Vec<f64> = view
        .take_latencies()
        .iter()
        .map(|d| d.as_secs_f64() * 1e3)
        .collect();
    let stats = view.stats();
    let published = stats.packages;
    let (dropped_slow, frames, dropped_queue) = (
        stats.dropped_slow - stats0.dropped_slow,
        stats.frames - stats0.frames,
        stats.dropped_queue - stats0.dropped_queue,
    );
    done.store(true, Ordering::Relaxed);
    view.shutdown();
    let fast_outputs = reader.join().unwrap_or(0);
    let late = canary.join().unwrap_or_default();
    drop(slow);
    let _ = client.close();
    drop(sim);
    drop(payloads);

    #[allow(clippy::cast_precision_loss)]
    let bytes = |i: usize| sizes[i] as f64 / n as f64;
    println!(
        "{n} packages in {:.1} s; the controller skipped {skipped}",
        wall.as_secs_f64()
    );
    println!("recorder CPU per package, the writer's own (finish included; median of 3 rounds):");
    println!("  raw capture  {raw_us:>7.2} µs");
    println!("  CSV          {csv_us:>7.2} µs");
    println!(
        "  MCAP (zstd)  {mcap_us:>7.2} µs   = {:.2}× raw (target ≤ {MAX_MCAP_OVER_RAW}: {}), {:.2}× CSV (target ≤ 1: {})",
        mcap_us / raw_us,
        verdict(mcap_us / raw_us <= MAX_MCAP_OVER_RAW),
        mcap_us / csv_us,
        verdict(mcap_us <= csv_us)
    );
    // The whole recorder: receiving plus one writer.
    let (whole_raw, whole_csv, whole_mcap) = (
        receive_us + raw_us,
        receive_us + csv_us,
        receive_us + mcap_us,
    );
    println!(
        "recorder CPU per package, receiving ({receive_us:.2} µs) included: raw {whole_raw:.2}, CSV {whole_csv:.2}, MCAP {whole_mcap:.2} µs = {:.2}× raw ({}), {:.2}× CSV ({})",
        whole_mcap / whole_raw,
        verdict(whole_mcap / whole_raw <= MAX_MCAP_OVER_RAW),
        whole_mcap / whole_csv,
        verdict(whole_mcap <= whole_csv)
    );
    println!("bytes per package (file size / packages):");
    println!("  raw capture  {:>7.1}", bytes(0));
    println!("  CSV          {:>7.1}", bytes(1));
    println!(
        "  MCAP (zstd)  {:>7.1}   = {:.2}× raw (target ≤ 1: {})",
        bytes(2),
        bytes(2) / bytes(0),
        verdict(sizes[2] <= sizes[0])
    );

    let p50 = quantile(latencies.clone(), 0.5);
    let p99 = quantile(latencies.clone(), 0.99);
    println!("view (one client reading every channel, one never reading):");
    println!(
        "  CPU per package: {:.2} µs on the server thread + {publish_us:.2} µs publish on the receiving thread",
        per_us(view_cpu, n)
    );
    println!(
        "  arrival → frames written: p50 {p50:.3} ms, p99 {p99:.3} ms, max {:.3} ms over {} packages (target p99 ≤ {MAX_VIEW_P99_MS} ms: {})",
        latencies.iter().copied().fold(0.0, f64::max),
        latencies.len(),
        verdict(p99 <= MAX_VIEW_P99_MS)
    );
    println!(
        "  the machine meanwhile: a thread sleeping 1 ms woke late by p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        quantile(late.clone(), 0.5),
        quantile(late.clone(), 0.99),
        late.iter().copied().fold(0.0, f64::max)
    );

    let bytes = std::fs::read(dir.join("run.mcap")).expect("read the MCAP file");
    let mut read = 0u64;
    let mut last: Option<f64> = None;
    let mut holes = 0u64;
    let summary = rtde_view::convert::read_packages(&bytes, |_, p| {
        if let rtde_core::Value::Double(t) = p.values[0] {
            if let Some(l) = last {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let steps = ((t - l) * 500.0).round() as u64;
                holes += steps.saturating_sub(1);
            }
            last = Some(t);
        }
        read += 1;
        Ok(())
    })
    .expect("read the MCAP file back");
    let lost_in_file = n - read;
    println!(
        "lost: {lost_in_file} packages in the MCAP file (target 0: {}; {holes} holes in its timestamps, {skipped} skipped by the controller{})",
        verdict(lost_in_file == 0 && holes == skipped),
        summary
            .cut_short
            .map_or(String::new(), |w| format!("; cut short: {w}"))
    );
    println!(
        "  view: fast client {fast_outputs} of the {published} packages published; slow client: {dropped_slow} frames dropped, counted (of {frames} frames written in the run); {dropped_queue} packages the server fell behind on"
    );
    let _ = std::fs::remove_dir_all(&dir);
    ExitCode::SUCCESS
}
