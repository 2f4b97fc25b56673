// Every mistake of a struct shows in one build, the type errors too.
use rtde_core::RtdeRecipe;

#[derive(RtdeRecipe)]
#[rtde(input, min_controller = "3.5", frequency = 500)]
struct Command {
    actual_q: [f64; 6],
    input_int_register_3: i32,
    standard_digital_output: u8,
    input_double_register_24: f64,
    #[rtde(name = "input_int_register_25", name = "input_int_register_26")]
    second: i32,
    input_int_register_30: f64,
    speed_slider_fractoin: f64,
}

fn main() {}
