//! A Cartesian pose: position and rotation vector, as UR controllers report TCP poses.

use super::TypedValue;
use crate::wire;

/// A pose `(x, y, z, rx, ry, rz)`: position in metres and orientation as a rotation vector
/// (axis times angle, in radians), the layout of `actual_TCP_pose`, `target_TCP_pose` and
/// `tcp_offset` (`VECTOR6D`).
///
/// ```
/// use rtde_core::Pose;
///
/// let p = Pose::new(0.1, 0.2, 0.3, 0.0, 0.0, std::f64::consts::FRAC_PI_2);
/// let [w, x, y, z] = p.to_quaternion();
/// assert!((w - z).abs() < 1e-12 && x == 0.0 && y == 0.0);
/// let m = p.to_rotation_matrix();
/// assert!((m[0][1] + 1.0).abs() < 1e-12); // x axis turned onto y
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pose {
    /// Position along x, in metres.
    pub x: f64,
    /// Position along y, in metres.
    pub y: f64,
    /// Position along z, in metres.
    pub z: f64,
    /// Rotation vector, x component, in radians.
    pub rx: f64,
    /// Rotation vector, y component, in radians.
    pub ry: f64,
    /// Rotation vector, z component, in radians.
    pub rz: f64,
}

impl Pose {
    /// A pose from its six components.
    #[must_use]
    pub const fn new(x: f64, y: f64, z: f64, rx: f64, ry: f64, rz: f64) -> Self {
        Pose {
            x,
            y,
            z,
            rx,
            ry,
            rz,
        }
    }

    /// A pose from `[x, y, z, rx, ry, rz]`.
    #[must_use]
    pub const fn from_array(v: [f64; 6]) -> Self {
        let [x, y, z, rx, ry, rz] = v;
        Pose::new(x, y, z, rx, ry, rz)
    }

    /// `[x, y, z, rx, ry, rz]`.
    #[must_use]
    pub const fn to_array(self) -> [f64; 6] {
        [self.x, self.y, self.z, self.rx, self.ry, self.rz]
    }

    /// `[x, y, z]`.
    #[must_use]
    pub const fn position(self) -> [f64; 3] {
        [self.x, self.y, self.z]
    }

    /// The rotation vector `[rx, ry, rz]`.
    #[must_use]
    pub const fn rotation_vector(self) -> [f64; 3] {
        [self.rx, self.ry, self.rz]
    }

    /// The rotation angle in radians: the rotation vector's length.
    #[must_use]
    pub fn angle(self) -> f64 {
        (self.rx * self.rx + self.ry * self.ry + self.rz * self.rz).sqrt()
    }

    /// The orientation as a unit quaternion `[w, x, y, z]`.
    #[must_use]
    pub fn to_quaternion(self) -> [f64; 4] {
        let angle = self.angle();
        // sin(angle / 2) / angle, with its series near zero so small rotations stay exact.
        let s = if angle > 1e-6 {
            (angle / 2.0).sin() / angle
        } else {
            0.5 - angle * angle / 48.0
        };
        [(angle / 2.0).cos(), self.rx * s, self.ry * s, self.rz * s]
    }

    /// The orientation as a rotation matrix, rows first: `m[row][column]`.
    #[must_use]
    pub fn to_rotation_matrix(self) -> [[f64; 3]; 3] {
        let [w, x, y, z] = self.to_quaternion();
        [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - w * z),
                2.0 * (x * z + w * y),
            ],
            [
                2.0 * (x * y + w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - w * x),
            ],
            [
                2.0 * (x * z - w * y),
                2.0 * (y * z + w * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ]
    }
}

impl From<[f64; 6]> for Pose {
    fn from(v: [f64; 6]) -> Self {
        Pose::from_array(v)
    }
}

impl From<Pose> for [f64; 6] {
    fn from(p: Pose) -> Self {
        p.to_array()
    }
}

impl TypedValue for Pose {
    type Wire = wire::VECTOR6D;
    #[inline]
    fn from_raw(raw: [f64; 6]) -> Self {
        Pose::from_array(raw)
    }
    #[inline]
    fn to_raw(&self) -> [f64; 6] {
        self.to_array()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn identity_and_half_turns() {
        assert_eq!(Pose::default().to_quaternion(), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(
            Pose::default().to_rotation_matrix(),
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        );
        let half_x = Pose::new(0.0, 0.0, 0.0, std::f64::consts::PI, 0.0, 0.0);
        let q = half_x.to_quaternion();
        assert!(close(q[0], 0.0) && close(q[1], 1.0));
        let m = half_x.to_rotation_matrix();
        assert!(close(m[1][1], -1.0) && close(m[2][2], -1.0) && close(m[0][0], 1.0));
    }

    #[test]
    fn matrices_are_orthonormal_and_quaternions_unit() {
        for v in [[0.3, -1.2, 2.0], [1e-9, 0.0, -1e-9], [0.0, 3.0, 0.1]] {
            let p = Pose::new(1.0, 2.0, 3.0, v[0], v[1], v[2]);
            let q = p.to_quaternion();
            assert!(close(q.iter().map(|c| c * c).sum::<f64>(), 1.0));
            let m = p.to_rotation_matrix();
            for i in 0..3 {
                for j in 0..3 {
                    let dot: f64 = (0..3).map(|k| m[i][k] * m[j][k]).sum();
                    assert!(close(dot, f64::from(u8::from(i == j))), "{v:?} {i}{j}");
                }
            }
            // The rotation axis is fixed by the matrix.
            let axis = p.rotation_vector();
            let turned: Vec<f64> = (0..3)
                .map(|i| (0..3).map(|k| m[i][k] * axis[k]).sum())
                .collect();
            for i in 0..3 {
                assert!((turned[i] - axis[i]).abs() < 1e-9);
            }
        }
        let p = Pose::from_array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(<[f64; 6]>::from(p), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(p.position(), [1.0, 2.0, 3.0]);
    }
}
