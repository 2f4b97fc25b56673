//! The motion planner: starting moves (and blending them into the path under way), ramping
//! velocities, and moving the arm one tick along whichever it is doing.

use std::time::Instant;

use rtde_kinematics::{compose, invert};
use rtde_robot_proto::programs::command::{Command, Failure, ProgramState};

use super::path::{Path, Segment, Space, Trapezoid, apply, displacement};
use super::{CommandProgram, Motion};
use crate::program;

/// A joint may not move more than this many times its speed limit's step in one tick when
/// following a straight line: more means the inverse kinematics jumped branches (a
/// singularity on the line).
const IK_JUMP_FACTOR: f64 = 4.0;

impl CommandProgram {
    /// Switches to a velocity ramp in `space`, starting from the arm's current velocity.
    pub(super) fn speed(&mut self, space: Space, target: [f64; 6], accel: f64) {
        self.handshake.pending = None;
        self.arm.ramp(space, target, accel);
    }

    pub(super) fn stop_motion(&mut self, space: Space, accel: f64) {
        if matches!(self.arm.motion, Motion::Still) {
            return;
        }
        self.speed(space, [0.0; 6], accel);
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
        let tcp_now = self.arm.tcp_pose();
        let can_blend = self.arm.motion.can_blend(space, &tcp_now);
        if !self.arm.motion.lets_a_move_start(can_blend) {
            return;
        }
        let target: [f64; 6] = std::array::from_fn(|i| args[i]);
        let (speed, accel, blend) = (args[6], args[7], args[8]);
        let mut path = match std::mem::replace(&mut self.arm.motion, Motion::Still) {
            Motion::Path(path) if can_blend => path,
            _ => Path {
                space,
                base: match space {
                    Space::Joint => self.arm.q,
                    Space::Linear => tcp_now,
                },
                segments: Vec::new(),
            },
        };
        let (delta, length, end_tcp) = displacement(space, &path.end(), &target);
        let end_tcp = match space {
            Space::Joint => {
                let p = self.arm.tcp_pose_at(&target);
                [p[0], p[1], p[2]]
            }
            Space::Linear => end_tcp,
        };
        // The move before this one returns (in URScript) on entering its blend radius.
        let returned = path.segments.last().map(|previous| previous.seq);
        path.segments.push(Segment {
            seq,
            delta,
            profile: Trapezoid::new(length, speed, accel),
            t: 0.0,
            blend,
            end_tcp,
        });
        self.arm.motion = Motion::Path(path);
        self.handshake.pending = None;
        if let Some(previous) = returned {
            self.finish_move(previous);
        }
        self.state = ProgramState::Moving;
        self.handshake.progress = 0.0;
        self.handshake.started = Some((seq, self.ticks, Instant::now()));
    }

    /// Moves the arm one tick; `true` while it moves.
    pub(super) fn advance(&mut self, slider: f64, dt: f64) -> bool {
        match &mut self.arm.motion {
            Motion::Still => false,
            Motion::Servo { target } => {
                let target = *target;
                program::track(&mut self.arm.q, &mut self.arm.qd, Some(&target), dt);
                true
            }
            Motion::Speed {
                space,
                target,
                accel,
                velocity,
                pose,
            } => {
                let goal: [f64; 6] = target.map(|v| v * slider);
                let step = *accel * dt;
                let gap = velocity
                    .iter()
                    .zip(&goal)
                    .map(|(v, g)| (g - v).abs())
                    .fold(0.0, f64::max);
                // Within rounding of the goal counts as there: a ramp must end exactly.
                let k = if gap <= step * (1.0 + 1e-9) {
                    1.0
                } else {
                    step / gap
                };
                for (v, g) in velocity.iter_mut().zip(&goal) {
                    *v += (g - *v) * k;
                }
                let (space, velocity) = (*space, *velocity);
                let rest = velocity.iter().all(|v| *v == 0.0) && goal.iter().all(|g| *g == 0.0);
                match space {
                    Space::Joint => {
                        for (q, v) in self.arm.q.iter_mut().zip(&velocity) {
                            *q += v * dt;
                        }
                    }
                    Space::Linear => {
                        let delta = velocity.map(|v| v * dt);
                        *pose = apply(Space::Linear, pose, &delta, 1.0);
                        let flange = compose(pose, &invert(&self.arm.tcp));
                        if !self.follow_pose(&flange, dt) {
                            return false;
                        }
                    }
                }
                if rest {
                    self.arm.motion = Motion::Still;
                    if self.state == ProgramState::Moving {
                        self.state = ProgramState::Idle;
                    }
                    return false;
                }
                true
            }
            Motion::Path(path) => {
                for s in &mut path.segments {
                    s.t += dt * slider;
                }
                let space = path.space;
                let now = path.now();
                let mut folded = None;
                // Fold finished segments into the base.
                while path.segments.first().is_some_and(Segment::finished) {
                    let s = path.segments.remove(0);
                    path.base = apply(space, &path.base, &s.delta, 1.0);
                    if path.segments.is_empty() {
                        // The last move is finished once the arm is still: the next tick.
                        self.handshake.settling = Some(s.seq);
                    } else {
                        folded = Some(s.seq);
                    }
                }
                self.handshake.progress = path.segments.last().map_or(1.0, Segment::fraction);
                let finished = path.segments.is_empty();
                if let Some(seq) = folded {
                    self.finish_move(seq);
                }
                match space {
                    Space::Joint => self.arm.q = now,
                    Space::Linear => {
                        let flange = compose(&now, &invert(&self.arm.tcp));
                        if !self.follow_pose(&flange, dt) {
                            return false;
                        }
                    }
                }
                if finished {
                    self.arm.motion = Motion::Still;
                }
                true
            }
        }
    }

    /// Moves the joints to the flange pose `pose`, nearest where they are; on no solution,
    /// or a jump no joint can make in a tick, the program stops (`false`).
    fn follow_pose(&mut self, pose: &[f64; 6], dt: f64) -> bool {
        let limit = IK_JUMP_FACTOR * program::MAX_JOINT_SPEED * dt;
        match self.arm.model.inverse_nearest(pose, &self.arm.q) {
            Ok(q)
                if q.iter()
                    .zip(&self.arm.q)
                    .all(|(a, b)| (a - b).abs() <= limit) =>
            {
                self.arm.q = q;
                true
            }
            Ok(_) => {
                self.arm.motion = Motion::Still;
                self.halt(
                    Failure::Unreachable,
                    "rtde_command: move_l: the straight line passes a singularity; the robot \
                     stopped"
                        .to_owned(),
                );
                false
            }
            Err(e) => {
                self.arm.motion = Motion::Still;
                self.halt(Failure::Unreachable, format!("rtde_command: move_l: {e}"));
                false
            }
        }
    }
}
