// The controller refuses an empty setup.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
struct Nothing {}

fn main() {}
