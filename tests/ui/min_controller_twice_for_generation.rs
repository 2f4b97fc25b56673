// One minimum per generation.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(min_controller = "5.4", min_controller = "5.9")]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
