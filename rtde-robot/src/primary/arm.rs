//! The arm a controller computes with, as its primary interface tells it: the model from
//! configuration data, the table from kinematics info (the factory calibration applied).

use rtde_core::fields::ControllerVersion;
use rtde_kinematics::Arm;
use rtde_robot_proto::primary::{ConfigurationData, RobotState};

/// The arm model of configuration data's robot type on a controller of `version`
/// (`rtde_kinematics::Arm::of_robot_type`): UR7e and UR12e report a UR5e's and a UR10e's
/// type, whose kinematics they share.
#[must_use]
pub fn model_of(configuration: &ConfigurationData, version: ControllerVersion) -> Option<Arm> {
    Arm::of_robot_type(configuration.robot_type, version.major >= 5)
}

/// The calibrated arm of a robot state: its model with kinematics info's table; `None`
/// until both sub-packages have arrived, or for a model `rtde_kinematics` lacks.
///
/// ```
/// use rtde_robot::primary::{PrimaryClient, calibrated_arm};
/// use rtde_sim::{Arm, Calibration, Sim};
/// use rtde_robot::script::ScriptPort;
///
/// let sim = Sim::builder().script_ports().calibration(Calibration::random(1)).start().unwrap();
/// let mut primary = PrimaryClient::connect(sim.script_addr(ScriptPort::Primary).unwrap()).unwrap();
/// primary.recv().unwrap(); // the first robot state
/// let arm = calibrated_arm(primary.state(), primary.version()).unwrap();
/// assert_eq!(arm, sim.arm());
/// assert_ne!(arm, Arm::UR5E);
/// ```
#[must_use]
pub fn calibrated_arm(state: &RobotState, version: ControllerVersion) -> Option<Arm> {
    let model = model_of(state.configuration.as_ref()?, version)?;
    let k = state.kinematics.as_ref()?;
    Some(model.with_dh(k.dh_a, k.dh_d, k.dh_alpha, k.dh_theta))
}
