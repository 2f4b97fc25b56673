//! A Cartesian pose: position and rotation vector, as UR controllers report TCP poses.

use super::TypedValue;
use crate::rotation::{self, Quaternion};
use crate::wire;

/// A pose `(x, y, z, rx, ry, rz)`: position in metres and orientation as a rotation vector
/// (axis times angle, in radians), the layout of `actual_TCP_pose`, `target_TCP_pose` and
/// `tcp_offset` (`VECTOR6D`).
///
/// ```
/// use rtde_core::Pose;
///
/// let p = Pose::new(0.1, 0.2, 0.3, 0.0, 0.0, std::f64::consts::FRAC_PI_2);
/// let q = p.to_quaternion();
/// assert!((q.w - q.z).abs() < 1e-12 && q.x == 0.0 && q.y == 0.0);
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

    /// The orientation as a unit quaternion (with `w >= 0`); its components are named,
    /// and [`Quaternion::to_xyzw`] gives ROS' and Foxglove's order.
    #[must_use]
    pub fn to_quaternion(self) -> Quaternion {
        Quaternion::from_rotation_vector(self.rotation_vector())
    }

    /// The orientation as a rotation matrix, rows first: `m[row][column]`.
    #[must_use]
    pub fn to_rotation_matrix(self) -> [[f64; 3]; 3] {
        rotation::matrix_of_rotation_vector(self.rotation_vector())
    }
}

impl Pose {
    /// The same pose with the rotation vector that is nearest `previous` among those that
    /// describe its orientation.
    ///
    /// A rotation by `θ` about the unit axis `u` is also a rotation by `θ + 2πk` about
    /// `u`, for every whole `k`: `r` and `-r·(2π - |r|)/|r|` are the same orientation.
    /// Controllers report the one with `|r| ≤ π`, so a series that turns through `π` jumps
    /// from `r` to nearly `-r` between two samples. Passing each sample the one before it,
    /// already unwrapped, makes the series continuous. A rotation vector near zero, whose
    /// axis is undefined, takes the axis of `previous`; values that are not finite, in
    /// `self` or `previous`, leave the pose as it is.
    ///
    /// ```
    /// use rtde_core::Pose;
    ///
    /// // 3.14 rad about z, then 3.15 rad, which the controller reports as -3.133 rad.
    /// let before = Pose::new(0.0, 0.0, 0.0, 0.0, 0.0, 3.14);
    /// let after = Pose::new(0.0, 0.0, 0.0, 0.0, 0.0, 3.15 - 2.0 * std::f64::consts::PI);
    /// let unwrapped = after.unwrapped_near(before.rotation_vector());
    /// assert!((unwrapped.rz - 3.15).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn unwrapped_near(self, previous: [f64; 3]) -> Pose {
        use std::f64::consts::TAU;
        let r = self.rotation_vector();
        if !r.iter().chain(&previous).all(|c| c.is_finite()) {
            return self;
        }
        let length = |v: [f64; 3]| v.iter().map(|c| c * c).sum::<f64>().sqrt();
        let angle = length(r);
        let (axis, angle) = if angle > 1e-12 {
            (r.map(|c| c / angle), angle)
        } else {
            // The identity: 2πk about any axis; the previous one's is the continuous choice.
            let along = length(previous);
            if along <= 1e-12 {
                return self;
            }
            (previous.map(|c| c / along), 0.0)
        };
        let along: f64 = (0..3).map(|i| previous[i] * axis[i]).sum();
        let turns = ((along - angle) / TAU).round();
        let [rx, ry, rz] = axis.map(|c| c * (angle + turns * TAU));
        Pose { rx, ry, rz, ..self }
    }
}

impl Pose {
    /// Whether the field `name` (its canonical name) holds a pose, for programs that handle
    /// fields by name (as `rtde plot` does, to unwrap their rotation vectors). The fields
    /// are those of the registry's typed-value table that [`Pose`] carries.
    ///
    /// ```
    /// assert!(rtde_core::Pose::describes("actual_TCP_pose"));
    /// assert!(!rtde_core::Pose::describes("actual_TCP_speed"));
    /// ```
    #[must_use]
    pub fn describes(name: &str) -> bool {
        rtde_fields::typed_value(name) == Some("Pose")
    }
}

impl From<[f64; 6]> for Pose {
    fn from(v: [f64; 6]) -> Self {
        Pose::from_array(v)
    }
}

/// So that a function taking `impl Into<Pose>` keeps taking `&[f64; 6]`, as it took before
/// it took a `Pose`.
impl From<&[f64; 6]> for Pose {
    fn from(v: &[f64; 6]) -> Self {
        Pose::from_array(*v)
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
        assert_eq!(Pose::default().to_quaternion(), Quaternion::IDENTITY);
        assert_eq!(
            Pose::default().to_rotation_matrix(),
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        );
        let half_x = Pose::new(0.0, 0.0, 0.0, std::f64::consts::PI, 0.0, 0.0);
        let q = half_x.to_quaternion();
        assert!(close(q.w, 0.0) && close(q.x, 1.0));
        let m = half_x.to_rotation_matrix();
        assert!(close(m[1][1], -1.0) && close(m[2][2], -1.0) && close(m[0][0], 1.0));
    }

    /// Rotations by `angle` about the unit `axis`, as the controller reports them: the
    /// vector with `|r| <= π`.
    fn reported(axis: [f64; 3], angles: impl Iterator<Item = f64>) -> Vec<Pose> {
        use std::f64::consts::{PI, TAU};
        angles
            .map(|a| {
                let a = (a + PI).rem_euclid(TAU) - PI;
                Pose::new(1.0, 2.0, 3.0, axis[0] * a, axis[1] * a, axis[2] * a)
            })
            .collect()
    }

    /// Each pose unwrapped near the one before it, unwrapped.
    fn unwrap(poses: &[Pose]) -> Vec<Pose> {
        let mut out: Vec<Pose> = Vec::new();
        for &p in poses {
            out.push(match out.last() {
                Some(prev) => p.unwrapped_near(prev.rotation_vector()),
                None => p,
            });
        }
        out
    }

    fn largest_step(poses: &[Pose]) -> f64 {
        poses
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0].rotation_vector(), w[1].rotation_vector());
                (0..3).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max)
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_rotation_through_pi_stays_continuous() {
        let axis = [0.6, 0.0, 0.8];
        // 2.9 to 3.5 rad: the reported vector flips from about +3.1·axis to -3.1·axis.
        let raw = reported(axis, (0..61).map(|i| 2.9 + 0.01 * f64::from(i)));
        assert!(largest_step(&raw) > 4.0, "the input flips");
        let unwrapped = unwrap(&raw);
        assert!(
            largest_step(&unwrapped) < 0.011,
            "{}",
            largest_step(&unwrapped)
        );
        for (i, p) in unwrapped.iter().enumerate() {
            let angle = 2.9 + 0.01 * f64::from(u8::try_from(i).unwrap());
            assert!(close(p.rz, 0.8 * angle), "{i}: {p:?}");
            assert_eq!(p.position(), [1.0, 2.0, 3.0]);
            // The same orientation as the reported pose.
            let (a, b) = (p.to_rotation_matrix(), raw[i].to_rotation_matrix());
            for r in 0..3 {
                for c in 0..3 {
                    assert!((a[r][c] - b[r][c]).abs() < 1e-9);
                }
            }
        }
        // Several turns: it keeps counting.
        let raw = reported(axis, (0..400).map(|i| 0.1 * f64::from(i)));
        let unwrapped = unwrap(&raw);
        assert!(largest_step(&unwrapped) < 0.11);
        assert!(close(unwrapped[399].angle(), 39.9));
    }

    #[test]
    fn a_fast_rotation_that_does_not_flip_is_left_alone() {
        // 1 rad a sample, back and forth between -2.5 and 2.5 rad: large steps, no flip.
        let raw = reported(
            [0.0, 1.0, 0.0],
            [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.5, 0.5, -0.5].into_iter(),
        );
        assert_eq!(unwrap(&raw), raw);
    }

    #[test]
    fn unwrapping_near_zero_and_pi_gives_numbers() {
        use std::f64::consts::PI;
        let zero = Pose::new(1.0, 2.0, 3.0, 0.0, 0.0, 0.0);
        assert_eq!(zero.unwrapped_near([0.0; 3]), zero);
        assert_eq!(zero.unwrapped_near([0.0, 0.0, 0.1]), zero);
        // After a full turn about z, the identity is one more full turn.
        let turned = zero.unwrapped_near([0.0, 0.0, 6.2]);
        assert!(close(turned.rz, 2.0 * PI) && turned.rx == 0.0, "{turned:?}");
        let tiny = Pose::new(0.0, 0.0, 0.0, 1e-300, 0.0, 0.0);
        assert_eq!(tiny.unwrapped_near([1e-300, 0.0, 0.0]), tiny);
        // π about x is also -π about x: whichever is nearer.
        let half = Pose::new(0.0, 0.0, 0.0, PI, 0.0, 0.0);
        assert!(close(half.unwrapped_near([-3.1, 0.0, 0.0]).rx, -PI));
        assert!(close(half.unwrapped_near([3.1, 0.0, 0.0]).rx, PI));
        for previous in [[0.0; 3], [PI, 0.0, 0.0], [1e-300; 3], [-PI, 1e-9, 0.0]] {
            for p in [zero, tiny, half] {
                let u = p.unwrapped_near(previous);
                assert!(
                    u.to_array().iter().all(|c| c.is_finite()),
                    "{p:?} {previous:?}"
                );
            }
        }
        let nan = Pose::new(0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0);
        assert!(nan.unwrapped_near([1.0, 0.0, 0.0]).rx.is_nan());
        assert_eq!(half.unwrapped_near([f64::NAN, 0.0, 0.0]), half);
        assert_eq!(half.unwrapped_near([f64::INFINITY, 0.0, 0.0]), half);
    }

    #[test]
    fn matrices_are_orthonormal_and_quaternions_unit() {
        for v in [[0.3, -1.2, 2.0], [1e-9, 0.0, -1e-9], [0.0, 3.0, 0.1]] {
            let p = Pose::new(1.0, 2.0, 3.0, v[0], v[1], v[2]);
            let q = p.to_quaternion();
            assert!(close(q.to_xyzw().iter().map(|c| c * c).sum::<f64>(), 1.0));
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
