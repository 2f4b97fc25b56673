//! Which kinematics the motion layer computes with: the controller's calibrated arm,
//! read off its primary interface, or a nominal table.

use std::fmt;
use std::net::SocketAddr;

use rtde_kinematics::Arm;

use crate::primary::{Decoded, PrimaryClient, calibrated_arm};

/// The arm [`Robot`](super::Robot) computes poses with (`move_l` reach checks, inverse
/// and forward kinematics), and where it came from.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Kinematics {
    /// The controller's own: its model, with the calibrated table of its primary
    /// interface's kinematics info.
    Calibrated(Arm),
    /// A nominal table ([`MotionOptions::arm`](super::MotionOptions::arm)), because no
    /// calibration could be read, and why.
    Nominal {
        /// The arm.
        arm: Arm,
        /// Why not the controller's calibration.
        why: String,
    },
}

impl Kinematics {
    /// The arm.
    #[must_use]
    pub fn arm(&self) -> &Arm {
        match self {
            Kinematics::Calibrated(arm) | Kinematics::Nominal { arm, .. } => arm,
        }
    }

    /// Reads the calibrated arm off the primary interface at `addr` (its first robot
    /// state); `nominal`, with the reason, when it cannot.
    ///
    /// ```
    /// use rtde_robot::motion::Kinematics;
    /// use rtde_robot::script::ScriptPort;
    /// use rtde_sim::{Arm, Calibration, Sim};
    ///
    /// let sim = Sim::builder().script_ports().calibration(Calibration::random(2)).start().unwrap();
    /// let read = Kinematics::read(sim.script_addr(ScriptPort::Primary).unwrap(), Arm::UR5E);
    /// assert_eq!(read, Kinematics::Calibrated(sim.arm()));
    /// ```
    #[must_use]
    pub fn read(addr: SocketAddr, nominal: Arm) -> Kinematics {
        let calibrated = (|| {
            let mut primary =
                PrimaryClient::connect(addr).map_err(|e| rtde_core::Report(&e).to_string())?;
            loop {
                if let Decoded::State { .. } = primary
                    .recv()
                    .map_err(|e| rtde_core::Report(&e).to_string())?
                {
                    break;
                }
            }
            calibrated_arm(primary.state(), primary.version()).ok_or_else(|| {
                format!(
                    "the primary interface at {addr} sent no kinematics info for a model \
                     rtde_kinematics knows"
                )
            })
        })();
        match calibrated {
            Ok(arm) => Kinematics::Calibrated(arm),
            Err(why) => Kinematics::Nominal { arm: nominal, why },
        }
    }
}

impl fmt::Display for Kinematics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kinematics::Calibrated(arm) => {
                write!(f, "the controller's calibrated {} table", arm.name)
            }
            Kinematics::Nominal { arm, why } => {
                write!(f, "the nominal {} table ({why})", arm.name)
            }
        }
    }
}
