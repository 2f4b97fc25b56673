// The run is written `first..=last`, as a Rust inclusive range.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_24-29")]
    q: [f64; 6],
}

fn main() {}
