//! Closed-form inverse kinematics of the six-axis UR arms: every joint solution of a flange
//! pose, and the one nearest a given joint vector.
//!
//! The arms share one geometry (shoulder and elbow axes parallel, a spherical-free wrist
//! whose three axes are offset by `d4`, `d5`, `d6`), which gives up to eight solutions: two
//! shoulder sides (θ1), two wrist flips (θ5) and two elbows (θ3). The derivation uses two
//! facts of the chain: the wrist centre `p05` lies `d4` along the axis of joint 2 (so
//! `p05 · z1 = d4` fixes θ1), and the flange axis makes the angle θ5 with that same axis
//! (so `z6 · z1 = cos θ5`). The rest is a planar two-link problem in frame 1.

use std::f64::consts::{PI, TAU};
use std::fmt;

use rtde_core::Pose;
use rtde_core::rotation::rotation_vector_of_matrix;

use crate::{Arm, Transform, matrix_of, mul3, mul3v, transpose3};

/// Arguments of `acos`/`asin` this far beyond ±1 are rounding, not a pose out of reach.
const ROUNDING: f64 = 1e-10;

/// Below this `|sin θ5|` the first and last wrist axes line up (a wrist singularity): θ6
/// is then taken from the reference joint vector, and θ1's choice moves into θ6.
const WRIST_SINGULAR: f64 = 1e-9;

/// The joint solutions of a pose: at most eight, each a joint vector with every angle in
/// `(-π, π]`.
pub type Solutions = Vec<[f64; 6]>;

/// A pose no joint vector reaches, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreachable {
    /// The pose asked for, `[x, y, z, rx, ry, rz]` of the flange.
    pub pose: [f64; 6],
    /// Which condition failed, in words.
    pub reason: &'static str,
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.pose;
        write!(
            f,
            "pose [{:.6}, {:.6}, {:.6}, {:.6}, {:.6}, {:.6}] is out of the arm's reach: {}",
            p[0], p[1], p[2], p[3], p[4], p[5], self.reason
        )
    }
}

impl std::error::Error for Unreachable {}

impl Arm {
    /// Every joint solution of the flange pose `pose` (`[x, y, z, rx, ry, rz]`, as
    /// [`Arm::tcp_pose`] returns it). At a wrist singularity θ6 is taken from `reference`.
    ///
    /// # Errors
    /// [`Unreachable`] when no joint vector reaches the pose.
    ///
    /// ```
    /// use rtde_kinematics::Arm;
    /// let q = [0.3, -1.2, 1.4, -1.7, -1.5, 0.2];
    /// let pose = Arm::UR5E.tcp_pose(&q);
    /// let solutions = Arm::UR5E.inverse(&pose, &q).unwrap();
    /// assert_eq!(solutions.len(), 8);
    /// assert!(solutions.iter().any(|s| s.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-9)));
    /// ```
    ///
    /// A calibrated arm ([`Arm::calibrated`]) has no closed form: the closed form of the
    /// nominal geometry nearest it gives each solution's starting point, and Newton's
    /// method on the arm's own chain takes it to the solution, to 1e-13.
    ///
    /// ```
    /// use rtde_kinematics::{Arm, Calibration};
    /// let arm = Arm::UR5E.calibrated(&Calibration::random(3));
    /// let q = [0.3, -1.2, 1.4, -1.7, -1.5, 0.2];
    /// let solutions = arm.inverse(&arm.tcp_pose(&q), &q).unwrap();
    /// assert!(solutions.iter().any(|s| s.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-9)));
    /// ```
    pub fn inverse(
        &self,
        pose: impl Into<Pose>,
        reference: &[f64; 6],
    ) -> Result<Solutions, Unreachable> {
        let pose = &pose.into().to_array();
        if self.is_nominal_geometry() {
            return self.closed_form(pose, reference);
        }
        let starts = self.nominal_geometry().closed_form(pose, reference)?;
        let mut solutions: Solutions = Vec::with_capacity(starts.len());
        for start in starts {
            let start = std::array::from_fn(|j| start[j] - self.theta[j]);
            let Some(q) = self.refine(pose, start) else {
                continue;
            };
            let q = q.map(wrap);
            let known = solutions
                .iter()
                .any(|s| s.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-9));
            if !known {
                solutions.push(q);
            }
        }
        if solutions.is_empty() {
            return Err(Unreachable {
                pose: *pose,
                reason: "no solution of the nominal geometry converges on the calibrated arm",
            });
        }
        Ok(solutions)
    }

    /// The arm's geometry without its calibration's small terms: the closed form's arm.
    fn nominal_geometry(&self) -> Arm {
        let (a, d) = (self.a, self.d);
        Arm {
            name: self.name,
            a: [0.0, a[1], a[2], 0.0, 0.0, 0.0],
            d: [d[0], 0.0, 0.0, d[3], d[4], d[5]],
            alpha: crate::UR_ALPHA,
            theta: [0.0; 6],
        }
    }

    /// Newton's method from `q` to a joint vector whose flange is at `pose`, with the
    /// geometric Jacobian of the arm's own chain; `None` when it does not converge (a
    /// singular Jacobian, or a start too far away).
    fn refine(&self, pose: &[f64; 6], mut q: [f64; 6]) -> Option<[f64; 6]> {
        let (r_target, p_target) = matrix_of(pose);
        for _ in 0..NEWTON_STEPS {
            let frames = self.frames(&q);
            let flange = frames[6];
            let dp = [
                p_target[0] - flange.p[0],
                p_target[1] - flange.p[1],
                p_target[2] - flange.p[2],
            ];
            let dw = rotation_vector_of_matrix(&mul3(&r_target, &transpose3(&flange.r)));
            let error = dp.iter().chain(&dw).map(|x| x.abs()).fold(0.0, f64::max);
            if error < CONVERGED {
                return Some(q);
            }
            // Joint i turns about the z axis of the frame before it.
            let mut jacobian = [[0.0; 6]; 6];
            for (i, frame) in frames.iter().take(6).enumerate() {
                let z = [frame.r[0][2], frame.r[1][2], frame.r[2][2]];
                let arm = [
                    flange.p[0] - frame.p[0],
                    flange.p[1] - frame.p[1],
                    flange.p[2] - frame.p[2],
                ];
                let v = [
                    z[1] * arm[2] - z[2] * arm[1],
                    z[2] * arm[0] - z[0] * arm[2],
                    z[0] * arm[1] - z[1] * arm[0],
                ];
                for k in 0..3 {
                    jacobian[k][i] = v[k];
                    jacobian[k + 3][i] = z[k];
                }
            }
            let step = solve6(jacobian, [dp[0], dp[1], dp[2], dw[0], dw[1], dw[2]])?;
            for (qi, si) in q.iter_mut().zip(step) {
                *qi += si;
            }
        }
        None
    }
}

/// Newton steps before a start counts as not converging: from the nominal geometry's
/// solution, a calibrated arm's takes three or four.
const NEWTON_STEPS: usize = 30;

/// Position (m) and rotation (rad) error at which a refined solution is exact.
const CONVERGED: f64 = 1e-13;

/// Solves `m · x = b` by Gaussian elimination with partial pivoting; `None` when `m` is
/// singular.
fn solve6(mut m: [[f64; 6]; 6], mut b: [f64; 6]) -> Option<[f64; 6]> {
    for col in 0..6 {
        let pivot = (col..6).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        b.swap(col, pivot);
        let (above, below) = m.split_at_mut(col + 1);
        let pivot_row = &above[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            for (x, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            b[col + 1 + offset] -= f * b[col];
        }
    }
    let mut x = [0.0; 6];
    for row in (0..6).rev() {
        let tail: f64 = (row + 1..6).map(|k| m[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / m[row][row];
    }
    Some(x)
}

impl Arm {
    /// The closed-form inverse of an arm of the nominal geometry.
    fn closed_form(&self, pose: &[f64; 6], reference: &[f64; 6]) -> Result<Solutions, Unreachable> {
        let unreachable = |reason| Unreachable {
            pose: *pose,
            reason,
        };
        if pose.iter().any(|v| !v.is_finite()) {
            return Err(unreachable("the pose is not finite"));
        }
        let (r06, p06) = matrix_of(pose);
        let z6 = [r06[0][2], r06[1][2], r06[2][2]];
        let (d, a) = (self.d, self.a);
        let p05 = [p06[0] - d[5] * z6[0], p06[1] - d[5] * z6[1]];
        let radius = p05[0].hypot(p05[1]);
        let Some(shoulder) = clamped_asin(d[3] / radius) else {
            return Err(unreachable(
                "the wrist is closer to the base axis than the shoulder offset d4",
            ));
        };
        let psi = p05[1].atan2(p05[0]);
        let mut solutions = Vec::with_capacity(8);
        let mut elbow_out_of_reach = false;
        for q1 in [psi + shoulder, psi + PI - shoulder] {
            let (s1, c1) = q1.sin_cos();
            let Some(wrist) = clamped_acos((p06[0] * s1 - p06[1] * c1 - d[3]) / d[5]) else {
                continue;
            };
            for q5 in [wrist, -wrist] {
                let s5 = q5.sin();
                // z1 in the flange frame is (s5·c6, −s5·s6, c5).
                let z1 = [s1, -c1, 0.0];
                let v = mul3v(&transpose3(&r06), &z1);
                let q6 = if s5.abs() < WRIST_SINGULAR {
                    reference[5]
                } else {
                    (-v[1] / s5).atan2(v[0] / s5)
                };
                // Frame 4 in frame 1: T01⁻¹ · T06 · T56⁻¹ · T45⁻¹.
                let t01 = Transform::dh(q1, d[0], a[0], self.alpha[0]);
                let t06 = Transform { r: r06, p: p06 };
                let t45 = Transform::dh(q5, d[4], a[4], self.alpha[4]);
                let t56 = Transform::dh(q6, d[5], a[5], self.alpha[5]);
                let t14 = inverse(&t01)
                    .then(&t06)
                    .then(&inverse(&t56))
                    .then(&inverse(&t45));
                // Frame 3's origin lies d4 back along z1 (= z3) from frame 4's.
                let (x, y) = (t14.p[0], t14.p[1]);
                let Some(elbow) =
                    clamped_acos((x * x + y * y - a[1] * a[1] - a[2] * a[2]) / (2.0 * a[1] * a[2]))
                else {
                    elbow_out_of_reach = true;
                    continue;
                };
                for q3 in [elbow, -elbow] {
                    let (s3, c3) = q3.sin_cos();
                    let q2 = y.atan2(x) - (a[2] * s3).atan2(a[1] + a[2] * c3);
                    let q234 = t14.r[1][0].atan2(t14.r[0][0]);
                    let q4 = q234 - q2 - q3;
                    solutions.push([q1, q2, q3, q4, q5, q6].map(wrap));
                }
            }
        }
        if solutions.is_empty() {
            return Err(unreachable(if elbow_out_of_reach {
                "the wrist is farther from the shoulder than the upper arm and forearm reach"
            } else {
                "the flange cannot point that way from this position"
            }));
        }
        Ok(solutions)
    }

    /// The joint solution of the flange pose `pose` nearest `near`: each joint is moved by
    /// whole turns to lie within half a turn of `near`'s, then the solution with the
    /// smallest largest joint move is chosen.
    ///
    /// # Errors
    /// [`Unreachable`] when no joint vector reaches the pose.
    ///
    /// ```
    /// use rtde_kinematics::Arm;
    /// let q = [0.3, -1.2, 1.4, -1.7, -1.5, 0.2];
    /// let target = Arm::UR5E.tcp_pose(&[0.35, -1.15, 1.35, -1.7, -1.5, 0.25]);
    /// let next = Arm::UR5E.inverse_nearest(&target, &q).unwrap();
    /// assert!((next[0] - 0.35).abs() < 1e-9);
    /// ```
    pub fn inverse_nearest(
        &self,
        pose: impl Into<Pose>,
        near: &[f64; 6],
    ) -> Result<[f64; 6], Unreachable> {
        let pose = pose.into();
        let solutions = self.inverse(pose, near)?;
        let moved =
            |s: &[f64; 6]| -> [f64; 6] { std::array::from_fn(|j| near[j] + wrap(s[j] - near[j])) };
        let cost = |s: &[f64; 6]| {
            s.iter()
                .zip(near)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        solutions
            .iter()
            .map(moved)
            .min_by(|a, b| cost(a).total_cmp(&cost(b)))
            .ok_or(Unreachable {
                pose: pose.to_array(),
                reason: "no solution",
            })
    }

    /// Whether the flange pose `pose` is within the arm's reach.
    #[must_use]
    pub fn reaches(&self, pose: impl Into<Pose>) -> bool {
        self.inverse(pose, &[0.0; 6]).is_ok()
    }
}

/// The angle `x` moved by whole turns into `(-π, π]`.
fn wrap(x: f64) -> f64 {
    let w = x - TAU * (x / TAU).round();
    if w <= -PI { w + TAU } else { w }
}

fn clamped(x: f64) -> Option<f64> {
    if !x.is_finite() || x.abs() > 1.0 + ROUNDING {
        return None;
    }
    Some(x.clamp(-1.0, 1.0))
}

fn clamped_acos(x: f64) -> Option<f64> {
    clamped(x).map(f64::acos)
}

fn clamped_asin(x: f64) -> Option<f64> {
    clamped(x).map(f64::asin)
}

fn inverse(t: &Transform) -> Transform {
    let r = transpose3(&t.r);
    let p = mul3v(&r, &t.p);
    Transform {
        r,
        p: [-p[0], -p[1], -p[2]],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator: the test is the same every run.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            #[allow(clippy::cast_precision_loss)] // 53 bits of a u64 into the mantissa
            let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
            unit
        }

        fn joints(&mut self) -> [f64; 6] {
            std::array::from_fn(|_| (self.next() * 2.0 - 1.0) * PI)
        }
    }

    /// The largest difference between two flange transforms: position in metres, rotation
    /// matrix entries (radians, to first order).
    fn distance(arm: &Arm, q: &[f64; 6], pose: &[f64; 6]) -> f64 {
        let (r, p) = arm.flange(q);
        let (r0, p0) = matrix_of(pose);
        let dp = (0..3).map(|i| (p[i] - p0[i]).abs()).fold(0.0, f64::max);
        let dr = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| (r[i][j] - r0[i][j]).abs())
            .fold(0.0, f64::max);
        dp.max(dr)
    }

    #[test]
    fn every_solution_of_random_poses_reaches_the_pose_on_every_arm() {
        const POSES: usize = 3_000;
        for arm in Arm::ALL {
            let mut random = SplitMix(0x5eed);
            let (mut worst, mut found) = (0.0f64, 0);
            for _ in 0..POSES {
                let q = random.joints();
                let pose = arm.tcp_pose(&q);
                let solutions = arm.inverse(pose, &q).unwrap();
                for s in &solutions {
                    worst = worst.max(distance(&arm, s, &pose));
                }
                let nearest = arm.inverse_nearest(pose, &q).unwrap();
                if nearest.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-6) {
                    found += 1;
                }
            }
            assert!(worst < 1e-9, "{}: FK(IK(p)) off by {worst:e}", arm.name);
            // The configuration the pose came from is among the solutions, and is the
            // nearest to itself.
            assert_eq!(found, POSES, "{}", arm.name);
        }
    }

    #[test]
    fn a_generic_pose_has_eight_distinct_solutions() {
        let q = [0.3, -1.2, 1.4, -1.7, -1.5, 0.2];
        let solutions = Arm::UR5E.inverse(Arm::UR5E.tcp_pose(&q), &q).unwrap();
        assert_eq!(solutions.len(), 8);
        for (i, a) in solutions.iter().enumerate() {
            for b in &solutions[i + 1..] {
                assert!(a.iter().zip(b).any(|(x, y)| (x - y).abs() > 1e-6));
            }
        }
    }

    #[test]
    fn poses_out_of_reach_are_refused_with_the_reason() {
        let far = Arm::UR5E.inverse([2.0, 0.0, 0.3, 0.0, PI, 0.0], &[0.0; 6]);
        assert!(far.unwrap_err().reason.contains("farther"));
        // The wrist on the base axis: the shoulder offset cannot be met.
        let axis = Arm::UR5E.inverse([0.0, 0.0, 0.5, 0.0, 0.0, 0.0], &[0.0; 6]);
        assert!(axis.unwrap_err().reason.contains("closer"));
        assert!(!Arm::UR5E.reaches([f64::NAN; 6]));
    }

    #[test]
    fn the_nearest_solution_keeps_whole_turns() {
        let q = [0.3 + TAU, -1.2, 1.4, -1.7, -1.5, 0.2 - TAU];
        let pose = Arm::UR5E.tcp_pose(&q);
        let s = Arm::UR5E.inverse_nearest(pose, &q).unwrap();
        for j in 0..6 {
            assert!((s[j] - q[j]).abs() < 1e-9, "{s:?}");
        }
    }
}

#[cfg(test)]
mod calibrated_tests {
    use super::*;
    use crate::Calibration;

    /// A calibrated arm's every solution reaches the pose, and the joints the pose came
    /// from are among them, to 1e-9, on every arm and a hundred calibrations.
    #[test]
    fn a_calibrated_arms_inverse_round_trips() {
        let (mut worst, mut cases) = (0.0f64, 0);
        for arm in Arm::ALL {
            for seed in 0..100u64 {
                let calibrated = arm.calibrated(&Calibration::random(seed));
                assert!(!calibrated.is_nominal_geometry());
                let k = seed as f64;
                let q = [
                    0.3 + 0.01 * k,
                    -1.2,
                    1.4 - 0.005 * k,
                    -1.7,
                    -1.5 + 0.01 * k,
                    0.2,
                ];
                let pose = calibrated.tcp_pose(&q);
                let solutions = calibrated.inverse(pose, &q).unwrap();
                let back = solutions
                    .iter()
                    .map(|s| {
                        s.iter()
                            .zip(&q)
                            .map(|(a, b)| (a - b).abs())
                            .fold(0.0, f64::max)
                    })
                    .fold(f64::INFINITY, f64::min);
                worst = worst.max(back);
                for s in &solutions {
                    let reached = calibrated.tcp_pose(s);
                    for i in 0..3 {
                        assert!((reached[i] - pose[i]).abs() < 1e-9, "{}", arm.name);
                    }
                }
                cases += 1;
            }
        }
        assert!(
            worst < 1e-9,
            "IK(FK(q)) off by {worst:e} over {cases} cases"
        );
    }

    #[test]
    fn the_nominal_tables_keep_the_closed_form() {
        for arm in Arm::ALL {
            assert!(arm.is_nominal_geometry(), "{}", arm.name);
            assert!(
                arm.calibrated(&Calibration::default())
                    .is_nominal_geometry()
            );
        }
    }
}
