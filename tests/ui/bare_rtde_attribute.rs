// `#[rtde]` alone says nothing.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
