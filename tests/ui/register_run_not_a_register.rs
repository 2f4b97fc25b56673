// Only registers come in runs; other numbered fields are named one by one.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Analog {
    standard_analog_output_mask: u8,
    #[rtde(registers = "standard_analog_output_0..=1")]
    outputs: [f64; 2],
}

fn main() {}
