//! Register runs (`#[rtde(registers = "…")]`) over every external register, in both
//! directions: the run encodes to the same bytes as one field per register, decodes them
//! back, and through the simulator an input run written by a client reads back as the
//! matching output run.

use std::time::Duration;

use rtde_core::protocol::ProtocolVersion;
use rtde_core::{
    Client, ConnectOptions, FromPayload, RecipeView, RtdeRecipe, StaticRecipe, ToPayload, Value,
};
use rtde_sim::Sim;

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(input)]
struct InDoubles {
    #[rtde(registers = "input_double_register_24..=47")]
    d: [f64; 24],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(input)]
struct InInts {
    #[rtde(registers = "input_int_register_24..=47")]
    i: [i32; 24],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(input)]
struct InBits {
    #[rtde(registers = "input_bit_register_64..=127")]
    b: [bool; 64],
}

// The same registers read back as outputs, which a recipe of input fields must say.
#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(output)]
struct BackDoubles {
    #[rtde(registers = "input_double_register_24..=47")]
    d: [f64; 24],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(output)]
struct BackInts {
    #[rtde(registers = "input_int_register_24..=47")]
    i: [i32; 24],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
#[rtde(output)]
struct BackBits {
    #[rtde(registers = "input_bit_register_64..=127")]
    b: [bool; 64],
}

// The robot program's registers.
#[derive(RtdeRecipe, Debug, PartialEq)]
struct OutRegisters {
    #[rtde(registers = "output_double_register_24..=47")]
    d: [f64; 24],
    #[rtde(registers = "output_int_register_24..=47")]
    i: [i32; 24],
}

#[derive(RtdeRecipe, Debug, PartialEq)]
struct OutBits {
    #[rtde(registers = "output_bit_register_64..=127")]
    b: [bool; 64],
}

fn doubles() -> [f64; 24] {
    std::array::from_fn(|k| (k as f64 + 0.25) * if k % 2 == 0 { -1.5 } else { 1e9 })
}

fn ints() -> [i32; 24] {
    std::array::from_fn(|k| {
        let n = i32::try_from(k).unwrap();
        [i32::MIN, i32::MAX, -n, n * 1000][k % 4]
    })
}

fn bits() -> [bool; 64] {
    std::array::from_fn(|k| k % 3 != 1)
}

/// The bytes one field per register would give: each value big-endian, in order.
fn per_register(values: &[Value]) -> Vec<u8> {
    let mut out = vec![0u8; values.iter().map(|v| v.wire_type().size()).sum()];
    let mut at = 0;
    for v in values {
        v.write_be(&mut out[at..]);
        at += v.wire_type().size();
    }
    out
}

fn assert_codec<R>(recipe: &R, values: &[Value])
where
    R: ToPayload + FromPayload + RecipeView + StaticRecipe + PartialEq + std::fmt::Debug,
    R::Payload: AsRef<[u8]>,
{
    let bytes = recipe.to_payload();
    assert_eq!(
        bytes.as_ref(),
        per_register(values),
        "{:?}",
        R::SPEC.names()
    );
    assert_eq!(R::PAYLOAD_SIZE, bytes.as_ref().len());
    assert_eq!(&R::from_payload(bytes.as_ref()).unwrap(), recipe);
    assert!(R::view(bytes.as_ref()).is_ok());
}

#[test]
fn input_runs_encode_as_one_field_per_register() {
    let d = doubles();
    assert_codec(&InDoubles { d }, &d.map(Value::Double));
    assert_eq!(InDoubles::SPEC.names()[0], "input_double_register_24");
    assert_eq!(InDoubles::SPEC.names()[23], "input_double_register_47");
    let i = ints();
    assert_codec(&InInts { i }, &i.map(Value::Int32));
    let b = bits();
    assert_codec(&InBits { b }, &b.map(Value::Bool));
    assert_eq!(InBits::SPEC.names()[63], "input_bit_register_127");
}

#[test]
fn output_runs_decode_as_one_field_per_register() {
    let (d, i, b) = (doubles(), ints(), bits());
    let values: Vec<Value> = d
        .map(Value::Double)
        .into_iter()
        .chain(i.map(Value::Int32))
        .collect();
    assert_codec(&OutRegisters { d, i }, &values);
    assert_codec(&OutBits { b }, &b.map(Value::Bool));
    assert_codec(&BackDoubles { d }, &d.map(Value::Double));
    assert_codec(&BackInts { i }, &i.map(Value::Int32));
    assert_codec(&BackBits { b }, &b.map(Value::Bool));
    let bytes = BackInts { i }.to_payload();
    let view = BackInts::view(&bytes).unwrap();
    assert_eq!(view.i(), i);
}

/// Writes an input run, then reads it back as the output run of the same registers, on
/// protocol v1 and v2.
fn through_the_simulator<I, O>(input: &I, expected: &O)
where
    I: rtde_core::InputRecipe + StaticRecipe,
    O: FromPayload + StaticRecipe + PartialEq + std::fmt::Debug,
{
    for v1 in [false, true] {
        let sim = if v1 {
            Sim::builder().v1_only().start().unwrap()
        } else {
            Sim::builder().start().unwrap()
        };
        let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
        let mut client = Client::connect(sim.addr(), options).unwrap();
        assert_eq!(
            client.protocol_version(),
            if v1 {
                ProtocolVersion::V1
            } else {
                ProtocolVersion::V2
            }
        );
        client
            .setup_outputs(O::SPEC, client.max_frequency())
            .unwrap();
        let handle = client.setup_inputs(I::SPEC).unwrap();
        client.start().unwrap();
        client.send(&handle, input).unwrap();
        // The controller applies inputs between packages: within a few cycles.
        let back = (0..200)
            .map(|_| client.recv_as::<O>().unwrap())
            .find(|o| o == expected);
        assert_eq!(back.as_ref(), Some(expected), "{:?}", O::SPEC.names());
        client.close().unwrap();
        sim.shutdown().unwrap();
    }
}

#[test]
fn every_external_register_round_trips_through_the_simulator() {
    let (d, i, b) = (doubles(), ints(), bits());
    through_the_simulator(&InDoubles { d }, &BackDoubles { d });
    through_the_simulator(&InInts { i }, &BackInts { i });
    through_the_simulator(&InBits { b }, &BackBits { b });
}
