// A run is several registers: one scalar cannot hold them.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: f64,
}

fn main() {}
