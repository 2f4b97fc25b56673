//! rtde's own command program (`rtde_command.script`) on the simulator's URScript engine:
//! CPU time per control-loop tick of the program and the arm's motion (`Program::step`),
//! idle (the watchdog kicked every tick, no command) and servoing (a new `servo_j` target
//! every tick, as rtde-robot's servo streams), less the client's package alone (the
//! floor), interleaved in one run, as the share of a 2 ms tick. These figures showed that
//! speed did not need the native emulation the simulator had (issue 34, docs/urscript.md).
//!
//! `cargo bench -p rtde-bench --bench own_programs [-- --runs 3 --rounds 30]`

use std::cell::RefCell;
use std::process::ExitCode;
use std::time::Duration;

use rtde_bench::interleave::Interleaved;
use rtde_bench::report::{arg, commit, cpu_model};
use rtde_core::Value;
use rtde_robot_proto::programs::command::{Command, CommandLayout, command_program, int_in};
use rtde_robot_proto::script::Program as ScriptText;
use rtde_sim::script_program::ScriptProgram;
use rtde_sim::{Arm, IoState, Program};
use rtde_urscript::ControllerVersion;

const DT: f64 = 0.002;
const TICK_US: f64 = 2_000.0;
const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
const CASES: [&str; 4] = [
    "idle",
    "servoing",
    "floor: idle client",
    "floor: servo client",
];

/// A client of one program: the registers it writes each tick, and the program (none: the
/// floor, the client's package alone, which every case pays).
struct Client {
    program: Option<Program>,
    io: IoState,
    tick: i32,
    servoing: bool,
    names: Names,
}

/// The input register names of the upper layout.
struct Names {
    watchdog: String,
    command: String,
    sequence: String,
    doubles: Vec<String>,
}

impl Client {
    fn new(program: Option<Program>, servoing: bool) -> Client {
        let l = CommandLayout::UPPER;
        Client {
            program,
            io: IoState::default(),
            tick: 0,
            servoing,
            names: Names {
                watchdog: l.int_input(int_in::WATCHDOG),
                command: l.int_input(int_in::COMMAND),
                sequence: l.int_input(int_in::SEQUENCE),
                doubles: (0..9).map(|o| l.double_input(o)).collect(),
            },
        }
    }

    /// One tick: the client's package, then the program's step.
    fn step(&mut self) -> Result<(), String> {
        self.tick = self.tick.wrapping_add(1);
        let n = &self.names;
        let mut values = vec![(n.watchdog.as_str(), Value::Int32(self.tick))];
        if self.servoing {
            // A target that sweeps back and forth, a new command every tick.
            let f = 0.1 * (f64::from(self.tick % 1000) * 0.00628).sin();
            let target = [f, -1.57, 1.57, -1.57 + f, -1.57, f, DT, 0.1, 300.0];
            values.push((n.command.as_str(), Value::Int32(Command::ServoJ.code())));
            values.push((n.sequence.as_str(), Value::Int32(self.tick)));
            for (name, v) in n.doubles.iter().zip(target) {
                values.push((name.as_str(), Value::Double(v)));
            }
        }
        self.io.write_inputs(&values)?;
        let Some(program) = &mut self.program else {
            return Ok(());
        };
        program.step(&self.io, DT);
        if program.has_stopped() {
            return Err(format!("{:?}", program.messages()));
        }
        Ok(())
    }
}

fn program() -> Result<Program, String> {
    let text = command_program(CommandLayout::UPPER);
    let sent = ScriptText::new(&text).map_err(|e| e.to_string())?;
    let interpreted = ScriptProgram::compile(
        sent.text(),
        ControllerVersion::new(5, 9, 0, 0),
        Arm::UR5E,
        HOME,
    )
    .map_err(|(line, column, text)| format!("{line}:{column}: {text}"))?;
    Ok(Program::Script(Box::new(interpreted)))
}

fn main() -> ExitCode {
    let runs = usize::try_from(arg("--runs", 3)).unwrap_or(3).max(3);
    let rounds = usize::try_from(arg("--rounds", 30)).unwrap_or(30);
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!(
        "command: cargo bench -p rtde-bench --bench own_programs -- --runs {runs} --rounds {rounds}"
    );
    let mut clients = Vec::new();
    for servoing in [false, true] {
        let program = match program() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("the command program does not run: {e}");
                return ExitCode::FAILURE;
            }
        };
        clients.push(Client::new(Some(program), servoing));
    }
    clients.push(Client::new(None, false));
    clients.push(Client::new(None, true));
    // Warm up: the program takes the registers it finds, and servoing starts.
    for c in &mut clients {
        for _ in 0..10 {
            if let Err(e) = c.step() {
                eprintln!("a program stopped while warming up: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut ratios: Vec<Vec<f64>> = Vec::new();
    let failure = RefCell::new(None);
    for run in 1..=runs {
        let mut cases = Interleaved::new();
        for (name, client) in CASES.iter().zip(clients.iter_mut()) {
            let failure = &failure;
            cases.case(name, move |n| {
                for _ in 0..n {
                    if let Err(e) = client.step() {
                        failure.borrow_mut().get_or_insert(e);
                    }
                }
            });
        }
        cases.run(rounds, Duration::from_millis(20));
        let us = |name| cases.median(name) / 1e3;
        // The program's own time: the case less its client's package.
        let own = |i: usize| us(CASES[i]) - us(CASES[2 + i]);
        println!("run {run}:");
        for (i, name) in CASES.iter().enumerate() {
            let program = if i < 2 {
                format!(
                    "; the program {:.2} µs ({:.3} % of a 2 ms tick)",
                    own(i),
                    own(i) / TICK_US * 100.0
                )
            } else {
                String::new()
            };
            println!("  {name:<22} {:>7.2} µs per tick{program}", us(name));
        }
        ratios.push(vec![own(0) / TICK_US * 100.0, own(1) / TICK_US * 100.0]);
        drop(cases);
        if let Some(e) = failure.borrow_mut().take() {
            eprintln!("a program stopped during the run: {e}");
            return ExitCode::FAILURE;
        }
    }
    let spread = |i: usize| {
        let mut v: Vec<f64> = ratios.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let ((idle, il, ih), (servo, sl, sh)) = (spread(0), spread(1));
    println!(
        "\nthe program's share of a 2 ms tick, over {runs} runs: idle {idle:.3} % (spread {il:.3}–{ih:.3}), servoing {servo:.3} % (spread {sl:.3}–{sh:.3})"
    );
    ExitCode::SUCCESS
}
