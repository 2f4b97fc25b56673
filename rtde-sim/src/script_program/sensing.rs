//! What a script reads of the robot beyond its joints and registers: its inputs and
//! outputs, what it measures (force, temperatures, whether it is steady), the joints'
//! recent history, and the settings the simulated arm takes without acting on them.
//!
//! The simulated arm meets nothing and nobody pushes it: the force at the tool is zero, a
//! contact never happens, and the inputs are as nothing drives them (off, 0 V).

use std::collections::VecDeque;

use rtde_core::Value as RtdeValue;
use rtde_kinematics::{compose, invert};
use rtde_urscript::run::{HostCall, Reply, Value};

use super::host::SimHost;
use crate::robot::{CONTROLLER_TEMPERATURE, JOINT_TEMPERATURES, mix, unit};

/// How many controller ticks back `get_actual_joint_positions_history` reaches.
pub(super) const HISTORY_TICKS: usize = 1000;

/// The joint positions of the last [`HISTORY_TICKS`] ticks, newest first.
#[derive(Clone, Debug)]
pub(super) struct History(VecDeque<[f64; 6]>);

impl History {
    /// A history that starts with the arm at `q`.
    pub(super) fn new(q: [f64; 6]) -> Self {
        History(VecDeque::from([q]))
    }

    /// The positions at the end of a tick.
    pub(super) fn push(&mut self, q: [f64; 6]) {
        if self.0.len() == HISTORY_TICKS {
            self.0.pop_back();
        }
        self.0.push_front(q);
    }
}

/// The generator behind `random()`: the calls counted, each mixed as the simulator's
/// noise is, so the same script gives the same numbers on every run, as everything else in
/// a deterministic simulator does.
#[derive(Clone, Debug, Default)]
pub(super) struct Random(u64);

impl Random {
    /// The next number in `[0, 1)`.
    fn next(&mut self) -> f64 {
        self.0 += 1;
        unit(mix(self.0))
    }
}

impl SimHost<'_> {
    /// The built-ins of this module; `None` for any other.
    pub(super) fn sensing(&mut self, call: &HostCall<'_>) -> Option<Result<Reply, String>> {
        let n = || call.arg(0).int();
        let bit = |first: u32, count: i32, bits: u64| {
            n().and_then(|i| {
                if (0..count).contains(&i) {
                    Ok(Reply::Done(Value::Bool(
                        bits >> (first + i.unsigned_abs()) & 1 == 1,
                    )))
                } else {
                    Err(format!(
                        "`{}`: there is no {} {i}",
                        call.name,
                        what(call.name)
                    ))
                }
            })
        };
        let outputs = self.io.digital_output_bits() | self.outputs.digital;
        Some(match call.name {
            // Nothing drives the inputs.
            "get_standard_digital_in" | "get_digital_in" => bit(0, 8, 0),
            "get_configurable_digital_in" => bit(0, 8, 0),
            "get_tool_digital_in" => bit(0, 2, 0),
            "get_digital_out" => bit(0, 8, outputs),
            "get_configurable_digital_out" => bit(8, 8, outputs),
            "get_tool_digital_out" => bit(16, 2, outputs),
            "get_standard_analog_in" | "get_analog_in" | "get_tool_analog_in" => {
                n().map(|_| Reply::Done(Value::Float(0.0)))
            }
            "get_standard_analog_out" => n()
                .and_then(|i| self.outputs.analog_out(i, self.io))
                .map(|v| Reply::Done(Value::Float(v))),
            "set_standard_analog_out" | "set_analog_out" => (|| {
                let i = n()?;
                let v = call.arg(1).number()?;
                self.outputs.analog_out(i, self.io)?;
                self.outputs.analog[usize::from(i == 1)] = Some(v);
                Ok(Reply::Done(Value::None))
            })(),
            "read_output_float_register" => self.output_register("double", call),
            "read_output_integer_register" => self.output_register("int", call),
            "read_output_boolean_register" => self.output_register("bit", call),
            // The manual's joint torques are what is left once the arm's own (gravity,
            // friction, its motion) is taken out: what a load or a push adds. None here.
            "get_tcp_force" | "get_joint_torques" => Ok(Reply::Done(Value::floats([0.0; 6]))),
            // The flange's, as RTDE's `actual_TCP_speed` reports it.
            "get_actual_tcp_speed" | "get_target_tcp_speed" => Ok(Reply::Done(Value::floats(
                self.arm.model.tcp_speed(&self.arm.q, &self.arm.qd),
            ))),
            // No contact, ever: the simulated arm meets nothing.
            "tool_contact" => Ok(Reply::Done(Value::Int(0))),
            "is_steady" => Ok(Reply::Done(Value::Bool(
                self.arm.qd.iter().all(|v| *v == 0.0),
            ))),
            "get_joint_temp" => n().and_then(|j| {
                usize::try_from(j)
                    .ok()
                    .and_then(|j| JOINT_TEMPERATURES.get(j))
                    .map(|t| Reply::Done(Value::Float(*t)))
                    .ok_or_else(|| format!("`get_joint_temp`: there is no joint {j}"))
            }),
            "get_controller_temp" => Ok(Reply::Done(Value::Float(CONTROLLER_TEMPERATURE))),
            "get_actual_joint_positions_history" => n().and_then(|steps| {
                usize::try_from(steps)
                    .ok()
                    .filter(|s| *s < HISTORY_TICKS)
                    .map(|s| {
                        // Before the program's first tick, the arm stood where it started.
                        let h = &self.history.0;
                        let q = h.get(s).or(h.back()).copied().unwrap_or(self.arm.q);
                        Reply::Done(Value::floats(q))
                    })
                    .ok_or_else(|| {
                        format!("`steps` is {steps}: 0 to {} ticks back", HISTORY_TICKS - 1)
                    })
            }),
            "get_inverse_kin_has_solution" => call.arg(0).six().map(|pose| {
                let flange = compose(&pose, &invert(&self.arm.tcp));
                let near = call.arg(1).six().unwrap_or(self.arm.q);
                Reply::Done(Value::Bool(
                    self.arm.model.inverse_nearest(flange, &near).is_ok(),
                ))
            }),
            "get_target_waypoint" => Ok(Reply::Done(Value::Pose(self.arm.waypoint()))),
            "get_freedrive_status" => {
                Ok(Reply::Done(Value::Int(i32::from(self.outputs.freedrive))))
            }
            "random" => Ok(Reply::Done(Value::Float(self.random.next()))),
            _ => return None,
        })
    }

    fn output_register(&self, kind: &str, call: &HostCall<'_>) -> Result<Reply, String> {
        let i = call.arg(0).int()?;
        let value = self
            .outputs
            .registers
            .get(&format!("output_{kind}_register_{i}"));
        Ok(Reply::Done(match (kind, value) {
            (_, Some(RtdeValue::Double(x))) => Value::Float(*x),
            (_, Some(RtdeValue::Int32(x))) => Value::Int(*x),
            (_, Some(RtdeValue::Bool(b))) => Value::Bool(*b),
            ("double", _) => Value::Float(0.0),
            ("int", _) => Value::Int(0),
            _ => Value::Bool(false),
        }))
    }
}

/// What the `n` of a digital built-in numbers, for its error.
fn what(name: &str) -> &'static str {
    if name.ends_with("_in") {
        "input"
    } else {
        "output"
    }
}
