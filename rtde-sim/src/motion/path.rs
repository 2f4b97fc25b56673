//! Paths of moves: the trapezoidal profile each move runs on, and where it takes the arm in
//! joint or Cartesian space.

use rtde_kinematics::{matrix_of, mul3, mul3v, pose_of};

/// Joint or Cartesian space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Joint,
    Linear,
}

/// A trapezoidal (or triangular) profile over a distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trapezoid {
    length: f64,
    accel_time: f64,
    cruise_time: f64,
    peak: f64,
    accel: f64,
}

impl Trapezoid {
    pub(crate) fn new(length: f64, speed: f64, accel: f64) -> Trapezoid {
        if length <= 0.0 {
            return Trapezoid {
                length: 0.0,
                accel_time: 0.0,
                cruise_time: 0.0,
                peak: 0.0,
                accel,
            };
        }
        if length < speed * speed / accel {
            let accel_time = (length / accel).sqrt();
            Trapezoid {
                length,
                accel_time,
                cruise_time: 0.0,
                peak: accel * accel_time,
                accel,
            }
        } else {
            Trapezoid {
                length,
                accel_time: speed / accel,
                cruise_time: (length - speed * speed / accel) / speed,
                peak: speed,
                accel,
            }
        }
    }

    pub(crate) fn duration(&self) -> f64 {
        2.0 * self.accel_time + self.cruise_time
    }

    /// The fraction of the length covered at `t`.
    pub(crate) fn fraction(&self, t: f64) -> f64 {
        if self.length <= 0.0 || t >= self.duration() {
            return 1.0;
        }
        let (ta, tc, a, v) = (self.accel_time, self.cruise_time, self.accel, self.peak);
        let s = if t < ta {
            0.5 * a * t * t
        } else if t < ta + tc {
            0.5 * a * ta * ta + v * (t - ta)
        } else {
            let td = self.duration() - t;
            self.length - 0.5 * a * td * td
        };
        (s / self.length).clamp(0.0, 1.0)
    }
}

/// One move of a path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Segment {
    pub(crate) id: i32,
    /// Joint displacement, or `[dx, dy, dz, wx, wy, wz]` (position, then the rotation
    /// vector of the turn in the base frame).
    pub(crate) delta: [f64; 6],
    pub(crate) profile: Trapezoid,
    /// Profile time run, already scaled by the slider.
    pub(crate) t: f64,
    pub(crate) blend: f64,
    /// The TCP position the segment ends at, for the blend zone.
    pub(crate) end_tcp: [f64; 3],
    /// A circular move's arc, which its position follows (its `delta` then only turns).
    pub(crate) arc: Option<Arc>,
}

impl Segment {
    /// `at` moved by `fraction` of this segment.
    pub(crate) fn apply(&self, space: Space, at: &[f64; 6], fraction: f64) -> [f64; 6] {
        let mut moved = apply(space, at, &self.delta, fraction);
        if let Some(arc) = &self.arc {
            let offset = arc.offset(fraction);
            for (p, o) in moved.iter_mut().zip(offset) {
                *p += o;
            }
        }
        moved
    }

    pub(crate) fn fraction(&self) -> f64 {
        self.profile.fraction(self.t)
    }

    pub(crate) fn finished(&self) -> bool {
        self.t >= self.profile.duration()
    }
}

/// A path of moves of one space, their profiles added.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Path {
    pub(crate) space: Space,
    /// Joints (joint space) or the TCP pose (linear) where the first segment starts.
    pub(crate) base: [f64; 6],
    pub(crate) segments: Vec<Segment>,
}

impl Path {
    /// The end of the last segment, in the path's space.
    pub(crate) fn end(&self) -> [f64; 6] {
        self.segments
            .iter()
            .fold(self.base, |at, s| s.apply(self.space, &at, 1.0))
    }

    /// Where the path is now, in its space.
    pub(crate) fn now(&self) -> [f64; 6] {
        self.segments
            .iter()
            .fold(self.base, |at, s| s.apply(self.space, &at, s.fraction()))
    }
}

/// `at` moved by `fraction` of `delta`.
pub(crate) fn apply(space: Space, at: &[f64; 6], delta: &[f64; 6], fraction: f64) -> [f64; 6] {
    match space {
        Space::Joint => std::array::from_fn(|j| at[j] + delta[j] * fraction),
        Space::Linear => {
            let (r, p) = matrix_of(at);
            let (turn, _) = matrix_of(&[
                0.0,
                0.0,
                0.0,
                delta[3] * fraction,
                delta[4] * fraction,
                delta[5] * fraction,
            ]);
            pose_of(
                &mul3(&turn, &r),
                &std::array::from_fn(|i| p[i] + delta[i] * fraction),
            )
        }
    }
}

/// A move from `from` to `target` in `space`: its delta (as [`Segment::delta`]), the length
/// its profile runs over (the leading joint's travel, or the line's length, or the turn's
/// angle when the TCP only turns), and, on a line, the TCP position it ends at.
pub(crate) fn displacement(
    space: Space,
    from: &[f64; 6],
    target: &[f64; 6],
) -> ([f64; 6], f64, [f64; 3]) {
    match space {
        Space::Joint => {
            let delta: [f64; 6] = std::array::from_fn(|j| target[j] - from[j]);
            let length = delta.iter().map(|d| d.abs()).fold(0.0, f64::max);
            (delta, length, [0.0; 3])
        }
        Space::Linear => {
            let (r0, p0) = matrix_of(from);
            let (r1, p1) = matrix_of(target);
            // The turn in the base frame: r1 · r0ᵀ.
            let turn = pose_of(&mul3(&r1, &rtde_kinematics::transpose3(&r0)), &[0.0; 3]);
            let delta = [
                p1[0] - p0[0],
                p1[1] - p0[1],
                p1[2] - p0[2],
                turn[3],
                turn[4],
                turn[5],
            ];
            let dp = distance3(&p0, &p1);
            let angle = (turn[3] * turn[3] + turn[4] * turn[4] + turn[5] * turn[5]).sqrt();
            (
                delta,
                if dp > 1e-9 { dp } else { angle },
                [p1[0], p1[1], p1[2]],
            )
        }
    }
}

pub(crate) fn distance3(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The arc of a circular move (`movec`): the TCP's position turns `angle` radians about
/// `axis` (a unit vector) around the circle's centre, from where the move starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Arc {
    /// From the centre to the start.
    radial: [f64; 3],
    axis: [f64; 3],
    angle: f64,
}

impl Arc {
    /// The circle through `from`, `via` and `to`, run from `from` through `via` to `to`;
    /// with the length of that arc. Three points on a line, or two the same, make no
    /// circle.
    pub(crate) fn through(
        from: &[f64; 3],
        via: &[f64; 3],
        to: &[f64; 3],
    ) -> Result<(Arc, f64), String> {
        let a = sub(via, from);
        let b = sub(to, from);
        let n = cross(&a, &b);
        let nn = dot(&n, &n);
        if nn < 1e-18 {
            return Err("movec: the start, the via point and the target are on a line (or two are the same): they make no circle".into());
        }
        // The circumcentre, from the start: (|a|² b×n + |b|² n×a) / (2 |n|²).
        let (bn, na) = (cross(&b, &n), cross(&n, &a));
        let (aa, bb) = (dot(&a, &a), dot(&b, &b));
        let centre: [f64; 3] =
            std::array::from_fn(|i| from[i] + (aa * bn[i] + bb * na[i]) / (2.0 * nn));
        let axis = n.map(|x| x / nn.sqrt());
        let (r0, r2) = (sub(from, &centre), sub(to, &centre));
        // Counter-clockwise about `axis`, the start reaches the via point before the target.
        let mut angle = dot(&cross(&r0, &r2), &axis).atan2(dot(&r0, &r2));
        if angle <= 0.0 {
            angle += std::f64::consts::TAU;
        }
        let radius = dot(&r0, &r0).sqrt();
        Ok((
            Arc {
                radial: r0,
                axis,
                angle,
            },
            radius * angle,
        ))
    }

    /// Where the position is at `fraction` of the arc, less where it started.
    fn offset(&self, fraction: f64) -> [f64; 3] {
        let turn = self.axis.map(|x| x * self.angle * fraction);
        let (r, _) = matrix_of(&[0.0, 0.0, 0.0, turn[0], turn[1], turn[2]]);
        sub(&mul3v(&r, &self.radial), &self.radial)
    }
}

fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| a[i] - b[i])
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
