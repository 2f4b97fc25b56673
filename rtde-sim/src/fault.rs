//! Faults the simulator can inject, to test how clients cope with what controllers and
//! networks do to them.

use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_core::protocol::{MessageLevel, package_type};

/// A fault to inject on every connection, set with
/// [`SimBuilder::fault`](crate::SimBuilder::fault).
///
/// Each connection counts its own packages, so every client meets the same faults.
///
/// ```
/// use std::time::Duration;
/// use rtde_core::protocol::{package_type, MessageLevel};
/// use rtde_sim::{Fault, Malformation, Sim, Trigger};
///
/// let sim = Sim::builder()
///     .fault(Fault::SkipEvery(10))
///     .fault(Fault::DelayReplies(Duration::from_millis(5)))
///     .fault(Fault::TextMessage {
///         at: Trigger::Reply(package_type::GET_URCONTROL_VERSION),
///         level: MessageLevel::Warning,
///         message: "SafetySetup has not been confirmed yet".into(),
///         source: "Controller".into(),
///     })
///     .fault(Fault::Malformed { at: Trigger::DataPackage(100), kind: Malformation::WrongRecipeId })
///     .fault(Fault::CloseMidFrame(Trigger::DataPackage(200)))
///     .start()
///     .unwrap();
/// # drop(sim);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Fault {
    /// Leave out every `n`th output package: with an output recipe decimated to every
    /// `d` ticks, no package is sent for the ticks `t` where `(t / d + 1) % n == 0`
    /// (the `n`th, `2n`th, … due package). The client sees `timestamp` jump by two steps.
    /// `n` of 0 or 1 is ignored.
    SkipEvery(u64),
    /// Send no output package for these ticks (the tick is `timestamp × loop rate`).
    SkipTicks(Vec<u64>),
    /// Wait this long before every reply to a control request (REQUEST_PROTOCOL_VERSION,
    /// GET_URCONTROL_VERSION, SETUP_OUTPUTS, SETUP_INPUTS, START, PAUSE), as a busy or
    /// booting controller does.
    DelayReplies(Duration),
    /// Take this long to notice that a client closed its connection, as a loaded
    /// controller may: the connection counts as open, and its inputs stay held, until then.
    SlowClose(Duration),
    /// Send a text message (in the connection's protocol version at that moment) just
    /// before the package `at` names, as a controller does when it has something to say
    /// during the handshake ("SafetySetup has not been confirmed yet").
    TextMessage {
        /// Where.
        at: Trigger,
        /// The message level.
        level: MessageLevel,
        /// The text; at most 255 bytes are sent in protocol v2.
        message: String,
        /// Who says it (protocol v2 only); at most 255 bytes are sent.
        source: String,
    },
    /// Send the first half of the package `at` names (at least one byte, never all of
    /// it), then close the connection.
    CloseMidFrame(Trigger),
    /// Send the package `at` names malformed, as `kind` says; the connection stays open
    /// and the simulator carries on as if the package had been sent intact.
    Malformed {
        /// Which package.
        at: Trigger,
        /// How it is malformed.
        kind: Malformation,
    },
    /// Send the first output data package before the reply to START, as real controllers
    /// sometimes do: a client that takes the first package after START for the reply, or
    /// drops it, is caught.
    DataBeforeStartReply,
    /// Send one more output data package between a PAUSE request and its reply, as a
    /// controller whose loop had already sampled it does.
    DataBeforePauseReply,
    /// For `window` after the simulator started (the controller booting), delay every
    /// reply to a control request by `delay`; later replies come at once.
    SlowBoot {
        /// How long after start replies are slow.
        window: Duration,
        /// How much slower each reply is during the window.
        delay: Duration,
    },
    /// Report this build number in the reply to GET_URCONTROL_VERSION (`5.21.0.123456`),
    /// as real controllers do, instead of the configured version's (0 unless given).
    BuildNumber(u32),
    /// Every Dashboard server reply comes this much late (with
    /// [`SimBuilder::dashboard`](crate::SimBuilder::dashboard)).
    DashboardDelay(Duration),
    /// The Dashboard server refuses the command of this name (`play`, `power on`…)
    /// with `Failed to execute: <command>`, whatever the robot's state.
    DashboardRefuse(String),
    /// A program sent to a script port fails at this line and column with a runtime
    /// exception, reported over the primary interface; it does not start.
    RuntimeException {
        /// The program line, from 1.
        line: u32,
        /// The column, from 1.
        column: u32,
    },
    /// A program sent to a script port does not compile: a runtime exception whose text
    /// starts `compile_error`, at this line and column, over the primary interface.
    CompileError {
        /// The program line, from 1.
        line: u32,
        /// The column, from 1.
        column: u32,
    },
    /// A protective stop this long after a program starts playing.
    ProtectiveStopAfter(Duration),
    /// A protective stop once the command program
    /// ([`SimBuilder::command_program`](crate::SimBuilder::command_program)) has moved the
    /// arm for this long (simulated time, summed over its moves): the arm stops, the
    /// program stops, and `safety_mode` reports PROTECTIVE_STOP, as after a collision.
    ProtectiveStopMidMove(Duration),
    /// The command program stops once it has moved the arm for this long, as when someone
    /// presses Stop on the pendant: `runtime_state` reports STOPPED, the safety stays
    /// normal.
    RuntimeStopMidMove(Duration),
}

/// Which package on a connection a [`Fault`] applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Trigger {
    /// The simulator's reply to the first request of this package type
    /// ([`rtde_core::protocol::package_type`]) on the connection.
    Reply(u8),
    /// The output data package with this index on the connection (0 is the first one
    /// sent after START; skipped packages are not counted).
    DataPackage(u64),
}

/// How a [`Fault::Malformed`] package is broken.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformation {
    /// The size field says 2, less than the header: the stream cannot be resynchronised.
    SizeTooSmall,
    /// The package type byte is `0x00`, which no package has.
    UnknownPackageType,
    /// The size field says 1000 bytes more than the package has, so the client takes
    /// the packages that follow as the rest of this one.
    SizeTooLarge,
    /// A data package carries an output recipe id one above the recipe's (protocol v2;
    /// in v1, where data packages carry no id, the first payload byte is changed).
    /// For a reply, its first payload byte is changed.
    WrongRecipeId,
    /// These bytes are sent instead of the package.
    Bytes(Vec<u8>),
}

/// The controller version to report with the build number a [`Fault::BuildNumber`] asks
/// for (the last one given wins).
pub(crate) fn reported_version(faults: &[Fault], version: ControllerVersion) -> ControllerVersion {
    faults
        .iter()
        .rev()
        .find_map(|f| match f {
            Fault::BuildNumber(build) => Some(ControllerVersion {
                build: *build,
                ..version
            }),
            _ => None,
        })
        .unwrap_or(version)
}

/// The faults of one connection, and which of the one-shot ones have fired.
#[derive(Debug)]
pub(crate) struct FaultPlan {
    faults: Vec<Fault>,
    fired: Vec<bool>,
}

/// What to do with one package about to be sent.
#[derive(Debug, Default)]
pub(crate) struct PackagePlan {
    /// Text messages to send first: (level, message, source).
    pub(crate) texts: Vec<(MessageLevel, String, String)>,
    /// Send the package malformed this way.
    pub(crate) malformed: Option<Malformation>,
    /// Send half the package, then close.
    pub(crate) close_mid_frame: bool,
}

impl FaultPlan {
    pub(crate) fn new(faults: &[Fault]) -> Self {
        FaultPlan {
            faults: faults.to_vec(),
            fired: vec![false; faults.len()],
        }
    }

    /// Whether the output package of `tick` (decimation `every`) is to be left out.
    pub(crate) fn skips(&self, tick: u64, every: u64) -> bool {
        self.faults.iter().any(|f| match f {
            Fault::SkipEvery(n) if *n > 1 => (tick / every.max(1) + 1).is_multiple_of(*n),
            Fault::SkipTicks(ticks) => ticks.contains(&tick),
            _ => false,
        })
    }

    /// The delay before every control reply: the sum of the delays, at most `Duration::MAX`.
    pub(crate) fn reply_delay(&self) -> Duration {
        self.total(|f| match f {
            Fault::DelayReplies(d) => Some(*d),
            _ => None,
        })
    }

    /// How long a client's close goes unnoticed: the sum of the delays.
    pub(crate) fn close_delay(&self) -> Duration {
        self.total(|f| match f {
            Fault::SlowClose(d) => Some(*d),
            _ => None,
        })
    }

    /// The extra delay of a reply while the controller boots: `since_start` after the
    /// simulator started.
    pub(crate) fn boot_delay(&self, since_start: Duration) -> Duration {
        self.total(|f| match f {
            Fault::SlowBoot { window, delay } if since_start < *window => Some(*delay),
            _ => None,
        })
    }

    /// The sum of the delays `delay` picks from the faults, at most `Duration::MAX`.
    fn total(&self, delay: impl Fn(&Fault) -> Option<Duration>) -> Duration {
        self.faults
            .iter()
            .filter_map(delay)
            .fold(Duration::ZERO, Duration::saturating_add)
    }

    /// Whether an output data package goes out before the reply to the request `kind`
    /// (START or PAUSE).
    pub(crate) fn data_before_reply(&self, kind: u8) -> bool {
        self.faults.iter().any(|f| match f {
            Fault::DataBeforeStartReply => kind == package_type::START,
            Fault::DataBeforePauseReply => kind == package_type::PAUSE,
            _ => false,
        })
    }

    /// The plan for a package: `reply_to` is the request type for a reply, `data_index`
    /// the index of an output data package. Each trigger fires once.
    pub(crate) fn plan(&mut self, reply_to: Option<u8>, data_index: Option<u64>) -> PackagePlan {
        let mut plan = PackagePlan::default();
        for (fault, fired) in self.faults.iter().zip(self.fired.iter_mut()) {
            let at = match fault {
                Fault::TextMessage { at, .. }
                | Fault::CloseMidFrame(at)
                | Fault::Malformed { at, .. } => *at,
                _ => continue,
            };
            let hit = match at {
                Trigger::Reply(kind) => reply_to == Some(kind),
                Trigger::DataPackage(n) => data_index == Some(n),
            };
            if !hit || *fired {
                continue;
            }
            *fired = true;
            match fault {
                Fault::TextMessage {
                    level,
                    message,
                    source,
                    ..
                } => plan.texts.push((*level, message.clone(), source.clone())),
                Fault::CloseMidFrame(_) => plan.close_mid_frame = true,
                Fault::Malformed { kind, .. } => plan.malformed = Some(kind.clone()),
                _ => {}
            }
        }
        plan
    }
}

impl Malformation {
    /// Breaks an encoded package (`bytes`, header included) in place, or replaces it.
    pub(crate) fn apply(&self, bytes: &mut Vec<u8>) {
        match self {
            Malformation::SizeTooSmall => {
                if bytes.len() >= 2 {
                    bytes[..2].copy_from_slice(&2u16.to_be_bytes());
                }
            }
            Malformation::UnknownPackageType => {
                if let Some(kind) = bytes.get_mut(2) {
                    *kind = 0x00;
                }
            }
            Malformation::SizeTooLarge => {
                let size = u16::try_from(bytes.len() + 1000).unwrap_or(u16::MAX);
                if bytes.len() >= 2 {
                    bytes[..2].copy_from_slice(&size.to_be_bytes());
                }
            }
            Malformation::WrongRecipeId => {
                if let Some(id) = bytes.get_mut(3) {
                    *id = id.wrapping_add(1);
                }
            }
            Malformation::Bytes(raw) => raw.clone_into(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_every_counts_due_packages() {
        let plan = FaultPlan::new(&[Fault::SkipEvery(3)]);
        let skipped: Vec<u64> = (0..40).step_by(4).filter(|&t| plan.skips(t, 4)).collect();
        assert_eq!(skipped, [8, 20, 32]);
    }

    #[test]
    fn boot_delays_end_with_the_window_and_builds_are_reported() {
        let plan = FaultPlan::new(&[Fault::SlowBoot {
            window: Duration::from_secs(2),
            delay: Duration::from_millis(300),
        }]);
        assert_eq!(
            plan.boot_delay(Duration::from_secs(1)),
            Duration::from_millis(300)
        );
        assert_eq!(plan.boot_delay(Duration::from_secs(2)), Duration::ZERO);
        let v: ControllerVersion = "5.21.0".parse().unwrap();
        let reported = reported_version(&[Fault::BuildNumber(123_456)], v);
        assert_eq!(reported.to_string(), "5.21.0.123456");
        assert_eq!(reported_version(&[], v), v);
    }

    #[test]
    fn triggers_fire_once() {
        let mut plan = FaultPlan::new(&[
            Fault::CloseMidFrame(Trigger::DataPackage(2)),
            Fault::TextMessage {
                at: Trigger::Reply(b'v'),
                level: MessageLevel::Info,
                message: "hi".into(),
                source: String::new(),
            },
        ]);
        assert!(!plan.plan(None, Some(1)).close_mid_frame);
        assert!(plan.plan(None, Some(2)).close_mid_frame);
        assert!(!plan.plan(None, Some(2)).close_mid_frame);
        assert_eq!(plan.plan(Some(b'v'), None).texts.len(), 1);
        assert!(plan.plan(Some(b'v'), None).texts.is_empty());
    }
}
