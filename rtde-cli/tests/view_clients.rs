//! `rtde view` under viewers that come and go: 10, then 100 of Foxglove's own clients
//! (`@foxglove/ws-protocol`) connect, take a message and close, one after another. Every
//! close is clean (the viewer sees 1000 or 1005, not 1006), the process's threads come
//! back to their count before the first viewer, its resident memory to within
//! [`RSS_BOUND_KB`] of it and to within [`GROWTH_BOUND_KB`] of what the first ten left,
//! and Ctrl-C says goodbye to the viewer left (1001). The figures (threads and VmRSS of
//! the `rtde view` process at the start, at the peak, after the ten, after the hundred)
//! are printed.
//!
//! `.ci/run` runs it with `RTDE_FOXGLOVE_NODE` naming the `node` that
//! `tests/interop/foxglove/setup.sh` prints. In a plain `cargo test` it is ignored:
//! `RTDE_FOXGLOVE_NODE=$(tests/interop/foxglove/setup.sh) cargo test -p rtde-cli --test view_clients -- --ignored --nocapture`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rtde_testkit::foxglove_js::{Json, Script};

/// Viewers, one after another, after the warm-up.
const VIEWERS: u32 = 100;
/// The viewers before them.
const WARM_UP: u32 = 10;
/// How far above its start, before any viewer, the process's resident memory may stay
/// once they are gone: what the first viewer brings in for good (code pages, an allocator
/// arena).
const RSS_BOUND_KB: u64 = 2048;
/// How much the hundred viewers may add to what the warm-up left: 2.5 kB each.
const GROWTH_BOUND_KB: u64 = 256;
const WAIT: Duration = Duration::from_secs(60);

/// Threads and resident kB of a process, from /proc/PID/status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Usage {
    threads: u64,
    rss_kb: u64,
}

fn usage(pid: u32) -> Usage {
    try_usage(pid).unwrap_or_else(|| panic!("rtde view (pid {pid}) is gone"))
}

/// The usage, or `None` once the process is gone.
fn try_usage(pid: u32) -> Option<Usage> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    // A zombie has a status without VmRSS: gone too.
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches(" kB")
            .parse()
            .ok()
    };
    Some(Usage {
        threads: field("Threads:")?,
        rss_kb: field("VmRSS:")?,
    })
}

/// The process's usage once its thread count has held for 300 ms (the simulator and the
/// view start their threads after the address is printed).
fn settled(pid: u32) -> Usage {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = usage(pid);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = usage(pid);
        if now.threads == last.threads || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// `viewers N` to the script; asserts that every close was clean, and returns the
/// script's summary (close codes, milliseconds) once the process's threads are back to
/// `threads` (the last handshake thread ends a moment after its viewer closed), and the
/// usage then.
fn viewers_in_turn(script: &mut Script, pid: u32, count: u32, threads: u64) -> (Json, Usage) {
    script.send(&format!("viewers {count}"));
    let summary = script.event(WAIT);
    assert_eq!(summary["event"], "summary", "{summary}");
    let codes = summary["codes"].as_object().unwrap();
    let clean: u64 = ["1000", "1005"]
        .iter()
        .filter_map(|c| codes.get(*c).and_then(|n| n.as_u64()))
        .sum();
    assert_eq!(clean, u64::from(count), "close codes: {codes:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut now = usage(pid);
    while now.threads != threads && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        now = usage(pid);
    }
    (summary, now)
}

#[test]
#[ignore = "needs node and Foxglove's packages; .ci/run installs them and runs this test"]
fn a_hundred_viewers_in_turn_close_cleanly_and_leave_nothing_behind() {
    let mut view = common::view_on_any_port("300s");
    let addr = view.listening_on();
    let pid = view.child.id();
    let start = settled(pid);

    // The peak, sampled while the viewers come and go.
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = start;
            // Until the test is done, or has failed and killed the process.
            while let (false, Some(now)) = (done.load(Ordering::Relaxed), try_usage(pid)) {
                peak.threads = peak.threads.max(now.threads);
                peak.rss_kb = peak.rss_kb.max(now.rss_kb);
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    let mut script = Script::start("view_clients.js", &[&format!("ws://{addr}")]);
    // The first viewers bring in what any viewer needs once (code pages, an allocator
    // arena for the handshake threads); the hundred after them must add nothing.
    let (_, warm) = viewers_in_turn(&mut script, pid, WARM_UP, start.threads);
    let (summary, after) = viewers_in_turn(&mut script, pid, VIEWERS, start.threads);
    done.store(true, Ordering::Relaxed);
    let peak = sampler.join().unwrap();
    println!(
        "rtde view, {WARM_UP} then {VIEWERS} viewers in turn ({} ms for the {VIEWERS}, close codes {}): \
         threads {} at the start, {} at the peak, {} after the {WARM_UP}, {} after the {VIEWERS}; \
         VmRSS {} / {} / {} / {} kB",
        summary["milliseconds"],
        summary["codes"],
        start.threads,
        peak.threads,
        warm.threads,
        after.threads,
        start.rss_kb,
        peak.rss_kb,
        warm.rss_kb,
        after.rss_kb
    );
    assert_eq!(warm.threads, start.threads, "threads left behind");
    assert_eq!(after.threads, start.threads, "threads left behind");
    assert!(
        after.rss_kb <= start.rss_kb + RSS_BOUND_KB,
        "VmRSS {} kB after the viewers, {} kB before them",
        after.rss_kb,
        start.rss_kb
    );
    assert!(
        after.rss_kb <= warm.rss_kb + GROWTH_BOUND_KB,
        "VmRSS {} kB after the {VIEWERS} viewers, {} kB before them",
        after.rss_kb,
        warm.rss_kb
    );

    // Ctrl-C with a viewer connected: it is told the server is going away.
    script.send("hold");
    assert_eq!(script.event(WAIT)["event"], "holding");
    view.interrupt();
    let closed = script.event(WAIT);
    assert_eq!(closed["event"], "server closed");
    assert_eq!(closed["code"], 1001);
    let (status, stderr) = script.finish(WAIT);
    assert!(status.success(), "{status}: {stderr}");
    let run = common::finish(view, Duration::from_secs(10));
    assert!(
        run.stderr.contains("stopped by Ctrl-C: served"),
        "{}",
        run.stderr
    );
}
