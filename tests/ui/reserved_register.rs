// Registers 0..=23 may belong to a fieldbus adapter.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    input_int_register_3: i32,
}

fn main() {}
