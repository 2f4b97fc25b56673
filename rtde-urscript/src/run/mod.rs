//! Running URScript: a sans-IO engine that executes a checked script tick by tick, as the
//! controller does, against a [`Host`] that is the robot.
//!
//! The script is compiled to a stack machine; each thread (the program and
//! each `run`) has its own value stack and call frames, so it can stop at any `sync()`,
//! `sleep`, blocking built-in or used-up time slice and carry on at a later tick. The
//! scheduling follows the manual's "Thread scheduling": on every tick (2 ms on e-Series,
//! 8 ms on CB3) each runnable thread runs, in the order they were started, until it
//! yields; a thread in a critical section runs alone until it leaves it. A thread that
//! computes through its whole time slice (the instruction budget of [`Limits`]) waits for
//! the next tick, and one that does so for [`Limits::ticks_behind`] ticks in a row stops
//! the program with the controller's error for a runaway program.
//!
//! ```
//! use rtde_urscript::run::{Host, HostCall, Machine, Progress, Reply, State, Value};
//! use rtde_urscript::{check, ControllerVersion};
//!
//! struct Printer(Vec<String>);
//! impl Host for Printer {
//!     fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
//!         self.0.push(format!("{}({})", call.name, call.arg(0)));
//!         Ok(Reply::Done(Value::None))
//!     }
//!     fn poll(&mut self, _: u64) -> Result<Progress, String> { Ok(Progress::Done(Value::None)) }
//! }
//!
//! let script = "def main():\n  i = 0\n  while i < 3:\n    textmsg(i * 1.5)\n    i = i + 1\n    sync()\n  end\nend\n";
//! let checked = check(script, ControllerVersion::new(5, 4, 0, 0)).unwrap();
//! let mut machine = Machine::new(&checked).unwrap();
//! let mut host = Printer(Vec::new());
//! while machine.tick(&mut host) == &State::Running {}
//! assert_eq!(host.0, ["textmsg(0)", "textmsg(1.5)", "textmsg(3)"]);
//! assert_eq!(machine.ticks(), 4);
//! ```

mod code;
mod compile;
mod exec;
mod host;
mod ops;
mod pure;
mod value;

use std::fmt;

pub use host::{Host, HostCall, Progress, Reply};
pub use pure::MAX_LENGTH;
pub use value::Value;

use crate::{Checked, ScriptError, Span};
use code::Code;

/// Where a program stands.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// It has threads left to run.
    Running,
    /// The program's main function returned, or it ran `halt`.
    Ended,
    /// A runtime error stopped it.
    Failed(RuntimeError),
}

/// A runtime error: where, and the controller's text.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    /// The line and column of the expression or statement that failed.
    pub span: Span,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.span, self.message)
    }
}

impl std::error::Error for RuntimeError {}

/// The engine's bounds, so that no script runs away with the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Instructions a thread may run in one tick before its time slice is used up.
    pub ops_per_tick: u32,
    /// Ticks in a row a thread may use up its slice before the program is stopped.
    pub ticks_behind: u32,
    /// Threads alive at once.
    pub threads: usize,
    /// Nested calls in one thread.
    pub depth: usize,
}

impl Default for Limits {
    /// 20,000 instructions a tick (about a tenth of a 2 ms tick on a desktop core); stopped
    /// after 250 such ticks (half a second on e-Series); 64 threads; 256 nested calls.
    fn default() -> Self {
        Limits {
            ops_per_tick: 20_000,
            ticks_behind: 250,
            threads: 64,
            depth: 256,
        }
    }
}

/// What a thread waits for.
#[derive(Clone, Debug, Default, PartialEq)]
enum Wait {
    /// Nothing: it runs when its turn comes.
    #[default]
    Ready,
    /// This many more ticks (`sync`, `sleep`).
    Ticks(u32),
    /// A blocking built-in, by its host ticket; the span is the call's.
    Host(u64, Span),
    /// Another thread's end.
    Join(u32),
    /// It has ended.
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    function: u32,
    pc: u32,
    base: usize,
}

#[derive(Clone, Debug, Default)]
struct Thread {
    id: u32,
    stack: Vec<Value>,
    frames: Vec<Frame>,
    wait: Wait,
    /// Ticks in a row this thread used up its slice.
    behind: u32,
}

impl Thread {
    /// What stands in a thread's place while it runs: ended, with an id no thread has.
    fn placeholder() -> Thread {
        Thread {
            id: u32::MAX,
            wait: Wait::Done,
            ..Thread::default()
        }
    }
}

/// A running URScript program.
#[derive(Clone, Debug)]
pub struct Machine {
    code: Code,
    globals: Vec<Value>,
    threads: Vec<Thread>,
    next_id: u32,
    critical: Option<u32>,
    step: f64,
    limits: Limits,
    ticks: u64,
    state: State,
}

impl Machine {
    /// Compiles a checked program for its controller version's tick (2 ms from e-Series
    /// on, 8 ms on CB3), ready to run from its first statement.
    ///
    /// # Errors
    /// A construct the engine does not run, at its line and column.
    pub fn new(checked: &Checked) -> Result<Machine, ScriptError> {
        let step = if checked.version.major >= 5 {
            0.002
        } else {
            0.008
        };
        let code = compile::compile(&checked.program)?;
        let mut machine = Machine {
            globals: vec![Value::None; code.globals.len()],
            threads: Vec::new(),
            next_id: 0,
            critical: None,
            step,
            limits: Limits::default(),
            ticks: 0,
            state: State::Running,
            code,
        };
        machine.spawn(machine.code.main, Vec::new());
        Ok(machine)
    }

    /// The same machine with other bounds.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Machine {
        self.limits = limits;
        self
    }

    /// The controller's tick, in seconds (what `get_steptime()` gives).
    #[must_use]
    pub fn step_time(&self) -> f64 {
        self.step
    }

    /// Where the program stands.
    #[must_use]
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Ticks run so far.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Threads alive, the program's own included.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.threads.iter().filter(|t| t.wait != Wait::Done).count()
    }

    /// A global variable's value, by name.
    #[must_use]
    pub fn global(&self, name: &str) -> Option<&Value> {
        let i = self.code.globals.iter().position(|n| n == name)?;
        self.globals.get(i)
    }

    /// Stops the program (the controller's stop button): each blocked call is cancelled.
    pub fn stop(&mut self, host: &mut dyn Host) {
        self.finish(host, State::Ended);
    }

    /// Runs one controller tick: each runnable thread runs until it yields.
    pub fn tick(&mut self, host: &mut dyn Host) -> &State {
        if self.state != State::Running {
            return &self.state;
        }
        self.ticks += 1;
        let mut i = 0;
        while i < self.threads.len() && self.state == State::Running {
            let id = self.threads[i].id;
            if self.critical.is_none_or(|owner| owner == id) {
                let mut thread = std::mem::replace(&mut self.threads[i], Thread::placeholder());
                thread.wait = match self.resume(&mut thread, host) {
                    Ok(wait) => wait,
                    Err(e) => {
                        self.threads[i] = thread;
                        self.finish(host, State::Failed(e));
                        break;
                    }
                };
                let main_ended = i == 0 && thread.wait == Wait::Done;
                self.threads[i] = thread;
                if main_ended {
                    self.finish(host, State::Ended);
                }
            }
            i += 1;
        }
        if self.threads.iter().any(|t| t.wait == Wait::Done) {
            let main = self.threads[0].id;
            self.threads
                .retain(|t| t.id == main || t.wait != Wait::Done);
        }
        &self.state
    }

    fn finish(&mut self, host: &mut dyn Host, state: State) {
        for t in &mut self.threads {
            if let Wait::Host(ticket, _) = t.wait {
                host.cancel(ticket);
            }
            t.wait = Wait::Done;
        }
        self.critical = None;
        if self.state == State::Running {
            self.state = state;
        }
    }

    /// Starts a thread in `function` with these arguments; its handle.
    fn spawn(&mut self, function: u32, mut stack: Vec<Value>) -> Value {
        let f = &self.code.functions[function as usize];
        stack.resize(f.locals.len().max(stack.len()), Value::None);
        let id = self.next_id;
        self.next_id += 1;
        self.threads.push(Thread {
            id,
            stack,
            frames: vec![Frame {
                function,
                pc: f.entry,
                base: 0,
            }],
            wait: Wait::Ready,
            behind: 0,
        });
        Value::Thread(id)
    }
}
