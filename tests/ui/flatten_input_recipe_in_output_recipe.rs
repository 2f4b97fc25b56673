// A part is set up in the same SETUP_OUTPUTS as the rest: it must be an output recipe.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Registers {
    input_int_register_24: i32,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f64,
    #[rtde(flatten)]
    registers: Registers,
}

fn main() {}
