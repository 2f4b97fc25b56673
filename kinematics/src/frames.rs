//! Each link's frame relative to the one before: what a viewer needs to draw the arm
//! (Foxglove's `FrameTransforms`, a ROS `tf` tree).

use crate::Arm;

/// The names of the frames after each link, from the base out: `LINK_FRAMES[i]` is the
/// frame after link `i + 1`, child of `LINK_FRAMES[i - 1]` (of [`BASE_FRAME`] for the
/// first). The last is the tool flange.
pub const LINK_FRAMES: [&str; 6] = [
    "shoulder",
    "upper_arm",
    "forearm",
    "wrist_1",
    "wrist_2",
    "flange",
];

/// The frame the arm stands in: the parent of the first link's frame.
pub const BASE_FRAME: &str = "base";

/// One link's frame in its parent's: a translation, then a rotation as a unit quaternion
/// `[x, y, z, w]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkFrame {
    /// Where the frame's origin is in the parent's, in metres.
    pub translation: [f64; 3],
    /// The frame's orientation in the parent's: `[x, y, z, w]`, `w >= 0`.
    pub rotation: [f64; 4],
}

impl Arm {
    /// Each link's frame in its parent's for joint positions `q`, named by
    /// [`LINK_FRAMES`]: chained from [`BASE_FRAME`], they give the flange's pose
    /// [`Arm::tcp_pose`] reports.
    ///
    /// ```
    /// use rtde_kinematics::Arm;
    ///
    /// let frames = Arm::UR5E.link_frames(&[0.0; 6]);
    /// // The shoulder sits d1 above the base, turned a quarter about x.
    /// assert_eq!(frames[0].translation, [0.0, 0.0, 0.1625]);
    /// let half = std::f64::consts::FRAC_1_SQRT_2;
    /// assert!((frames[0].rotation[0] - half).abs() < 1e-12 && (frames[0].rotation[3] - half).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn link_frames(&self, q: &[f64; 6]) -> [LinkFrame; 6] {
        std::array::from_fn(|i| {
            let t = self.link(q, i);
            LinkFrame {
                translation: t.p,
                rotation: quaternion(&t.r),
            }
        })
    }
}

/// The unit quaternion `[x, y, z, w]` (with `w >= 0`) of a rotation matrix.
#[must_use]
pub fn quaternion(r: &[[f64; 3]; 3]) -> [f64; 4] {
    // From the largest of w, x, y, z, so that no division is by a small number.
    let trace = r[0][0] + r[1][1] + r[2][2];
    let q = if trace > 0.0 {
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
    if q[3] < 0.0 { q.map(|x| -x) } else { q }
}

/// The rotation matrix of a unit quaternion `[x, y, z, w]`.
#[must_use]
pub fn rotation_matrix(q: &[f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = *q;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Transform, mul3, mul3v};

    #[test]
    fn the_link_frames_chained_are_the_flange_pose() {
        let calibrated = Arm::ALL.map(|arm| arm.calibrated(&crate::Calibration::random(9)));
        for arm in Arm::ALL.into_iter().chain(calibrated) {
            for q in [
                [0.0; 6],
                [0.1, -1.2, 1.1, -1.5, -1.6, 0.3],
                [3.0, -3.0, 2.5, 2.0, -0.5, 6.0],
            ] {
                let (mut r, mut p) = (Transform::IDENTITY.r, [0.0; 3]);
                for f in arm.link_frames(&q) {
                    let moved = mul3v(&r, &f.translation);
                    p = std::array::from_fn(|i| p[i] + moved[i]);
                    r = mul3(&r, &rotation_matrix(&f.rotation));
                }
                let want = arm.tcp_rotation(&q);
                let pose = arm.tcp_pose(&q);
                for i in 0..3 {
                    assert!(
                        (p[i] - pose[i]).abs() < 1e-12,
                        "{}: {p:?} {pose:?}",
                        arm.name
                    );
                    for j in 0..3 {
                        assert!((r[i][j] - want[i][j]).abs() < 1e-12, "{}", arm.name);
                    }
                }
            }
        }
    }

    #[test]
    fn quaternions_are_unit_and_round_trip() {
        for q in [
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5, 0.5],
            [0.0, -0.6, 0.8, 0.0],
        ] {
            let back = quaternion(&rotation_matrix(&q));
            let same = q.iter().zip(&back).all(|(a, b)| (a - b).abs() < 1e-12);
            let opposite = q.iter().zip(&back).all(|(a, b)| (a + b).abs() < 1e-12);
            assert!(same || opposite, "{q:?} -> {back:?}");
        }
    }
}
