// The part's fields are invisible to the macro expanding `Telemetry`: the compiler must
// still refuse a field listed both here and in the part.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Header {
    timestamp: f64,
    robot_mode: rtde_core::RobotMode,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    #[rtde(flatten)]
    header: Header,
    timestamp: f64,
}

fn main() {}
