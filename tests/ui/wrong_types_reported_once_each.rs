// Each field whose type does not fit is one error, however often the generated code and the
// user's code decode and encode it.
use rtde_core::{FromPayload, RecipeView, RtdeRecipe, ToPayload};

#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f32,
    actual_q: [f32; 6],
    robot_mode: u32,
}

fn _uses(payload: &[u8]) -> f32 {
    let t = Telemetry::from_payload(payload).unwrap();
    let view = Telemetry::view(payload).unwrap();
    let _ = (t.to_payload(), view.actual_q(), view.robot_mode());
    view.timestamp() + t.timestamp + t.actual_q[0]
}

fn main() {}
