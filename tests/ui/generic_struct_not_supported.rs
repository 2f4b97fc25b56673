// The layout is fixed at compile time.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry<T> {
    timestamp: T,
}

fn main() {}
