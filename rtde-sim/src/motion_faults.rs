//! The simulator's faults that stop whatever program runs once the arm has moved for a
//! while ([`Fault::ProtectiveStopMidMove`], [`Fault::RuntimeStopMidMove`]): the
//! controller's, not a program's, so rtde's own programs, a client's URScript and a
//! ur_rtde script meet them alike.

use crate::fault::Fault;

/// A fault whose time has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DueFault {
    /// A protective stop, as after a collision.
    ProtectiveStop,
    /// The program stopped, as by the pendant's Stop button.
    RuntimeStop,
}

/// The faults still to come and the motion time they count, summed over every program
/// the controller runs: each fires once.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct MotionFaults {
    protective_stop_after: Option<f64>,
    runtime_stop_after: Option<f64>,
    /// Seconds the arm has moved.
    moved: f64,
}

impl MotionFaults {
    /// The simulator's faults of this kind (the last of each counts).
    pub(crate) fn of(faults: &[Fault]) -> Self {
        let mut f = MotionFaults::default();
        for fault in faults {
            match fault {
                Fault::ProtectiveStopMidMove(after) => {
                    f.protective_stop_after = Some(after.as_secs_f64());
                }
                Fault::RuntimeStopMidMove(after) => {
                    f.runtime_stop_after = Some(after.as_secs_f64());
                }
                _ => {}
            }
        }
        f
    }

    /// Counts one tick of `dt` seconds in which the arm moved (or not); the fault whose time
    /// has come, if any.
    pub(crate) fn count(&mut self, moving: bool, dt: f64) -> Option<DueFault> {
        if !moving {
            return None;
        }
        self.moved += dt;
        if self.protective_stop_after.is_some_and(|t| self.moved >= t) {
            self.protective_stop_after = None;
            Some(DueFault::ProtectiveStop)
        } else if self.runtime_stop_after.is_some_and(|t| self.moved >= t) {
            self.runtime_stop_after = None;
            Some(DueFault::RuntimeStop)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rtde_core::Value;
    use rtde_core::fields::ControllerVersion;

    use super::*;
    use crate::controller::Controller;
    use crate::source::Tick;

    /// A client's own script, not one of rtde's: the controller's faults stop it as they
    /// stop rtde's programs, after 100 ms of motion (50 ticks at 500 Hz).
    #[test]
    fn any_program_meets_the_faults_after_its_motion_time() {
        let script = "def pick():\n  sleep(0.1)\n  movej([1.0, -1.57, 1.57, -1.57, -1.57, 0], a=1, v=0.5)\nend\n";
        for (fault, safety, said) in [
            (
                Fault::ProtectiveStopMidMove(Duration::from_millis(100)),
                Some(Value::Int32(3)),
                "protective stop",
            ),
            (
                Fault::RuntimeStopMidMove(Duration::from_millis(100)),
                None,
                "pick: the program was stopped",
            ),
        ] {
            let mut c = Controller::default();
            c.motion_faults = MotionFaults::of(std::slice::from_ref(&fault));
            c.start_script_program("pick", script, ControllerVersion::new(5, 9, 0, 0))
                .unwrap();
            for t in 0..300 {
                c.tick(Tick::new(t, 500));
            }
            let p = c.program().unwrap();
            assert!(p.has_stopped(), "{fault:?}");
            assert_eq!(p.qd(), [0.0; 6], "{fault:?}");
            assert_eq!(p.output("safety_mode"), safety, "{fault:?}");
            assert!(
                p.messages().last().is_some_and(|m| m.contains(said)),
                "{fault:?}: {:?}",
                p.messages()
            );
            // The leading joint, 100 ms at 1 rad/s² from rest: 5 mrad (the 100 ms the arm
            // stood do not count; a tick more would be 5.2).
            assert!((p.q()[1] + 0.005).abs() < 1e-4, "{fault:?}: {:?}", p.q());
        }
    }

    #[test]
    fn a_fault_fires_once_after_its_motion_time_and_standing_does_not_count() {
        let mut f = MotionFaults::of(&[
            Fault::ProtectiveStopMidMove(Duration::from_secs(1)),
            Fault::RuntimeStopMidMove(Duration::from_secs(2)),
        ]);
        let mut fired = Vec::new();
        for tick in 0..20 {
            // Standing every other tick: those do not count.
            if let Some(due) = f.count(tick % 2 == 0, 0.25) {
                fired.push((tick, due));
            }
        }
        assert_eq!(
            fired,
            [(6, DueFault::ProtectiveStop), (14, DueFault::RuntimeStop)]
        );
    }
}
