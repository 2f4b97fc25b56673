// Direction keys are flags.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input = true)]
struct Registers {
    input_int_register_24: i32,
}

fn main() {}
