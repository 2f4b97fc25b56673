// The outer recipe's min_controller binds its parts' fields too.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Wrench {
    ft_raw_wrench: [f64; 6],
}

#[derive(RtdeRecipe)]
#[rtde(min_controller = "5.4")]
struct Telemetry {
    timestamp: f64,
    #[rtde(flatten)]
    wrench: Wrench,
}

fn main() {}
