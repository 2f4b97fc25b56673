//! The CPU time of this process's other threads over a window: what an in-process
//! simulator costs while the calling thread only drives the measurement (or runs a client
//! whose time is not the simulator's).
//!
//! Read from `/proc/self/task/<tid>/schedstat` (nanoseconds of each thread, no sampling
//! granularity, unlike `/proc/self/stat`'s 10 ms ticks). A thread that ends inside the
//! window takes its time with it: [`Used::ended`] says how many did, so a figure that
//! lost some says so.
//!
//! ```
//! use rtde_bench::process_cpu::Window;
//!
//! let window = Window::start().unwrap();
//! let busy = std::thread::spawn(|| (0..1_000_000u64).map(std::hint::black_box).sum::<u64>());
//! std::thread::sleep(std::time::Duration::from_millis(20));
//! let used = window.stop().unwrap();
//! assert!(used.percent_of_core() >= 0.0);
//! busy.join().unwrap();
//! ```

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};

/// Each thread's CPU time so far, by thread id.
pub type Threads = BTreeMap<u32, Duration>;

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
        if let Some(cpu) = schedstat(&entry.path().join("schedstat")) {
            out.insert(tid, cpu);
        }
    }
    Ok(out)
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Used {
    /// Their CPU time, summed.
    pub cpu: Duration,
    /// The window's length.
    pub wall: Duration,
    /// Threads that were there at the start and had ended by the stop: their time in the
    /// window is missing from `cpu`.
    pub ended: usize,
}

impl Used {
    /// `cpu` as a percentage of one core over the window.
    #[must_use]
    pub fn percent_of_core(&self) -> f64 {
        100.0 * self.cpu.as_secs_f64() / self.wall.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// The time the threads used between two snapshots, leaving out `me`: a thread in both
/// counts its difference, one only in `after` (started in between) all of its time, one
/// only in `before` (ended in between) is counted as ended.
#[must_use]
pub fn between(before: &Threads, after: &Threads, me: u32) -> (Duration, usize) {
    let mut cpu = Duration::ZERO;
    for (tid, now) in after.iter().filter(|(tid, _)| **tid != me) {
        cpu += now.saturating_sub(before.get(tid).copied().unwrap_or_default());
    }
    let ended = before
        .keys()
        .filter(|tid| **tid != me && !after.contains_key(tid))
        .count();
    (cpu, ended)
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
        let wall = self.at.elapsed();
        let (cpu, ended) = between(&self.before, &after, self.me);
        Ok(Used { cpu, wall, ended })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The window's arithmetic: the caller left out, a new thread's whole time in, an
    /// ended one counted.
    #[test]
    fn the_other_threads_time_between_two_snapshots() {
        let before = Threads::from([(1, ms(100)), (2, ms(10)), (3, ms(5))]);
        let after = Threads::from([(1, ms(900)), (2, ms(30)), (4, ms(7))]);
        assert_eq!(between(&before, &after, 1), (ms(20 + 7), 1));
        assert_eq!(between(&before, &after, 2), (ms(800 + 7), 1));
    }

    /// The snapshot holds the caller and a thread it started, under their own ids.
    #[test]
    fn the_snapshot_lists_this_thread_and_a_started_one() {
        let me = current_tid().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            tx.send(current_tid().unwrap()).unwrap();
            let _ = wait.recv();
        });
        let tid = rx.recv().unwrap();
        let all = threads().unwrap();
        assert_ne!(me, tid);
        assert!(all.contains_key(&me) && all.contains_key(&tid), "{all:?}");
        drop(done);
        other.join().unwrap();
    }
}
