// Inputs are written with an input recipe.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    external_force_torque: [f64; 6],
}

fn main() {}
