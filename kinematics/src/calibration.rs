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

/// The names of a calibration file's lines, in the order [`Calibration`]'s `Display`
/// writes them.
const LINES: [&str; 4] = ["delta_a", "delta_d", "delta_alpha", "delta_theta"];

impl Calibration {
    fn line_mut(&mut self, name: &str) -> Option<&mut [f64; 6]> {
        match name {
            "delta_a" => Some(&mut self.delta_a),
            "delta_d" => Some(&mut self.delta_d),
            "delta_alpha" => Some(&mut self.delta_alpha),
            "delta_theta" => Some(&mut self.delta_theta),
            _ => None,
        }
    }

    fn line(&self, name: &str) -> [f64; 6] {
        let mut copy = *self;
        copy.line_mut(name).map_or([0.0; 6], |l| *l)
    }
}

/// A calibration as a text file: a line `NAME = six numbers` for each of `delta_a`,
/// `delta_d` (metres), `delta_alpha` and `delta_theta` (radians), joints 1 to 6;
/// `#` starts a comment, a line left out is all zeros.
///
/// ```
/// use rtde_kinematics::Calibration;
///
/// let text = "# arm 2024-0001\ndelta_a = 0 0.0012 -0.0008 0 0 0\ndelta_theta = 1e-4, 0, 0, 0, 0, -2e-4\n";
/// let calibration: Calibration = text.parse().unwrap();
/// assert_eq!(calibration.delta_a[1], 0.0012);
/// assert_eq!(calibration.delta_theta[5], -2e-4);
/// assert_eq!(calibration.delta_d, [0.0; 6]);
/// // Written out, it reads back the same.
/// assert_eq!(calibration.to_string().parse::<Calibration>(), Ok(calibration));
/// assert!("delta_b = 1 2 3 4 5 6".parse::<Calibration>().unwrap_err().contains("line 1"));
/// ```
impl std::str::FromStr for Calibration {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut calibration = Calibration::default();
        for (n, line) in text.lines().enumerate() {
            let content = line.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let at = |why: String| format!("line {}: {why}", n + 1);
            let (name, values) = content
                .split_once('=')
                .ok_or_else(|| at(format!("`{content}` is not NAME = six numbers")))?;
            let name = name.trim();
            let slot = calibration
                .line_mut(name)
                .ok_or_else(|| at(format!("`{name}` is none of {}", LINES.join(", "))))?;
            let numbers: Vec<f64> = values
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    w.parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| at(format!("`{w}` is not a finite number")))
                })
                .collect::<Result<_, _>>()?;
            *slot = numbers
                .try_into()
                .map_err(|v: Vec<f64>| at(format!("{name} has {} numbers, not 6", v.len())))?;
        }
        Ok(calibration)
    }
}

impl std::fmt::Display for Calibration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "# DH deltas, joints 1 to 6: a and d in metres, alpha and theta in radians"
        )?;
        for name in LINES {
            let values: Vec<String> = self.line(name).iter().map(|v| format!("{v:e}")).collect();
            writeln!(f, "{name} = {}", values.join(" "))?;
        }
        Ok(())
    }
}
