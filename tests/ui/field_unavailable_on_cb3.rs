// A field the declared generation does not have at all.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(min_controller = "3.15")]
struct Telemetry {
    ft_raw_wrench: [f64; 6],
}

fn main() {}
