//! Running URScript: the engine's time per controller tick for a control script in the
//! shape of ur_rtde's (about 1,000 lines: globals, register helpers, ~45 command
//! handlers in one `elif` chain, a servo thread calling `servoj` every tick, a main loop
//! reading the command register each tick with `sync()`), in servo mode, against a robot
//! that answers at once. Beside it, a floor: a script that only calls `sync()`. Target:
//! the simulator with the interpreter at 500 Hz within 10 % of a core, so the engine's
//! share must stay well under 200 µs per 2 ms tick.
//!
//! `cargo bench -p rtde-bench --bench urscript_run [-- --runs 5 --rounds 50]`

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use rtde_bench::interleave::Interleaved;
use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_urscript::ControllerVersion;
use rtde_urscript::run::{Host, HostCall, Machine, Progress, Reply, State, Value};

const COMMANDS: usize = 45;
const SERVOJ: usize = 11;
const TICK_US: f64 = 2_000.0;
/// The engine's share of the 10 % target (the simulator's own work is the rest).
const TARGET_US: f64 = 100.0;
const TICK: &str = "control script tick";
const FLOOR: &str = "floor: sync() only";

/// The control script: the same shape as ur_rtde's, written for this benchmark.
fn control_script() -> String {
    let mut s = String::from("def bench_control():\n");
    for g in [
        "reg_offset_float = 0",
        "reg_offset_int = 0",
        "keep_running = True",
        "servo_target = [0, 0, 0, 0, 0, 0]",
        "servo_time = 0.002",
        "servo_lookahead = 0.1",
        "servo_gain = 300",
        "servo_running = False",
        "move_p = p[0, 0, 0, 0, 0, 0]",
        "move_q = [0, 0, 0, 0, 0, 0]",
        "speed_target = [0, 0, 0, 0, 0, 0]",
        "async_count = 0",
    ] {
        let _ = writeln!(s, "  global {g}");
    }
    s += "  def read_float(i):\n    return read_input_float_register(i + reg_offset_float)\n  end\n\
          def read_int(i):\n    return read_input_integer_register(i + reg_offset_int)\n  end\n\
          def write_float(i, v):\n    write_output_float_register(i + reg_offset_float, v)\n  end\n\
          def write_int(i, v):\n    write_output_integer_register(i + reg_offset_int, v)\n  end\n\
          def q_from_registers(first):\n    q = [0, 0, 0, 0, 0, 0]\n    i = 0\n    while i < 6:\n      q[i] = read_float(first + i)\n      i = i + 1\n    end\n    return q\n  end\n\
          def pose_from_registers(first):\n    return p[read_float(first), read_float(first + 1), read_float(first + 2), read_float(first + 3), read_float(first + 4), read_float(first + 5)]\n  end\n\
          def signal_done():\n    write_int(0, 2)\n  end\n\
          def bump_async(progress):\n    async_count = async_count + 1\n    if async_count > 127:\n      async_count = 0\n    end\n    write_int(2, async_count * 65536 + progress)\n  end\n\
          thread servo_thread():\n    while keep_running:\n      servoj(servo_target, t=servo_time, lookahead_time=servo_lookahead, gain=servo_gain)\n    end\n  end\n";
    for k in 1..=COMMANDS {
        let _ = write!(
            s,
            "  def cmd_{k}():\n    # command {k}\n    a = read_float(6)\n    v = read_float(7)\n    if a <= 0 or v <= 0:\n      textmsg(\"command {k}: bad a or v\")\n      return False\n    end\n\
             \x20   target = pose_from_registers(0)\n    q = q_from_registers(0)\n    if norm(target) > 2.0:\n      popup(\"out of reach\")\n    elif {k} % 2 == 0:\n      movel(target, a=a, v=v)\n    else:\n      movej(q, a=a, v=v, r=0.0)\n    end\n\
             \x20   bump_async({k})\n    write_float(0, a * v)\n    return True\n  end\n"
        );
    }
    s += "  def process_cmd(cmd):\n    if cmd == 0:\n      return False\n";
    for k in 1..=COMMANDS {
        if k == SERVOJ {
            s += "    elif cmd == 11:\n      servo_target = q_from_registers(0)\n      servo_time = read_float(6)\n      servo_lookahead = read_float(7)\n      servo_gain = read_float(8)\n      if not servo_running:\n        servo_running = True\n        servo_thrd = run servo_thread()\n      end\n";
        } else {
            let _ = write!(s, "    elif cmd == {k}:\n      cmd_{k}()\n");
        }
    }
    s += "    end\n    return True\n  end\n\
          while keep_running:\n    cmd = read_int(0)\n    if process_cmd(cmd):\n      signal_done()\n    end\n    sync()\n  end\nend\n";
    s
}

/// A robot that answers at once: the servo command in the command register, small
/// numbers in the float registers, `servoj` done on the next tick.
struct Answering;

impl Host for Answering {
    fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
        Ok(match call.name {
            "read_input_integer_register" => Reply::Done(Value::Int(11)),
            "read_input_float_register" => Reply::Done(Value::Float(0.1)),
            "servoj" => Reply::Blocked(1),
            _ => Reply::Done(Value::None),
        })
    }

    fn poll(&mut self, _ticket: u64) -> Result<Progress, String> {
        Ok(Progress::Done(Value::None))
    }
}

fn machine(source: &str) -> Result<Machine, String> {
    let version = ControllerVersion::new(5, 9, 0, 0);
    let checked = rtde_urscript::check(source, version).map_err(|e| e[0].to_string())?;
    Machine::new(&checked).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let runs = usize::try_from(arg("--runs", 5)).unwrap_or(5).max(3);
    let rounds = usize::try_from(arg("--rounds", 50)).unwrap_or(50);
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!(
        "command: cargo bench -p rtde-bench --bench urscript_run -- --runs {runs} --rounds {rounds}"
    );
    let source = control_script();
    let (mut control, mut floor) = match (machine(&source), machine("while True:\n  sync()\nend\n"))
    {
        (Ok(c), Ok(f)) => (c, f),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("the benchmark's script does not run: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "script:  {} lines, {COMMANDS} commands, servo mode (command {SERVOJ})",
        source.lines().count()
    );
    control.tick(&mut Answering);
    if control.state() != &State::Running || control.threads() != 2 {
        eprintln!(
            "the control script is not running its servo thread: {:?}",
            control.state()
        );
        return ExitCode::FAILURE;
    }

    let mut medians = Vec::new();
    for run in 1..=runs {
        let mut cases = Interleaved::new();
        cases.case(TICK, |n| {
            for _ in 0..n {
                control.tick(&mut Answering);
            }
        });
        cases.case(FLOOR, |n| {
            for _ in 0..n {
                floor.tick(&mut Answering);
            }
        });
        cases.run(rounds, Duration::from_millis(20));
        let us = |name| cases.median(name) / 1e3;
        println!(
            "run {run}: {:.2} µs per tick ({:.2} % of a 2 ms tick); floor {:.3} µs; tick / floor {:.0}",
            us(TICK),
            us(TICK) / TICK_US * 100.0,
            us(FLOOR),
            cases.ratio(TICK, FLOOR)
        );
        medians.push(us(TICK));
    }
    if control.state() != &State::Running {
        eprintln!("the control script stopped: {:?}", control.state());
        return ExitCode::FAILURE;
    }
    medians.sort_by(f64::total_cmp);
    let (low, high) = (medians[0], medians[medians.len() - 1]);
    println!(
        "\nengine time per tick: median {:.2} µs over {runs} runs (spread {low:.2}–{high:.2} µs), {:.2} % of a 2 ms tick; target ≤ {TARGET_US} µs: {}",
        medians[medians.len() / 2],
        medians[medians.len() / 2] / TICK_US * 100.0,
        verdict(high <= TARGET_US)
    );
    ExitCode::SUCCESS
}
