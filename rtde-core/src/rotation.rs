//! Orientations as UR controllers give them (rotation vectors: axis times angle) and as
//! viewers, ROS and kinematics want them (rotation matrices, unit quaternions): each
//! conversion written once, for [`Pose`](crate::Pose), `rtde-kinematics` and `rtde-view`.
//!
//! A [`Quaternion`] names its components, so that no caller depends on an order; where an
//! array is needed, [`Quaternion::to_xyzw`] gives the order ROS, Foxglove and Rerun use.
//! Matrices are rows first: `r[row][column]`.
//!
//! ```
//! use rtde_core::rotation::{Quaternion, matrix_of_rotation_vector, rotation_vector_of_matrix};
//!
//! let quarter_turn_about_z = [0.0, 0.0, std::f64::consts::FRAC_PI_2];
//! let r = matrix_of_rotation_vector(quarter_turn_about_z);
//! assert!((r[1][0] - 1.0).abs() < 1e-12); // x turned onto y
//! let back = rotation_vector_of_matrix(&r);
//! assert!((back[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
//! let q = Quaternion::from_rotation_vector(quarter_turn_about_z);
//! let by_matrix = Quaternion::from_matrix(&r);
//! assert!((q.z - q.w).abs() < 1e-12 && (by_matrix.z - q.z).abs() < 1e-12);
//! ```

/// A rotation matrix, rows first.
pub type Matrix = [[f64; 3]; 3];

/// The identity matrix.
pub const IDENTITY: Matrix = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// A unit quaternion `w + xi + yj + zk`. The constructors here give `w >= 0`: `q` and `-q`
/// are the same orientation, and one sign makes equal orientations compare equal.
///
/// ```
/// use rtde_core::rotation::Quaternion;
///
/// let half_turn_about_x = Quaternion::from_rotation_vector([std::f64::consts::PI, 0.0, 0.0]);
/// let [x, y, z, w] = half_turn_about_x.to_xyzw();
/// assert!((x - 1.0).abs() < 1e-12 && y == 0.0 && z == 0.0 && w.abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quaternion {
    /// The `i` component.
    pub x: f64,
    /// The `j` component.
    pub y: f64,
    /// The `k` component.
    pub z: f64,
    /// The real component.
    pub w: f64,
}

impl Quaternion {
    /// No rotation.
    pub const IDENTITY: Quaternion = Quaternion {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        w: 1.0,
    };

    /// The quaternion of a rotation vector (axis times angle, in radians), as RTDE poses
    /// carry their orientation.
    #[must_use]
    pub fn from_rotation_vector(v: [f64; 3]) -> Quaternion {
        let angle = length(v);
        // sin(angle / 2) / angle, with its series near zero so small rotations stay exact.
        let k = if angle > 1e-6 {
            (angle / 2.0).sin() / angle
        } else {
            0.5 - angle * angle / 48.0
        };
        Quaternion {
            x: v[0] * k,
            y: v[1] * k,
            z: v[2] * k,
            w: (angle / 2.0).cos(),
        }
        .with_nonnegative_w()
    }

    /// The quaternion of a rotation matrix.
    #[must_use]
    pub fn from_matrix(r: &Matrix) -> Quaternion {
        // From the largest of w, x, y, z, so that no division is by a small number.
        let trace = r[0][0] + r[1][1] + r[2][2];
        let [x, y, z, w] = if trace > 0.0 {
            let s = (trace + 1.0).sqrt() * 2.0;
            [
                (r[2][1] - r[1][2]) / s,
                (r[0][2] - r[2][0]) / s,
                (r[1][0] - r[0][1]) / s,
                s / 4.0,
            ]
        } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
            let s = (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt() * 2.0;
            [
                s / 4.0,
                (r[0][1] + r[1][0]) / s,
                (r[0][2] + r[2][0]) / s,
                (r[2][1] - r[1][2]) / s,
            ]
        } else if r[1][1] > r[2][2] {
            let s = (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt() * 2.0;
            [
                (r[0][1] + r[1][0]) / s,
                s / 4.0,
                (r[1][2] + r[2][1]) / s,
                (r[0][2] - r[2][0]) / s,
            ]
        } else {
            let s = (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt() * 2.0;
            [
                (r[0][2] + r[2][0]) / s,
                (r[1][2] + r[2][1]) / s,
                s / 4.0,
                (r[1][0] - r[0][1]) / s,
            ]
        };
        Quaternion { x, y, z, w }.with_nonnegative_w()
    }

    /// `[x, y, z, w]`: the order of ROS' `geometry_msgs/Quaternion`, Foxglove's schemas and
    /// Rerun.
    #[must_use]
    pub const fn to_xyzw(self) -> [f64; 4] {
        [self.x, self.y, self.z, self.w]
    }

    /// The quaternion of `[x, y, z, w]`, as [`Quaternion::to_xyzw`] gives it.
    #[must_use]
    pub const fn from_xyzw([x, y, z, w]: [f64; 4]) -> Quaternion {
        Quaternion { x, y, z, w }
    }

    /// The rotation matrix of this (unit) quaternion.
    #[must_use]
    pub fn to_matrix(self) -> Matrix {
        let Quaternion { x, y, z, w } = self;
        [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - z * w),
                2.0 * (x * z + y * w),
            ],
            [
                2.0 * (x * y + z * w),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - x * w),
            ],
            [
                2.0 * (x * z - y * w),
                2.0 * (y * z + x * w),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ]
    }

    /// This orientation with the sign nearer `other` (`q` or `-q`): for series that must
    /// not jump, and to compare quaternions made by different routes.
    #[must_use]
    pub fn nearest(self, other: Quaternion) -> Quaternion {
        let dot = self.x * other.x + self.y * other.y + self.z * other.z + self.w * other.w;
        if dot < 0.0 { self.negated() } else { self }
    }

    fn negated(self) -> Quaternion {
        Quaternion {
            x: -self.x,
            y: -self.y,
            z: -self.z,
            w: -self.w,
        }
    }

    fn with_nonnegative_w(self) -> Quaternion {
        if self.w < 0.0 { self.negated() } else { self }
    }
}

/// The rotation matrix of a rotation vector (axis times angle, in radians): Rodrigues'
/// formula.
#[must_use]
pub fn matrix_of_rotation_vector(v: [f64; 3]) -> Matrix {
    let angle = length(v);
    if angle == 0.0 {
        return IDENTITY;
    }
    let k = v.map(|x| x / angle);
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    [
        [
            c + k[0] * k[0] * t,
            k[0] * k[1] * t - k[2] * s,
            k[0] * k[2] * t + k[1] * s,
        ],
        [
            k[1] * k[0] * t + k[2] * s,
            c + k[1] * k[1] * t,
            k[1] * k[2] * t - k[0] * s,
        ],
        [
            k[2] * k[0] * t - k[1] * s,
            k[2] * k[1] * t + k[0] * s,
            c + k[2] * k[2] * t,
        ],
    ]
}

/// The rotation vector (axis times angle, the angle in `[0, π]`) of a rotation matrix, as a
/// controller reports it.
#[must_use]
pub fn rotation_vector_of_matrix(r: &Matrix) -> [f64; 3] {
    // 2·sin(angle)·axis, from the skew-symmetric part.
    let v = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
    let sin = 0.5 * length(v);
    let cos = 0.5 * (r[0][0] + r[1][1] + r[2][2] - 1.0);
    let angle = sin.atan2(cos);
    if sin > 1e-6 {
        return v.map(|c| c * angle / (2.0 * sin));
    }
    if cos > 0.0 {
        // Near the identity: angle ≈ sin, so the vector is v / 2 to first order.
        return v.map(|c| c * 0.5);
    }
    // Near a half turn the skew part vanishes; the axis comes from the symmetric part,
    // R + I = 2·axis·axisᵀ, read from its largest diagonal entry.
    let i = (0..3)
        .max_by(|&a, &b| r[a][a].total_cmp(&r[b][b]))
        .unwrap_or(0);
    let ai = ((r[i][i] + 1.0) / 2.0).max(0.0).sqrt();
    let mut axis: [f64; 3] = std::array::from_fn(|j| {
        if j == i {
            ai
        } else {
            (r[i][j] + r[j][i]) / (4.0 * ai)
        }
    });
    // Keep the sign the skew part suggests, when it suggests one.
    if axis[0] * v[0] + axis[1] * v[1] + axis[2] * v[2] < 0.0 {
        axis = axis.map(|x| -x);
    }
    axis.map(|c| c * angle)
}

fn length(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    const VECTORS: [[f64; 3]; 8] = [
        [0.0, 0.0, 0.0],
        [1e-9, 0.0, 0.0],
        [0.3, -0.2, 0.1],
        [PI / 2.0, 0.0, 0.0],
        [0.0, 0.0, PI - 1e-9],
        [0.0, -PI, 0.0],
        [-1.0, 2.0, 0.5],
        [1.8137993642342178, 1.8137993642342178, 1.8137993642342178], // π/√3 each: a half turn
    ];

    fn assert_close<const N: usize>(a: [f64; N], b: [f64; N], tolerance: f64, what: &str) {
        for i in 0..N {
            assert!((a[i] - b[i]).abs() < tolerance, "{what}: {a:?} vs {b:?}");
        }
    }

    #[test]
    fn rotation_vectors_round_trip_through_matrices() {
        for v in VECTORS {
            let back = rotation_vector_of_matrix(&matrix_of_rotation_vector(v));
            // A half turn is the same rotation either way along its axis.
            let same = back.iter().zip(&v).all(|(a, b)| (a - b).abs() < 1e-7)
                || (length(v) - PI).abs() < 1e-6
                    && back.iter().zip(&v).all(|(a, b)| (a + b).abs() < 1e-7);
            assert!(same, "{v:?} -> {back:?}");
        }
    }

    #[test]
    fn both_routes_to_a_quaternion_agree_and_are_unit_with_w_not_negative() {
        for v in VECTORS {
            let direct = Quaternion::from_rotation_vector(v);
            let by_matrix = Quaternion::from_matrix(&matrix_of_rotation_vector(v));
            // Near a half turn w is about 0 and either sign is the same orientation.
            assert_close(
                direct.to_xyzw(),
                by_matrix.nearest(direct).to_xyzw(),
                1e-9,
                "routes",
            );
            for q in [direct, by_matrix] {
                let norm: f64 = q.to_xyzw().iter().map(|c| c * c).sum();
                assert!((norm - 1.0).abs() < 1e-12 && q.w >= 0.0, "{q:?}");
            }
        }
        // Beyond a half turn the vector's own quaternion has w < 0: the sign is flipped.
        let q = Quaternion::from_rotation_vector([0.0, 0.0, 1.5 * PI]);
        assert!(q.w > 0.0 && q.z < 0.0, "{q:?}");
    }

    #[test]
    fn quaternions_give_back_their_matrix() {
        for v in VECTORS {
            let r = matrix_of_rotation_vector(v);
            let back = Quaternion::from_matrix(&r).to_matrix();
            for row in 0..3 {
                assert_close(back[row], r[row], 1e-12, "matrix");
            }
        }
        assert_eq!(Quaternion::IDENTITY.to_matrix(), IDENTITY);
        assert_eq!(
            Quaternion::from_xyzw([0.1, 0.2, 0.3, 0.4]).to_xyzw(),
            [0.1, 0.2, 0.3, 0.4]
        );
    }

    #[test]
    fn the_matrix_turns_x_the_right_way() {
        // A quarter turn about z takes x onto y: the sign convention, which the round trips
        // alone would not catch.
        let r = matrix_of_rotation_vector([0.0, 0.0, PI / 2.0]);
        assert_close(r[1], [1.0, 0.0, 0.0], 1e-12, "row y");
        let r = Quaternion::from_rotation_vector([0.0, 0.0, PI / 2.0]).to_matrix();
        assert_close(r[1], [1.0, 0.0, 0.0], 1e-12, "row y by quaternion");
    }
}
