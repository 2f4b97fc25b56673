// Names and versions are string literals.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    #[rtde(name = timestamp)]
    t: f64,
}

fn main() {}
