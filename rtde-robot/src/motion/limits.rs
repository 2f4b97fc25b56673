//! The checks made before anything is sent: each value against its limit, in one table.
//!
//! | quantity | limit | source |
//! | --- | --- | --- |
//! | joint position | ±2π rad | UR's joint ranges (±360° on every joint of the e-Series and CB3 arms) |
//! | joint speed | π rad/s | the e-Series' large joints (180°/s); the smaller wrists allow more, this check does not |
//! | joint acceleration | 40 rad/s² | the largest `movej`/`speedj` acceleration ur_rtde accepts |
//! | tool speed | 3 m/s | ur_rtde's checked range (below the 5 m/s safety tool speed limit) |
//! | tool acceleration | 150 m/s² | ur_rtde's checked range |
//! | blend radius | 0 to 2 m, and at most half of each neighbouring segment of a path | no blend reaches beyond the arm (a UR10e reaches 1.3 m); blends must not overlap ([`check_blends`]) |
//! | servo lookahead time | 0.03 to 0.2 s | URScript `servoj` |
//! | servo gain | 100 to 2000 | URScript `servoj` |
//! | payload mass | 0 to 35 kg | the largest UR arm's payload (UR30) |
//! | force mode type | 1, 2 or 3 | URScript `force_mode` |
//!
//! Every value must be finite; an acceleration or a speed of 0 is refused (the robot would
//! never arrive, or never start).

use std::f64::consts::{PI, TAU};
use std::fmt;

/// A value the motion API refused to send, and the limit it broke.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refusal {
    /// The limit.
    pub limit: Limit,
    /// The value given.
    pub value: f64,
    /// Its place in the vector, for a vector.
    pub index: Option<usize>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.limit;
        write!(f, "{}", l.quantity)?;
        if let Some(i) = self.index {
            write!(f, " [{i}]")?;
        }
        write!(f, " = {}{}", self.value, with_unit(l.unit))?;
        if !self.value.is_finite() {
            return write!(f, " is not a finite number");
        }
        write!(f, " is refused: it must be {l}")
    }
}

/// ` unit`, or nothing for a quantity without one.
fn with_unit(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// A limit as a reader writes it: multiples of π as such (`2π`, `π/2`), other numbers to
/// six significant digits.
fn readable(x: f64) -> String {
    for (k, name) in [(2.0, "2π"), (1.0, "π"), (0.5, "π/2"), (0.25, "π/4")] {
        if (x.abs() - k * PI).abs() <= 1e-12 * k * PI {
            return if x < 0.0 {
                format!("-{name}")
            } else {
                name.to_owned()
            };
        }
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    // Six significant digits, without the zeros a fixed format would trail.
    #[allow(clippy::cast_possible_truncation)] // a decimal exponent
    let digits = (5 - x.abs().log10().floor() as i32).max(0);
    let text = format!("{x:.*}", usize::try_from(digits).unwrap_or(0));
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// The range a value must be in: `> 0 and ≤ 3 m/s`, `within -2π..2π rad`.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = with_unit(self.unit);
        if self.min_excluded {
            write!(
                f,
                "> {} and ≤ {}{unit}",
                readable(self.min),
                readable(self.max)
            )
        } else {
            write!(
                f,
                "within {}..{}{unit}",
                readable(self.min),
                readable(self.max)
            )
        }
    }
}

impl std::error::Error for Refusal {}

/// A quantity with its limit: the checks' one table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// What the value is, as the error names it ("joint speed").
    pub quantity: &'static str,
    /// The unit, as the error prints it.
    pub unit: &'static str,
    /// The smallest value allowed.
    pub min: f64,
    /// The largest value allowed.
    pub max: f64,
    /// Whether the minimum itself is refused (a speed or an acceleration of 0).
    pub min_excluded: bool,
}

impl Limit {
    const fn new(quantity: &'static str, unit: &'static str, min: f64, max: f64) -> Limit {
        Limit {
            quantity,
            unit,
            min,
            max,
            min_excluded: false,
        }
    }

    const fn positive(quantity: &'static str, unit: &'static str, max: f64) -> Limit {
        Limit {
            quantity,
            unit,
            min: 0.0,
            max,
            min_excluded: true,
        }
    }

    /// Checks `value` (element `index` of a vector, if any).
    ///
    /// # Errors
    /// A [`Refusal`] naming the value and this limit.
    pub fn check(&self, value: f64, index: Option<usize>) -> Result<(), Refusal> {
        let ok = value.is_finite()
            && value <= self.max
            && if self.min_excluded {
                value > self.min
            } else {
                value >= self.min
            };
        if ok {
            Ok(())
        } else {
            Err(Refusal {
                limit: *self,
                value,
                index,
            })
        }
    }

    /// Checks every element of `values`.
    ///
    /// # Errors
    /// A [`Refusal`] naming the first value out of range and this limit.
    pub fn check_all(&self, values: &[f64]) -> Result<(), Refusal> {
        values
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| self.check(*v, Some(i)))
    }
}

/// A path's blends against its segments: each waypoint's blend radius at most half of the
/// segment before it and of the one after it (the last waypoint's, of the one before), as
/// a controller requires for blends that do not overlap. `start` is where the path starts
/// (the TCP's position now); `points` are the waypoints' TCP positions and blend radii.
///
/// # Errors
/// A [`BlendRefusal`] naming the first waypoint whose blend overlaps a neighbour's.
///
/// ```
/// use rtde_robot::motion::limits::check_blends;
///
/// let start = [0.0, 0.0, 0.0];
/// // Segments of 0.2 m: a blend of 0.1 m fits, 0.15 m does not.
/// let fits = [([0.2, 0.0, 0.0], 0.1), ([0.4, 0.0, 0.0], 0.0)];
/// assert!(check_blends(start, &fits).is_ok());
/// let overlaps = [([0.2, 0.0, 0.0], 0.15), ([0.4, 0.0, 0.0], 0.0)];
/// let refusal = check_blends(start, &overlaps).unwrap_err();
/// assert_eq!(
///     refusal.to_string(),
///     "blend radius [0] = 0.15 m is refused: it must be ≤ 0.1 m, half of the 0.2 m segment before it"
/// );
/// ```
pub fn check_blends(start: [f64; 3], points: &[([f64; 3], f64)]) -> Result<(), BlendRefusal> {
    let distance = |a: &[f64; 3], b: &[f64; 3]| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let mut previous = start;
    for (i, (point, blend)) in points.iter().enumerate() {
        if *blend > 0.0 {
            let before = distance(&previous, point);
            let after = points.get(i + 1).map(|(next, _)| distance(point, next));
            let (segment, side) = match after {
                Some(after) if after < before => (after, "after"),
                _ => (before, "before"),
            };
            if *blend > segment / 2.0 {
                return Err(BlendRefusal {
                    index: i,
                    blend: *blend,
                    segment,
                    side,
                });
            }
        }
        previous = *point;
    }
    Ok(())
}

/// A blend radius that overlaps a neighbouring waypoint's: see [`check_blends`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlendRefusal {
    /// The waypoint's place in the path.
    pub index: usize,
    /// Its blend radius, m.
    pub blend: f64,
    /// The shorter neighbouring segment, m.
    pub segment: f64,
    /// Which segment: "before" or "after" the waypoint.
    pub side: &'static str,
}

impl fmt::Display for BlendRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "blend radius [{}] = {} m is refused: it must be ≤ {} m, half of the {} m segment {} it",
            self.index,
            self.blend,
            readable(self.segment / 2.0),
            readable(self.segment),
            self.side
        )
    }
}

impl std::error::Error for BlendRefusal {}

/// Joint positions, rad.
pub const JOINT_POSITION: Limit = Limit::new("joint position", "rad", -TAU, TAU);
/// Joint speed of a move, rad/s.
pub const JOINT_SPEED: Limit = Limit::positive("joint speed", "rad/s", PI);
/// Joint speeds of `speed_j`, rad/s (either sign, zero allowed).
pub const JOINT_VELOCITY: Limit = Limit::new("joint velocity", "rad/s", -PI, PI);
/// Joint acceleration, rad/s².
pub const JOINT_ACCELERATION: Limit = Limit::positive("joint acceleration", "rad/s²", 40.0);
/// Tool speed of a move, m/s.
pub const TOOL_SPEED: Limit = Limit::positive("tool speed", "m/s", 3.0);
/// Tool velocity of `speed_l`, m/s or rad/s per component (either sign, zero allowed).
pub const TOOL_VELOCITY: Limit = Limit::new("tool velocity", "m/s", -3.0, 3.0);
/// Tool acceleration, m/s².
pub const TOOL_ACCELERATION: Limit = Limit::positive("tool acceleration", "m/s²", 150.0);
/// Blend radius, m.
pub const BLEND_RADIUS: Limit = Limit::new("blend radius", "m", 0.0, 2.0);
/// Pose components (position in m, rotation vector in rad): finite and within 2 m / 2π.
pub const POSE: Limit = Limit::new("pose component", "m or rad", -TAU, TAU);
/// `servoj`'s time, s.
pub const SERVO_TIME: Limit = Limit::positive("servo time", "s", 1.0);
/// `servoj`'s lookahead time, s.
pub const SERVO_LOOKAHEAD: Limit = Limit::new("servo lookahead time", "s", 0.03, 0.2);
/// `servoj`'s gain.
pub const SERVO_GAIN: Limit = Limit::new("servo gain", "", 100.0, 2000.0);
/// Payload mass, kg.
pub const PAYLOAD_MASS: Limit = Limit::new("payload mass", "kg", 0.0, 35.0);
/// Centre of gravity and TCP offset components, m.
pub const OFFSET: Limit = Limit::new("offset", "m", -2.0, 2.0);
/// Force mode wrench components, N or N·m.
pub const WRENCH: Limit = Limit::new("force mode wrench", "N or N·m", -1000.0, 1000.0);
/// Force mode limits (speeds on compliant axes, deviations on the others).
pub const FORCE_LIMITS: Limit = Limit::positive("force mode limit", "m/s or m", 10.0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_refuse_what_they_name() {
        assert!(JOINT_SPEED.check(0.0, None).is_err());
        assert!(JOINT_SPEED.check(PI, None).is_ok());
        assert!(JOINT_SPEED.check(f64::NAN, None).is_err());
        assert!(BLEND_RADIUS.check(0.0, None).is_ok());
        let e = JOINT_POSITION.check_all(&[0.0, 7.0]).unwrap_err();
        assert_eq!(e.index, Some(1));
        assert_eq!(
            e.to_string(),
            "joint position [1] = 7 rad is refused: it must be within -2π..2π rad"
        );
        let speed = JOINT_SPEED.check(4.0, None).unwrap_err();
        assert_eq!(
            speed.to_string(),
            "joint speed = 4 rad/s is refused: it must be > 0 and ≤ π rad/s"
        );
        let gain = SERVO_GAIN.check(50.0, None).unwrap_err();
        assert_eq!(
            gain.to_string(),
            "servo gain = 50 is refused: it must be within 100..2000"
        );
    }

    #[test]
    fn limits_read_as_people_write_them() {
        for (x, text) in [
            (TAU, "2π"),
            (-PI, "-π"),
            (PI / 2.0, "π/2"),
            (3.0, "3"),
            (0.03, "0.03"),
            (150.0, "150"),
            (2000.0, "2000"),
            (1.0 / 3.0, "0.333333"),
            (0.0, "0"),
        ] {
            assert_eq!(readable(x), text, "{x}");
        }
    }
}
