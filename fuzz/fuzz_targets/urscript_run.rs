//! Any text that checks runs without panicking or hanging: compiled, then run for a
//! bounded number of ticks against a robot that answers every built-in (a blocking one
//! finishes on the next tick); every runtime error's place is inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_urscript::ControllerVersion;
use rtde_urscript::run::{Host, HostCall, Limits, Machine, Progress, Reply, State, Value};

const VERSIONS: [ControllerVersion; 2] =
    [ControllerVersion::new(5, 23, 0, 0), ControllerVersion::new(10, 7, 0, 0)];

/// Answers every call: joint positions for getters, a move that ends next tick.
struct Anything;

impl Host for Anything {
    fn call(&mut self, call: HostCall<'_>) -> Result<Reply, String> {
        Ok(match call.name {
            n if n.starts_with("move") || n.starts_with("stop") || n.starts_with("servo") => {
                Reply::Blocked(1)
            }
            n if n.starts_with("get_") => Reply::Done(Value::floats([0.0; 6])),
            _ => Reply::Done(Value::None),
        })
    }

    fn poll(&mut self, _ticket: u64) -> Result<Progress, String> {
        Ok(Progress::Done(Value::None))
    }
}

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let lines = u32::try_from(source.lines().count()).unwrap_or(u32::MAX);
    for version in VERSIONS {
        let Ok(checked) = rtde_urscript::check(&source, version) else {
            return;
        };
        let Ok(machine) = Machine::new(&checked) else {
            continue;
        };
        let mut machine = machine.with_limits(Limits {
            ops_per_tick: 2_000,
            ticks_behind: 20,
            ..Limits::default()
        });
        for _ in 0..100 {
            if machine.tick(&mut Anything) != &State::Running {
                break;
            }
        }
        if let State::Failed(e) = machine.state() {
            assert!(e.span.line <= lines.saturating_add(1), "{e:?}");
        }
    }
});
