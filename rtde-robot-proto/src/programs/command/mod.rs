//! The command program, `rtde_command.script` in this folder: the URScript that runs
//! rtde-robot's motion commands on a controller, and its registers. The script (on a
//! controller or the simulator's engine) and rtde-robot's motion API read and write them
//! as this module says, and nowhere else says it.
//!
//! A [`CommandLayout`] places the registers: [`CommandLayout::UPPER`] (the default) uses
//! int registers 30–39 and double registers 30–47, clear of the servo kit's ([`super::servo`],
//! 24–29) and of the fieldbus range; [`CommandLayout::LOWER`] uses 0–9 and 0–17, for a
//! controller without a fieldbus adapter whose upper registers another program holds (ur_rtde
//! offers the same two ranges).
//!
//! | register (offset from the base) | written by | meaning |
//! | --- | --- | --- |
//! | int in +0 | client | watchdog: a counter the client changes every cycle |
//! | int in +1 | client | the [`Command`] |
//! | int in +2 | client | its sequence number, one more than the last command's |
//! | int in +3..=+9 | client | integer arguments ([`Command`] says which) |
//! | double in +0..=+17 | client | arguments ([`Command`] says which) |
//! | int out +0 | program | the sequence number of the last command taken |
//! | int out +1 | program | the sequence number of the last command finished |
//! | int out +2 | program | its [`ProgramState`] |
//! | int out +3 | program | why it stopped: a [`Failure`] |
//! | double out +0 | program | progress of the current motion, 0 to 1 |
//!
//! The handshake: the client writes command `n + 1` only once the program has taken command
//! `n` (int out +0), so no command is lost or run twice. A move is taken when the program
//! can start it: at once when idle, or when the move before it enters its blend radius (a
//! path). Any other command is taken at once: a stop, a speed or servo command replaces the
//! motion under way. A sequence number that is neither the one taken nor the next stops the
//! program ([`Failure::Handshake`]).
//!
//! A session starts where the registers are: a controller keeps its input registers after
//! a client leaves, so a program, when it starts, takes the sequence number it finds as
//! taken and finished (reporting it in int out +0 and +1) and the watchdog value it finds
//! as the last seen. A client reads int out +0 from its first package and writes the next
//! number; a command a previous session left in the registers is never run again.

use std::fmt;

#[cfg(test)]
mod script_tests;
mod text;

pub use text::{SCRIPT, command_program, layout_of};

/// Which registers the command program uses; see the [module](self) documentation.
///
/// ```
/// use rtde_robot_proto::programs::command::CommandLayout;
///
/// let upper = CommandLayout::UPPER;
/// assert_eq!(upper.input_names()[0], "input_int_register_30");
/// assert_eq!(upper.input_names().last().unwrap(), "input_double_register_47");
/// assert_eq!(CommandLayout::LOWER.output_names()[0], "output_int_register_0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommandLayout {
    int_base: u8,
    double_base: u8,
}

/// Offsets of the input int registers from [`CommandLayout::int_base`].
pub mod int_in {
    /// The watchdog counter.
    pub const WATCHDOG: u8 = 0;
    /// The command's code.
    pub const COMMAND: u8 = 1;
    /// The command's sequence number.
    pub const SEQUENCE: u8 = 2;
    /// The first integer argument.
    pub const ARGS: u8 = 3;
    /// How many input int registers the layout takes.
    pub const COUNT: u8 = 10;
}

/// Offsets of the output int registers from [`CommandLayout::int_base`].
pub mod int_out {
    /// The sequence number of the last command taken.
    pub const ACCEPTED: u8 = 0;
    /// The sequence number up to which every command has finished: a setting taken while
    /// a move runs is done at once, but DONE reaches it only after that move
    /// ([`Command::is_setting`](super::Command::is_setting)).
    pub const DONE: u8 = 1;
    /// The program's state.
    pub const STATE: u8 = 2;
    /// Why the program stopped.
    pub const FAILURE: u8 = 3;
    /// How many output int registers the layout takes.
    pub const COUNT: u8 = 4;
}

/// How many input double registers the layout takes (offsets 0 to 17).
pub const DOUBLE_INPUTS: u8 = 18;

/// The output double register (offset 0) with the current motion's progress.
pub const PROGRESS: u8 = 0;

/// The first line of the command program, which tells the program and its version (and,
/// with its register lines, its layout: [`layout_of`]).
pub const MARKER: &str = "# rtde-program: command 1";

impl CommandLayout {
    /// Int registers 30–39, double registers 30–47: the default.
    pub const UPPER: CommandLayout = CommandLayout {
        int_base: 30,
        double_base: 30,
    };

    /// Int registers 0–9, double registers 0–17: the range fieldbus adapters claim when
    /// one is enabled.
    pub const LOWER: CommandLayout = CommandLayout {
        int_base: 0,
        double_base: 0,
    };

    /// The first int register (input and output).
    #[must_use]
    pub const fn int_base(self) -> u8 {
        self.int_base
    }

    /// The first double register (input and output).
    #[must_use]
    pub const fn double_base(self) -> u8 {
        self.double_base
    }

    /// The name of input int register `offset`.
    #[must_use]
    pub fn int_input(self, offset: u8) -> String {
        format!("input_int_register_{}", self.int_base + offset)
    }

    /// The name of input double register `offset`.
    #[must_use]
    pub fn double_input(self, offset: u8) -> String {
        format!("input_double_register_{}", self.double_base + offset)
    }

    /// The name of output int register `offset`.
    #[must_use]
    pub fn int_output(self, offset: u8) -> String {
        format!("output_int_register_{}", self.int_base + offset)
    }

    /// The name of output double register `offset`.
    #[must_use]
    pub fn double_output(self, offset: u8) -> String {
        format!("output_double_register_{}", self.double_base + offset)
    }

    /// Every input the client writes: the ints, then the doubles.
    #[must_use]
    pub fn input_names(self) -> Vec<String> {
        (0..int_in::COUNT)
            .map(|o| self.int_input(o))
            .chain((0..DOUBLE_INPUTS).map(|o| self.double_input(o)))
            .collect()
    }

    /// Every output the program writes: the ints, then the progress.
    #[must_use]
    pub fn output_names(self) -> Vec<String> {
        (0..int_out::COUNT)
            .map(|o| self.int_output(o))
            .chain(std::iter::once(self.double_output(PROGRESS)))
            .collect()
    }
}

impl Default for CommandLayout {
    fn default() -> Self {
        CommandLayout::UPPER
    }
}

/// Declares [`Command`], its codes and the names the URScript program gives them, once.
macro_rules! commands {
    ($($(#[$doc:meta])* $variant:ident = $code:literal, $script:literal;)*) => {
        /// A command of the command program, as its code in int register +1.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Command {
            $($(#[$doc])* $variant,)*
        }

        impl Command {
            /// Every command, with its code and the constant the URScript program names
            /// it by.
            pub const ALL: &'static [(Command, i32, &'static str)] =
                &[$((Command::$variant, $code, $script),)*];
        }
    };
}

commands! {
    /// `movej`: doubles +0..=+5 the joint target (rad), +6 speed (rad/s), +7 acceleration
    /// (rad/s²), +8 blend radius (m).
    MoveJ = 1, "CMD_MOVE_J";
    /// `movel`: doubles +0..=+5 the TCP pose target, +6 speed (m/s), +7 acceleration
    /// (m/s²), +8 blend radius (m).
    MoveL = 2, "CMD_MOVE_L";
    /// `speedj`: doubles +0..=+5 joint speeds (rad/s), +6 acceleration (rad/s²).
    SpeedJ = 3, "CMD_SPEED_J";
    /// `speedl`: doubles +0..=+5 TCP speed (m/s, rad/s), +6 acceleration (m/s²).
    SpeedL = 4, "CMD_SPEED_L";
    /// `stopj`: double +0 the deceleration (rad/s²).
    StopJ = 5, "CMD_STOP_J";
    /// `stopl`: double +0 the deceleration (m/s²).
    StopL = 6, "CMD_STOP_L";
    /// `servoj`: doubles +0..=+5 the joint target, +6 time (s), +7 lookahead time (s),
    /// +8 gain.
    ServoJ = 7, "CMD_SERVO_J";
    /// `stopj` after servoing: double +0 the deceleration (rad/s²).
    ServoStop = 8, "CMD_SERVO_STOP";
    /// `zero_ftsensor`.
    ZeroFtSensor = 9, "CMD_ZERO_FT_SENSOR";
    /// `set_tcp`: doubles +0..=+5 the TCP offset pose.
    SetTcp = 10, "CMD_SET_TCP";
    /// `set_target_payload` (`set_payload` before 5.10): double +0 the mass (kg),
    /// +1..=+3 the centre of gravity (m).
    SetPayload = 11, "CMD_SET_PAYLOAD";
    /// `teach_mode`.
    TeachMode = 12, "CMD_TEACH_MODE";
    /// `end_teach_mode`.
    EndTeachMode = 13, "CMD_END_TEACH_MODE";
    /// `force_mode`: doubles +0..=+5 the task frame, +6..=+11 the wrench, +12..=+17 the
    /// limits; int +3 the type (1, 2 or 3), ints +4..=+9 the selection vector (0 or 1).
    ForceMode = 14, "CMD_FORCE_MODE";
    /// `end_force_mode`.
    EndForceMode = 15, "CMD_END_FORCE_MODE";
}

impl Command {
    /// The code written to int register +1.
    #[must_use]
    pub fn code(self) -> i32 {
        Command::ALL
            .iter()
            .find(|(c, _, _)| *c == self)
            .map_or(0, |(_, code, _)| *code)
    }

    /// The command of a code, if any.
    #[must_use]
    pub fn from_code(code: i32) -> Option<Command> {
        Command::ALL
            .iter()
            .find(|(_, c, _)| *c == code)
            .map(|(command, _, _)| *command)
    }

    /// Whether the command moves the arm along a trajectory that a blend can join (the
    /// program takes it only when it can start it).
    #[must_use]
    pub fn is_move(self) -> bool {
        matches!(self, Command::MoveJ | Command::MoveL)
    }

    /// Whether the command is a setting: done when the program takes it, with the motion
    /// under way running on. The program's DONE register reaches a setting only once the
    /// moves taken before it have finished, so that it never reports a running move done.
    /// Every other command that is not a move replaces the motion under way.
    #[must_use]
    pub fn is_setting(self) -> bool {
        matches!(
            self,
            Command::ZeroFtSensor
                | Command::SetTcp
                | Command::SetPayload
                | Command::EndTeachMode
                | Command::ForceMode
                | Command::EndForceMode
        )
    }
}

/// The command program's state (int out +2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramState {
    /// Running, no motion under way.
    Idle,
    /// Running a motion.
    Moving,
    /// Stopped; int out +3 says why.
    Stopped,
    /// A value the program never writes (another program runs).
    Unknown(i32),
}

impl ProgramState {
    /// The register value of a state.
    #[must_use]
    pub const fn to_register(self) -> i32 {
        match self {
            ProgramState::Idle => 0,
            ProgramState::Moving => 1,
            ProgramState::Stopped => 2,
            ProgramState::Unknown(v) => v,
        }
    }

    /// The state of a register value.
    #[must_use]
    pub const fn from_register(value: i32) -> Self {
        match value {
            0 => ProgramState::Idle,
            1 => ProgramState::Moving,
            2 => ProgramState::Stopped,
            v => ProgramState::Unknown(v),
        }
    }
}

/// Why the command program stopped (int out +3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// It has not stopped.
    None,
    /// A target or a point of a straight line has no joint solution.
    Unreachable,
    /// The watchdog register did not change for
    /// [`WATCHDOG_TIMEOUT_CYCLES`](super::WATCHDOG_TIMEOUT_CYCLES) cycles.
    Watchdog,
    /// A sequence number was neither the one taken nor the next.
    Handshake,
    /// A command code the program does not know.
    UnknownCommand,
    /// A value the program never writes.
    Unknown(i32),
}

impl Failure {
    /// The register value, and the name the URScript program gives it.
    pub const ALL: [(Failure, i32, &'static str); 5] = [
        (Failure::None, 0, "FAIL_NONE"),
        (Failure::Unreachable, 1, "FAIL_UNREACHABLE"),
        (Failure::Watchdog, 2, "FAIL_WATCHDOG"),
        (Failure::Handshake, 3, "FAIL_HANDSHAKE"),
        (Failure::UnknownCommand, 4, "FAIL_UNKNOWN_COMMAND"),
    ];

    /// The register value of a failure.
    #[must_use]
    pub fn to_register(self) -> i32 {
        match self {
            Failure::Unknown(v) => v,
            known => Failure::ALL
                .iter()
                .find(|(f, _, _)| *f == known)
                .map_or(0, |(_, v, _)| *v),
        }
    }

    /// The failure of a register value.
    #[must_use]
    pub fn from_register(value: i32) -> Self {
        Failure::ALL
            .iter()
            .find(|(_, v, _)| *v == value)
            .map_or(Failure::Unknown(value), |(f, _, _)| *f)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::None => f.write_str("no failure"),
            Failure::Unreachable => f.write_str("a target had no joint solution"),
            Failure::Watchdog => write!(
                f,
                "the watchdog register did not change for {} cycles",
                super::WATCHDOG_TIMEOUT_CYCLES
            ),
            Failure::Handshake => f.write_str("a command's sequence number skipped one"),
            Failure::UnknownCommand => f.write_str("a command code the program does not know"),
            Failure::Unknown(v) => write!(f, "failure code {v}, which the program never writes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_distinct() {
        for (i, (command, code, _)) in Command::ALL.iter().enumerate() {
            assert_eq!(command.code(), *code);
            assert_eq!(Command::from_code(*code), Some(*command));
            assert!(Command::ALL[i + 1..].iter().all(|(_, c, _)| c != code));
        }
        for (failure, code, _) in Failure::ALL {
            assert_eq!(Failure::from_register(code), failure);
            assert_eq!(failure.to_register(), code);
        }
    }

    #[test]
    fn the_upper_layout_clears_the_servo_kit_and_the_fieldbus() {
        let servo: Vec<String> = super::super::servo::INPUT_NAMES
            .iter()
            .map(|s| (*s).to_owned())
            .chain(
                super::super::servo::TARGET_REGISTERS.map(|r| format!("input_double_register_{r}")),
            )
            .collect();
        let names = CommandLayout::UPPER.input_names();
        assert!(names.iter().all(|n| !servo.contains(n)), "{names:?}");
        assert_eq!(names.last().unwrap(), "input_double_register_47");
        let outputs = CommandLayout::UPPER.output_names();
        assert!(
            outputs
                .iter()
                .all(|n| !super::super::servo::OUTPUT_NAMES.contains(&n.as_str()))
        );
    }
}
