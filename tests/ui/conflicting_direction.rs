// A recipe has one direction.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input, output)]
struct Registers {
    input_int_register_24: i32,
}

fn main() {}
