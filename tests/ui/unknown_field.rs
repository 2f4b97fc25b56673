// A typo is found before connecting, with the closest name offered.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f64,
    actual_tcp_pos: [f64; 6],
}

fn main() {}
