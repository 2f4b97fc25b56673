//! The command handshake: which command was taken (ACCEPTED), which has finished (DONE),
//! and the moves and settings between the two.

use std::time::Instant;

use rtde_robot_proto::programs::command::Command;

use crate::motion::Motion;

/// The program's side of the handshake with the client.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Handshake {
    /// A move taken that has not started: its command, sequence number and doubles.
    pub(super) pending: Option<(Command, i32, [f64; 9])>,
    pub(super) accepted: i32,
    pub(super) done: i32,
    /// The last move of a path, finished in the tick before.
    pub(super) settling: Option<i32>,
    /// A setting finished while a move taken before it ran: DONE reaches it once that move
    /// has finished (`Command::is_setting`).
    pub(super) setting_done: Option<i32>,
    /// The progress register: the fraction of the move under way run.
    pub(super) progress: f64,
    /// The last move started: its sequence number, tick and moment.
    pub(super) started: Option<(i32, u64, Instant)>,
    /// The tick and moment the last stop's deceleration began.
    pub(super) decelerating: Option<(u64, Instant)>,
}

impl Handshake {
    pub(super) fn new() -> Self {
        Handshake {
            pending: None,
            accepted: 0,
            done: 0,
            settling: None,
            setting_done: None,
            progress: 0.0,
            started: None,
            decelerating: None,
        }
    }

    /// The first move taken and not finished (returned, in URScript's terms), if any, the
    /// arm doing `motion`.
    pub(super) fn first_move_in_flight(&self, motion: &Motion) -> Option<i32> {
        let running = motion.moves().filter(|&seq| seq > self.done).min();
        let pending = self.pending.map(|(_, seq, _)| seq);
        [running, pending, self.settling]
            .into_iter()
            .flatten()
            .min()
    }

    /// Move `seq` finished: DONE reaches it, and a setting finished meanwhile once no move
    /// before that setting is left. The progress register is the move under way's: 0 when
    /// the next one waits to start, 1 when none is left.
    pub(super) fn finish_move(&mut self, seq: i32, motion: &Motion) {
        self.done = self.done.max(seq);
        if self.pending.is_some() {
            self.progress = 0.0;
        }
        if let Some(setting) = self.setting_done {
            let waits = self
                .first_move_in_flight(motion)
                .is_some_and(|m| m < setting);
            if setting <= self.done {
                self.setting_done = None;
            } else if !waits {
                self.done = setting;
                self.setting_done = None;
            }
        }
    }
}
