// Code using a recipe with errors raises nothing more: the stub impls stand in.
use rtde_core::RtdeRecipe;

use rtde_core::{FromPayload, RecipeView, StaticRecipe, ToPayload};

#[derive(RtdeRecipe)]
struct Telemetry {
    timestamp: f64,
    actual_tcp_pos: [f64; 6],
}

fn _uses(payload: &[u8]) -> f64 {
    let t = Telemetry::from_payload(payload).unwrap();
    let view = Telemetry::view(payload).unwrap();
    let _ = (Telemetry::SPEC, t.to_payload(), view.actual_tcp_pos());
    view.timestamp() + t.timestamp + t.actual_tcp_pos[0]
}

fn main() {}
