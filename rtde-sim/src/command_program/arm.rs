//! The arm the program drives: its joints, its tool offset and what it is doing.

use rtde_kinematics::{Arm, compose};

use super::path::{Path, Space, distance3};

/// What the arm is doing.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Motion {
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
    pub(super) fn can_blend(&self, space: Space, tcp_now: &[f64; 6]) -> bool {
        match self {
            Motion::Path(path) => {
                path.space == space
                    && path.segments.last().is_some_and(|last| {
                        last.blend > 0.0
                            && last.t > 0.0
                            && distance3(&[tcp_now[0], tcp_now[1], tcp_now[2]], &last.end_tcp)
                                <= last.blend
                    })
            }
            _ => false,
        }
    }

    /// Whether the next move can start now (`can_blend` as [`Motion::can_blend`] says).
    pub(super) fn lets_a_move_start(&self, can_blend: bool) -> bool {
        match self {
            Motion::Path(path) => can_blend || path.segments.is_empty(),
            Motion::Still | Motion::Servo { .. } => true,
            Motion::Speed { velocity, .. } => velocity.iter().all(|v| *v == 0.0),
        }
    }
}

/// The arm's state as the program moves it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ArmMotion {
    pub(super) model: Arm,
    /// Joint positions.
    pub(super) q: [f64; 6],
    /// Joint velocities.
    pub(super) qd: [f64; 6],
    /// The TCP offset `set_tcp` gave.
    pub(super) tcp: [f64; 6],
    pub(super) motion: Motion,
}

impl ArmMotion {
    pub(super) fn new(model: Arm, q: [f64; 6]) -> Self {
        ArmMotion {
            model,
            q,
            qd: [0.0; 6],
            tcp: [0.0; 6],
            motion: Motion::Still,
        }
    }

    /// The TCP pose: the flange's pose with the TCP offset.
    pub(super) fn tcp_pose(&self) -> [f64; 6] {
        self.tcp_pose_at(&self.q)
    }

    /// The TCP pose with the joints at `q`.
    pub(super) fn tcp_pose_at(&self, q: &[f64; 6]) -> [f64; 6] {
        compose(&self.model.tcp_pose(q), &self.tcp)
    }

    /// Switches to a velocity ramp in `space`, starting from the arm's current velocity.
    pub(super) fn ramp(&mut self, space: Space, target: [f64; 6], accel: f64) {
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
}
