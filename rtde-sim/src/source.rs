//! Where output values come from: the simulated robot by default, or any other
//! [`OutputSource`] (a replayed recording, a scripted scenario).

use std::collections::HashMap;
use std::fmt;

use rtde_core::Value;
use rtde_core::fields::Field;

use crate::program::ServoProgram;

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
}

/// The controller's input state: the last value every client wrote to each input
/// variable, and what those writes did to the robot's outputs.
///
/// Values outlive the connection that wrote them, as on a controller. Masked values take
/// effect as `rtde_core::fields::masks()` says: only the bits (or the whole value) their mask
/// selects in the same package.
#[derive(Clone, Debug, Default)]
pub struct IoState {
    inputs: HashMap<&'static str, Value>,
    /// Each masked value as the controller applied it, by the value's name.
    applied: HashMap<&'static str, Value>,
    /// The robot program, when the simulator runs one, and the last tick it ran.
    program: Option<ServoProgram>,
    program_tick: Option<u64>,
}

/// The most ticks a program catches up in one go: a clock that jumped (a paused process)
/// restarts the program's count rather than stalling the connection.
const MAX_CATCH_UP_TICKS: u64 = 1000;

impl IoState {
    /// The robot program the simulator runs ([`SimBuilder::servo_program`](crate::SimBuilder::servo_program)),
    /// if any.
    #[must_use]
    pub fn program(&self) -> Option<&ServoProgram> {
        self.program.as_ref()
    }

    pub(crate) fn install_program(&mut self, program: ServoProgram) {
        self.program = Some(program);
    }

    /// Runs the program through every tick up to `tick`, once each.
    pub(crate) fn advance_program(&mut self, tick: u64, rate: u32) {
        let Some(mut program) = self.program.take() else {
            return;
        };
        let first = match self.program_tick {
            Some(last) if tick <= last => {
                self.program = Some(program);
                return;
            }
            Some(last) if tick - last <= MAX_CATCH_UP_TICKS => last + 1,
            _ => tick,
        };
        let dt = 1.0 / f64::from(rate.max(1));
        for _ in first..=tick {
            program.step(self, dt);
        }
        self.program_tick = Some(tick);
        self.program = Some(program);
    }

    /// The last value written to the input variable `name`, if any client wrote it.
    #[must_use]
    pub fn input(&self, name: &str) -> Option<&Value> {
        self.inputs.get(name)
    }

    /// The digital outputs as `actual_digital_output_bits` reports them: bits 0–7 the
    /// standard outputs, 8–15 the configurable outputs, 16–17 the tool outputs.
    #[must_use]
    pub fn digital_output_bits(&self) -> u64 {
        self.read_back_bits("actual_digital_output_bits")
    }

    /// The speed slider, as `target_speed_fraction` reports it: 1.0 until a client
    /// writes `speed_slider_fraction` with bit 0 of `speed_slider_mask` set; clamped to
    /// 0..=1.
    #[must_use]
    pub fn speed_fraction(&self) -> f64 {
        match self.applied.get("speed_slider_fraction") {
            Some(Value::Double(f)) => f.clamp(0.0, 1.0),
            _ => 1.0,
        }
    }

    /// Standard analog output `i` (0 or 1), as written through
    /// `standard_analog_output_0`/`_1` under `standard_analog_output_mask`.
    #[must_use]
    pub fn analog_output(&self, i: usize) -> f64 {
        let name = match i {
            0 => "standard_analog_output_0",
            1 => "standard_analog_output_1",
            _ => return 0.0,
        };
        match self.applied.get(name) {
            Some(Value::Double(v)) => *v,
            _ => 0.0,
        }
    }

    /// The analog output types (bit `i`: output `i` is a voltage output rather than a
    /// current output), as written through `standard_analog_output_type`.
    #[must_use]
    pub fn analog_output_types(&self) -> u8 {
        u8::try_from(self.applied_bits("standard_analog_output_type") & 0b11).unwrap_or(0)
    }

    /// The bits of an output field that masked inputs read back into (for instance
    /// `actual_digital_output_bits`), assembled from the mask table.
    #[must_use]
    pub fn read_back_bits(&self, output: &str) -> u64 {
        rtde_core::fields::masks()
            .iter()
            .filter_map(|m| Some((m, m.reads_back()?)))
            .filter(|(_, r)| r.field() == output)
            .filter_map(|(m, r)| Some(self.applied_bits(m.value()) << r.shift()?))
            .fold(0, |bits, b| bits | b)
    }

    /// Stores one package's input values, then applies the masked ones where the
    /// package's masks select them.
    pub(crate) fn write(&mut self, values: &[(&'static str, Value)]) {
        for &(name, value) in values {
            self.inputs.insert(name, value);
        }
        let written = |name: &str| values.iter().any(|(n, _)| *n == name);
        for m in rtde_core::fields::masks() {
            // A value takes effect when a package carries it, under the last mask written
            // (whichever recipe wrote it); a package without the value leaves the applied
            // one alone, so that a recipe without `standard_analog_output_type` keeps the
            // outputs' domains.
            if !written(m.value()) {
                continue;
            }
            let mask = self.u64_of(m.mask());
            let Some(&value) = self.inputs.get(m.value()) else {
                continue;
            };
            let applied = match value {
                Value::Double(v) if m.selects(mask) && v.is_finite() => value,
                Value::Double(_) => continue,
                Value::Uint8(v) => {
                    let old = self.applied_bits(m.value());
                    let new = m.apply_bits(old, mask, u64::from(v));
                    Value::Uint8(u8::try_from(new & 0xff).unwrap_or(0))
                }
                _ => continue,
            };
            self.applied.insert(m.value(), applied);
        }
    }

    fn applied_bits(&self, name: &str) -> u64 {
        match self.applied.get(name) {
            Some(Value::Uint8(v)) => u64::from(*v),
            _ => 0,
        }
    }

    fn u64_of(&self, name: &str) -> u64 {
        match self.inputs.get(name) {
            Some(Value::Bool(b)) => u64::from(*b),
            Some(Value::Uint8(v)) => u64::from(*v),
            Some(Value::Uint32(v)) => u64::from(*v),
            Some(Value::Uint64(v)) => *v,
            Some(Value::Int32(v)) => u64::from(v.cast_unsigned()),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_outputs_follow_their_masks() {
        let mut io = IoState::default();
        io.write(&[
            ("standard_digital_output_mask", Value::Uint8(0b0000_0101)),
            ("standard_digital_output", Value::Uint8(0b1111_1111)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b101);
        // Only bit 2 is masked now: bit 0 keeps its value.
        io.write(&[
            ("standard_digital_output_mask", Value::Uint8(0b0000_0100)),
            ("standard_digital_output", Value::Uint8(0)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b001);
        io.write(&[
            ("tool_digital_output_mask", Value::Uint8(0b11)),
            ("tool_digital_output", Value::Uint8(0b10)),
            ("configurable_digital_output_mask", Value::Uint8(0xff)),
            ("configurable_digital_output", Value::Uint8(0x81)),
        ]);
        assert_eq!(io.digital_output_bits(), 0b10_1000_0001_0000_0001);
    }

    #[test]
    fn speed_slider_needs_its_mask() {
        let mut io = IoState::default();
        io.write(&[("speed_slider_fraction", Value::Double(0.25))]);
        assert_eq!(io.speed_fraction(), 1.0);
        io.write(&[
            ("speed_slider_mask", Value::Uint32(1)),
            ("speed_slider_fraction", Value::Double(0.25)),
        ]);
        assert_eq!(io.speed_fraction(), 0.25);
        io.write(&[("speed_slider_fraction", Value::Double(7.0))]);
        assert_eq!(io.speed_fraction(), 1.0);
    }

    #[test]
    fn analog_outputs_follow_their_mask() {
        let mut io = IoState::default();
        io.write(&[
            ("standard_analog_output_mask", Value::Uint8(0b10)),
            ("standard_analog_output_type", Value::Uint8(0b11)),
            ("standard_analog_output_0", Value::Double(0.3)),
            ("standard_analog_output_1", Value::Double(0.7)),
        ]);
        assert_eq!(io.analog_output(0), 0.0);
        assert_eq!(io.analog_output(1), 0.7);
        assert_eq!(io.analog_output_types(), 0b10);
    }
}
