// Only 3.x, 5.x and 10.x are controllers.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(min_controller = "4.2")]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
