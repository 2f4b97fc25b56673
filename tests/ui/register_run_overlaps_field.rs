// A run and a field may not write the same register twice in one package.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    input_double_register_26: f64,
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

fn main() {}
