// Bit registers are BOOL, not integers.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Bits {
    output_bit_register_64: u8,
}

fn main() {}
