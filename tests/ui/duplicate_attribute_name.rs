// A repeated key is reported on the second one.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    #[rtde(name = "timestamp", name = "actual_q")]
    t: f64,
}

fn main() {}
