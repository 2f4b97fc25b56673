// Without `#[rtde(input)]` these registers would be read back, and the recipe could not be sent.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Command {
    input_double_register_24: f64,
    #[rtde(registers = "input_int_register_24..=25")]
    flags: [i32; 2],
}

fn main() {}
