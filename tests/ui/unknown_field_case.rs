// `name = "…"` is the wire name and is case-sensitive; the right spelling is offered.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Telemetry {
    #[rtde(name = "actual_tcp_pose")]
    pose: [f64; 6],
}

fn main() {}
