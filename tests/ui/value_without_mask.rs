// The controller ignores a digital output value without its mask.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_digital_output: u8,
}

fn main() {}
