// A recipe is a struct.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
enum Telemetry {
    Timestamp(f64),
}

fn main() {}
