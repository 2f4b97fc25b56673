// A part brings its own names: renaming it has no meaning.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Header {
    timestamp: f64,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    actual_q: [f64; 6],
    #[rtde(flatten, name = "timestamp")]
    header: Header,
}

fn main() {}
