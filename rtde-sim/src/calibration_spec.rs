//! A calibration named on a command line or in Python: `random:SEED`, or a file.

use rtde_kinematics::Calibration;

/// The calibration `spec` names: `random:SEED` (or `random`, seed 0) for one drawn within
/// [`TOLERANCE`](rtde_kinematics::TOLERANCE), anything else the path of a calibration file
/// (see [`Calibration`]'s `FromStr`).
///
/// # Errors
/// A seed that is no whole number, a file that cannot be read, or one that does not parse;
/// the message names it.
///
/// ```
/// use rtde_sim::{Calibration, calibration_of};
///
/// assert_eq!(calibration_of("random:7"), Ok(Calibration::random(7)));
/// assert!(calibration_of("random:x").unwrap_err().contains("not a seed"));
/// assert!(calibration_of("/nonexistent.cal").unwrap_err().contains("cannot read"));
/// ```
pub fn calibration_of(spec: &str) -> Result<Calibration, String> {
    if let Some(seed) = spec.strip_prefix("random") {
        let seed = match seed.strip_prefix(':') {
            Some(n) => n
                .parse()
                .map_err(|_| format!("`{n}` is not a seed (random:SEED, SEED a whole number)"))?,
            None if seed.is_empty() => 0,
            None => return Err(format!("`{spec}`: write random:SEED")),
        };
        return Ok(Calibration::random(seed));
    }
    let text = std::fs::read_to_string(spec)
        .map_err(|e| format!("cannot read the calibration file {spec}: {e}"))?;
    text.parse().map_err(|e| format!("{spec}: {e}"))
}
