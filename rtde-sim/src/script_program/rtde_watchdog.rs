//! `rtde_set_watchdog`: the controller watches an RTDE input variable for a script and
//! pauses or stops the program when no package has carried it for longer than the period
//! of the frequency the script asked for, as when the client that writes it died.

use rtde_core::fields::{Direction, lookup};

use crate::io::IoState;

/// What the controller does when a watched variable goes quiet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    Ignore,
    Pause,
    Stop,
}

/// A watched variable that went quiet: what to do, and the message that says why.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Violation {
    pub(super) action: Action,
    pub(super) message: String,
}

#[derive(Clone, Debug)]
struct Watch {
    name: &'static str,
    min_frequency: f64,
    action: Action,
    /// The variable's update count when last seen to change, and the time since.
    seen: u64,
    quiet: f64,
}

/// The watchdogs a script set, one per variable; the program's end removes them all.
#[derive(Clone, Debug, Default)]
pub(super) struct Watchdogs(Vec<Watch>);

impl Watchdogs {
    /// `rtde_set_watchdog(variable_name, min_frequency, action)`: watches the variable
    /// from now (a later call for the same variable replaces the earlier one).
    pub(super) fn set(
        &mut self,
        io: &IoState,
        variable: &str,
        min_frequency: f64,
        action: &str,
    ) -> Result<(), String> {
        let field = lookup(Direction::Input, variable)
            .ok_or_else(|| format!("`{variable}` is no RTDE input variable"))?;
        if !(min_frequency.is_finite() && min_frequency > 0.0) {
            return Err(format!(
                "a watchdog's minimum frequency must be a positive number of hertz, not {min_frequency}"
            ));
        }
        let action = match action {
            "ignore" => Action::Ignore,
            "pause" => Action::Pause,
            "stop" => Action::Stop,
            other => {
                return Err(format!(
                    "a watchdog's action is \"ignore\", \"pause\" or \"stop\", not \"{other}\""
                ));
            }
        };
        self.0.retain(|w| w.name != field.name());
        self.0.push(Watch {
            name: field.name(),
            min_frequency,
            action,
            seen: io.updates(field.name()),
            quiet: 0.0,
        });
        Ok(())
    }

    /// Counts one tick of `dt` seconds; the first watched variable quiet for longer than
    /// its period, if its action is not to ignore it. A violation is reported once: the
    /// variable is watched again from its next update.
    pub(super) fn check(&mut self, io: &IoState, dt: f64) -> Option<Violation> {
        let mut violation = None;
        for w in &mut self.0 {
            let updates = io.updates(w.name);
            if updates == w.seen {
                w.quiet += dt;
            } else {
                w.seen = updates;
                w.quiet = 0.0;
            }
            if w.quiet > 1.0 / w.min_frequency + 1e-9 {
                w.quiet = f64::NEG_INFINITY;
                if w.action != Action::Ignore && violation.is_none() {
                    violation = Some(Violation {
                        action: w.action,
                        message: format!(
                            "RTDE watchdog: no update of `{}` for more than {:.3} s (minimum \
                             {} Hz): the program {}",
                            w.name,
                            1.0 / w.min_frequency,
                            w.min_frequency,
                            if w.action == Action::Stop {
                                "stopped"
                            } else {
                                "paused"
                            }
                        ),
                    });
                }
            }
        }
        violation
    }
}
