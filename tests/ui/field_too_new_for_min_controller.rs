// A field newer than the declared version names the version it needs.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(min_controller = "5.4")]
struct Telemetry {
    ft_raw_wrench: [f64; 6],
}

fn main() {}
