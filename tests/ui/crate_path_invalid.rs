// `crate = "…"` must be a path.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(crate = "not a path")]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
