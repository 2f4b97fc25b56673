// Fields are named after their RTDE variables.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry(f64, [f64; 6]);

fn main() {}
