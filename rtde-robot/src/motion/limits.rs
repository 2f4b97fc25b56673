//! The checks made before anything is sent: each value against its limit, in one table.
//!
//! | quantity | limit | source |
//! | --- | --- | --- |
//! | joint position | ±2π rad | UR's joint ranges (±360° on every joint of the e-Series and CB3 arms) |
//! | joint speed | π rad/s | the e-Series' large joints (180°/s); the smaller wrists allow more, this check does not |
//! | joint acceleration | 40 rad/s² | the largest `movej`/`speedj` acceleration ur_rtde accepts |
//! | tool speed | 3 m/s | ur_rtde's checked range (below the 5 m/s safety tool speed limit) |
//! | tool acceleration | 150 m/s² | ur_rtde's checked range |
//! | blend radius | 0 to 2 m | no blend reaches beyond the arm (a UR10e reaches 1.3 m) |
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
        write!(f, " = {} {}", self.value, l.unit)?;
        if !self.value.is_finite() {
            return write!(f, " is not a finite number");
        }
        if l.min_excluded && self.value == l.min {
            return write!(f, " is refused: it must be above {} {}", l.min, l.unit);
        }
        let above = if l.min_excluded { "above " } else { "" };
        write!(f, " is outside {above}{} to {} {}", l.min, l.max, l.unit)
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
            "joint position [1] = 7 rad is outside -6.283185307179586 to 6.283185307179586 rad"
        );
    }
}
