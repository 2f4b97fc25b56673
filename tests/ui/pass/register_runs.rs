// Runs over every external register family, in both directions, with the fieldbus opt-in.
#![deny(warnings)]

use rtde_core::{FromPayload, RtdeRecipe, StaticRecipe, ToPayload};

#[derive(RtdeRecipe)]
#[rtde(input)]
struct Command {
    #[rtde(registers = "input_double_register_24..=29")]
    q: [f64; 6],
    #[rtde(registers = "input_int_register_30..=31")]
    counters: [i32; 2],
    #[rtde(registers = "input_bit_register_64..=66")]
    flags: [bool; 3],
    #[rtde(registers = "input_int_register_0..=1", allow_fieldbus_registers)]
    plc: [i32; 2],
}

#[derive(RtdeRecipe)]
struct Feedback {
    #[rtde(registers = "output_int_register_24..=25")]
    state: [i32; 2],
}

fn main() {
    assert_eq!(Command::SPEC.names()[6], "input_int_register_30");
    assert_eq!(Command::PAYLOAD_SIZE, 6 * 8 + 2 * 4 + 3 + 2 * 4);
    let bytes = Command { q: [1.0; 6], counters: [2, 3], flags: [true, false, true], plc: [4, 5] }.to_payload();
    assert_eq!(bytes[48..52], 2i32.to_be_bytes());
    let feedback = Feedback::from_payload(&[0, 0, 0, 7, 0, 0, 0, 8]).unwrap();
    assert_eq!(feedback.state, [7, 8]);
}
