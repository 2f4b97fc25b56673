// `Pose` is for TCP poses, not joint positions.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: rtde_core::Pose,
}

fn main() {}
