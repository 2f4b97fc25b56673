// An unknown key is reported on the key, with the keys that exist.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(frequency = 500)]
struct Telemetry {
    timestamp: f64,
}

fn main() {}
