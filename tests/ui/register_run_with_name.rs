// A field is one variable or a run, not both.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(name = "input_double_register_24", registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

fn main() {}
