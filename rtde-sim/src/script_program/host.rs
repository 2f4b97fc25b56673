//! The simulator as the engine's robot: built-ins that move the arm start moves on the
//! motion model and finish when its [`Step`] says so; registers and outputs go to and
//! from the controller's state.

use std::collections::{BTreeMap, HashMap};

use rtde_core::Value as RtdeValue;
use rtde_kinematics::{compose, invert};
use rtde_urscript::builtins;
use rtde_urscript::run::{Host, HostCall, Progress, Reply, Value};

use super::rtde_watchdog::Watchdogs;
use super::sensing::{History, Random};
use super::sockets::Sockets;
use crate::io::IoState;
use crate::motion::{ArmMotion, Move, Space, Step};

/// The built-ins of the checker's table that a script cannot run on the simulator yet, and
/// why; a call is the runtime error that says so. docs/urscript.md lists them.
pub const NOT_SIMULATED: &[(&str, &str)] = &[
    (
        "optimovej",
        "a time-optimal move's profile is the controller's own, which the motion model does not reproduce",
    ),
    (
        "optimovel",
        "a time-optimal move's profile is the controller's own, which the motion model does not reproduce",
    ),
    (
        "direct_torque",
        "the simulated arm has no dynamics to take torques",
    ),
    (
        "wrench_trans",
        "its frame convention is not confirmed against the manual",
    ),
];

/// What a blocked call waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wait {
    /// A move the arm cannot start yet (the one under way is not within its blend radius).
    ToStart(Move),
    /// A move under way.
    Moving,
    /// A stop ramping to rest.
    Stopping,
    /// `servoj`, `speedj` and `speedl` for their `t`: ticks left.
    Ticks(u32),
    /// A socket read: the script's [`Sockets`] hold it under the same ticket.
    Socket,
    Done,
}

/// The blocked calls, by ticket; a move's id on the motion model is its ticket.
#[derive(Clone, Debug, Default)]
pub(super) struct Pending {
    waits: BTreeMap<u64, Wait>,
    next: u64,
}

impl Pending {
    fn add(&mut self, wait: Wait) -> u64 {
        self.next += 1;
        self.waits.insert(self.next, wait);
        self.next
    }

    /// Starts the moves that wait, in the order they were asked for, as far as the arm
    /// takes them.
    pub(super) fn start_waiting(&mut self, arm: &mut ArmMotion) {
        let waiting: Vec<(u64, Move)> = self
            .waits
            .iter()
            .filter_map(|(t, w)| match w {
                Wait::ToStart(m) => Some((*t, *m)),
                _ => None,
            })
            .collect();
        for (ticket, m) in waiting {
            let Some(returned) = arm.start(m) else {
                return;
            };
            self.waits.insert(ticket, Wait::Moving);
            if let Some(previous) = returned {
                self.finish(previous);
            }
        }
    }

    fn finish(&mut self, id: i32) {
        if let Some(w) = u64::try_from(id).ok().and_then(|t| self.waits.get_mut(&t)) {
            *w = Wait::Done;
        }
    }

    /// Takes in one tick of motion; why the arm stopped, if it could not go on.
    pub(super) fn after_step(&mut self, step: &Step) -> Option<String> {
        // A move with a blend radius returns on entering it, as on a controller: the
        // script goes on, and a next move blends in.
        for id in step
            .returned
            .iter()
            .chain(&step.ended)
            .chain(&step.blending)
        {
            self.finish(*id);
        }
        for w in self.waits.values_mut() {
            match w {
                Wait::Stopping if step.rested => *w = Wait::Done,
                Wait::Ticks(n) if *n <= 1 => *w = Wait::Done,
                Wait::Ticks(n) => *n -= 1,
                _ => {}
            }
        }
        step.unreachable.clone()
    }
}

/// What the script wrote: output registers by field name, the digital and analog
/// outputs, the payload, and whether it put the arm in freedrive.
#[derive(Clone, Debug, Default)]
pub(super) struct Outputs {
    pub(super) registers: HashMap<String, RtdeValue>,
    pub(super) digital: u64,
    /// The standard analog outputs the script set; unset, the controller's.
    pub(super) analog: [Option<f64>; 2],
    pub(super) payload: Payload,
    pub(super) freedrive: bool,
    /// `force_mode` was called, and no `end_force_mode` since.
    pub(super) force: bool,
    /// Why the program met a protective stop (it called `protective_stop()`, or the arm
    /// could not follow its line), while the controller has yet to raise it.
    pub(super) protective_stop: Option<String>,
    /// Why the program is to pause (its RTDE watchdog), while the controller has yet to
    /// pause it.
    pub(super) pause: Option<String>,
}

impl Outputs {
    /// Standard analog output `i` (0 or 1): the script's value, else the controller's.
    pub(super) fn analog_out(&self, i: i32, io: &IoState) -> Result<f64, String> {
        match i {
            0 | 1 => {
                let i = usize::from(i == 1);
                Ok(self.analog[i].unwrap_or_else(|| io.analog_output(i)))
            }
            _ => Err(format!("there is no analog output {i}")),
        }
    }
}

/// The payload the script set: mass (kg), centre of gravity (m) and inertia (kg·m²,
/// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Payload {
    pub(super) mass: f64,
    pub(super) cog: [f64; 3],
    pub(super) inertia: [f64; 6],
}

/// A list of three numbers, such as a centre of gravity.
fn three(v: &Value) -> Result<[f64; 3], String> {
    match v {
        Value::List(items) if items.len() == 3 => {
            let n = |i: usize| items[i].number();
            Ok([n(0)?, n(1)?, n(2)?])
        }
        other => Err(format!("expected a list of 3 numbers, got {other}")),
    }
}

impl SimHost<'_> {
    /// The payload's setters and getters; `None` for any other built-in.
    fn payload(&mut self, call: &HostCall<'_>) -> Option<Result<Reply, String>> {
        let p = &mut self.outputs.payload;
        Some(match call.name {
            "set_payload" => (|| {
                p.mass = arg(call, "m").number()?;
                p.cog = three(arg(call, "cog"))?;
                done(Value::None)
            })(),
            "set_payload_mass" => arg(call, "m").number().and_then(|m| {
                p.mass = m;
                done(Value::None)
            }),
            "set_payload_cog" => three(arg(call, "CoG")).and_then(|cog| {
                p.cog = cog;
                done(Value::None)
            }),
            "set_target_payload" => (|| {
                p.mass = arg(call, "m").number()?;
                p.cog = three(arg(call, "cog"))?;
                p.inertia = arg(call, "inertia").six()?;
                done(Value::None)
            })(),
            "get_target_payload" => done(Value::Float(p.mass)),
            "get_target_payload_cog" => done(Value::list(
                p.cog.iter().map(|v| Value::Float(*v)).collect(),
            )),
            "get_target_payload_inertia" => done(Value::floats(p.inertia)),
            _ => return None,
        })
    }
}

/// The simulator during one tick of the script.
pub(super) struct SimHost<'a> {
    pub(super) arm: &'a mut ArmMotion,
    pub(super) io: &'a IoState,
    pub(super) pending: &'a mut Pending,
    pub(super) outputs: &'a mut Outputs,
    pub(super) messages: &'a mut Vec<String>,
    pub(super) sockets: &'a Sockets,
    pub(super) history: &'a History,
    pub(super) random: &'a mut Random,
    pub(super) watchdogs: &'a mut Watchdogs,
    pub(super) dt: f64,
}

/// An argument by its parameter's name in the built-in table.
fn arg<'c>(call: &'c HostCall<'_>, name: &str) -> &'c Value {
    let at = builtins::lookup(call.name)
        .and_then(|b| b.params.iter().position(|p| p.name == name))
        .unwrap_or(usize::MAX);
    call.arg(at)
}

fn done(v: Value) -> Result<Reply, String> {
    Ok(Reply::Done(v))
}

impl SimHost<'_> {
    /// Joint positions from a list, or from a TCP pose by inverse kinematics near `near`.
    fn joints(&self, v: &Value, near: &[f64; 6]) -> Result<[f64; 6], String> {
        match v {
            Value::Pose(p) => {
                let flange = compose(p, &invert(&self.arm.tcp));
                self.arm
                    .model
                    .inverse_nearest(flange, near)
                    .map_err(|e| e.to_string())
            }
            other => other.six(),
        }
    }

    /// A TCP pose from a pose, or from joint positions by forward kinematics.
    fn pose(&self, v: &Value) -> Result<[f64; 6], String> {
        match v {
            Value::List(_) => Ok(self.arm.tcp_pose_at(&v.six()?)),
            other => other.six(),
        }
    }

    fn start_move(&mut self, call: &HostCall<'_>, space: Space) -> Result<Reply, String> {
        // `movec(pose_via, pose_to, …)`: its target comes second.
        let (via, to) = match call.name {
            "movec" => (Some(self.pose(call.arg(0))?), call.arg(1)),
            _ => (None, call.arg(0)),
        };
        let target = match space {
            Space::Joint => self.joints(to, &self.arm.q)?,
            Space::Linear => self.pose(to)?,
        };
        if let Some(via) = &via {
            self.arm.check_circle(via, &target)?;
        }
        let ticket = self.pending.add(Wait::Done);
        let m = Move {
            space,
            target,
            speed: arg(call, "v").number()?,
            accel: arg(call, "a").number()?,
            blend: arg(call, "r").number()?,
            via,
            id: i32::try_from(ticket).map_err(|_| "too many moves".to_owned())?,
        };
        self.pending.waits.insert(ticket, Wait::ToStart(m));
        self.pending.start_waiting(self.arm);
        Ok(Reply::Blocked(ticket))
    }

    fn for_time(&mut self, seconds: f64) -> Reply {
        let ticks = (seconds / self.dt - 1e-9).ceil().clamp(1.0, 1e9);
        // Clamped to 1..=1e9 above.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Reply::Blocked(self.pending.add(Wait::Ticks(ticks as u32)))
    }

    fn motion(&mut self, call: &HostCall<'_>) -> Option<Result<Reply, String>> {
        Some(match call.name {
            "movej" => self.start_move(call, Space::Joint),
            // The manual's `servoc` servos to its pose "circular in tool-space" with movel's
            // tool acceleration, speed and blend radius: on the motion model it is movel's
            // line and profile, and a next call blends into it at `r`, as ur_rtde's servoC
            // thread's repeated calls do.
            "movel" | "movep" | "movec" | "servoc" => self.start_move(call, Space::Linear),
            // The speed slider stretches servoj's time, as it stretches every profile: a
            // client streaming a waypoint per servoj slows down with it.
            "servoj" => self.joints(call.arg(0), &self.arm.q).and_then(|q| {
                self.arm.servo(q);
                let slider = self.io.speed_fraction().max(1e-6);
                Ok(self.for_time(arg(call, "t").number()? / slider))
            }),
            "speedj" | "speedl" => {
                let space = if call.name == "speedj" {
                    Space::Joint
                } else {
                    Space::Linear
                };
                (|| {
                    self.arm
                        .ramp(space, call.arg(0).six()?, arg(call, "a").number()?);
                    Ok(self.for_time(arg(call, "t").number().unwrap_or(0.0)))
                })()
            }
            "stopj" | "stopl" => {
                let space = if call.name == "stopj" {
                    Space::Joint
                } else {
                    Space::Linear
                };
                match arg(call, "a").number() {
                    Ok(a) if self.arm.stop(space, a) => {
                        Ok(Reply::Blocked(self.pending.add(Wait::Stopping)))
                    }
                    Ok(_) => done(Value::None),
                    Err(e) => Err(e),
                }
            }
            _ => return None,
        })
    }

    fn state(&mut self, call: &HostCall<'_>) -> Option<Result<Reply, String>> {
        let q = self.arm.q;
        Some(match call.name {
            "get_actual_joint_positions" | "get_target_joint_positions" | "get_joint_positions" => {
                done(Value::floats(q))
            }
            "get_actual_joint_speeds" | "get_target_joint_speeds" => {
                done(Value::floats(self.arm.qd))
            }
            "get_actual_tcp_pose" | "get_target_tcp_pose" => done(Value::Pose(self.arm.tcp_pose())),
            "get_actual_tool_flange_pose" => done(Value::Pose(self.arm.model.tcp_pose(&q))),
            "get_tcp_offset" => done(Value::Pose(self.arm.tcp)),
            "get_forward_kin" => (|| {
                let joints = arg(call, "q").six()?;
                Ok(Reply::Done(Value::Pose(compose(
                    &self.arm.model.tcp_pose(&joints),
                    &arg(call, "tcp").six()?,
                ))))
            })(),
            "get_inverse_kin" => (|| {
                let flange = compose(&arg(call, "x").six()?, &invert(&arg(call, "tcp").six()?));
                let near = arg(call, "qnear").six()?;
                let q = self
                    .arm
                    .model
                    .inverse_nearest(flange, &near)
                    .map_err(|e| e.to_string())?;
                Ok(Reply::Done(Value::floats(q)))
            })(),
            // The simulator's only limits are the arm's reach and its joints' ±2π: a pose
            // is within them when the inverse kinematics has a solution.
            "is_within_safety_limits" => {
                let target = arg(call, "pose");
                let within = match target {
                    Value::Pose(p) => {
                        let flange = compose(p, &invert(&self.arm.tcp));
                        self.arm.model.inverse_nearest(flange, &q).is_ok()
                    }
                    joints => joints
                        .six()
                        .is_ok_and(|q| q.iter().all(|j| j.abs() <= std::f64::consts::TAU)),
                };
                done(Value::Bool(within))
            }
            "set_tcp" => call.arg(0).six().map(|p| {
                self.arm.tcp = p;
                Reply::Done(Value::None)
            }),
            _ => return None,
        })
    }

    fn io(&mut self, call: &HostCall<'_>) -> Option<Result<Reply, String>> {
        let index = || call.arg(0).int();
        let input = |kind: &str| {
            index().map(|i| {
                self.io
                    .input(&format!("input_{kind}_register_{i}"))
                    .cloned()
            })
        };
        Some(match call.name {
            "read_input_float_register" => input("double").map(|v| match v {
                Some(RtdeValue::Double(x)) => Reply::Done(Value::Float(x)),
                _ => Reply::Done(Value::Float(0.0)),
            }),
            "read_input_integer_register" => input("int").map(|v| match v {
                Some(RtdeValue::Int32(x)) => Reply::Done(Value::Int(x)),
                _ => Reply::Done(Value::Int(0)),
            }),
            "read_input_boolean_register" => {
                input("bit").map(|v| Reply::Done(Value::Bool(v == Some(RtdeValue::Bool(true)))))
            }
            "write_output_float_register" => {
                self.write("double", call, |v| v.number().map(RtdeValue::Double))
            }
            "write_output_integer_register" => {
                self.write("int", call, |v| v.int().map(RtdeValue::Int32))
            }
            "write_output_boolean_register" => {
                self.write("bit", call, |v| v.bool().map(RtdeValue::Bool))
            }
            "set_standard_digital_out" | "set_digital_out" => self.digital(call, 0, 8),
            "set_configurable_digital_out" => self.digital(call, 8, 8),
            "set_tool_digital_out" => self.digital(call, 16, 2),
            "get_standard_digital_out" => index().map(|n| {
                Reply::Done(Value::Bool(
                    (0..8).contains(&n) && self.outputs.digital >> n & 1 == 1,
                ))
            }),
            _ => return None,
        })
    }

    fn write(
        &mut self,
        kind: &str,
        call: &HostCall<'_>,
        value: impl Fn(&Value) -> Result<RtdeValue, String>,
    ) -> Result<Reply, String> {
        let i = call.arg(0).int()?;
        let v = value(call.arg(1))?;
        self.outputs
            .registers
            .insert(format!("output_{kind}_register_{i}"), v);
        done(Value::None)
    }

    fn digital(&mut self, call: &HostCall<'_>, first: u32, count: i32) -> Result<Reply, String> {
        let n = call.arg(0).int()?;
        if !(0..count).contains(&n) {
            return Err(format!("`{}`: there is no output {n}", call.name));
        }
        let bit = 1u64 << (first + n.unsigned_abs());
        if call.arg(1).bool()? {
            self.outputs.digital |= bit;
        } else {
            self.outputs.digital &= !bit;
        }
        done(Value::None)
    }
}

impl Host for SimHost<'_> {
    fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
        if let Some(r) = self
            .motion(&call)
            .or_else(|| self.state(&call))
            .or_else(|| self.io(&call))
            .or_else(|| self.payload(&call))
            .or_else(|| self.sensing(&call))
            .or_else(|| {
                let (pending, messages) = (&mut *self.pending, &mut *self.messages);
                self.sockets.call(
                    &call,
                    self.dt,
                    &mut || pending.add(Wait::Socket),
                    &mut |said| messages.push(said),
                )
            })
        {
            return r;
        }
        match call.name {
            "textmsg" => {
                self.messages
                    .push(format!("{}{}", call.arg(0), call.arg(1)));
                done(Value::None)
            }
            "popup" => {
                self.messages.push(format!("popup: {}", call.arg(0)));
                done(Value::None)
            }
            // Settings the motion model does not use yet: accepted as the controller does.
            // Force, teach and freedrive mode change nothing either: the simulated arm meets
            // nothing and nobody pushes it, so it holds still in them, as the command
            // program's model says.
            // The controller raises it between ticks: the robot's program pauses, and with
            // it this one, until the stop is unlocked and the program played again. The call
            // holds its thread to the next tick, so nothing after it runs before the stop.
            "protective_stop" => {
                self.outputs.protective_stop = Some("the program called protective_stop()".into());
                Ok(self.for_time(self.dt))
            }
            // Teach mode is freedrive by another name.
            "freedrive_mode" | "end_freedrive_mode" | "teach_mode" | "end_teach_mode" => {
                self.outputs.freedrive = matches!(call.name, "freedrive_mode" | "teach_mode");
                done(Value::None)
            }
            "force_mode" | "end_force_mode" => {
                self.outputs.force = call.name == "force_mode";
                done(Value::None)
            }
            "rtde_set_watchdog" => {
                let text = |v: &Value| match v {
                    Value::Str(s) => Ok(s.to_string()),
                    other => Err(format!("expected a string, got {other}")),
                };
                (|| {
                    self.watchdogs.set(
                        self.io,
                        &text(arg(&call, "variable_name"))?,
                        arg(&call, "min_frequency").number()?,
                        &text(arg(&call, "action"))?,
                    )?;
                    done(Value::None)
                })()
            }
            "set_gravity"
            | "zero_ftsensor"
            | "set_speed_slider_fraction"
            | "force_mode_set_damping"
            | "force_mode_set_gain_scaling"
            | "set_tool_voltage"
            | "enable_external_ft_sensor"
            | "ft_rtde_input_enable"
            | "set_standard_analog_input_domain"
            | "set_analog_outputdomain"
            | "set_tool_analog_input_domain" => done(Value::None),
            other => Err(
                match NOT_SIMULATED.iter().find(|(name, _)| *name == other) {
                    Some((_, why)) => format!("`{other}` is not simulated yet: {why}"),
                    None => format!("`{other}` is not simulated yet"),
                },
            ),
        }
    }

    fn poll(&mut self, ticket: u64) -> Result<Progress, String> {
        match self.pending.waits.get(&ticket) {
            Some(Wait::Socket) => {
                let progress = self.sockets.poll(ticket);
                if !matches!(progress, Some(Progress::Waiting)) {
                    self.pending.waits.remove(&ticket);
                }
                progress.ok_or_else(|| format!("no socket read waits with ticket {ticket}"))
            }
            Some(Wait::Done) => {
                self.pending.waits.remove(&ticket);
                Ok(Progress::Done(Value::None))
            }
            Some(_) => Ok(Progress::Waiting),
            None => Err(format!("no call waits with ticket {ticket}")),
        }
    }

    fn cancel(&mut self, ticket: u64) {
        self.pending.waits.remove(&ticket);
        self.sockets.cancel(ticket);
    }
}
