// `flatten` is a flag, as `input` is.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Header {
    timestamp: f64,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: [f64; 6],
    #[rtde(flatten = "yes")]
    header: Header,
}

fn main() {}
