//! When a package happened by the host's clock: the mapping from the controller's clock
//! (`timestamp`, seconds since it started) to the host's (microseconds since the Unix epoch).
//!
//! The mapping is taken once per connection, at its first package: the host's clock when
//! that package arrived, `t0`, and its `timestamp`, `T0`. A later package of timestamp `Tn`
//! happened at host time `t0 + (Tn − T0)`: the controller's clock, which does not jitter,
//! spaces the packages, and the host's places them. The MQTT bridge's batches carry it,
//! and the MCAP recordings stamp each message's log time with it.
//!
//! ```
//! use rtde_record::host_time::HostTime;
//!
//! let mapping = HostTime { t0_unix_us: 1_764_576_000_000_000, t0_timestamp: 100.0 };
//! assert_eq!(mapping.host_time_us(100.25), Some(1_764_576_000_250_000));
//! ```

/// The mapping of one connection: the host time `t0_unix_us` at which the package of
/// controller time `t0_timestamp` arrived.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTime {
    /// Host time (µs since the Unix epoch) when the package of `t0_timestamp` arrived.
    pub t0_unix_us: i64,
    /// The controller `timestamp` the host time `t0_unix_us` belongs to.
    pub t0_timestamp: f64,
}

impl HostTime {
    /// The host time of the package of controller time `timestamp`: `t0 + (Tn − T0)`, µs
    /// since the Unix epoch; `None` when it is out of range (a timestamp that is no number).
    #[must_use]
    pub fn host_time_us(&self, timestamp: f64) -> Option<i64> {
        let offset = ((timestamp - self.t0_timestamp) * 1e6).round();
        if !offset.is_finite() || offset.abs() >= 9.2e18 {
            return None;
        }
        // Finite and inside i64 (checked above).
        #[allow(clippy::cast_possible_truncation)]
        let offset = offset as i64;
        self.t0_unix_us.checked_add(offset)
    }
}

/// The host's clock now, in microseconds since the Unix epoch (0 before it): the arrival
/// time a recorder gives each package.
///
/// ```
/// assert!(rtde_record::host_time::now_unix_us() > 1_700_000_000_000_000);
/// ```
#[must_use]
pub fn now_unix_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
