// Double registers stop at 47: a run past the end names registers no controller has.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_44..=49")]
    q: [f64; 6],
}

fn main() {}
