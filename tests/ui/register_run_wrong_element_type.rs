// Each element is checked against its register's wire type.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Setpoint {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [i32; 6],
}

fn main() {}
