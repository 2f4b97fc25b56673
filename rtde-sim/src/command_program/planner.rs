//! The program's side of motion: which move starts when, what the arm's ticks mean for the
//! handshake, and the stop when the arm cannot go on. The motion itself is the simulator's
//! one model ([`crate::motion`]).

use std::time::Instant;

use rtde_robot_proto::programs::command::{Command, Failure, ProgramState};

use super::CommandProgram;
use crate::motion::{Move, Space};

impl CommandProgram {
    /// Switches to a velocity ramp in `space`, starting from the arm's current velocity.
    pub(super) fn speed(&mut self, space: Space, target: [f64; 6], accel: f64) {
        self.handshake.pending = None;
        self.arm.ramp(space, target, accel);
    }

    /// Ramps a moving arm to rest; a move waiting to start is then dropped.
    pub(super) fn stop_motion(&mut self, space: Space, accel: f64) {
        if self.arm.stop(space, accel) {
            self.handshake.pending = None;
        }
    }

    /// Starts the pending move when it can start: on a still arm, or blending into a path
    /// of its kind whose last move is within its blend radius of its target.
    pub(super) fn take_pending(&mut self) {
        let Some((command, seq, args)) = self.handshake.pending else {
            return;
        };
        if self.state == ProgramState::Stopped {
            return;
        }
        let space = if command == Command::MoveJ {
            Space::Joint
        } else {
            Space::Linear
        };
        let Some(returned) = self.arm.start(Move {
            space,
            target: std::array::from_fn(|i| args[i]),
            speed: args[6],
            accel: args[7],
            blend: args[8],
            via: None,
            id: seq,
        }) else {
            return;
        };
        self.handshake.pending = None;
        if let Some(previous) = returned {
            self.finish_move(previous);
        }
        self.state = ProgramState::Moving;
        self.handshake.progress = 0.0;
        self.handshake.started = Some((seq, self.ticks, Instant::now()));
    }

    /// Moves the arm one tick.
    pub(super) fn advance(&mut self, slider: f64, dt: f64) {
        let step = self.arm.advance(slider, dt);
        if let Some(seq) = step.ended {
            // The last move is finished once the arm is still: the next tick.
            self.handshake.settling = Some(seq);
        }
        if let Some(progress) = step.progress {
            self.handshake.progress = progress;
        }
        if let Some(seq) = step.returned {
            self.finish_move(seq);
        }
        if let Some(why) = step.unreachable {
            self.halt(Failure::Unreachable, format!("rtde_command: move_l: {why}"));
            return;
        }
        if step.rested && self.state == ProgramState::Moving {
            self.state = ProgramState::Idle;
        }
    }
}
