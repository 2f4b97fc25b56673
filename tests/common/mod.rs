//! What the client tests against rtde-sim share: the wait bound, the connect options, how
//! many packages were due between two timestamps, and the send-while-receiving check.

// Each test binary uses part of the helpers.
#![allow(dead_code)]

pub(crate) mod input_echo;
pub(crate) mod interop;

use std::time::Duration;

use rtde_core::{ConnectOptions, DynamicRecipe, ReconnectPolicy, Value};

/// The longest any read waits: a failing test ends instead of hanging.
pub(crate) const WAIT: Duration = Duration::from_secs(5);

pub(crate) fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(WAIT))
}

/// Automatic reconnection; the backoffs leave the simulator time to release the inputs of
/// the connection it dropped.
pub(crate) fn reconnecting() -> ConnectOptions {
    options().reconnect(
        ReconnectPolicy::new()
            .attempts(8)
            .initial_backoff(Duration::from_millis(5))
            .max_backoff(Duration::from_millis(50)),
    )
}

pub(crate) fn timestamp(recipe: &DynamicRecipe) -> f64 {
    match recipe.get("timestamp") {
        Some(Value::Double(t)) => *t,
        other => panic!("timestamp: {other:?}"),
    }
}

/// Output packages due between two timestamps (exclusive) at `frequency` on a `rate` loop.
pub(crate) fn due_between(before: f64, after: f64, rate: f64, frequency: f64) -> u64 {
    let ticks = ((after - before) * rate).round();
    let every = (rate / frequency).round();
    let periods = (ticks / every).round();
    assert!(periods >= 1.0, "{before} then {after}");
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked >= 1 above
    let periods = periods as u64;
    periods - 1
}
