//! A dynamic recipe of fields picked from the registry decodes any payload without
//! panicking, rejects a payload of the wrong length, and re-encodes what it decoded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_core::{DynamicRecipe, InputRecipe, OutputRecipe, Value};
use rtde_fields::{Direction, fields};

fuzz_target!(|input: (Vec<u16>, Vec<u8>)| {
    let (picks, payload) = input;
    let table = fields(Direction::Output);
    let mut names: Vec<&str> = picks
        .iter()
        .map(|&p| table[usize::from(p) % table.len()].name())
        .collect();
    names.sort_unstable();
    names.dedup();
    let Ok(mut recipe) = DynamicRecipe::outputs(&names) else {
        return;
    };
    let size = recipe.payload_size();
    let result = recipe.decode_into(&payload);
    assert_eq!(result.is_ok(), payload.len() == size);
    if result.is_err() {
        return;
    }
    let mut out = vec![0u8; size];
    assert_eq!(recipe.encode_into(&mut out), Ok(size));
    // BOOL decodes any non-zero byte as true and encodes true as 1; everything else is exact.
    let mut offset = 0;
    for value in recipe.values() {
        let width = value.wire_type().size();
        match value {
            Value::Bool(b) => assert_eq!(out[offset], u8::from(*b)),
            _ => assert_eq!(out[offset..offset + width], payload[offset..offset + width]),
        }
        offset += width;
    }
});
