// Two struct fields cannot read one RTDE field.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: [f64; 6],
    #[rtde(name = "actual_q")]
    q: [f64; 6],
}

fn main() {}
