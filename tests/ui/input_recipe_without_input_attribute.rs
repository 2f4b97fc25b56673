// Without `#[rtde(input)]` these registers would be read back, and the recipe could not be
// sent. The one error is the attribute's: the code that sends the recipe raises nothing more.
use rtde_core::{Client, InputHandle, RtdeRecipe};

#[derive(RtdeRecipe)]
struct Command {
    input_double_register_24: f64,
    #[rtde(registers = "input_int_register_24..=25")]
    flags: [i32; 2],
}

fn _send(client: &mut Client, input: &InputHandle, command: &Command) {
    let _ = client.send(input, command);
}

fn main() {}
