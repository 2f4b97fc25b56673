//! Kinematics of Universal Robots arms from their public Denavit–Hartenberg parameters.
//!
//! A crate of its own (it needs only rtde-core's rotations) because three audiences need
//! the same arm: the simulator moves it, the motion layer checks targets against its
//! reach, and the viewers draw it.

#![forbid(unsafe_code)]

use std::f64::consts::FRAC_PI_2;

use rtde_core::rotation::rotation_vector_of_matrix;

mod calibration;
mod frames;
mod inverse;
mod pose;

pub use calibration::{Calibration, TOLERANCE};
pub use frames::{BASE_FRAME, LINK_FRAMES, LinkFrame};
pub use inverse::{Solutions, Unreachable};
pub use pose::{compose, invert, matrix_of, pose_of};

/// The link twists every six-axis UR arm shares.
const UR_ALPHA: [f64; 6] = [FRAC_PI_2, 0.0, 0.0, FRAC_PI_2, -FRAC_PI_2, 0.0];

/// An arm model: the standard Denavit–Hartenberg parameters Universal Robots publishes
/// for it, in metres and radians (UR's `a` is the DH link length, often called `r`), or a
/// particular arm's, calibrated ([`Arm::calibrated`], [`Arm::with_dh`]).
///
/// Link `i` transforms as `Rz(q[i] + theta[i]) · Tz(d[i]) · Tx(a[i]) · Rx(alpha[i])`; the
/// tool flange is the frame after link 6. The simulator reports poses of the flange (a zero
/// TCP offset) in the base frame of this chain.
///
/// ```
/// use rtde_kinematics::Arm;
///
/// // All joints at zero: the arm lies stretched out along -x.
/// let pose = Arm::UR5E.tcp_pose(&[0.0; 6]);
/// assert!((pose[0] - (-0.425 - 0.3922)).abs() < 1e-12);
/// assert!((pose[1] - (-0.1333 - 0.0996)).abs() < 1e-12);
/// assert!((pose[2] - (0.1625 - 0.0997)).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arm {
    /// The model's name, e.g. `"UR5e"`.
    pub name: &'static str,
    /// Link offsets `d`, in metres.
    pub d: [f64; 6],
    /// Link lengths `a`, in metres.
    pub a: [f64; 6],
    /// Link twists `alpha`, in radians.
    pub alpha: [f64; 6],
    /// Joint angle offsets `theta`, in radians: zero in the published tables, a
    /// calibration's deltas otherwise.
    pub theta: [f64; 6],
}

/// A published table: the d and a UR lists for a model (its twists are [`UR_ALPHA`], its
/// theta offsets zero).
const fn table(name: &'static str, d: [f64; 6], a: [f64; 6]) -> Arm {
    Arm {
        name,
        d,
        a,
        alpha: UR_ALPHA,
        theta: [0.0; 6],
    }
}

// Sources, per model: UR's article "DH Parameters for calculations of kinematics and
// dynamics" where its table could be read (UR3e, UR5e, UR10e but d6, UR20), and Universal
// Robots' ROS descriptions (`ur_description`, default_kinematics.yaml) for the others; UR7e
// and UR12e are the UR5e and UR10e tables (their descriptions are the same files).
impl Arm {
    /// UR3 (CB3).
    pub const UR3: Arm = table(
        "UR3",
        [0.1519, 0.0, 0.0, 0.11235, 0.08535, 0.0819],
        [0.0, -0.24365, -0.21325, 0.0, 0.0, 0.0],
    );
    /// UR5 (CB3).
    pub const UR5: Arm = table(
        "UR5",
        [0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823],
        [0.0, -0.425, -0.39225, 0.0, 0.0, 0.0],
    );
    /// UR10 (CB3).
    pub const UR10: Arm = table(
        "UR10",
        [0.1273, 0.0, 0.0, 0.163941, 0.1157, 0.0922],
        [0.0, -0.612, -0.5723, 0.0, 0.0, 0.0],
    );
    /// UR3e (e-Series).
    pub const UR3E: Arm = table(
        "UR3e",
        [0.15185, 0.0, 0.0, 0.13105, 0.08535, 0.0921],
        [0.0, -0.24355, -0.2132, 0.0, 0.0, 0.0],
    );
    /// UR5e (e-Series): the simulator's default arm.
    pub const UR5E: Arm = table(
        "UR5e",
        [0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996],
        [0.0, -0.425, -0.3922, 0.0, 0.0, 0.0],
    );
    /// UR7e: the UR5e's kinematics.
    pub const UR7E: Arm = Arm {
        name: "UR7e",
        ..Arm::UR5E
    };
    /// UR10e (e-Series).
    pub const UR10E: Arm = table(
        "UR10e",
        [0.1807, 0.0, 0.0, 0.17415, 0.11985, 0.11655],
        [0.0, -0.6127, -0.57155, 0.0, 0.0, 0.0],
    );
    /// UR12e: the UR10e's kinematics.
    pub const UR12E: Arm = Arm {
        name: "UR12e",
        ..Arm::UR10E
    };
    /// UR16e (e-Series).
    pub const UR16E: Arm = table(
        "UR16e",
        [0.1807, 0.0, 0.0, 0.17415, 0.11985, 0.11655],
        [0.0, -0.4784, -0.36, 0.0, 0.0, 0.0],
    );
    /// UR15.
    pub const UR15: Arm = table(
        "UR15",
        [0.2186, 0.0, 0.0, 0.1824, 0.1361, 0.1434],
        [0.0, -0.6475, -0.5164, 0.0, 0.0, 0.0],
    );
    /// UR18.
    pub const UR18: Arm = table(
        "UR18",
        [0.2186, 0.0, 0.0, 0.1824, 0.1361, 0.1434],
        [0.0, -0.475, -0.3389, 0.0, 0.0, 0.0],
    );
    /// UR8 Long.
    pub const UR8_LONG: Arm = table(
        "UR8Long",
        [0.2186, 0.0, 0.0, 0.1824, 0.1361, 0.1434],
        [0.0, -0.8989, -0.7149, 0.0, 0.0, 0.0],
    );
    /// UR20.
    pub const UR20: Arm = table(
        "UR20",
        [0.2363, 0.0, 0.0, 0.2010, 0.1593, 0.1543],
        [0.0, -0.8620, -0.7287, 0.0, 0.0, 0.0],
    );
    /// UR30.
    pub const UR30: Arm = table(
        "UR30",
        [0.2363, 0.0, 0.0, 0.2010, 0.1593, 0.1543],
        [0.0, -0.6370, -0.5037, 0.0, 0.0, 0.0],
    );

    /// Every arm this crate knows, with the robot type its controller's configuration
    /// data (primary interface) reports and whether it runs e-Series software (5.x and
    /// later) or CB3's (3.x). UR7e and UR12e report the UR5's and UR10's types, whose
    /// kinematics they share.
    pub const MODELS: [(Arm, i32, bool); 14] = [
        (Arm::UR5, 1, false),
        (Arm::UR10, 2, false),
        (Arm::UR3, 3, false),
        (Arm::UR5E, 1, true),
        (Arm::UR10E, 2, true),
        (Arm::UR3E, 3, true),
        (Arm::UR16E, 4, true),
        (Arm::UR18, 5, true),
        (Arm::UR8_LONG, 6, true),
        (Arm::UR20, 7, true),
        (Arm::UR30, 8, true),
        (Arm::UR15, 9, true),
        (Arm::UR7E, 1, true),
        (Arm::UR12E, 2, true),
    ];

    /// Every arm this crate knows.
    pub const ALL: [Arm; 14] = {
        let mut all = [Arm::UR5; 14];
        let mut i = 0;
        while i < all.len() {
            all[i] = Arm::MODELS[i].0;
            i += 1;
        }
        all
    };

    /// The arm a controller's configuration data names: its robot type, on e-Series
    /// software (5.x and later) or CB3's. The first model of a type: UR5e for 1 on
    /// e-Series, as UR7e reports the same.
    ///
    /// ```
    /// use rtde_kinematics::Arm;
    ///
    /// assert_eq!(Arm::of_robot_type(2, true), Some(Arm::UR10E));
    /// assert_eq!(Arm::of_robot_type(3, false), Some(Arm::UR3));
    /// assert_eq!(Arm::of_robot_type(42, true), None);
    /// ```
    #[must_use]
    pub fn of_robot_type(robot_type: i32, e_series: bool) -> Option<Arm> {
        Arm::MODELS
            .iter()
            .find(|(_, t, e)| *t == robot_type && *e == e_series)
            .map(|(arm, _, _)| *arm)
    }

    /// The robot type a controller with this arm reports (1 for a UR5 or UR5e); 0 for an
    /// arm not in [`Arm::MODELS`].
    #[must_use]
    pub fn robot_type(&self) -> i32 {
        Arm::MODELS
            .iter()
            .find(|(arm, _, _)| arm.name == self.name)
            .map_or(0, |(_, t, _)| *t)
    }

    /// The arm of this model name, in any case (`ur5e`, `UR10e`).
    ///
    /// ```
    /// use rtde_kinematics::Arm;
    ///
    /// assert_eq!(Arm::named("ur10e"), Some(Arm::UR10E));
    /// assert_eq!(Arm::named("UR8 Long"), Some(Arm::UR8_LONG));
    /// assert_eq!(Arm::named("UR7"), None);
    /// ```
    #[must_use]
    pub fn named(name: &str) -> Option<Arm> {
        // `UR8 Long`, `ur8_long`, `ur8long` alike.
        let plain = |s: &str| -> String {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let wanted = plain(name);
        Arm::ALL.into_iter().find(|a| plain(a.name) == wanted)
    }

    /// The tool flange's pose for joint positions `q`: `[x, y, z, rx, ry, rz]`, position
    /// in metres and orientation as a rotation vector (axis times angle, angle in `[0, π]`),
    /// as RTDE's `actual_TCP_pose` reports it.
    #[must_use]
    pub fn tcp_pose(&self, q: &[f64; 6]) -> [f64; 6] {
        let t = self.chain(q, 6);
        let r = rotation_vector_of_matrix(&t.r);
        [t.p[0], t.p[1], t.p[2], r[0], r[1], r[2]]
    }

    /// The elbow's position (the origin of the frame after link 2) for joint positions `q`,
    /// in metres.
    #[must_use]
    pub fn elbow_position(&self, q: &[f64; 6]) -> [f64; 3] {
        self.chain(q, 2).p
    }

    /// The flange's velocity `[vx, vy, vz, wx, wy, wz]` at joint positions `q` moving at
    /// joint velocities `qd`, by a central difference of the forward kinematics.
    #[must_use]
    pub fn tcp_speed(&self, q: &[f64; 6], qd: &[f64; 6]) -> [f64; 6] {
        let (before, after) = difference_points(q, qd);
        let (a, b) = (self.chain(&before, 6), self.chain(&after, 6));
        let v = scale3(sub3(&b.p, &a.p), 1.0 / (2.0 * FD_STEP));
        // The rotation taking `a` to `b`, in the base frame: b.r · a.rᵀ.
        let w = scale3(
            rotation_vector_of_matrix(&mul3(&b.r, &transpose3(&a.r))),
            1.0 / (2.0 * FD_STEP),
        );
        [v[0], v[1], v[2], w[0], w[1], w[2]]
    }

    /// The elbow's linear velocity at joint positions `q` moving at `qd`.
    #[must_use]
    pub fn elbow_velocity(&self, q: &[f64; 6], qd: &[f64; 6]) -> [f64; 3] {
        let (before, after) = difference_points(q, qd);
        scale3(
            sub3(&self.chain(&after, 2).p, &self.chain(&before, 2).p),
            1.0 / (2.0 * FD_STEP),
        )
    }

    /// The flange's rotation matrix in the base frame.
    #[must_use]
    pub fn tcp_rotation(&self, q: &[f64; 6]) -> [[f64; 3]; 3] {
        self.chain(q, 6).r
    }

    /// The flange's rotation and position for joint positions `q`.
    #[must_use]
    pub fn flange(&self, q: &[f64; 6]) -> ([[f64; 3]; 3], [f64; 3]) {
        let t = self.chain(q, 6);
        (t.r, t.p)
    }

    /// Whether the arm has the geometry of the published tables (twists of ±90° and 0,
    /// no theta offsets, the wrist links without length): the closed-form inverse is then
    /// exact. A calibrated arm is close to it, and its inverse is refined from there.
    #[must_use]
    pub fn is_nominal_geometry(&self) -> bool {
        self.alpha == UR_ALPHA
            && self.theta == [0.0; 6]
            && [
                self.a[0], self.a[3], self.a[4], self.a[5], self.d[1], self.d[2],
            ] == [0.0; 6]
    }

    /// The base frame and the frame after each link.
    fn frames(&self, q: &[f64; 6]) -> [Transform; 7] {
        let mut frames = [Transform::IDENTITY; 7];
        for i in 0..6 {
            frames[i + 1] = frames[i].then(&self.link(q, i));
        }
        frames
    }

    /// The transform from the base to the frame after the first `links` links.
    fn chain(&self, q: &[f64; 6], links: usize) -> Transform {
        (0..links.min(6)).fold(Transform::IDENTITY, |t, i| t.then(&self.link(q, i)))
    }

    /// Link `i`'s transform at joint positions `q`, its theta offset included.
    fn link(&self, q: &[f64; 6], i: usize) -> Transform {
        Transform::dh(q[i] + self.theta[i], self.d[i], self.a[i], self.alpha[i])
    }
}

/// The time step of the central differences behind the velocities, in seconds.
const FD_STEP: f64 = 1e-6;

fn difference_points(q: &[f64; 6], qd: &[f64; 6]) -> ([f64; 6], [f64; 6]) {
    (
        std::array::from_fn(|i| q[i] - qd[i] * FD_STEP),
        std::array::from_fn(|i| q[i] + qd[i] * FD_STEP),
    )
}

/// A rigid transform: rotation `r`, then translation `p`.
#[derive(Clone, Copy, Debug)]
struct Transform {
    r: [[f64; 3]; 3],
    p: [f64; 3],
}

impl Transform {
    const IDENTITY: Transform = Transform {
        r: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        p: [0.0; 3],
    };

    /// One standard DH link: `Rz(theta) · Tz(d) · Tx(a) · Rx(alpha)`.
    fn dh(theta: f64, d: f64, a: f64, alpha: f64) -> Transform {
        let (st, ct) = theta.sin_cos();
        let (sa, ca) = alpha.sin_cos();
        Transform {
            r: [
                [ct, -st * ca, st * sa],
                [st, ct * ca, -ct * sa],
                [0.0, sa, ca],
            ],
            p: [a * ct, a * st, d],
        }
    }

    /// `self` followed by `next` (expressed in `self`'s frame).
    fn then(&self, next: &Transform) -> Transform {
        let moved = mul3v(&self.r, &next.p);
        Transform {
            r: mul3(&self.r, &next.r),
            p: [
                self.p[0] + moved[0],
                self.p[1] + moved[1],
                self.p[2] + moved[2],
            ],
        }
    }
}

/// The product of two 3×3 matrices.
#[must_use]
pub fn mul3(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

/// The product of a 3×3 matrix and a vector.
#[must_use]
pub fn mul3v(a: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| (0..3).map(|k| a[i][k] * v[k]).sum())
}

/// The transpose of a 3×3 matrix.
#[must_use]
pub fn transpose3(a: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| a[j][i]))
}

fn sub3(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| a[i] - b[i])
}

fn scale3(a: [f64; 3], s: f64) -> [f64; 3] {
    a.map(|x| x * s)
}

/// An arm by its model name, in any case, as [`Arm::named`] finds it; the error names the
/// arms there are, for command lines.
///
/// ```
/// use rtde_kinematics::Arm;
///
/// assert_eq!("UR10e".parse::<Arm>(), Ok(Arm::UR10E));
/// assert!("ur7".parse::<Arm>().unwrap_err().contains("UR5e"));
/// ```
impl std::str::FromStr for Arm {
    type Err = String;

    fn from_str(name: &str) -> Result<Arm, String> {
        Arm::named(name).ok_or_else(|| {
            let names: Vec<&str> = Arm::ALL.iter().map(|a| a.name).collect();
            format!("unknown arm `{name}`: use {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_robot_type_names_an_arm_with_its_kinematics() {
        for (arm, robot_type, e_series) in Arm::MODELS {
            let named = Arm::of_robot_type(robot_type, e_series).unwrap();
            assert_eq!((named.d, named.a), (arm.d, arm.a), "{}", arm.name);
            assert_eq!(arm.robot_type(), robot_type, "{}", arm.name);
            assert_eq!(Arm::named(arm.name), Some(arm));
            assert!(arm.is_nominal_geometry(), "{}", arm.name);
        }
        // Every name once.
        let mut names: Vec<&str> = Arm::ALL.iter().map(|a| a.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Arm::ALL.len());
    }

    use super::*;

    #[test]
    fn speed_matches_pose_difference() {
        let q = [0.1, -1.2, 1.1, -1.5, -1.6, 0.3];
        let qd = [0.1, -0.05, 0.2, 0.0, 0.3, -0.4];
        let h = 1e-4;
        let a = Arm::UR5E.tcp_pose(&q);
        let b = Arm::UR5E.tcp_pose(&std::array::from_fn(|i| q[i] + qd[i] * h));
        let v = Arm::UR5E.tcp_speed(&q, &qd);
        for i in 0..3 {
            assert!(((b[i] - a[i]) / h - v[i]).abs() < 1e-3, "{i}: {v:?}");
        }
    }
}
