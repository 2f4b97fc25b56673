//! The servo program, `rtde_servo.script` in this folder: the URScript a robot runs for
//! rtde-robot's control-loop kit, the registers it and the simulator's servo program read
//! and write, and the status codes it reports. This module is the one place that says
//! which register is which.

/// `rtde_servo.script`, the program to install on the pendant or send (its header says how).
pub const SCRIPT: &str = include_str!("rtde_servo.script");

/// The line that names the program and its version in [`SCRIPT`].
pub const MARKER: &str = "# rtde-program: servo 1";

/// `input_int_register_N`: the watchdog counter, changed by the client every cycle.
pub const WATCHDOG_REGISTER: u8 = 24;

/// `input_int_register_N`: the id of the waypoint the client is sending.
pub const WAYPOINT_REGISTER: u8 = 25;

/// `input_double_register_N..=N+5`: where the URScript template and the simulator read
/// the joint target of the waypoint.
pub const TARGET_REGISTERS: std::ops::RangeInclusive<u8> = 24..=29;

/// `output_int_register_N`: the id of the last waypoint the robot took: it has read the
/// waypoint's target, so the registers are free for the next, which it takes once this
/// one's `servoj` returns.
pub const ACK_REGISTER: u8 = 24;

/// `output_int_register_N`: the program's status, a [`ProgramStatus`].
pub const STATUS_REGISTER: u8 = 25;

pub use super::WATCHDOG_TIMEOUT_CYCLES;

/// The names of the kit's input fields, in the order the kit appends them to the command.
pub const INPUT_NAMES: [&str; 2] = ["input_int_register_24", "input_int_register_25"];

/// The names of the kit's output fields, in the order the kit appends them to the state.
pub const OUTPUT_NAMES: [&str; 2] = ["output_int_register_24", "output_int_register_25"];

/// What the robot program reports in `output_int_register_25`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProgramStatus {
    /// Started, waiting for the first waypoint.
    Waiting,
    /// Following the waypoints.
    Running,
    /// Stopped: the watchdog register did not change in time.
    WatchdogStopped,
    /// Stopped: a waypoint id was neither the current one nor the next.
    HandshakeStopped,
    /// A value no program of this kit writes (no program running, say).
    Unknown(i32),
}

impl ProgramStatus {
    /// The status of a register value.
    #[must_use]
    pub const fn from_register(value: i32) -> Self {
        match value {
            0 => ProgramStatus::Waiting,
            1 => ProgramStatus::Running,
            2 => ProgramStatus::WatchdogStopped,
            3 => ProgramStatus::HandshakeStopped,
            other => ProgramStatus::Unknown(other),
        }
    }

    /// The register value of a status.
    #[must_use]
    pub const fn to_register(self) -> i32 {
        match self {
            ProgramStatus::Waiting => 0,
            ProgramStatus::Running => 1,
            ProgramStatus::WatchdogStopped => 2,
            ProgramStatus::HandshakeStopped => 3,
            ProgramStatus::Unknown(v) => v,
        }
    }

    /// Whether the program stopped the robot.
    #[must_use]
    pub const fn is_stopped(self) -> bool {
        matches!(
            self,
            ProgramStatus::WatchdogStopped | ProgramStatus::HandshakeStopped
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_registers() {
        assert_eq!(
            INPUT_NAMES,
            [
                format!("input_int_register_{WATCHDOG_REGISTER}").as_str(),
                format!("input_int_register_{WAYPOINT_REGISTER}").as_str()
            ]
        );
        assert_eq!(
            OUTPUT_NAMES,
            [
                format!("output_int_register_{ACK_REGISTER}").as_str(),
                format!("output_int_register_{STATUS_REGISTER}").as_str()
            ]
        );
    }

    #[test]
    fn statuses_round_trip_through_their_register() {
        for s in [
            ProgramStatus::Waiting,
            ProgramStatus::Running,
            ProgramStatus::WatchdogStopped,
            ProgramStatus::HandshakeStopped,
            ProgramStatus::Unknown(9),
        ] {
            assert_eq!(ProgramStatus::from_register(s.to_register()), s);
        }
        assert!(ProgramStatus::WatchdogStopped.is_stopped());
        assert!(!ProgramStatus::Running.is_stopped());
    }

    #[test]
    fn the_urscript_template_uses_the_kits_registers() {
        let script = SCRIPT;
        let mut needles = vec![
            format!("read_input_integer_register({})", WATCHDOG_REGISTER),
            format!("read_input_integer_register({})", WAYPOINT_REGISTER),
            format!("write_output_integer_register({}, acked)", ACK_REGISTER),
            format!("write_output_integer_register({}, status)", STATUS_REGISTER),
            format!("WATCHDOG_TIMEOUT_CYCLES = {}", WATCHDOG_TIMEOUT_CYCLES),
        ];
        needles.extend(TARGET_REGISTERS.map(|r| format!("read_input_float_register({r})")));
        for needle in needles {
            assert!(script.contains(&needle), "the template lacks `{needle}`");
        }
        // Status values as the kit reads them.
        for (status, text) in [
            (ProgramStatus::WatchdogStopped, "stop_safely(2,"),
            (ProgramStatus::HandshakeStopped, "stop_safely(3,"),
        ] {
            assert!(script.contains(text), "{status:?}");
            assert_eq!(text[12..13].parse::<i32>().unwrap(), status.to_register());
        }
    }
}
