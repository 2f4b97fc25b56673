//! Each link's frame relative to the one before: what a viewer needs to draw the arm
//! (Foxglove's `FrameTransforms`, a ROS `tf` tree).

use rtde_core::rotation::Quaternion;

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

/// One link's frame in its parent's: a translation, then a rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkFrame {
    /// Where the frame's origin is in the parent's, in metres.
    pub translation: [f64; 3],
    /// The frame's orientation in the parent's (`w >= 0`).
    pub rotation: Quaternion,
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
    /// assert!((frames[0].rotation.x - half).abs() < 1e-12 && (frames[0].rotation.w - half).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn link_frames(&self, q: &[f64; 6]) -> [LinkFrame; 6] {
        std::array::from_fn(|i| {
            let t = self.link(q, i);
            LinkFrame {
                translation: t.p,
                rotation: Quaternion::from_matrix(&t.r),
            }
        })
    }
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
                    r = mul3(&r, &f.rotation.to_matrix());
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
}
