// A user type must opt in with `IsWire` before it can hold a field.
use rtde_core::RtdeRecipe;

enum Mode {
    On,
    Off,
}

#[derive(RtdeRecipe)]
struct Telemetry {
    robot_mode: Mode,
}

fn _use(m: Mode) -> bool {
    matches!(m, Mode::On | Mode::Off)
}

fn main() {}
