//! Reading the registers: the command a client writes, its arguments and the watchdog.

use std::time::Instant;

use rtde_core::Value;
use rtde_robot_proto::programs::command::{Command, DOUBLE_INPUTS, Failure, ProgramState, int_in};

use super::CommandProgram;
use super::settings::ForceMode;
use crate::io::IoState;
use crate::motion::Space;
use crate::program::MAX_JOINT_ACCELERATION;

impl CommandProgram {
    fn int(&self, io: &IoState, offset: u8) -> i32 {
        match io.input(&self.layout.int_input(offset)) {
            Some(Value::Int32(v)) => *v,
            _ => 0,
        }
    }

    fn doubles(&self, io: &IoState) -> [f64; DOUBLE_INPUTS as usize] {
        std::array::from_fn(|i| {
            let offset = u8::try_from(i).unwrap_or(0);
            match io.input(&self.layout.double_input(offset)) {
                Some(Value::Double(v)) => *v,
                _ => 0.0,
            }
        })
    }

    pub(super) fn check_watchdog(&mut self, io: &IoState) {
        let value = self.int(io, int_in::WATCHDOG);
        if let Some(unchanged) = self.stops.watchdog.expired(value) {
            let message = format!(
                "rtde_command: watchdog: {} did not change for {} cycles; the robot stopped",
                self.layout.int_input(int_in::WATCHDOG),
                unchanged
            );
            self.halt(Failure::Watchdog, message);
        }
    }

    /// Starts from the registers as it finds them: a controller keeps its input registers
    /// after a client leaves, so a previous session's sequence number and watchdog count
    /// are still there. The sequence number in them counts as taken and finished (that
    /// command was the previous program's, never this one's), and the next one is the
    /// first this program runs; the watchdog counts from the value found.
    pub(super) fn adopt_registers(&mut self, io: &IoState) {
        let seq = self.int(io, int_in::SEQUENCE);
        self.handshake.accepted = seq;
        self.handshake.done = seq;
        self.stops.watchdog.last = Some(self.int(io, int_in::WATCHDOG));
    }

    /// Takes the command in the registers, when it is the next one and can be taken.
    pub(super) fn take_command(&mut self, io: &IoState) {
        let seq = self.int(io, int_in::SEQUENCE);
        let accepted = self.handshake.accepted;
        if seq == accepted {
            return;
        }
        if seq != accepted.wrapping_add(1) {
            let message = format!(
                "rtde_command: handshake: command {seq} arrived after command {accepted}; the \
                 robot stopped"
            );
            return self.halt(Failure::Handshake, message);
        }
        let code = self.int(io, int_in::COMMAND);
        let Some(command) = Command::from_code(code) else {
            let message =
                format!("rtde_command: command code {code} is not one this program knows");
            return self.halt(Failure::UnknownCommand, message);
        };
        let d = self.doubles(io);
        if command.is_move() {
            if self.handshake.pending.is_some() {
                return;
            }
            self.handshake.pending = Some((command, seq, std::array::from_fn(|i| d[i])));
        } else {
            self.run_at_once(command, io, &d);
            let h = &mut self.handshake;
            if command.is_setting() && h.first_move_in_flight(&self.arm.motion).is_some() {
                h.setting_done = Some(seq);
            } else {
                h.done = seq;
                h.setting_done = None;
            }
        }
        self.handshake.accepted = seq;
        self.stops.watchdog.armed = true;
    }

    /// Runs a command that is not a move, with the doubles `d`.
    fn run_at_once(&mut self, command: Command, io: &IoState, d: &[f64; DOUBLE_INPUTS as usize]) {
        let six = |first: usize| -> [f64; 6] { std::array::from_fn(|i| d[first + i]) };
        match command {
            Command::SpeedJ | Command::SpeedL => {
                let space = if command == Command::SpeedJ {
                    Space::Joint
                } else {
                    Space::Linear
                };
                self.speed(space, six(0), d[6]);
                self.state = ProgramState::Moving;
            }
            Command::StopJ | Command::ServoStop => {
                self.stop_motion(Space::Joint, d[0]);
                self.mark_stop();
            }
            Command::StopL => {
                self.stop_motion(Space::Linear, d[0]);
                self.mark_stop();
            }
            Command::ServoJ => {
                self.handshake.pending = None;
                self.arm.servo(six(0));
                self.state = ProgramState::Moving;
            }
            Command::SetTcp => self.arm.tcp = six(0),
            Command::SetPayload => self.settings.payload = (d[0], [d[1], d[2], d[3]]),
            Command::TeachMode => {
                self.settings.teach = true;
                self.stop_motion(Space::Joint, MAX_JOINT_ACCELERATION);
            }
            Command::EndTeachMode => self.settings.teach = false,
            Command::ForceMode => {
                let ints: [i32; 7] = std::array::from_fn(|i| {
                    self.int(io, int_in::ARGS + u8::try_from(i).unwrap_or(0))
                });
                self.settings.force = Some(ForceMode {
                    frame: six(0),
                    selection: std::array::from_fn(|i| ints[1 + i]),
                    wrench: six(6),
                    kind: ints[0],
                    limits: six(12),
                });
            }
            Command::EndForceMode => self.settings.force = None,
            // Nothing to zero: the simulated sensor reads zero.
            _ => {}
        }
    }

    /// A stop under way: the program is moving until the arm rests (URScript's `stopj`
    /// returns then).
    fn mark_stop(&mut self) {
        self.handshake.pending = None;
        self.handshake.decelerating = Some((self.ticks, Instant::now()));
    }
}
