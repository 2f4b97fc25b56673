//! Why the program stops: its watchdog, the simulator's faults, and the failure and the
//! messages it leaves.

use rtde_robot_proto::programs::WATCHDOG_TIMEOUT_CYCLES;
use rtde_robot_proto::programs::command::Failure;

/// When a fault of the simulator stops the program: after this much motion time (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ProgramFaults {
    pub(crate) protective_stop_after: Option<f64>,
    pub(crate) runtime_stop_after: Option<f64>,
}

impl ProgramFaults {
    /// The program's share of the simulator's faults.
    pub(crate) fn of(faults: &[crate::Fault]) -> Self {
        let mut f = ProgramFaults::default();
        for fault in faults {
            match fault {
                crate::Fault::ProtectiveStopMidMove(after) => {
                    f.protective_stop_after = Some(after.as_secs_f64());
                }
                crate::Fault::RuntimeStopMidMove(after) => {
                    f.runtime_stop_after = Some(after.as_secs_f64());
                }
                _ => {}
            }
        }
        f
    }
}

/// A fault of the simulator whose time has come.
pub(super) enum DueFault {
    ProtectiveStop,
    RuntimeStop,
}

/// The watchdog register as the program watches it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Watchdog {
    /// The value last seen.
    pub(super) last: Option<i32>,
    /// The on-time ticks it has not changed for.
    unchanged: u32,
    /// Whether a command has been taken: until then nobody kicks it.
    pub(super) armed: bool,
}

impl Watchdog {
    /// Counts one on-time tick that read `value`; once armed and unchanged for
    /// [`WATCHDOG_TIMEOUT_CYCLES`], the cycles it has not changed for.
    pub(super) fn expired(&mut self, value: i32) -> Option<u32> {
        if self.last == Some(value) {
            self.unchanged += 1;
        } else {
            self.last = Some(value);
            self.unchanged = 0;
        }
        (self.armed && self.unchanged >= WATCHDOG_TIMEOUT_CYCLES).then_some(self.unchanged)
    }
}

/// The program's stops and what it has to say about them.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Stops {
    /// Why it stopped (int out +3).
    pub(super) failure: Failure,
    /// Whether a protective stop holds the arm.
    pub(super) protective: bool,
    pub(super) watchdog: Watchdog,
    /// The simulator's faults still to come.
    pub(super) faults: ProgramFaults,
    /// The time the arm has moved, which the faults count.
    pub(super) moving_time: f64,
    /// Every message the program has logged, oldest first.
    pub(super) messages: Vec<String>,
}

impl Stops {
    pub(super) fn new(faults: ProgramFaults) -> Self {
        Stops {
            failure: Failure::None,
            protective: false,
            watchdog: Watchdog::default(),
            faults,
            moving_time: 0.0,
            messages: Vec::new(),
        }
    }

    /// The fault whose time has come, if any; it fires once.
    pub(super) fn due_fault(&mut self) -> Option<DueFault> {
        let f = self.faults;
        if f.protective_stop_after
            .is_some_and(|t| self.moving_time >= t)
        {
            self.faults.protective_stop_after = None;
            Some(DueFault::ProtectiveStop)
        } else if f.runtime_stop_after.is_some_and(|t| self.moving_time >= t) {
            self.faults.runtime_stop_after = None;
            Some(DueFault::RuntimeStop)
        } else {
            None
        }
    }
}
