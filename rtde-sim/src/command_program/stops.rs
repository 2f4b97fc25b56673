//! Why the program stops: its watchdog, and the failure and the messages it leaves.

use rtde_robot_proto::programs::WATCHDOG_TIMEOUT_CYCLES;
use rtde_robot_proto::programs::command::Failure;

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
    /// Every message the program has logged, oldest first.
    pub(super) messages: Vec<String>,
}

impl Stops {
    pub(super) fn new() -> Self {
        Stops {
            failure: Failure::None,
            protective: false,
            watchdog: Watchdog::default(),
            messages: Vec::new(),
        }
    }
}
