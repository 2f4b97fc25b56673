//! No program that checks makes the engine panic or hang: random programs built from
//! statements of every kind (arithmetic that overflows or divides by zero, indexing past
//! the end, threads started, killed and joined, critical sections, moves, loops that never
//! yield) run for a bounded number of ticks, and every runtime error lies inside the text.
//! The fuzz target `urscript_run` goes further, with coverage guidance.

mod support;

use proptest::prelude::*;
use rtde_urscript::run::{Limits, State};
use support::{E_SERIES, Robot, machine_at};

const PRELUDE: &str = "x = 1\ny = 2\nb = True\nl = [1, 2, 3, 4]\npo = p[0, 0, 0, 0, 0, 0]\ns = \"\"\n\
thread worker():\n  while True:\n    x = x + 1\n    sync()\n  end\nend\nt = run worker()\n\
def f(a, c=2):\n  return a * c\nend\n";

const STATEMENTS: &[&str] = &[
    "x = x + 1",
    "x = x / y",
    "y = x % 3",
    "l[x] = x",
    "y = l[x % 4]",
    "po = po + p[0.1, 0, 0, 0, 0, 0.1]",
    "po[2] = y",
    "s = str_cat(s, x)",
    "sync()",
    "x = -x",
    "y = y * 3",
    "y = 2147483647 + y",
    "b = not b",
    "b = x < y",
    "b = b and x == y",
    "t = run worker()",
    "kill t",
    "join t",
    "enter_critical",
    "exit_critical",
    "movej(l)",
    "sleep(0.004)",
    "halt",
    "y = floor(sqrt(y))",
    "y = f(y, c=x)",
    "textmsg(s, po)",
    "x = to_num(to_str(x))",
    "return",
];

#[derive(Clone, Debug)]
enum Piece {
    Statement(&'static str),
    While,
    If,
    Else,
    End,
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        6 => prop::sample::select(STATEMENTS).prop_map(Piece::Statement),
        1 => Just(Piece::While),
        1 => Just(Piece::If),
        1 => Just(Piece::Else),
        1 => Just(Piece::End),
    ]
}

/// The pieces as a program inside `def prog():`, each block closed.
fn program(pieces: &[Piece]) -> String {
    let mut text = format!("{PRELUDE}def prog():\n");
    let mut open: Vec<bool> = Vec::new(); // whether each open block is an `if` without `else`
    for p in pieces {
        match p {
            Piece::Statement(s) => text += &format!("  {s}\n"),
            Piece::While => {
                text += "  while b:\n";
                open.push(false);
            }
            Piece::If => {
                text += "  if x > y:\n";
                open.push(true);
            }
            Piece::Else if open.last() == Some(&true) => {
                text += "  else:\n";
                *open.last_mut().expect("checked") = false;
            }
            Piece::End if open.pop().is_some() => text += "  end\n",
            Piece::Else | Piece::End => {}
        }
    }
    for _ in open {
        text += "  end\n";
    }
    text + "end\nprog()\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_program_runs_bounded(pieces in prop::collection::vec(piece(), 0..40)) {
        let source = program(&pieces);
        let mut machine = machine_at(&source, E_SERIES).with_limits(Limits {
            ops_per_tick: 500,
            ticks_behind: 10,
            ..Limits::default()
        });
        let mut robot = Robot::default();
        for _ in 0..60 {
            robot.tick += 1;
            if machine.tick(&mut robot) != &State::Running {
                break;
            }
        }
        let lines = u32::try_from(source.lines().count()).unwrap_or(u32::MAX);
        if let State::Failed(e) = machine.state() {
            prop_assert!(e.span.line >= 1 && e.span.line <= lines, "{source}\n{e}");
        }
    }
}
