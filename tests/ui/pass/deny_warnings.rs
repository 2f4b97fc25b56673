// A public recipe in a crate with strict lints: the generated view is documented, has Debug,
// and nothing generated trips a lint.
#![deny(
    warnings,
    missing_docs,
    missing_debug_implementations,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    non_snake_case,
    trivial_casts,
    unused_lifetimes
)]
//! A crate with a public recipe.

use rtde_core::{Pose, RobotMode, RtdeRecipe, SafetyStatus};

/// Telemetry.
#[derive(Debug, RtdeRecipe)]
#[rtde(min_controller = "5.4")]
pub struct Telemetry {
    /// Seconds since the controller started.
    pub timestamp: f64,
    /// The TCP pose.
    pub actual_tcp_pose: Pose,
    /// Robot mode.
    pub robot_mode: RobotMode,
    /// Safety status.
    pub safety_status: SafetyStatus,
    #[rtde(name = "actual_q")]
    q: [f64; 6],
}

mod private {
    use rtde_core::RtdeRecipe;

    // A private recipe whose view and accessors nobody uses.
    #[derive(RtdeRecipe)]
    #[rtde(input)]
    pub(crate) struct Unused {
        pub(crate) input_double_register_24: f64,
    }
}

fn main() {
    let _ = private::Unused { input_double_register_24: 0.0 }.input_double_register_24;
}
