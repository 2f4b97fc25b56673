// A recipe with parts compiles under `#![no_implicit_prelude]`, next to user items named
// after the std ones, and without warnings.
#![no_implicit_prelude]
#![deny(warnings)]

struct Result;
struct Ok;
struct Option;
const N: usize = 3;

#[derive(::rtde_core::RtdeRecipe)]
struct Header {
    timestamp: f64,
    robot_mode: ::rtde_core::RobotMode,
}

#[derive(::rtde_core::RtdeRecipe)]
#[rtde(min_controller = "5.4")]
struct Telemetry {
    #[rtde(flatten)]
    header: Header,
    actual_q: [f64; 6],
}

#[derive(::rtde_core::RtdeRecipe)]
struct Nested {
    #[rtde(flatten)]
    telemetry: Telemetry,
    actual_tcp_pose: ::rtde_core::Pose,
}

fn main() {
    let _ = (Result, Ok, Option, N);
    let payload = [0u8; 8 + 4 + 48 + 48];
    let nested = <Nested as ::rtde_core::FromPayload>::from_payload(&payload);
    let _ = nested;
}
