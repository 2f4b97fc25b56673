// The packed bit words cover only fieldbus bits.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    input_bit_registers0_to_31: u32,
}

fn main() {}
