// Outputs cannot be written.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    actual_q: [f64; 6],
}

fn main() {}
