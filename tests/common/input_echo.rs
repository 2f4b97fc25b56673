//! The send-while-receiving check of the drivers that share a connection between threads
//! or tasks (`background.rs`, `async_sim.rs`): one sends a second of inputs at 500 Hz, each
//! the next integer, while another receives every output package, which reads the input
//! register back. Each test drives it with its own handles; what is checked is here once.

use std::time::Duration;

use rtde_core::{DynamicRecipe, Stats, Value};
use rtde_sim::Sim;

use super::timestamp;

/// One second of inputs.
pub(crate) const INPUTS: i32 = 500;

/// Between two inputs: 500 Hz.
pub(crate) const PERIOD: Duration = Duration::from_millis(2);

/// The register the inputs write and the outputs read back.
const REGISTER: &str = "input_int_register_24";

/// A 5.21 controller whose clock is the ticks it streamed, so none is skipped.
pub(crate) fn sim() -> Sim {
    Sim::builder()
        .controller_version("5.21.0")
        .deterministic()
        .start()
        .unwrap()
}

/// The output recipe, set up at 500 Hz: the time and the register.
pub(crate) fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", REGISTER]).unwrap()
}

/// The input recipe: the register.
pub(crate) fn inputs() -> DynamicRecipe {
    DynamicRecipe::inputs([REGISTER]).unwrap()
}

/// Makes `inputs` the `k`th input (from 1).
pub(crate) fn set(inputs: &mut DynamicRecipe, k: i32) {
    inputs.set(REGISTER, Value::Int32(k)).unwrap();
}

/// What the receiver saw.
#[derive(Debug, Default)]
pub(crate) struct ReadBack {
    times: Vec<f64>,
    seen: Vec<i32>,
}

impl ReadBack {
    /// Records a received package; whether it read the last input back.
    pub(crate) fn record(&mut self, outputs: &DynamicRecipe) -> bool {
        self.times.push(timestamp(outputs));
        let value = match outputs.get(REGISTER) {
            Some(Value::Int32(v)) => *v,
            other => panic!("{REGISTER}: {other:?}"),
        };
        self.seen.push(value);
        value == INPUTS
    }

    /// Every package came, in order, and nothing was lost on the way; every input reached
    /// the controller and was applied, in order.
    pub(crate) fn check(&self, sim: &Sim, stats: &Stats) {
        assert!(
            self.times.windows(2).all(|w| w[0] < w[1]),
            "out of order: {:?}",
            self.times
        );
        assert_eq!(
            (stats.skipped, stats.lost, stats.overflowed, stats.discarded),
            (0, 0, 0, 0),
            "{stats:?}"
        );
        // The simulator counted each input package, the read-back never goes back, and it
        // ends with the last. (Two inputs within one 2 ms control tick leave only the later
        // one to read back, as on a controller, so the count is taken at the simulator,
        // not from the outputs.)
        assert_eq!(
            sim.stats().input_packages_applied,
            u64::try_from(INPUTS).unwrap(),
            "input packages the simulator applied"
        );
        assert!(
            self.seen.windows(2).all(|w| w[0] <= w[1]),
            "{:?}",
            self.seen
        );
        assert_eq!(self.seen.last(), Some(&INPUTS));
    }
}
