//! The CPU time of this process's other threads over a window: what an in-process
//! simulator costs while the calling thread only drives the measurement (or runs a client
//! whose time is not the simulator's).
//!
//! The total is the process's from `/proc/self/stat` (`utime + stime`, which keeps the time
//! of threads that have ended, in 10 ms ticks: ±0.1 % of a core over a 10 s window) less
//! the calling thread's own. The breakdown by thread name is from
//! `/proc/self/task/<tid>/schedstat` (nanoseconds, but a thread that ends inside the window
//! takes its entry with it: [`Used::ended`] names those, and the total still holds their
//! time).
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

/// The CPU time of the whole process so far, threads that have ended included, from
/// `/proc/self/stat`'s `utime` and `stime` (fields 14 and 15) in clock ticks of 10 ms (the
/// `USER_HZ` of 100 that Linux reports `/proc` times in on every architecture).
///
/// # Errors
/// When `/proc/self/stat` cannot be read or is not in that shape.
pub fn process_time() -> io::Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let bad = || io::Error::other(format!("/proc/self/stat: {stat}"));
    // The name, field 2, is in parentheses and may hold spaces; field 3 follows it.
    let (_, rest) = stat.rsplit_once(')').ok_or_else(bad)?;
    let mut fields = rest.split_whitespace().skip(14 - 3);
    let mut ticks =
        || -> io::Result<u64> { fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad) };
    let (utime, stime) = (ticks()?, ticks()?);
    Ok(Duration::from_millis(10 * (utime + stime)))
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
    /// Their CPU time, summed, those that ended in the window included.
    pub cpu: Duration,
    /// The window's length.
    pub wall: Duration,
    /// The CPU time of the threads alive at the stop, by thread name ([`Thread::name`]).
    pub by_name: BTreeMap<String, Duration>,
    /// The names of the threads that were there at the start and had ended by the stop:
    /// their time is in `cpu`, not in `by_name`.
    pub ended: Vec<String>,
}

impl Used {
    /// `cpu` as a percentage of one core over the window.
    #[must_use]
    pub fn percent_of_core(&self) -> f64 {
        self.percent(self.cpu)
    }

    /// What `cpu` holds beyond `by_name`: the threads that ended in the window, and the
    /// process total's 10 ms ticks (so it may be a little below zero), in % of one core.
    #[must_use]
    pub fn unnamed_percent(&self) -> f64 {
        let named: Duration = self.by_name.values().sum();
        self.percent_of_core() - self.percent(named)
    }

    /// `cpu` as a percentage of one core over the window.
    #[must_use]
    pub fn percent(&self, cpu: Duration) -> f64 {
        100.0 * cpu.as_secs_f64() / self.wall.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// The time the threads used between two snapshots, leaving out `me`, given the whole
/// process's time in between (`process`) and the window's length (`wall`). By name: a
/// thread in both snapshots counts its difference, one only in `after` (started in
/// between) all of its time, one only in `before` (ended in between) is listed as ended.
#[must_use]
pub fn between(
    before: &Threads,
    after: &Threads,
    me: u32,
    process: Duration,
    wall: Duration,
) -> Used {
    let cpu_of = |threads: &Threads, tid| threads.get(&tid).map_or(Duration::ZERO, |t| t.cpu);
    let mine = cpu_of(after, me).saturating_sub(cpu_of(before, me));
    let mut used = Used {
        cpu: process.saturating_sub(mine),
        wall,
        by_name: BTreeMap::new(),
        ended: Vec::new(),
    };
    for (tid, now) in after.iter().filter(|(tid, _)| **tid != me) {
        let cpu = now.cpu.saturating_sub(cpu_of(before, *tid));
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
    process: Duration,
    at: Instant,
}

impl Window {
    /// Opens the window now.
    ///
    /// # Errors
    /// As [`threads`], [`process_time`] and [`current_tid`].
    pub fn start() -> io::Result<Window> {
        Ok(Window {
            me: current_tid()?,
            process: process_time()?,
            before: threads()?,
            at: Instant::now(),
        })
    }

    /// Closes the window: what the other threads used in it.
    ///
    /// # Errors
    /// As [`threads`] and [`process_time`].
    pub fn stop(self) -> io::Result<Used> {
        let wall = self.at.elapsed();
        let after = threads()?;
        let process = process_time()?.saturating_sub(self.process);
        Ok(between(&self.before, &after, self.me, process, wall))
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

    /// The window's arithmetic: the caller's time out of the process's, a new thread's
    /// whole time in, an ended one named and its time left in the total, threads of one
    /// kind summed under their name.
    #[test]
    fn the_other_threads_time_between_two_snapshots() {
        let before = snapshot(&[(1, "main", 100), (2, "conn", 10), (3, "read", 5)]);
        let after = snapshot(&[(1, "main", 900), (2, "conn", 30), (4, "conn", 7)]);
        // 800 ms of the caller's, 27 of the connections', 8 of the thread that ended.
        let used = between(&before, &after, 1, ms(835), ms(1000));
        assert_eq!(used.cpu, ms(35));
        assert_eq!(used.ended, ["read"]);
        assert_eq!(used.by_name, BTreeMap::from([("conn".to_owned(), ms(27))]));
        assert!((used.percent_of_core() - 3.5).abs() < 1e-9);
        assert!((used.unnamed_percent() - 0.8).abs() < 1e-9);
        let used = between(&before, &after, 2, ms(835), ms(1000));
        assert_eq!(used.cpu, ms(835 - 20));
        assert_eq!(used.by_name.get("main"), Some(&ms(800)));
    }

    /// The process's time holds a thread's that has ended.
    #[test]
    fn the_process_time_keeps_an_ended_threads_time() {
        let before = process_time().unwrap();
        let spun = std::thread::spawn(|| {
            let cpu = || crate::live::thread_cpu_time().unwrap();
            let start = cpu();
            while cpu() - start < Duration::from_millis(100) {
                std::hint::black_box(0u64);
            }
        });
        spun.join().unwrap();
        let after = process_time().unwrap();
        // 100 ms on the CPU, less a 10 ms tick at each end.
        assert!(
            after - before >= Duration::from_millis(80),
            "{before:?} → {after:?}"
        );
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
