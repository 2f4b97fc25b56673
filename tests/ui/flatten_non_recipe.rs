// Only a derived recipe knows its wire names and layout.
use rtde_core::RtdeRecipe;

struct Header {
    timestamp: f64,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: [f64; 6],
    #[rtde(flatten)]
    header: Header,
}

fn main() {}
