//! The registers the control-loop kit, the URScript template and the simulator's servo
//! program agree on: this module is the one place that says which is which.

/// `input_int_register_N`: the watchdog counter, changed by the client every cycle.
pub const WATCHDOG_REGISTER: u8 = 24;

/// `input_int_register_N`: the id of the waypoint the client is sending.
pub const WAYPOINT_REGISTER: u8 = 25;

/// `input_double_register_N..=N+5`: where the URScript template and the simulator read
/// the joint target of the waypoint.
pub const TARGET_REGISTERS: std::ops::RangeInclusive<u8> = 24..=29;

/// `output_int_register_N`: the id of the last waypoint the robot finished.
pub const ACK_REGISTER: u8 = 24;

/// `output_int_register_N`: the program's status, a [`ProgramStatus`](super::ProgramStatus).
pub const STATUS_REGISTER: u8 = 25;

/// The robot program stops when the watchdog register has not changed for this many of
/// its cycles (the controller's loop: 100 ms on e-Series at 500 Hz, 400 ms on CB3).
pub const WATCHDOG_TIMEOUT_CYCLES: u32 = 50;

/// The names of the kit's input fields, in the order the kit appends them to the command.
pub const INPUT_NAMES: [&str; 2] = ["input_int_register_24", "input_int_register_25"];

/// The names of the kit's output fields, in the order the kit appends them to the state.
pub const OUTPUT_NAMES: [&str; 2] = ["output_int_register_24", "output_int_register_25"];

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
}
