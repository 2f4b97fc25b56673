// A wrong Rust type is reported at the type, in RTDE terms.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: [f32; 6],
}

fn main() {}
