//! A robot for the engine's tests: it records every call with the tick it came in, keeps
//! registers and outputs, and ends a move a set number of ticks after it starts.

#![allow(dead_code)] // each test file uses part of it

use std::collections::HashMap;

use rtde_urscript::run::{Host, HostCall, Machine, Progress, Reply, State, Value};
use rtde_urscript::{ControllerVersion, check};

/// An e-Series version with every built-in the table knows.
pub(crate) const E_SERIES: ControllerVersion = ControllerVersion::new(5, 23, 0, 0);
/// PolyScope X, for `for` and structs.
pub(crate) const POLYSCOPE_X: ControllerVersion = ControllerVersion::new(10, 7, 0, 0);

#[derive(Default)]
pub(crate) struct Robot {
    /// Each call: the tick it was made in, the name, the arguments.
    pub(crate) calls: Vec<(u64, String, Vec<Value>)>,
    /// `textmsg` texts, as the log shows them.
    pub(crate) log: Vec<String>,
    pub(crate) float_in: HashMap<i32, f64>,
    pub(crate) int_in: HashMap<i32, i32>,
    pub(crate) outputs: HashMap<String, Value>,
    /// Ticks a move takes.
    pub(crate) move_ticks: u32,
    /// Blocked calls: ticket, ticks left.
    pub(crate) moving: Vec<(u64, u32)>,
    pub(crate) cancelled: Vec<u64>,
    pub(crate) tick: u64,
    pub(crate) next_ticket: u64,
}

impl Host for Robot {
    fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
        self.calls
            .push((self.tick, call.name.to_owned(), call.args.to_vec()));
        let done = |v| Ok(Reply::Done(v));
        match call.name {
            "textmsg" => {
                self.log.push(format!("{}{}", call.arg(0), call.arg(1)));
                done(Value::None)
            }
            "movej" | "movel" | "stopj" | "stopl" | "servoj" => {
                self.next_ticket += 1;
                self.moving.push((self.next_ticket, self.move_ticks.max(1)));
                Ok(Reply::Blocked(self.next_ticket))
            }
            "read_input_float_register" => done(Value::Float(
                *self.float_in.get(&call.arg(0).int()?).unwrap_or(&0.0),
            )),
            "read_input_integer_register" => done(Value::Int(
                *self.int_in.get(&call.arg(0).int()?).unwrap_or(&0),
            )),
            "get_actual_joint_positions" => done(Value::floats([0.0, -1.57, 1.57, 0.0, 0.0, 0.0])),
            "get_standard_digital_in" => done(Value::Bool(call.arg(0).int()? == 1)),
            name if name.starts_with("write_") || name.starts_with("set_") => {
                let key = format!("{name}[{}]", call.arg(0));
                self.outputs.insert(key, call.arg(1).clone());
                done(Value::None)
            }
            "popup" => Err("popup: no pendant".into()),
            _ => done(Value::None),
        }
    }

    fn poll(&mut self, ticket: u64) -> Result<Progress, String> {
        let Some(at) = self.moving.iter().position(|(t, _)| *t == ticket) else {
            return Err(format!("ticket {ticket} is not moving"));
        };
        self.moving[at].1 -= 1;
        if self.moving[at].1 == 0 {
            self.moving.remove(at);
            return Ok(Progress::Done(Value::None));
        }
        Ok(Progress::Waiting)
    }

    fn cancel(&mut self, ticket: u64) {
        self.moving.retain(|(t, _)| *t != ticket);
        self.cancelled.push(ticket);
    }
}

impl Robot {
    /// The calls of this name, with their ticks.
    pub(crate) fn ticks_of(&self, name: &str) -> Vec<u64> {
        self.calls
            .iter()
            .filter(|c| c.1 == name)
            .map(|c| c.0)
            .collect()
    }
}

/// The engine for a script at a version, panicking on a compile error (the scripts here
/// are correct).
pub(crate) fn machine_at(script: &str, version: ControllerVersion) -> Machine {
    let checked = check(script, version).unwrap_or_else(|e| panic!("{script}\n{e:?}"));
    Machine::new(&checked).unwrap_or_else(|e| panic!("{script}\n{e}"))
}

/// Runs a script on a robot until it ends or fails, at most `ticks` ticks.
pub(crate) fn run_on(robot: &mut Robot, machine: &mut Machine, ticks: u64) -> State {
    for _ in 0..ticks {
        robot.tick += 1;
        if machine.tick(robot) != &State::Running {
            break;
        }
    }
    machine.state().clone()
}

/// Runs an e-Series script to its end; the robot and the final state.
pub(crate) fn run(script: &str) -> (Robot, State) {
    let mut robot = Robot::default();
    let mut machine = machine_at(script, E_SERIES);
    let state = run_on(&mut robot, &mut machine, 10_000);
    (robot, state)
}

/// The `textmsg` log of a script that must end without error.
pub(crate) fn log_of(script: &str) -> Vec<String> {
    let (robot, state) = run(script);
    assert_eq!(state, State::Ended, "{script}");
    robot.log
}

/// The runtime error of a script that must fail: line, column and text.
pub(crate) fn failure(script: &str) -> (u32, u32, String) {
    match run(script).1 {
        State::Failed(e) => (e.span.line, e.span.column, e.message),
        other => panic!("{script}\nexpected a runtime error, got {other:?}"),
    }
}
