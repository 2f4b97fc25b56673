// A field's former name points to the name the controller accepts now.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    controller_step: u64,
}

fn main() {}
