//! Real-time options for a thread, as the UR Client Library offers them: SCHED_FIFO at a
//! priority, and pinning to a CPU. Through safe wrappers (`thread-priority`, `nix`); when
//! the operating system refuses, the error says why and what to grant.
//!
//! [`SpawnOptions`](crate::background::SpawnOptions) applies them to the background driver's reader
//! thread; a control loop on the blocking client calls them on its own thread:
//!
//! ```no_run
//! use rtde_core::realtime;
//!
//! // Before the loop: a priority above the desktop's threads, and a core of its own.
//! if let Err(e) = realtime::set_fifo_priority(80).and_then(|()| realtime::set_cpu_affinity(1)) {
//!     eprintln!("running without real-time scheduling: {e}");
//! }
//! ```

use crate::error::{Error, RealtimeRefused};

const GRANT_PRIORITY: &str = "run as root, give the program CAP_SYS_NICE \
     (`setcap cap_sys_nice+ep PROGRAM`), or allow the user real-time priorities \
     (`@group - rtprio 99` in /etc/security/limits.conf, checked by `ulimit -r`); in a container, \
     add SYS_NICE and a real-time budget (`--cap-add SYS_NICE --cpu-rt-runtime`)";

const GRANT_CPU: &str = "choose a CPU this process may run on (`nproc`, `taskset -p $$`, the \
     cgroup's cpuset)";

fn refused(asked: String, cause: String, grant: &'static str) -> Error {
    Error::Realtime(Box::new(RealtimeRefused {
        asked,
        cause,
        grant,
    }))
}

/// Makes the calling thread SCHED_FIFO at `priority` (1 to 99). Threads it spawns
/// afterwards inherit the policy.
///
/// # Errors
/// [`Error::Realtime`], saying why and what to grant, when the operating system refuses.
#[cfg(target_os = "linux")]
pub fn set_fifo_priority(priority: u8) -> Result<(), Error> {
    use thread_priority::unix::{
        RealtimeThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
        thread_native_id,
    };
    use thread_priority::{ThreadPriority, ThreadPriorityValue};

    let asked = format!("SCHED_FIFO priority {priority}");
    let value = ThreadPriorityValue::try_from(priority)
        .ok()
        .filter(|_| (1..=99).contains(&priority));
    let Some(value) = value else {
        return Err(refused(
            asked,
            "SCHED_FIFO priorities run from 1 to 99".into(),
            "choose a priority from 1 to 99",
        ));
    };
    set_thread_priority_and_policy(
        thread_native_id(),
        ThreadPriority::Crossplatform(value),
        ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
    )
    .map_err(|e| match e {
        thread_priority::Error::OS(code) if code == nix::errno::Errno::EPERM as i32 => refused(
            asked,
            "permission denied (EPERM): the process may not use real-time scheduling".into(),
            GRANT_PRIORITY,
        ),
        other => refused(asked, other.to_string(), GRANT_PRIORITY),
    })
}

/// Pins the calling thread to `cpu` (from 0).
///
/// # Errors
/// [`Error::Realtime`], saying why and what to grant, when the operating system refuses.
#[cfg(target_os = "linux")]
pub fn set_cpu_affinity(cpu: usize) -> Result<(), Error> {
    use nix::sched::{CpuSet, sched_setaffinity};
    use nix::unistd::Pid;

    let asked = format!("CPU affinity to CPU {cpu}");
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|_| {
        refused(
            asked.clone(),
            format!(
                "CPU {cpu} is beyond the {} CPUs an affinity mask can name",
                CpuSet::count()
            ),
            GRANT_CPU,
        )
    })?;
    // Pid 0: the calling thread.
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|errno| {
        let cause = match errno {
            nix::errno::Errno::EINVAL => {
                format!("CPU {cpu} is not online or not allowed to this process (EINVAL)")
            }
            nix::errno::Errno::EPERM => "permission denied (EPERM)".into(),
            other => other.desc().into(),
        };
        refused(asked.clone(), cause, GRANT_CPU)
    })
}

/// Makes the calling thread SCHED_FIFO: only on Linux.
///
/// # Errors
/// Always [`Error::Realtime`] on this operating system.
#[cfg(not(target_os = "linux"))]
pub fn set_fifo_priority(priority: u8) -> Result<(), Error> {
    Err(refused(
        format!("SCHED_FIFO priority {priority}"),
        "real-time priorities are only supported on Linux".into(),
        "leave the priority unset on this operating system",
    ))
}

/// Pins the calling thread to a CPU: only on Linux.
///
/// # Errors
/// Always [`Error::Realtime`] on this operating system.
#[cfg(not(target_os = "linux"))]
pub fn set_cpu_affinity(cpu: usize) -> Result<(), Error> {
    Err(refused(
        format!("CPU affinity to CPU {cpu}"),
        "CPU affinity is only supported on Linux".into(),
        "leave the affinity unset on this operating system",
    ))
}
