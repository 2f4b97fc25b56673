// A typed value fits only the field it describes, even when the wire types agree.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    safety_mode: rtde_core::RobotMode,
}

fn main() {}
