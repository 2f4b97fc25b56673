// Six registers cannot fill a five-element array.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 5],
}

fn main() {}
