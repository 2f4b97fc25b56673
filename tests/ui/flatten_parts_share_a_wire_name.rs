// Two parts, each valid alone, that list one field between them.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Header {
    timestamp: f64,
    robot_mode: rtde_core::RobotMode,
}

#[derive(RtdeRecipe)]
struct Clock {
    timestamp: f64,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    #[rtde(flatten)]
    header: Header,
    #[rtde(flatten)]
    clock: Clock,
}

fn main() {}
