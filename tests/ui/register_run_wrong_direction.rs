// Output registers are written by the robot program, never by a client.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "output_double_register_24..=29")]
    q: [f64; 6],
}

fn main() {}
