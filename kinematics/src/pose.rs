//! Poses as RTDE carries them, `[x, y, z, rx, ry, rz]` (a position and a rotation vector),
//! composed and inverted as rigid transforms: a tool offset is applied to a flange pose
//! this way, as URScript's `pose_trans` and `pose_inv` do.

use rtde_core::rotation::{matrix_of_rotation_vector, rotation_vector_of_matrix};

use crate::{mul3, mul3v, transpose3};

/// The rotation matrix and position of a pose `[x, y, z, rx, ry, rz]`.
///
/// ```
/// let (r, p) = rtde_kinematics::matrix_of(&[0.1, 0.2, 0.3, 0.0, 0.0, std::f64::consts::FRAC_PI_2]);
/// assert_eq!(p, [0.1, 0.2, 0.3]);
/// assert!((r[1][0] - 1.0).abs() < 1e-12); // x turned onto y
/// ```
#[must_use]
pub fn matrix_of(pose: &[f64; 6]) -> ([[f64; 3]; 3], [f64; 3]) {
    (
        matrix_of_rotation_vector([pose[3], pose[4], pose[5]]),
        [pose[0], pose[1], pose[2]],
    )
}

/// The pose `[x, y, z, rx, ry, rz]` of a rotation matrix and a position.
#[must_use]
pub fn pose_of(r: &[[f64; 3]; 3], p: &[f64; 3]) -> [f64; 6] {
    let v = rotation_vector_of_matrix(r);
    [p[0], p[1], p[2], v[0], v[1], v[2]]
}

/// `a` followed by `b` expressed in `a`'s frame (URScript's `pose_trans(a, b)`): the TCP
/// pose of flange pose `a` with tool offset `b`.
///
/// ```
/// use rtde_kinematics::{compose, invert};
/// let flange = [0.3, -0.2, 0.4, 0.1, 3.0, 0.2];
/// let tool = [0.0, 0.0, 0.1, 0.0, 0.0, 0.0];
/// let back = compose(&compose(&flange, &tool), &invert(&tool));
/// assert!(back.iter().zip(&flange).all(|(a, b)| (a - b).abs() < 1e-12));
/// ```
#[must_use]
pub fn compose(a: &[f64; 6], b: &[f64; 6]) -> [f64; 6] {
    let (ra, pa) = matrix_of(a);
    let (rb, pb) = matrix_of(b);
    let moved = mul3v(&ra, &pb);
    pose_of(
        &mul3(&ra, &rb),
        &[pa[0] + moved[0], pa[1] + moved[1], pa[2] + moved[2]],
    )
}

/// The inverse transform of `a` (URScript's `pose_inv`).
#[must_use]
pub fn invert(a: &[f64; 6]) -> [f64; 6] {
    let (r, p) = matrix_of(a);
    let rt = transpose3(&r);
    let back = mul3v(&rt, &p);
    pose_of(&rt, &[-back[0], -back[1], -back[2]])
}
