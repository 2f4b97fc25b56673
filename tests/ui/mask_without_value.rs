// A mask with nothing to apply is a mistake too.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    standard_analog_output_mask: u8,
}

fn main() {}
