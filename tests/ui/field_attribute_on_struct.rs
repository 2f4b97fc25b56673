// A key of the other level says where it belongs.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(name = "timestamp")]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
