//! `IN_USE` against the simulator, one owner class at a time: a first client (standing in
//! for the gripper URCap, the ROS driver, the F/T URCap, an earlier run of the same
//! program) holds the inputs, and the second client's error names who probably does.
//! The fieldbus adapter's registers are named by the session's test of the setup reply,
//! and which field belongs to which class by `InUseOwner`'s own tests.

use std::time::Duration;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, InUseOwner, Recipe};
use rtde_sim::Sim;

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

/// Sets `names` up on a holder connection, then on a second one, and returns the second
/// one's refusal with the holder still connected.
fn refused(sim: &Sim, names: &[&str]) -> Box<rtde_core::SetupRefused> {
    let recipe = DynamicRecipe::inputs(names).unwrap();
    let mut holder = Client::connect(sim.addr(), options()).unwrap();
    holder.setup_inputs(recipe.spec()).unwrap();
    let mut second = Client::connect(sim.addr(), options()).unwrap();
    let err = second.setup_inputs(recipe.spec()).unwrap_err();
    drop(holder);
    match err {
        Error::SetupRefused(refused) => refused,
        other => panic!("{names:?}: {other}"),
    }
}

#[test]
fn each_owner_class_is_named() {
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let cases: [(&[&str], InUseOwner, &str); 4] = [
        (
            &["tool_digital_output_mask", "tool_digital_output"],
            InUseOwner::GripperUrcap,
            "probably held by a gripper URCap such as OnRobot's",
        ),
        (
            &[
                "speed_slider_mask",
                "speed_slider_fraction",
                "standard_digital_output_mask",
                "standard_digital_output",
            ],
            InUseOwner::RosDriver,
            "probably held by the Universal Robots ROS driver",
        ),
        (
            &["external_force_torque"],
            InUseOwner::ForceTorqueUrcap,
            "probably held by a force/torque sensor URCap",
        ),
        (
            &["input_int_register_30"],
            InUseOwner::AnotherClient,
            "an earlier session of this program that has not closed",
        ),
    ];
    for (names, owner, words) in cases {
        let refused = refused(&sim, names);
        assert_eq!(refused.in_use(), names);
        assert!(
            refused.in_use_owners().all(|(_, o)| o == owner),
            "{names:?}: {:?}",
            refused.in_use_owners().collect::<Vec<_>>()
        );
        let text = refused.to_string();
        assert!(text.contains(words), "{names:?}: {text}");
    }
}
