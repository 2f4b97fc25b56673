//! The simulated arm's one motion model, whatever program drives it: moves on trapezoidal
//! profiles in joint space or along straight lines, blended into the path under way;
//! velocity ramps; servo targets; and one tick of each. A program asks for a motion and
//! learns from each tick's [`Step`] when a move returned, in URScript's terms, and why the
//! arm stopped if it could not go on.

mod path;
mod tracking;

use rtde_kinematics::{Arm, compose, invert};

use path::{Arc, Path, Segment, apply, displacement};
pub(crate) use path::{Space, Trapezoid, distance3};
use tracking::track;
pub use tracking::{MAX_JOINT_ACCELERATION, MAX_JOINT_SPEED};

/// A joint may not move more than this many times its speed limit's step in one tick when
/// following a straight line: more means the inverse kinematics jumped branches (a
/// singularity on the line).
const IK_JUMP_FACTOR: f64 = 4.0;

/// What the arm is doing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Motion {
    Still,
    Path(Path),
    /// Velocity in joint or TCP space, ramping to `target` at `accel`.
    Speed {
        space: Space,
        target: [f64; 6],
        accel: f64,
        velocity: [f64; 6],
        /// The TCP pose being integrated (linear).
        pose: [f64; 6],
    },
    Servo {
        target: [f64; 6],
    },
}

impl Motion {
    /// Whether a move in `space` can blend into this path, the TCP being at `tcp_now`:
    /// the path's last move has started and the TCP is within its blend radius of its
    /// target.
    fn can_blend(&self, space: Space, tcp_now: &[f64; 6]) -> bool {
        matches!(self, Motion::Path(path) if path.space == space)
            && self.blending_move(tcp_now).is_some()
    }

    /// The path's last move, when it has started and the TCP, at `tcp_now`, is within its
    /// blend radius of its target: the move a next one may blend into.
    fn blending_move(&self, tcp_now: &[f64; 6]) -> Option<i32> {
        let Motion::Path(path) = self else {
            return None;
        };
        let last = path.segments.last()?;
        (last.blend > 0.0
            && last.t > 0.0
            && distance3(&[tcp_now[0], tcp_now[1], tcp_now[2]], &last.end_tcp) <= last.blend)
            .then_some(last.id)
    }

    /// Whether the next move can start now (`can_blend` as [`Motion::can_blend`] says).
    fn lets_a_move_start(&self, can_blend: bool) -> bool {
        match self {
            Motion::Path(path) => can_blend || path.segments.is_empty(),
            Motion::Still | Motion::Servo { .. } => true,
            Motion::Speed { velocity, .. } => velocity.iter().all(|v| *v == 0.0),
        }
    }
}

/// A move: to `target` (joints, or a TCP pose on a line) at `speed` and `accel`, blending
/// into the next within `blend` metres of the target (0: it stops there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Move {
    pub(crate) space: Space,
    pub(crate) target: [f64; 6],
    pub(crate) speed: f64,
    pub(crate) accel: f64,
    pub(crate) blend: f64,
    /// A circular move's via point (a TCP pose; its position counts): the TCP runs on the
    /// circle through where the move starts, this and the target.
    pub(crate) via: Option<[f64; 6]>,
    /// The caller's name for the move, given back in [`Step`].
    pub(crate) id: i32,
}

/// What one tick of motion did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Step {
    /// The arm is under way (it moved this tick, or holds a servo target).
    pub(crate) moving: bool,
    /// A move of the path returned this tick: the next one had started blending into it,
    /// and it has now run its course.
    pub(crate) returned: Option<i32>,
    /// The path's last move ran its course this tick: it returns the next tick, once the
    /// arm is still (URScript's `movej` returns then).
    pub(crate) ended: Option<i32>,
    /// The path's last move has a blend radius and the TCP is within it after this tick:
    /// a next move may blend in from the next tick, so in URScript the move returns and
    /// its program goes on to that next move.
    pub(crate) blending: Option<i32>,
    /// The fraction of the path's last move run, on a path.
    pub(crate) progress: Option<f64>,
    /// A velocity ramp to zero came to rest this tick.
    pub(crate) rested: bool,
    /// The arm could not follow the line, and stands: why.
    pub(crate) unreachable: Option<String>,
}

/// The arm as programs move it: its joints, its tool offset and what it is doing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ArmMotion {
    pub(crate) model: Arm,
    /// Joint positions.
    pub(crate) q: [f64; 6],
    /// Joint velocities.
    pub(crate) qd: [f64; 6],
    /// The TCP offset `set_tcp` gave.
    pub(crate) tcp: [f64; 6],
    pub(crate) motion: Motion,
    /// The last tick ended a path: the arm is at rest on its end, and a next move starts a
    /// tick later (the program that waited for the path goes on in this tick, so the
    /// state that says the move ended shows the arm where it ended).
    settling: bool,
}

impl ArmMotion {
    pub(crate) fn new(model: Arm, q: [f64; 6]) -> Self {
        ArmMotion {
            model,
            q,
            qd: [0.0; 6],
            tcp: [0.0; 6],
            motion: Motion::Still,
            settling: false,
        }
    }

    /// The TCP pose: the flange's pose with the TCP offset.
    pub(crate) fn tcp_pose(&self) -> [f64; 6] {
        self.tcp_pose_at(&self.q)
    }

    /// The TCP pose with the joints at `q`.
    /// The TCP pose the move under way goes to (of a blended path, the move not yet
    /// finished); where the TCP is when no move is under way.
    pub(crate) fn waypoint(&self) -> [f64; 6] {
        let Motion::Path(path) = &self.motion else {
            return self.tcp_pose();
        };
        // The moves finished, and the one under way.
        let upto = path
            .segments
            .iter()
            .position(|s| !s.finished())
            .map_or(path.segments.len(), |i| i + 1);
        let end = path.segments[..upto]
            .iter()
            .fold(path.base, |at, s| s.apply(path.space, &at, 1.0));
        match path.space {
            Space::Joint => self.tcp_pose_at(&end),
            Space::Linear => end,
        }
    }

    pub(crate) fn tcp_pose_at(&self, q: &[f64; 6]) -> [f64; 6] {
        compose(&self.model.tcp_pose(q), &self.tcp)
    }

    /// Switches to a velocity ramp in `space`, starting from the arm's current velocity;
    /// a ramp under way in `space` takes the new target and acceleration and goes on from
    /// its own velocity and pose, so that a `speedl` repeated every tick integrates one
    /// line rather than one recomputed from the joints each tick.
    pub(crate) fn ramp(&mut self, space: Space, target: [f64; 6], accel: f64) {
        if let Motion::Speed {
            space: under_way,
            target: t,
            accel: a,
            ..
        } = &mut self.motion
            && *under_way == space
        {
            *t = target;
            *a = accel;
            return;
        }
        let pose = self.tcp_pose();
        let velocity = match space {
            Space::Joint => self.qd,
            Space::Linear => self.model.tcp_speed(&self.q, &self.qd),
        };
        self.motion = Motion::Speed {
            space,
            target,
            accel,
            velocity,
            pose,
        };
    }

    /// A paused tick: the arm stands, and a velocity ramp starts again from rest at play.
    pub(crate) fn hold(&mut self) {
        self.qd = [0.0; 6];
        if let Motion::Speed { velocity, .. } = &mut self.motion {
            *velocity = [0.0; 6];
        }
    }

    /// Ramps the arm to rest in `space` at `accel`, unless it is still; whether it was
    /// not.
    pub(crate) fn stop(&mut self, space: Space, accel: f64) -> bool {
        let moving = !matches!(self.motion, Motion::Still);
        if moving {
            self.ramp(space, [0.0; 6], accel);
        }
        moving
    }

    /// Tracks a servo target from the next tick.
    pub(crate) fn servo(&mut self, target: [f64; 6]) {
        self.motion = Motion::Servo { target };
    }

    /// Whether a circular move through `via` to `target` makes a circle from where the TCP
    /// will start it: the end of the path under way, or where it is.
    pub(crate) fn check_circle(&self, via: &[f64; 6], target: &[f64; 6]) -> Result<(), String> {
        let from = match &self.motion {
            Motion::Path(path) if path.space == Space::Linear => path.end(),
            _ => self.tcp_pose(),
        };
        arc_of(&from, via, target).map(drop)
    }

    /// Starts `m` when it can start: on a still arm, or blending into a path of its kind
    /// whose last move is within its blend radius of its target. `None` when it must wait;
    /// else the move before it on the path, which returns (in URScript) as this one starts.
    pub(crate) fn start(&mut self, m: Move) -> Option<Option<i32>> {
        let tcp_now = self.tcp_pose();
        let can_blend = self.motion.can_blend(m.space, &tcp_now);
        if self.settling || !self.motion.lets_a_move_start(can_blend) {
            return None;
        }
        let mut path = match std::mem::replace(&mut self.motion, Motion::Still) {
            Motion::Path(path) if can_blend => path,
            _ => Path {
                space: m.space,
                base: match m.space {
                    Space::Joint => self.q,
                    Space::Linear => tcp_now,
                },
                segments: Vec::new(),
            },
        };
        let from = path.end();
        let (delta, length, end_tcp) = displacement(m.space, &from, &m.target);
        // A circular move's position follows its arc; its delta only turns.
        let (delta, length, arc) = match m.via.map(|via| arc_of(&from, &via, &m.target)) {
            Some(Ok((arc, arc_length))) => (
                [0.0, 0.0, 0.0, delta[3], delta[4], delta[5]],
                arc_length,
                Some(arc),
            ),
            _ => (delta, length, None),
        };
        let end_tcp = match m.space {
            Space::Joint => {
                let p = self.tcp_pose_at(&m.target);
                [p[0], p[1], p[2]]
            }
            Space::Linear => end_tcp,
        };
        let returned = path.segments.last().map(|previous| previous.id);
        path.segments.push(Segment {
            id: m.id,
            delta,
            profile: Trapezoid::new(length, m.speed, m.accel),
            t: 0.0,
            blend: m.blend,
            end_tcp,
            arc,
        });
        self.motion = Motion::Path(path);
        Some(returned)
    }

    /// Moves the arm one tick of `dt` seconds, the speed slider at `slider`; the joint
    /// velocities are what the tick moved them by.
    pub(crate) fn advance(&mut self, slider: f64, dt: f64) -> Step {
        let before = self.q;
        let mut step = self.move_one_tick(slider, dt);
        self.settling = step.ended.is_some();
        self.qd = std::array::from_fn(|j| (self.q[j] - before[j]) / dt);
        if let Motion::Path(path) = &self.motion
            && path.segments.last().is_some_and(|last| last.blend > 0.0)
        {
            step.blending = self.motion.blending_move(&self.tcp_pose());
        }
        step
    }

    fn move_one_tick(&mut self, slider: f64, dt: f64) -> Step {
        let mut step = Step::default();
        let flange = match &mut self.motion {
            Motion::Still => return step,
            Motion::Servo { target } => {
                let target = *target;
                track(&mut self.q, &mut self.qd, Some(&target), dt);
                step.moving = true;
                return step;
            }
            Motion::Speed {
                space,
                target,
                accel,
                velocity,
                pose,
            } => {
                let goal: [f64; 6] = target.map(|v| v * slider);
                ramp_toward(velocity, &goal, *accel * dt);
                step.rested = velocity.iter().all(|v| *v == 0.0) && goal.iter().all(|g| *g == 0.0);
                match *space {
                    Space::Joint => {
                        for (q, v) in self.q.iter_mut().zip(velocity.iter()) {
                            *q += v * dt;
                        }
                        None
                    }
                    Space::Linear => {
                        let delta = velocity.map(|v| v * dt);
                        *pose = apply(Space::Linear, pose, &delta, 1.0);
                        Some(compose(pose, &invert(&self.tcp)))
                    }
                }
            }
            Motion::Path(path) => {
                let now = run_path(path, slider * dt, &mut step);
                match path.space {
                    Space::Joint => {
                        self.q = now;
                        None
                    }
                    Space::Linear => Some(compose(&now, &invert(&self.tcp))),
                }
            }
        };
        if let Some(flange) = flange
            && let Err(why) = self.follow_pose(&flange, dt)
        {
            self.motion = Motion::Still;
            step.unreachable = Some(why);
            return step;
        }
        if step.rested || step.ended.is_some() {
            self.motion = Motion::Still;
        }
        step.moving = !step.rested;
        step
    }

    /// Moves the joints to the flange pose `pose`, nearest where they are; on no solution,
    /// or a jump no joint can make in a tick, says why.
    fn follow_pose(&mut self, pose: &[f64; 6], dt: f64) -> Result<(), String> {
        let limit = IK_JUMP_FACTOR * MAX_JOINT_SPEED * dt;
        match self.model.inverse_nearest(pose, &self.q) {
            Ok(q) if q.iter().zip(&self.q).all(|(a, b)| (a - b).abs() <= limit) => {
                self.q = q;
                Ok(())
            }
            Ok(_) => Err("the straight line passes a singularity; the robot stopped".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Moves `velocity` toward `goal` by at most `step` on the joint (or axis) furthest from
/// it, the others in proportion.
fn ramp_toward(velocity: &mut [f64; 6], goal: &[f64; 6], step: f64) {
    let gap = velocity
        .iter()
        .zip(goal)
        .map(|(v, g)| (g - v).abs())
        .fold(0.0, f64::max);
    // Within rounding of the goal counts as there: a ramp must end exactly.
    let k = if gap <= step * (1.0 + 1e-9) {
        1.0
    } else {
        step / gap
    };
    for (v, g) in velocity.iter_mut().zip(goal) {
        *v += (g - *v) * k;
    }
}

/// Runs `path`'s profiles `dt` further (already scaled by the slider), folding finished
/// moves into its base and saying so in `step`; where the path is now, in its space.
fn run_path(path: &mut Path, dt: f64, step: &mut Step) -> [f64; 6] {
    for s in &mut path.segments {
        s.t += dt;
    }
    let now = path.now();
    while path.segments.first().is_some_and(Segment::finished) {
        let s = path.segments.remove(0);
        path.base = s.apply(path.space, &path.base, 1.0);
        if path.segments.is_empty() {
            step.ended = Some(s.id);
        } else {
            step.returned = Some(s.id);
        }
    }
    step.progress = Some(path.segments.last().map_or(1.0, Segment::fraction));
    now
}

/// The arc of a circular move between two TCP poses through a third, by their positions.
fn arc_of(from: &[f64; 6], via: &[f64; 6], to: &[f64; 6]) -> Result<(Arc, f64), String> {
    let position = |p: &[f64; 6]| [p[0], p[1], p[2]];
    Arc::through(&position(from), &position(via), &position(to))
}
