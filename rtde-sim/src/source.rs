//! Where output values come from: the simulated robot by default, or any other
//! [`OutputSource`] (a replayed recording, a scripted scenario).

use std::fmt;

use rtde_core::Value;
use rtde_core::fields::Field;

use crate::io::IoState;
use crate::robot_program::Program;

/// One cycle of the controller's control loop: its index since the simulator started
/// (or, unpaced or with [`SimBuilder::clock_per_connection`](crate::SimBuilder::clock_per_connection),
/// since the connection started streaming) and the loop rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tick {
    index: u64,
    rate: u32,
}

impl Tick {
    /// Tick `index` of a control loop running at `rate` hertz.
    #[must_use]
    pub const fn new(index: u64, rate: u32) -> Tick {
        Tick { index, rate }
    }

    /// The tick's index.
    #[must_use]
    pub const fn index(self) -> u64 {
        self.index
    }

    /// The control loop's rate in hertz: 125 on CB3, 500 on e-Series and PolyScope X.
    #[must_use]
    pub const fn rate(self) -> u32 {
        self.rate
    }

    /// The simulated time of this tick in seconds, `index as f64 / f64::from(rate)`:
    /// what the simulator reports as `timestamp`. It never depends on the wall clock.
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // exact up to 2^53 ticks: 570 000 years at 500 Hz
    pub fn seconds(self) -> f64 {
        self.index as f64 / f64::from(self.rate)
    }
}

/// What an [`OutputSource`] did for one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// The values are filled in: send the package.
    Send,
    /// Send no package for this tick (the client sees a gap in `timestamp`).
    Skip,
    /// The source has no more data: the simulator stops streaming, sends the
    /// end-of-stream text message
    /// ([`TextMessage::end_of_stream`](rtde_core::protocol::TextMessage::end_of_stream))
    /// after the packages already sent, and closes the connection. A client can tell this
    /// end from a lost link.
    End,
}

/// A source of output values: what the simulator streams in its data packages.
///
/// The default source is the simulated robot ([`SimulatedRobot`](crate::SimulatedRobot));
/// [`SimBuilder::source`](crate::SimBuilder::source) installs another, for instance one
/// that replays a recording. The simulator does everything else (handshake, recipes,
/// decimation, inputs, faults) the same way for every source.
///
/// ```
/// use rtde_core::{Value, fields::Field};
/// use rtde_sim::{IoState, OutputSource, Sample, Tick};
///
/// /// Streams a counter as every integer field and nothing else.
/// #[derive(Debug)]
/// struct Counter;
///
/// impl OutputSource for Counter {
///     fn provides(&self, field: &'static Field) -> bool {
///         field.wire_type() == rtde_core::fields::WireType::Int32
///     }
///     fn sample(&self, tick: Tick, _: &[&'static Field], _: &IoState, out: &mut [Value]) -> Sample {
///         for v in out {
///             *v = Value::Int32(i32::try_from(tick.index()).unwrap_or(i32::MAX));
///         }
///         Sample::Send
///     }
/// }
/// ```
pub trait OutputSource: Send + Sync + fmt::Debug + 'static {
    /// Whether this source can stream `field`. The simulator answers `NOT_FOUND` in a
    /// SETUP_OUTPUTS reply for a field the source does not provide, as it does for a
    /// field the configured controller version lacks. All fields by default.
    fn provides(&self, field: &'static Field) -> bool {
        let _ = field;
        true
    }

    /// The highest output frequency this source has data for, in hertz; `None` (the
    /// default) for any frequency the controller offers.
    ///
    /// The simulator refuses a SETUP_OUTPUTS above it, and one in protocol v1 (which
    /// streams at the control-loop rate) when it is below the loop rate, with a text
    /// message saying so. A replayed recording has data at the rate it was recorded at,
    /// and no more.
    fn max_frequency(&self) -> Option<f64> {
        None
    }

    /// What the simulator's text messages call this source when it refuses a recipe
    /// because of it ("`actual_TCP_pose` is not provided by …"); `"this simulation"` by
    /// default.
    fn name(&self) -> String {
        "this simulation".to_owned()
    }

    /// Fills `out[i]` with the value of `fields[i]` at `tick`.
    ///
    /// `out[i]` arrives holding a value of the field's wire type (the previous package's
    /// or zero); a value of another type is replaced by the type's zero before sending.
    /// `io` is the controller's input state: what clients have written.
    fn sample(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        io: &IoState,
        out: &mut [Value],
    ) -> Sample;

    /// As [`sample`](OutputSource::sample), while the simulator runs a robot program
    /// ([`SimBuilder::servo_program`](crate::SimBuilder::servo_program),
    /// [`SimBuilder::command_program`](crate::SimBuilder::command_program)): `program` is its
    /// state once `tick` has run. The default ignores the program and samples as without
    /// one; the simulated robot overrides it, since the program moves its joints and owns
    /// the registers of its handshake.
    fn sample_with_program(
        &self,
        tick: Tick,
        fields: &[&'static Field],
        io: &IoState,
        program: &Program,
        out: &mut [Value],
    ) -> Sample {
        let _ = program;
        self.sample(tick, fields, io, out)
    }
}
