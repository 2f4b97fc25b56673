// Reading input registers back is an output recipe's job; sending needs an input recipe.
use rtde_core::{Client, InputHandle, RtdeRecipe};

#[derive(RtdeRecipe)]
#[rtde(output)]
struct Command {
    input_double_register_24: f64,
}

fn _send(client: &mut Client, input: &InputHandle, command: &Command) {
    let _ = client.send(input, command);
}

fn main() {}
