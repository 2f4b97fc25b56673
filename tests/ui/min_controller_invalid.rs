// A version is numbers and dots, checked at compile time.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(min_controller = "5.x")]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
