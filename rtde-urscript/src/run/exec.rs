//! One thread's turn: what it waits for is checked, then its instructions run until it
//! yields, ends or uses up its slice.

use super::code::{Op, Var};
use super::{
    Frame, Host, HostCall, Machine, Progress, Reply, RuntimeError, Thread, Value, Wait, ops,
};

/// What an instruction leaves the thread doing.
enum Flow {
    Next,
    Yield(Wait),
}

impl Machine {
    /// Runs a thread's turn in this tick; what it waits for afterwards.
    pub(super) fn resume(
        &mut self,
        t: &mut Thread,
        host: &mut dyn Host,
    ) -> Result<Wait, RuntimeError> {
        match std::mem::take(&mut t.wait) {
            Wait::Ready => {}
            Wait::Done => return Ok(Wait::Done),
            Wait::Ticks(n) if n > 1 => return Ok(Wait::Ticks(n - 1)),
            Wait::Ticks(_) => {}
            Wait::Join(id) if self.alive(id) => return Ok(Wait::Join(id)),
            Wait::Join(_) => {}
            Wait::Host(ticket, span) => match host.poll(ticket) {
                Ok(Progress::Waiting) => return Ok(Wait::Host(ticket, span)),
                Ok(Progress::Done(v)) => t.stack.push(v),
                Err(message) => return Err(RuntimeError { span, message }),
            },
        }
        let mut budget = self.limits.ops_per_tick;
        loop {
            let Some(frame) = t.frames.last_mut() else {
                return Ok(Wait::Done);
            };
            let pc = frame.pc as usize;
            frame.pc += 1;
            let op = self.code.ops[pc];
            match self.execute(t, op, host) {
                Ok(Flow::Next) => {}
                Ok(Flow::Yield(wait)) => {
                    t.behind = 0;
                    return Ok(wait);
                }
                Err(message) => {
                    return Err(RuntimeError {
                        span: self.code.spans[pc],
                        message,
                    });
                }
            }
            budget -= 1;
            if budget == 0 {
                return self.slice_used(t);
            }
        }
    }

    /// The thread computed through its whole slice: it waits for the next tick, unless it
    /// has done so for too long.
    fn slice_used(&self, t: &mut Thread) -> Result<Wait, RuntimeError> {
        t.behind += 1;
        if t.behind < self.limits.ticks_behind {
            return Ok(Wait::Ready);
        }
        let frame = t.frames.last().map_or(0, |f| f.pc as usize);
        let function = t.frames.last().map_or(0, |f| f.function as usize);
        Err(RuntimeError {
            span: self
                .code
                .spans
                .get(frame.saturating_sub(1))
                .copied()
                .unwrap_or_default(),
            message: format!(
                "Runtime too much behind: `{}` ran {} ticks without sync(), sleep or a motion",
                self.code.functions[function].name, t.behind
            ),
        })
    }

    fn alive(&self, id: u32) -> bool {
        self.threads
            .iter()
            .any(|t| t.id == id && t.wait != Wait::Done)
    }

    fn execute(&mut self, t: &mut Thread, op: Op, host: &mut dyn Host) -> Result<Flow, String> {
        match op {
            Op::Const(i) => t.stack.push(self.code.constants[i as usize].clone()),
            Op::Load(v) => {
                let value = self.slot(t, v).clone();
                if value == Value::None {
                    return Err(format!("variable `{}` has no value", self.name(t, v)));
                }
                t.stack.push(value);
            }
            Op::Store(v) => {
                let value = pop(t);
                *self.slot(t, v) = value;
            }
            Op::StoreIndex(v) => {
                let value = pop(t);
                let index = pop(t);
                ops::set_index(self.slot(t, v), &index, value)?;
            }
            Op::StoreField(v, name) => {
                let value = pop(t);
                let Value::Str(name) = self.code.constants[name as usize].clone() else {
                    unreachable!("field names are string constants");
                };
                ops::set_field(self.slot(t, v), &name, value)?;
            }
            Op::Unary(op) => {
                let v = pop(t);
                t.stack.push(ops::unary(op, &v)?);
            }
            Op::Binary(op) => {
                let rhs = pop(t);
                let lhs = pop(t);
                t.stack.push(ops::binary(op, &lhs, &rhs)?);
            }
            Op::Jump(to) => jump(t, to),
            Op::JumpIfFalse(to) => {
                if !pop(t).bool()? {
                    jump(t, to);
                }
            }
            Op::ShortCircuit { on, to } => {
                let decided = t.stack.last().unwrap_or(&Value::None).bool()? == on;
                if decided {
                    jump(t, to);
                } else {
                    t.stack.pop();
                }
            }
            Op::Pop => _ = t.stack.pop(),
            other => return self.execute_more(t, other, host),
        }
        Ok(Flow::Next)
    }

    fn execute_more(
        &mut self,
        t: &mut Thread,
        op: Op,
        host: &mut dyn Host,
    ) -> Result<Flow, String> {
        match op {
            Op::List(n) => {
                let items = t.stack.split_off(t.stack.len() - n as usize);
                t.stack.push(Value::list(items));
            }
            Op::Pose => {
                let at = t.stack.len() - 6;
                let mut p = [0.0; 6];
                for (x, v) in p.iter_mut().zip(&t.stack[at..]) {
                    *x = v.number()?;
                }
                t.stack.truncate(at);
                t.stack.push(Value::Pose(p));
            }
            Op::Struct { names, count } => {
                let values = t.stack.split_off(t.stack.len() - count as usize);
                let names = &self.code.constants[names as usize..(names + count) as usize];
                let fields = names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| match n {
                        Value::Str(n) => (n.clone(), v),
                        _ => unreachable!("field names are string constants"),
                    })
                    .collect();
                t.stack.push(Value::Struct(std::sync::Arc::new(fields)));
            }
            Op::Index => {
                let index = pop(t);
                let base = pop(t);
                t.stack.push(ops::index(&base, &index)?);
            }
            Op::Field(name) => {
                let base = pop(t);
                let Value::Str(name) = &self.code.constants[name as usize] else {
                    unreachable!("field names are string constants");
                };
                t.stack.push(ops::field(&base, name)?);
            }
            Op::RangeGoesOn => {
                let step = pop(t);
                let end = pop(t);
                let counter = pop(t);
                let up = step.number()? > 0.0;
                let bound = if up {
                    super::super::ast::BinaryOp::Lt
                } else {
                    super::super::ast::BinaryOp::Gt
                };
                if step.number()? == 0.0 {
                    return Err("`range` step must not be zero".into());
                }
                t.stack.push(ops::binary(bound, &counter, &end)?);
            }
            other => return self.control(t, other, host),
        }
        Ok(Flow::Next)
    }

    fn control(&mut self, t: &mut Thread, op: Op, host: &mut dyn Host) -> Result<Flow, String> {
        match op {
            Op::Call(f) => self.call(t, f)?,
            Op::Return => {
                let value = pop(t);
                let frame = t.frames.pop().expect("a running thread has a frame");
                t.stack.truncate(frame.base);
                if t.frames.is_empty() {
                    return Ok(Flow::Yield(Wait::Done));
                }
                t.stack.push(value);
            }
            Op::Pure(f, argc) => {
                let at = t.stack.len() - usize::from(argc);
                let value = f(&t.stack[at..])?;
                t.stack.truncate(at);
                t.stack.push(value);
            }
            Op::Host(name, argc) => {
                let at = t.stack.len() - usize::from(argc);
                let reply = host.call(HostCall {
                    name,
                    args: &t.stack[at..],
                })?;
                t.stack.truncate(at);
                match reply {
                    Reply::Done(v) => t.stack.push(v),
                    Reply::Blocked(ticket) => {
                        let span =
                            self.code.spans[t.frames.last().map_or(0, |f| f.pc as usize - 1)];
                        return Ok(Flow::Yield(Wait::Host(ticket, span)));
                    }
                }
            }
            Op::Sync => {
                t.stack.push(Value::None);
                return Ok(Flow::Yield(Wait::Ticks(1)));
            }
            Op::Sleep => {
                let seconds = pop(t).number()?;
                if seconds.is_nan() || seconds < 0.0 {
                    return Err(format!("sleep time {seconds} is negative"));
                }
                t.stack.push(Value::None);
                let ticks = (seconds / self.step - 1e-9)
                    .ceil()
                    .clamp(1.0, f64::from(u32::MAX));
                // Clamped to 1..=u32::MAX just above, so the cast is exact.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                return Ok(Flow::Yield(Wait::Ticks(ticks as u32)));
            }
            Op::StepTime => t.stack.push(Value::Float(self.step)),
            other => return self.threading(t, other, host),
        }
        Ok(Flow::Next)
    }

    fn threading(&mut self, t: &mut Thread, op: Op, host: &mut dyn Host) -> Result<Flow, String> {
        match op {
            Op::Run(f) => {
                if self.threads() >= self.limits.threads {
                    return Err(format!("more than {} threads at once", self.limits.threads));
                }
                let params = usize::from(self.code.functions[f as usize].params);
                let args = t.stack.split_off(t.stack.len() - params);
                let handle = self.spawn(f, args);
                t.stack.push(handle);
            }
            // Drivers keep `0` in a thread variable while no thread runs, and kill it
            // either way (ur_rtde's `servo_stop`: `kill servoc_thrd` with none started):
            // the controller takes that, so killing no thread does nothing.
            Op::Kill => {
                let Value::Thread(id) = pop(t) else {
                    return Ok(Flow::Next);
                };
                if id == t.id {
                    return Ok(Flow::Yield(Wait::Done));
                }
                self.kill(id, host);
            }
            Op::Join => {
                let id = handle(&pop(t))?;
                if id == t.id {
                    return Err("a thread cannot join itself".into());
                }
                if self.alive(id) {
                    return Ok(Flow::Yield(Wait::Join(id)));
                }
            }
            Op::EnterCritical => self.critical = Some(t.id),
            Op::ExitCritical => {
                if self.critical == Some(t.id) {
                    self.critical = None;
                }
            }
            Op::Halt => {
                self.finish(host, super::State::Ended);
                return Ok(Flow::Yield(Wait::Done));
            }
            _ => unreachable!("every instruction is handled"),
        }
        Ok(Flow::Next)
    }

    fn call(&self, t: &mut Thread, f: u32) -> Result<(), String> {
        if t.frames.len() >= self.limits.depth {
            return Err(format!("calls nested deeper than {}", self.limits.depth));
        }
        let function = &self.code.functions[f as usize];
        let base = t.stack.len() - usize::from(function.params);
        t.stack.resize(base + function.locals.len(), Value::None);
        t.frames.push(Frame {
            function: f,
            pc: function.entry,
            base,
        });
        Ok(())
    }

    fn kill(&mut self, id: u32, host: &mut dyn Host) {
        if let Some(other) = self.threads.iter_mut().find(|o| o.id == id) {
            if let Wait::Host(ticket, _) = other.wait {
                host.cancel(ticket);
            }
            other.wait = Wait::Done;
            other.frames.clear();
        }
        if self.critical == Some(id) {
            self.critical = None;
        }
    }

    fn slot<'t>(&'t mut self, t: &'t mut Thread, v: Var) -> &'t mut Value {
        match v {
            Var::Local(i) => {
                let base = t.frames.last().map_or(0, |f| f.base);
                &mut t.stack[base + usize::from(i)]
            }
            Var::Global(i) => &mut self.globals[i as usize],
        }
    }

    fn name(&self, t: &Thread, v: Var) -> &str {
        match v {
            Var::Local(i) => {
                let f = t.frames.last().map_or(0, |f| f.function as usize);
                &self.code.functions[f].locals[usize::from(i)]
            }
            Var::Global(i) => &self.code.globals[i as usize],
        }
    }
}

fn pop(t: &mut Thread) -> Value {
    t.stack.pop().unwrap_or_default()
}

fn jump(t: &mut Thread, to: u32) {
    if let Some(f) = t.frames.last_mut() {
        f.pc = to;
    }
}

fn handle(v: &Value) -> Result<u32, String> {
    match v {
        Value::Thread(id) => Ok(*id),
        other => Err(format!(
            "expected a thread handle, got {}",
            other.type_name()
        )),
    }
}
