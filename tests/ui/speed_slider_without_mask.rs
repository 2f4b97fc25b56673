// The speed slider moves only when its mask is 1.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    speed_slider_fraction: f64,
}

fn main() {}
