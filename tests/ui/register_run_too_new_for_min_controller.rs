// Registers 24..=47 arrived with 3.9 and 5.3.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input, min_controller = "5.2")]
struct Setpoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
}

fn main() {}
