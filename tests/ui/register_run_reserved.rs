// A run that reaches into 0..=23 may collide with a fieldbus adapter.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_20..=25")]
    q: [f64; 6],
}

fn main() {}
