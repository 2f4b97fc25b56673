// Among output fields, an input field is the mistake, not the recipe's direction.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f64,
    speed_slider_fraction: f64,
}

fn main() {}
