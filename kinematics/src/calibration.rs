//! A particular arm's calibration: the deltas to its model's nominal DH table that the
//! factory measured, which the controller publishes (the primary interface's kinematics
//! info carries the table with them applied) and computes its poses with.

use crate::Arm;

/// How far a calibration's deltas go, in the random calibrations the simulator draws:
/// `(metres for a and d, radians for alpha and theta)`. Universal Robots publishes no
/// tolerance; real arms differ from their nominal tables by up to millimetres, so the
/// simulator draws within 2 mm and 2 mrad.
pub const TOLERANCE: (f64, f64) = (2e-3, 2e-3);

/// Deltas to each of an arm's DH parameters, joint by joint.
///
/// ```
/// use rtde_kinematics::{Arm, Calibration};
///
/// let calibration = Calibration::random(7);
/// let arm = Arm::UR5E.calibrated(&calibration);
/// let back = Calibration::between(&Arm::UR5E, &arm);
/// assert!((back.delta_a[1] - calibration.delta_a[1]).abs() < 1e-15);
/// // The same joints put the calibrated flange elsewhere, by up to millimetres.
/// let q = [0.3, -1.2, 1.4, -1.7, -1.5, 0.2];
/// let (a, b) = (Arm::UR5E.tcp_pose(&q), arm.tcp_pose(&q));
/// let moved = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
/// assert!(moved > 1e-4 && moved < 2e-2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Calibration {
    /// Deltas to the link lengths `a`, in metres.
    pub delta_a: [f64; 6],
    /// Deltas to the link offsets `d`, in metres.
    pub delta_d: [f64; 6],
    /// Deltas to the link twists `alpha`, in radians.
    pub delta_alpha: [f64; 6],
    /// Deltas to the joint angle offsets `theta`, in radians.
    pub delta_theta: [f64; 6],
}

impl Calibration {
    /// A calibration drawn from `seed`, every delta uniform within [`TOLERANCE`]: the same
    /// seed gives the same calibration.
    #[must_use]
    pub fn random(seed: u64) -> Self {
        let mut state = seed;
        let mut next = |scale: f64| {
            // SplitMix64: small, and the same on every platform.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            #[allow(clippy::cast_precision_loss)] // 53 bits into the mantissa
            let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
            (unit * 2.0 - 1.0) * scale
        };
        let (length, angle) = TOLERANCE;
        Calibration {
            delta_a: std::array::from_fn(|_| next(length)),
            delta_d: std::array::from_fn(|_| next(length)),
            delta_alpha: std::array::from_fn(|_| next(angle)),
            delta_theta: std::array::from_fn(|_| next(angle)),
        }
    }

    /// The deltas that take `nominal`'s table to `calibrated`'s.
    #[must_use]
    pub fn between(nominal: &Arm, calibrated: &Arm) -> Self {
        let delta = |a: &[f64; 6], b: &[f64; 6]| std::array::from_fn(|i| b[i] - a[i]);
        Calibration {
            delta_a: delta(&nominal.a, &calibrated.a),
            delta_d: delta(&nominal.d, &calibrated.d),
            delta_alpha: delta(&nominal.alpha, &calibrated.alpha),
            delta_theta: delta(&nominal.theta, &calibrated.theta),
        }
    }
}

impl Arm {
    /// This arm with `calibration`'s deltas added to its table.
    #[must_use]
    pub fn calibrated(&self, calibration: &Calibration) -> Arm {
        let add = |a: &[f64; 6], d: &[f64; 6]| std::array::from_fn(|i| a[i] + d[i]);
        Arm {
            name: self.name,
            a: add(&self.a, &calibration.delta_a),
            d: add(&self.d, &calibration.delta_d),
            alpha: add(&self.alpha, &calibration.delta_alpha),
            theta: add(&self.theta, &calibration.delta_theta),
        }
    }

    /// This model with the table a controller computes with: the primary interface's
    /// kinematics info gives it whole, calibration applied.
    #[must_use]
    pub fn with_dh(&self, a: [f64; 6], d: [f64; 6], alpha: [f64; 6], theta: [f64; 6]) -> Arm {
        Arm {
            name: self.name,
            a,
            d,
            alpha,
            theta,
        }
    }
}
