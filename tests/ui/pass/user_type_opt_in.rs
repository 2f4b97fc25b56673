// User types opt in with `IsWire`: for every field of a wire type, or for one field.
use rtde_core::wire::{self, IsWire, field};
use rtde_core::{FromPayload, RtdeRecipe};

/// Any DOUBLE field, scaled to percent.
struct Percent(f64);

impl<F: ?Sized> IsWire<wire::DOUBLE, F> for Percent {
    fn from_wire(raw: f64) -> Self {
        Percent(raw * 100.0)
    }
    fn to_wire(&self) -> f64 {
        self.0 / 100.0
    }
}

/// Only `runtime_state`.
#[derive(Debug, PartialEq)]
enum Program {
    Running,
    Other(u32),
}

impl IsWire<wire::UINT32, field::runtime_state> for Program {
    fn from_wire(raw: u32) -> Self {
        if raw == 2 { Program::Running } else { Program::Other(raw) }
    }
    fn to_wire(&self) -> u32 {
        match self {
            Program::Running => 2,
            Program::Other(code) => *code,
        }
    }
}

type Joints = [f64; 6]; // aliases resolve: the check is in the type system

#[derive(RtdeRecipe)]
struct Telemetry {
    speed_scaling: Percent,
    runtime_state: Program,
    actual_q: Joints,
}

fn main() {
    let mut payload = [0u8; 8 + 4 + 48];
    payload[..8].copy_from_slice(&0.5f64.to_be_bytes());
    payload[8..12].copy_from_slice(&2u32.to_be_bytes());
    let t = Telemetry::from_payload(&payload).unwrap();
    assert_eq!(t.speed_scaling.0, 50.0);
    assert_eq!(t.runtime_state, Program::Running);
    assert_eq!(t.actual_q, [0.0; 6]);
}
