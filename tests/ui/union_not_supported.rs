// A recipe is a struct.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
union Telemetry {
    timestamp: f64,
}

fn main() {}
