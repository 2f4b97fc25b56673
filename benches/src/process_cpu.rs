//! The CPU time of this process's other threads over a window: what an in-process
//! simulator costs while the calling thread only drives the measurement (or runs a client
//! whose time is not the simulator's).
//!
//! Read from `/proc/self/task/<tid>/schedstat` (nanoseconds of each thread, no sampling
//! granularity, unlike `/proc/self/stat`'s 10 ms ticks), by thread name, so that a figure
//! says where its time went. A thread that ends inside the window takes its time with it:
//! [`Used::ended`] names those, so a figure that lost some says so.
//!
//! ```
//! use rtde_bench::process_cpu::Window;
//!
//! let window = Window::start().unwrap();
//! let busy = std::thread::Builder::new()
//!     .name("busy-1".into())
//!     .spawn(|| (0..1_000_000u64).map(std::hint::black_box).sum::<u64>())
//!     .unwrap();
//! std::thread::sleep(std::time::Duration::from_millis(20));
//! let used = window.stop().unwrap();
//! println!("{:.1} % of a core, {:?} of it in `busy`", used.percent_of_core(), used.by_name.get("busy"));
//! busy.join().unwrap();
//! ```

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};

/// A thread's name and its CPU time so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Its name as the kernel keeps it (`comm`: at most 15 bytes), without a trailing
    /// `-N`, so that a kind of thread (`rtde-sim-conn-1`, `rtde-sim-conn-2`) is one name.
    pub name: String,
    /// Its CPU time so far.
    pub cpu: Duration,
}

/// The threads of a process, by thread id.
pub type Threads = BTreeMap<u32, Thread>;

/// Every thread of this process with its CPU time so far. A thread that ends while the
/// directory is read is left out.
///
/// # Errors
/// When `/proc/self/task` cannot be read (not Linux, or no procfs).
pub fn threads() -> io::Result<Threads> {
    let mut out = Threads::new();
    for entry in std::fs::read_dir("/proc/self/task")? {
        let entry = entry?;
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let (Some(cpu), Ok(comm)) = (
            schedstat(&entry.path().join("schedstat")),
            std::fs::read_to_string(entry.path().join("comm")),
        ) else {
            continue;
        };
        let name = kind_of(comm.trim()).to_owned();
        out.insert(tid, Thread { name, cpu });
    }
    Ok(out)
}

/// A thread's name without a trailing `-N`.
fn kind_of(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((kind, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => kind,
        _ => name,
    }
}

/// The first field of a `schedstat` file: nanoseconds on the CPU.
fn schedstat(path: &std::path::Path) -> Option<Duration> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(Duration::from_nanos(
        text.split_whitespace().next()?.parse().ok()?,
    ))
}

/// The calling thread's id, from `/proc/thread-self`'s target (`PID/task/TID`).
///
/// # Errors
/// When `/proc/thread-self` cannot be read or is not in that shape.
pub fn current_tid() -> io::Result<u32> {
    let link = std::fs::read_link("/proc/thread-self")?;
    link.file_name()
        .and_then(|s| s.to_str())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("/proc/thread-self is {}", link.display())))
}

/// What the other threads used over a window.
#[derive(Clone, Debug, PartialEq)]
pub struct Used {
    /// Their CPU time, summed.
    pub cpu: Duration,
    /// The window's length.
    pub wall: Duration,
    /// `cpu` by thread name ([`Thread::name`]).
    pub by_name: BTreeMap<String, Duration>,
    /// The names of the threads that were there at the start and had ended by the stop:
    /// their time in the window is missing from `cpu`.
    pub ended: Vec<String>,
}

impl Used {
    /// `cpu` as a percentage of one core over the window.
    #[must_use]
    pub fn percent_of_core(&self) -> f64 {
        self.percent(self.cpu)
    }

    /// `cpu` as a percentage of one core over the window.
    #[must_use]
    pub fn percent(&self, cpu: Duration) -> f64 {
        100.0 * cpu.as_secs_f64() / self.wall.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// The time the threads used between two snapshots, leaving out `me`: a thread in both
/// counts its difference, one only in `after` (started in between) all of its time, one
/// only in `before` (ended in between) is listed as ended. `wall` is the window's length.
#[must_use]
pub fn between(before: &Threads, after: &Threads, me: u32, wall: Duration) -> Used {
    let mut used = Used {
        cpu: Duration::ZERO,
        wall,
        by_name: BTreeMap::new(),
        ended: Vec::new(),
    };
    for (tid, now) in after.iter().filter(|(tid, _)| **tid != me) {
        let earlier = before.get(tid).map_or(Duration::ZERO, |t| t.cpu);
        let cpu = now.cpu.saturating_sub(earlier);
        used.cpu += cpu;
        *used.by_name.entry(now.name.clone()).or_default() += cpu;
    }
    used.ended = before
        .iter()
        .filter(|(tid, _)| **tid != me && !after.contains_key(tid))
        .map(|(_, t)| t.name.clone())
        .collect();
    used
}

/// A window opened by [`Window::start`] on the calling thread, whose own time it leaves
/// out.
#[derive(Debug)]
pub struct Window {
    me: u32,
    before: Threads,
    at: Instant,
}

impl Window {
    /// Opens the window now.
    ///
    /// # Errors
    /// As [`threads`] and [`current_tid`].
    pub fn start() -> io::Result<Window> {
        Ok(Window {
            me: current_tid()?,
            before: threads()?,
            at: Instant::now(),
        })
    }

    /// Closes the window: what the other threads used in it.
    ///
    /// # Errors
    /// As [`threads`].
    pub fn stop(self) -> io::Result<Used> {
        let after = threads()?;
        Ok(between(&self.before, &after, self.me, self.at.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn snapshot(list: &[(u32, &str, u64)]) -> Threads {
        list.iter()
            .map(|&(tid, name, cpu)| {
                let (name, cpu) = (name.to_owned(), ms(cpu));
                (tid, Thread { name, cpu })
            })
            .collect()
    }

    /// The window's arithmetic: the caller left out, a new thread's whole time in, an
    /// ended one named, threads of one kind summed under their name.
    #[test]
    fn the_other_threads_time_between_two_snapshots() {
        let before = snapshot(&[(1, "main", 100), (2, "conn", 10), (3, "read", 5)]);
        let after = snapshot(&[(1, "main", 900), (2, "conn", 30), (4, "conn", 7)]);
        let used = between(&before, &after, 1, ms(1000));
        assert_eq!(used.cpu, ms(20 + 7));
        assert_eq!(used.ended, ["read"]);
        assert_eq!(used.by_name, BTreeMap::from([("conn".to_owned(), ms(27))]));
        assert!((used.percent_of_core() - 2.7).abs() < 1e-9);
        let used = between(&before, &after, 2, ms(1000));
        assert_eq!(used.cpu, ms(800 + 7));
        assert_eq!(used.by_name.get("main"), Some(&ms(800)));
    }

    #[test]
    fn a_kind_of_thread_is_its_name_without_a_number() {
        assert_eq!(kind_of("rtde-sim-conn-12"), "rtde-sim-conn");
        assert_eq!(kind_of("rtde-sim-realti"), "rtde-sim-realti");
        assert_eq!(kind_of("rtde-sim-"), "rtde-sim-");
        assert_eq!(kind_of("x-1a"), "x-1a");
    }

    /// The snapshot holds the caller and a thread it started, under their own ids, the
    /// thread under its kind's name.
    #[test]
    fn the_snapshot_lists_this_thread_and_a_started_one() {
        let me = current_tid().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let other = std::thread::Builder::new()
            .name("probe-7".into())
            .spawn(move || {
                tx.send(current_tid().unwrap()).unwrap();
                let _ = wait.recv();
            })
            .unwrap();
        let tid = rx.recv().unwrap();
        let all = threads().unwrap();
        assert_ne!(me, tid);
        assert!(all.contains_key(&me) && all.contains_key(&tid), "{all:?}");
        assert_eq!(all[&tid].name, "probe");
        drop(done);
        other.join().unwrap();
    }
}
