//! What the engine asks of the robot: the [`Host`] trait, which the simulator implements
//! (and tests, with a recording host). The engine knows nothing of joints or registers;
//! the host knows nothing of threads.

use super::Value;

/// A call of a built-in that touches the robot: its name, and its arguments in parameter
/// order with the defaults filled in (the built-in table's [`params`](crate::builtins::Builtin)).
#[derive(Clone, Copy, Debug)]
pub struct HostCall<'a> {
    /// The built-in's name, such as `movej` or `read_input_float_register`.
    pub name: &'static str,
    /// Its arguments, one per parameter.
    pub args: &'a [Value],
}

impl HostCall<'_> {
    /// The argument at `i`, or [`Value::None`] past the end.
    #[must_use]
    pub fn arg(&self, i: usize) -> &Value {
        self.args.get(i).unwrap_or(&Value::None)
    }
}

/// What a started call gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The call is over; this is its value ([`Value::None`] for a function that returns
    /// nothing).
    Done(Value),
    /// The call blocks (a move, a stop, `servoj` for its `t`); the engine polls
    /// [`Host::poll`] with this ticket on each later tick until it is done.
    Blocked(u64),
}

/// How a blocking call stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// It is over, with this value.
    Done(Value),
    /// Not yet; ask again next tick.
    Waiting,
}

/// The robot under a running script.
///
/// A blocking built-in is a small state machine: [`call`](Host::call) starts it once and
/// returns a ticket, then the engine calls [`poll`](Host::poll) on every following tick
/// until it is done, or [`cancel`](Host::cancel) when its thread is killed or the program
/// stops. An `Err` is the controller's runtime error for that call; the engine reports it
/// at the call's line and column and stops the program.
///
/// ```
/// use rtde_urscript::run::{Host, HostCall, Progress, Reply, Value};
///
/// /// A robot whose moves take three ticks.
/// struct Slow { ticks: u32 }
///
/// impl Host for Slow {
///     fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
///         match call.name {
///             "movej" => { self.ticks = 3; Ok(Reply::Blocked(1)) }
///             "textmsg" => Ok(Reply::Done(Value::None)),
///             other => Err(format!("{other} is not simulated")),
///         }
///     }
///     fn poll(&mut self, _ticket: u64) -> Result<Progress, String> {
///         self.ticks -= 1;
///         Ok(if self.ticks == 0 { Progress::Done(Value::None) } else { Progress::Waiting })
///     }
/// }
/// ```
pub trait Host {
    /// Starts a built-in.
    ///
    /// # Errors
    /// The runtime error's text when the call cannot be done (bad arguments, an unknown
    /// register, a target out of reach).
    fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String>;

    /// How a blocked call stands, once per tick.
    ///
    /// # Errors
    /// The runtime error's text when the call fails while under way (a protective stop).
    fn poll(&mut self, ticket: u64) -> Result<Progress, String>;

    /// A blocked call's thread was killed or the program stopped: the call is abandoned.
    fn cancel(&mut self, ticket: u64) {
        let _ = ticket;
    }
}
