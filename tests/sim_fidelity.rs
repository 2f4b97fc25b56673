//! The client against the simulator's controller-like behaviour: inputs applied while
//! paused (as controllers do), and the opt-in faults real controllers show (data before
//! the START and PAUSE replies, a slow boot, a build number). START refused without an
//! output recipe is in the suite over every way in, `drivers.rs`.

use std::time::Duration;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_sim::{Fault, Sim};

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

fn timestamp(recipe: &DynamicRecipe) -> f64 {
    match recipe.get("timestamp") {
        Some(Value::Double(t)) => *t,
        other => panic!("timestamp: {other:?}"),
    }
}

#[test]
fn a_package_before_the_start_reply_is_delivered_and_the_stream_follows() {
    let sim = Sim::builder()
        .fault(Fault::DataBeforeStartReply)
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(recipe.spec(), 50.0).unwrap();
    client.start().unwrap();
    // The early package is the stream's first: delivered, not dropped.
    client.recv_into(&mut recipe).unwrap();
    let first = timestamp(&recipe);
    client.recv_into(&mut recipe).unwrap();
    assert!((timestamp(&recipe) - first - 0.02).abs() < 1e-9);
    let stats = client.stats();
    assert_eq!((stats.received, stats.discarded, stats.skipped), (2, 0, 0));
}

#[test]
fn a_package_between_pause_and_its_reply_is_counted() {
    let sim = Sim::builder()
        .fault(Fault::DataBeforePauseReply)
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    // 2 Hz: nothing else is due while the pause is answered.
    client.setup_outputs(recipe.spec(), 2.0).unwrap();
    client.start().unwrap();
    client.recv().unwrap();
    client.pause().unwrap();
    assert_eq!(client.stats().discarded, 1);
}

#[test]
fn a_booting_controller_answers_slowly_then_normally() {
    let sim = Sim::builder()
        .fault(Fault::SlowBoot {
            window: Duration::from_secs(60),
            delay: Duration::from_millis(400),
        })
        .start()
        .unwrap();
    // A read timeout shorter than the boot delay: the handshake times out.
    let impatient = ConnectOptions::new().read_timeout(Some(Duration::from_millis(100)));
    let err = Client::connect(sim.addr(), impatient).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // A patient client gets through.
    Client::connect(sim.addr(), options()).unwrap();
}

#[test]
fn a_build_number_in_the_version_reply_is_kept_and_changes_no_check() {
    let sim = Sim::builder()
        .controller_version("5.9.0")
        .fault(Fault::BuildNumber(108_318))
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    assert_eq!(client.controller_version().to_string(), "5.9.0.108318");
    // `ft_raw_wrench` needs 5.9.0: the build number does not make it older.
    let recipe = DynamicRecipe::outputs(["ft_raw_wrench"]).unwrap();
    client.setup_outputs(recipe.spec(), 10.0).unwrap();
}

#[test]
fn inputs_sent_while_paused_take_effect() {
    let sim = Sim::builder().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    let outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(outputs.spec(), 10.0).unwrap();
    client.start().unwrap();
    client.pause().unwrap();
    inputs
        .set("input_int_register_24", Value::Int32(6))
        .unwrap();
    client.send(&handle, &inputs).unwrap();
    // Any reply comes after the package before it was handled.
    client.start().unwrap();
    assert_eq!(
        sim.io().input("input_int_register_24"),
        Some(&Value::Int32(6))
    );
}
