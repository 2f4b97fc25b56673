//! Joint tracking within the arm's limits: how a servo target (`servoj`) is followed, and
//! the joint speed that bounds a jump of the inverse kinematics on a line.

/// Joint velocity limit of the tracking, rad/s (`servoj` follows the controller's own
/// joint limits; this is a UR5e's wrist speed).
pub const MAX_JOINT_SPEED: f64 = std::f64::consts::PI;

/// Joint acceleration limit of the tracking and of the stop, rad/s².
pub const MAX_JOINT_ACCELERATION: f64 = 40.0;

/// Moves joints at `q` with velocities `qd` one tick toward `setpoint` (to rest when
/// `None`) within [`MAX_JOINT_SPEED`] and [`MAX_JOINT_ACCELERATION`].
pub(crate) fn track(q: &mut [f64; 6], qd: &mut [f64; 6], setpoint: Option<&[f64; 6]>, dt: f64) {
    for j in 0..6 {
        let desired = match setpoint {
            None => 0.0,
            Some(setpoint) => {
                let e = setpoint[j] - q[j];
                // The fastest speed from which the joint can still brake onto the setpoint.
                let braking = (2.0 * MAX_JOINT_ACCELERATION * e.abs()).sqrt();
                e.signum() * (e.abs() / dt).min(braking).min(MAX_JOINT_SPEED)
            }
        };
        let dv = MAX_JOINT_ACCELERATION * dt;
        qd[j] += (desired - qd[j]).clamp(-dv, dv);
        q[j] += qd[j] * dt;
    }
}
