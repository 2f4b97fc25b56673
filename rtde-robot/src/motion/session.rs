//! The motion session without I/O: what the client has written, what the robot last said,
//! where each command finished, and the rules that turn those into "write this now",
//! "wait" or an outcome. The blocking [`Robot`](super::Robot) and the tokio
//! `AsyncRobot` are drivers over it that differ only in how they wait.

use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::task::Poll;

use rtde_core::RuntimeState;
use rtde_robot_proto::programs::command::{Failure, ProgramState, int_in, int_out};

use crate::motion::error::MotionError;
use crate::motion::plan::Kind;
use crate::motion::recipes::{Observed, Registers};

/// `runtime_state` PLAYING.
pub(crate) const PLAYING: u32 = 2;
/// `safety_mode` PROTECTIVE_STOP.
const PROTECTIVE_STOP: i32 = 3;
/// How many finished commands' ends are kept for their handles.
const FINISHED_KEPT: usize = 1024;
/// Below this joint speed (rad/s) on every joint the arm is steady.
pub const STEADY_SPEED: f64 = 1e-3;
/// How long (controller time, s) a command stays written to a paused program before it is
/// withdrawn: past the packages that were on their way when it was written, so that a
/// program played just before the command is seen playing.
const WITHDRAW_AFTER: f64 = 0.2;
/// What a command withdrawn from a paused program says.
const WITHDRAWN: &str = "runtime_state is PAUSED: the program takes no command while \
                         paused, so this one was withdrawn before it ran (Dashboard::play \
                         resumes what it had taken; after a protective stop, unlock it first)";

/// A command written: its sequence number, and how many commands had been withdrawn
/// before it was written. A withdrawn command's number is the next command's too, so the
/// number alone does not tell them apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sent {
    /// The sequence number.
    pub(crate) seq: i32,
    era: usize,
}

/// Where a command left the arm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    /// `actual_q`, rad.
    pub q: [f64; 6],
    /// `actual_TCP_pose`.
    pub tcp_pose: [f64; 6],
}

/// The arm and the program as the last package said.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotState {
    /// The controller's `timestamp`, s.
    pub timestamp: f64,
    /// `actual_q`.
    pub q: [f64; 6],
    /// `actual_qd`.
    pub qd: [f64; 6],
    /// `actual_TCP_pose`.
    pub tcp_pose: [f64; 6],
    /// The current move's progress, 0 to 1.
    pub progress: f64,
    /// The program's state.
    pub program: ProgramState,
    /// Whether every joint is slower than [`STEADY_SPEED`].
    pub steady: bool,
    /// Whether the controller plays a program (`runtime_state` PLAYING): false once it
    /// stopped, whoever stopped it (the Dashboard, the pendant, a protective stop), while
    /// `program` keeps what the command program last wrote.
    pub playing: bool,
}

/// The controller's words for why the program stopped, or the fallback given: the drivers
/// read the controller's text messages only when a verdict needs them.
pub(crate) type Said<'a> = &'a dyn Fn(&str) -> String;

/// One session with the command program.
#[derive(Debug)]
pub(crate) struct Session {
    registers: Registers,
    watchdog: i32,
    last_seq: i32,
    observed: Observed,
    ended: Option<String>,
    /// Closing has begun: nothing more is sent or waited for.
    closed: bool,
    /// The commands closing cut short (sent, not finished when it stopped the arm).
    cut_short: Option<RangeInclusive<i32>>,
    /// The moves a stop or a newer motion cut short: sent, not finished when it was sent;
    /// with whether they end where the arm comes to rest (a stop) or where it was cut.
    interrupted: Vec<(RangeInclusive<i32>, bool)>,
    /// Where each command finished, newest last: a handle's result is its own, kept after
    /// later commands. At most [`FINISHED_KEPT`].
    finished: VecDeque<Finished>,
    /// The last command whose end is recorded in `finished`.
    recorded: i32,
    /// The controller's `timestamp` of the last package before `last_seq` was written.
    written_at: f64,
    /// The commands withdrawn from a paused program, oldest first: entry `n` ended era `n`
    /// ([`Sent`]). One number per withdrawal, each after a pause and 0.2 s: kept whole.
    withdrawn: Vec<i32>,
}

/// Where a command finished.
#[derive(Clone, Copy, Debug)]
struct Finished {
    seq: i32,
    /// The package in which the program's DONE register reached it, or, while the arm
    /// still moved on its own then (a stop decelerating, the last move settling), the
    /// first package with the arm still.
    reached: Reached,
    /// Whether `reached` is final: the arm was still, or a newer command moved it.
    settled: bool,
}

impl Session {
    /// A session that starts from the robot's first package: the program's ACCEPTED
    /// register is where this session's sequence starts, whatever an earlier one left.
    pub(crate) fn new(first: Observed) -> Session {
        let accepted = first.ints[usize::from(int_out::ACCEPTED)];
        let mut registers = Registers::default();
        registers.ints[usize::from(int_in::SEQUENCE)] = accepted;
        Session {
            registers,
            watchdog: 0,
            last_seq: accepted,
            observed: first,
            ended: None,
            closed: false,
            cut_short: None,
            interrupted: Vec::new(),
            finished: VecDeque::new(),
            recorded: accepted,
            written_at: first.timestamp,
            withdrawn: Vec::new(),
        }
    }

    /// Whether the program plays.
    pub(crate) fn is_playing(&self) -> bool {
        self.observed.runtime_state == PLAYING
    }

    /// A package from the robot: the state the handles read, the ends it records, and the
    /// registers to write back, the watchdog register changed.
    pub(crate) fn on_package(&mut self, o: Observed) -> Registers {
        self.observed = o;
        self.record_finished(&o);
        self.withdraw_if_paused();
        self.watchdog = self.watchdog.wrapping_add(1);
        self.registers.ints[usize::from(int_in::WATCHDOG)] = self.watchdog;
        self.registers
    }

    /// The registers as the client writes them now.
    #[cfg(feature = "tokio")]
    pub(crate) fn registers(&self) -> Registers {
        self.registers
    }

    /// The link ended (`why`): every wait returns.
    pub(crate) fn on_end(&mut self, why: String) {
        self.ended = Some(why);
    }

    /// Whether the link ended.
    pub(crate) fn has_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// Closing begins: nothing more is sent or waited for.
    pub(crate) fn close(&mut self) {
        self.closed = true;
    }

    /// Whether closing is to stop the arm first: a command is under way (sent and not
    /// finished, or a move running) and the controller plays the program, which can take
    /// the stop. A program paused (by a protective stop, say) or stopped takes nothing, so
    /// closing waits for nothing from it. Commands sent and not finished are recorded as
    /// cut short by closing either way.
    pub(crate) fn begin_close(&mut self) -> bool {
        let done = self.observed.ints[usize::from(int_out::DONE)];
        let busy = self.last_seq > done || self.program() == ProgramState::Moving;
        if busy {
            self.cut_short = Some(done.saturating_add(1)..=self.last_seq);
        }
        busy && self.observed.runtime_state == PLAYING
    }

    /// An order of `kind` is about to be sent: a stop or a newer motion cuts short the
    /// moves sent and not finished.
    pub(crate) fn begin(&mut self, kind: Kind) {
        let at_rest = match kind {
            Kind::Stop => true,
            Kind::Replace => false,
            Kind::Move | Kind::Taken | Kind::Tcp(_) => return,
        };
        let done = self.observed.ints[usize::from(int_out::DONE)];
        let (from, to) = (done.wrapping_add(1), self.last_seq);
        if from <= to {
            self.interrupted.push((from..=to, at_rest));
        }
    }

    /// Takes `registers` as the next command once the program took the one before: the
    /// registers to write, with their sequence number. `after` is the command before it in
    /// the same order (a path's previous waypoint): withdrawn, the order ends there.
    pub(crate) fn poll_command(
        &mut self,
        mut registers: Registers,
        after: Option<Sent>,
        said: Said<'_>,
    ) -> Poll<Result<(Sent, Registers), MotionError>> {
        if let Some(e) = self.link_end() {
            return Poll::Ready(Err(e));
        }
        if after.is_some_and(|a| self.was_withdrawn(a)) {
            return Poll::Ready(Err(self.withdrawn_error(said)));
        }
        if self.observed.ints[usize::from(int_out::ACCEPTED)] != self.last_seq {
            return match self.verdict_on_the_untaken(said) {
                Some(e) => Poll::Ready(Err(e)),
                None => Poll::Pending,
            };
        }
        let seq = self.last_seq.wrapping_add(1);
        registers.ints[usize::from(int_in::SEQUENCE)] = seq;
        registers.ints[usize::from(int_in::WATCHDOG)] = self.watchdog;
        self.registers = registers;
        self.last_seq = seq;
        self.written_at = self.observed.timestamp;
        let sent = Sent {
            seq,
            era: self.withdrawn.len(),
        };
        Poll::Ready(Ok((sent, registers)))
    }

    /// A paused program takes no command until it plays again, and may never (the
    /// documented way on is [`Robot::recover`](super::Robot::recover), which replaces it):
    /// a command it has not taken is withdrawn (its sequence number written back), so that
    /// its caller is told at once, and truthfully, that it did not run, and a later `play`
    /// does not run it after all. A move the program took before the pause is not
    /// withdrawn: it goes on at `play`, and its wait goes on too. Were the program to play
    /// in the very cycle of the withdrawal and take the command, the sequence number going
    /// back stops it ([`Failure::Handshake`]): the arm stops rather than run it unawaited.
    fn withdraw_if_paused(&mut self) {
        if self.untaken_while_paused()
            && self.observed.timestamp - self.written_at >= WITHDRAW_AFTER
        {
            self.withdraw();
        }
    }

    /// Closing: a command the paused program has not taken is withdrawn at once, without
    /// [`WITHDRAW_AFTER`]'s wait, since no one will wait for it and the registers keep
    /// their values after the session leaves: a later `play` would run it. The registers
    /// to write once more, if so.
    pub(crate) fn withdraw_before_close(&mut self) -> Option<Registers> {
        self.untaken_while_paused().then(|| {
            self.withdraw();
            self.registers
        })
    }

    /// The robot's verdict while the last command written may be untaken. One a paused
    /// program has not taken is judged at its withdrawal ([`WITHDRAW_AFTER`] later, by
    /// [`Session::withdrawn_error`]), not now: the package in hand can predate the write
    /// by a cycle, and so an unlock of the protective stop it shows, which would tell the
    /// caller to unlock a stop already unlocked.
    fn verdict_on_the_untaken(&self, said: Said<'_>) -> Option<MotionError> {
        if self.untaken_while_paused() {
            return None;
        }
        verdict(&self.observed, said)
    }

    /// Whether the last command written waits, untaken, on a paused program.
    fn untaken_while_paused(&self) -> bool {
        let o = &self.observed;
        let paused = matches!(
            RuntimeState::from_code(o.runtime_state),
            RuntimeState::Paused | RuntimeState::Pausing
        );
        let untaken = o.ints[usize::from(int_out::ACCEPTED)] == self.last_seq.wrapping_sub(1);
        paused && untaken && !self.closed
    }

    /// Withdraws the last command written: its sequence number goes back to the one the
    /// program took last.
    fn withdraw(&mut self) {
        let accepted = self.observed.ints[usize::from(int_out::ACCEPTED)];
        self.withdrawn.push(self.last_seq);
        // Its number is the next command's: no stop or newer motion cut it short.
        for (range, _) in &mut self.interrupted {
            if range.contains(&self.last_seq) {
                *range = *range.start()..=accepted;
            }
        }
        self.interrupted.retain(|(range, _)| !range.is_empty());
        self.last_seq = accepted;
        self.registers.ints[usize::from(int_in::SEQUENCE)] = accepted;
    }

    /// Whether `sent` was withdrawn from a paused program.
    fn was_withdrawn(&self, sent: Sent) -> bool {
        self.withdrawn.get(sent.era) == Some(&sent.seq)
    }

    /// What a withdrawn command's caller is told: the robot's verdict if it has one now (a
    /// protective stop, say), else that the program was paused.
    fn withdrawn_error(&self, said: Said<'_>) -> MotionError {
        verdict(&self.observed, said).unwrap_or_else(|| MotionError::ProgramStopped {
            message: WITHDRAWN.to_owned(),
        })
    }

    /// The outcome of command `seq`, once known. With `until_still` (moves and stops),
    /// where it finished once the program's motion ended too (a move stopped by `stop_j`
    /// ends where the arm rests); without (settings, speeds, servo targets), where the arm
    /// was when the program took it, which is when such a command is done.
    pub(crate) fn poll_done(
        &self,
        sent: Sent,
        until_still: bool,
        said: Said<'_>,
    ) -> Poll<Result<Reached, MotionError>> {
        // Before anything keyed by the number alone, which a newer command may now carry.
        if self.was_withdrawn(sent) {
            return Poll::Ready(Err(self.withdrawn_error(said)));
        }
        let seq = sent.seq;
        if self
            .cut_short
            .as_ref()
            .is_some_and(|cut| cut.contains(&seq))
        {
            return Poll::Ready(Err(MotionError::Closed));
        }
        let o = &self.observed;
        let (accepted, done) = (
            o.ints[usize::from(int_out::ACCEPTED)],
            o.ints[usize::from(int_out::DONE)],
        );
        if !until_still && accepted >= seq {
            return Poll::Ready(Ok(Reached {
                q: o.q,
                tcp_pose: o.tcp_pose,
            }));
        }
        let cut = self.interrupted.iter().find(|(r, _)| r.contains(&seq));
        let until_still = until_still && cut.is_none_or(|&(_, at_rest)| at_rest);
        if let Some(reached) = self.finished_at(seq, until_still) {
            return Poll::Ready(match cut {
                Some(_) => Err(MotionError::Interrupted { at: reached }),
                None => Ok(reached),
            });
        }
        // Older than the ends kept: where the arm is once it is still.
        let forgotten = self.finished.front().is_some_and(|f| seq < f.seq);
        if forgotten && accepted >= seq && done >= seq && !(until_still && self.moving()) {
            return Poll::Ready(Ok(Reached {
                q: o.q,
                tcp_pose: o.tcp_pose,
            }));
        }
        let judged = if seq == self.last_seq {
            self.verdict_on_the_untaken(said)
        } else {
            verdict(o, said)
        };
        if let Some(e) = judged {
            return Poll::Ready(Err(e));
        }
        match self.link_end() {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Pending,
        }
    }

    /// The error a command waiting since `seq` gets after `waited`.
    pub(crate) fn timeout(&self, seq: Option<i32>, waited: std::time::Duration) -> MotionError {
        MotionError::Timeout {
            seq: seq.unwrap_or(self.last_seq),
            waited,
        }
    }

    /// Where the order of commands `first..=last` (a path's waypoints, or one command) is:
    /// the index of the command under way (the last once all are done), and one progress
    /// figure, 0 to 1, for all of them. The program's DONE register says how many are
    /// done; its progress register, how far the one under way is.
    pub(crate) fn progress_of(&self, first: i32, last: Sent) -> (usize, f64) {
        if self.was_withdrawn(last) {
            return (0, 0.0);
        }
        let last = last.seq;
        let done = self.observed.ints[usize::from(int_out::DONE)];
        let count = f64::from(last.wrapping_sub(first).wrapping_add(1).max(1));
        let index = |seq: i32| usize::try_from(seq.wrapping_sub(first)).unwrap_or(0);
        if done >= last {
            return (index(last), 1.0);
        }
        if done < first.wrapping_sub(1) {
            // A command before this order is still under way.
            return (0, 0.0);
        }
        let under_way = done.wrapping_add(1);
        let finished = f64::from(under_way.wrapping_sub(first));
        let current = self.observed.progress.clamp(0.0, 1.0);
        (
            index(under_way),
            ((finished + current) / count).clamp(0.0, 1.0),
        )
    }

    /// Whether the program has finished command `sent`.
    pub(crate) fn is_finished(&self, sent: Sent) -> bool {
        !self.was_withdrawn(sent) && self.observed.ints[usize::from(int_out::DONE)] >= sent.seq
    }

    /// The arm and the program as the last package said.
    pub(crate) fn state(&self) -> RobotState {
        let o = &self.observed;
        RobotState {
            timestamp: o.timestamp,
            q: o.q,
            qd: o.qd,
            tcp_pose: o.tcp_pose,
            progress: o.progress,
            program: self.program(),
            steady: o.qd.iter().all(|v| v.abs() < STEADY_SPEED),
            playing: o.runtime_state == PLAYING,
        }
    }

    fn program(&self) -> ProgramState {
        ProgramState::from_register(self.observed.ints[usize::from(int_out::STATE)])
    }

    fn moving(&self) -> bool {
        self.program() == ProgramState::Moving
    }

    /// Closed by this program, or the link ended.
    fn link_end(&self) -> Option<MotionError> {
        if self.closed {
            return Some(MotionError::Closed);
        }
        self.ended.as_ref().map(|e| MotionError::ProgramStopped {
            message: format!("the RTDE link ended: {e}"),
        })
    }

    /// Records where the commands up to the program's DONE register finished, from the
    /// package `o`.
    fn record_finished(&mut self, o: &Observed) {
        let done = o.ints[usize::from(int_out::DONE)];
        let accepted = o.ints[usize::from(int_out::ACCEPTED)];
        let reached = Reached {
            q: o.q,
            tcp_pose: o.tcp_pose,
        };
        // The arm moves on its own (no newer command than the finished ones moves it): the
        // ends are where it comes to rest.
        let settled = !(self.moving() && accepted <= done);
        for last in self.finished.iter_mut().rev() {
            if last.settled {
                break;
            }
            last.reached = reached;
            last.settled = settled;
        }
        while self.recorded < done {
            let seq = self.recorded.wrapping_add(1);
            if self.finished.len() == FINISHED_KEPT {
                self.finished.pop_front();
            }
            self.finished.push_back(Finished {
                seq,
                reached,
                settled,
            });
            self.recorded = seq;
        }
    }

    /// Where command `seq` finished, once final (or at once, without `until_still`).
    fn finished_at(&self, seq: i32, until_still: bool) -> Option<Reached> {
        self.finished
            .iter()
            .rev()
            .find(|f| f.seq == seq && (f.settled || !until_still))
            .map(|f| f.reached)
    }
}

/// The robot's verdict on the state `o`: an error once the program cannot go on.
fn verdict(o: &Observed, said: Said<'_>) -> Option<MotionError> {
    if o.safety_mode == PROTECTIVE_STOP {
        return Some(MotionError::ProtectiveStop {
            message: said("safety_mode is PROTECTIVE_STOP"),
        });
    }
    let failure = Failure::from_register(o.ints[usize::from(int_out::FAILURE)]);
    let runtime = RuntimeState::from_code(o.runtime_state);
    // A program paused (from the Dashboard or the pendant) has not ended: a move it took
    // goes on at play, and the move's timeout still bounds the wait. A command it has not
    // taken is withdrawn instead (`Session::withdraw_if_paused`).
    let ended = matches!(runtime, RuntimeState::Stopped | RuntimeState::Stopping);
    let stopped = ended
        || ProgramState::from_register(o.ints[usize::from(int_out::STATE)])
            == ProgramState::Stopped;
    if !stopped {
        return None;
    }
    let message = said(&failure.to_string());
    Some(match failure {
        Failure::Watchdog => MotionError::Watchdog { message },
        Failure::Unreachable => MotionError::TargetUnreachable { message },
        Failure::None if !ended => return None,
        Failure::None => MotionError::ProgramStopped {
            message: said(&format!("runtime_state is {runtime}")),
        },
        _ => MotionError::ProgramStopped { message },
    })
}

/// The program's words among the controller's text messages, newest first, or `fallback`.
pub(crate) fn said_in(texts: &[String], fallback: &str) -> String {
    texts
        .iter()
        .rev()
        .find(|t| t.contains("rtde_command"))
        .cloned()
        .unwrap_or_else(|| fallback.to_owned())
}
