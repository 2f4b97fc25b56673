// Inputs are written with an input recipe.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    speed_slider_fraction: f64,
}

fn main() {}
