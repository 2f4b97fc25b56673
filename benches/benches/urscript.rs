//! Parsing and checking URScript: the time to parse and check a generated 2,000-line
//! script (target: 10 ms or less), with parsing alone and a floor that only splits the
//! text into lines, interleaved in each run; several runs, each printed, with the spread.
//!
//! `cargo bench -p rtde-bench --bench urscript [-- --runs 5 --rounds 50]`

use std::fmt::Write as _;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use rtde_bench::interleave::Interleaved;
use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_urscript::ControllerVersion;

const LINES: usize = 2_000;
const TARGET_MS: f64 = 10.0;
const FLOOR: &str = "floor: split into lines";
const PARSE: &str = "parse";
const CHECK: &str = "parse + check";

/// A program of about `lines` lines in the shape of the drivers' scripts: globals, helper
/// functions with defaults, a thread, and a main loop calling built-ins with keyword
/// arguments, poses, lists and conditions.
fn script(lines: usize) -> String {
    let mut s = String::from(
        "def bench_program():\n  global speed = 0.25\n  global target = p[0.1, -0.4, 0.3, 0, 3.14, 0]\n",
    );
    let mut i = 0;
    while s.lines().count() < lines - 1 {
        let mut step = String::new();
        let _ = write!(
            step,
            "  # step {i}\n  def step_{i}(q, a=1.2, v=speed):\n    if norm(q[0]) > 0.5 and v < 1:\n      movej(q, a=a, v=v, r=0.01)\n    elif q[1] <= -1.0:\n      movel(pose_trans(target, p[0, 0, 0.01, 0, 0, 0]), a=a, v=v)\n    else:\n      textmsg(\"step {i}: \", q)\n    end\n    x = read_input_float_register({r}) * 2 + 1e-3\n    write_output_integer_register({r}, floor(x))\n    return get_inverse_kin(target, qnear=q)\n  end\n  thread watch_{i}():\n    while True:\n      sync()\n    end\n  end\n  q_{i} = step_{i}([0, -1.57, 1.57, -1.57, -1.57, {i}], v=0.5)\n",
            r = i % 24
        );
        if s.lines().count() + step.lines().count() >= lines {
            // The rest of the lines as comments, so that the script has exactly `lines`.
            while s.lines().count() < lines - 1 {
                s.push_str("  # filler\n");
            }
            break;
        }
        s.push_str(&step);
        i += 1;
    }
    s.push_str("end\n");
    s
}

fn main() -> ExitCode {
    let runs = usize::try_from(arg("--runs", 5)).unwrap_or(5).max(3);
    let rounds = usize::try_from(arg("--rounds", 50)).unwrap_or(50);
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!(
        "command: cargo bench -p rtde-bench --bench urscript -- --runs {runs} --rounds {rounds}"
    );

    let source = script(LINES);
    let version = ControllerVersion::new(5, 9, 0, 0);
    if let Err(errors) = rtde_urscript::check(&source, version) {
        eprintln!("the generated script does not check: {}", errors[0]);
        return ExitCode::FAILURE;
    }
    println!(
        "script:  {} lines, {} bytes, checked against controller {version}",
        source.lines().count(),
        source.len()
    );

    let mut totals = Vec::new();
    for run in 1..=runs {
        let mut cases = Interleaved::new();
        cases.case(FLOOR, |n| {
            for _ in 0..n {
                black_box(black_box(&source).lines().count());
            }
        });
        cases.case(PARSE, |n| {
            for _ in 0..n {
                black_box(rtde_urscript::parse(black_box(&source)).is_ok());
            }
        });
        cases.case(CHECK, |n| {
            for _ in 0..n {
                black_box(rtde_urscript::check(black_box(&source), version).is_ok());
            }
        });
        cases.run(rounds, Duration::from_millis(20));
        let ms = |name| cases.median(name) / 1e6;
        println!(
            "run {run}: parse + check {:.3} ms, parse {:.3} ms, floor {:.3} ms; parse + check / parse {:.2}, / floor {:.0}",
            ms(CHECK),
            ms(PARSE),
            ms(FLOOR),
            cases.ratio(CHECK, PARSE),
            cases.ratio(CHECK, FLOOR)
        );
        totals.push(ms(CHECK));
    }
    totals.sort_by(f64::total_cmp);
    let (low, high) = (totals[0], totals[totals.len() - 1]);
    let median = totals[totals.len() / 2];
    println!(
        "\nparse + check of {LINES} lines: median {median:.3} ms over {runs} runs (spread {low:.3}–{high:.3} ms); target ≤ {TARGET_MS} ms: {}",
        verdict(high <= TARGET_MS)
    );
    ExitCode::SUCCESS
}
