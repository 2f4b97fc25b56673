//! `rtde_command.script` reads and writes the registers of its layout, by the codes it
//! declares: the program a person installs and the Rust side stay in step.

use super::super::WATCHDOG_TIMEOUT_CYCLES;
use super::{
    Command, CommandLayout, Failure, MARKER, PROGRESS, ProgramState, SCRIPT, int_in, int_out,
};

#[test]
fn the_command_program_uses_the_layouts_registers_and_codes() {
    let script = SCRIPT;
    assert_eq!(script.lines().next(), Some(MARKER));
    let layout = CommandLayout::UPPER;
    let mut needles = vec![
        format!("INT_BASE = {}", layout.int_base()),
        format!("DOUBLE_BASE = {}", layout.double_base()),
        format!("IN_WATCHDOG = INT_BASE + {}", int_in::WATCHDOG),
        format!("IN_COMMAND = INT_BASE + {}", int_in::COMMAND),
        format!("IN_SEQUENCE = INT_BASE + {}", int_in::SEQUENCE),
        format!("IN_INT_ARGS = INT_BASE + {}", int_in::ARGS),
        format!("OUT_ACCEPTED = INT_BASE + {}", int_out::ACCEPTED),
        format!("OUT_DONE = INT_BASE + {}", int_out::DONE),
        format!("OUT_STATE = INT_BASE + {}", int_out::STATE),
        format!("OUT_FAILURE = INT_BASE + {}", int_out::FAILURE),
        format!("OUT_PROGRESS = DOUBLE_BASE + {PROGRESS}"),
        format!("WATCHDOG_TIMEOUT_CYCLES = {WATCHDOG_TIMEOUT_CYCLES}"),
    ];
    needles.extend(
        Command::ALL
            .iter()
            .map(|(_, code, name)| format!("{name} = {code}")),
    );
    needles.extend(
        Failure::ALL
            .iter()
            .map(|(_, code, name)| format!("{name} = {code}")),
    );
    for (state, name) in [
        (ProgramState::Idle, "STATE_IDLE"),
        (ProgramState::Moving, "STATE_MOVING"),
        (ProgramState::Stopped, "STATE_STOPPED"),
    ] {
        needles.push(format!("{name} = {}", state.to_register()));
    }
    for needle in needles {
        assert!(
            script.lines().any(|l| l.trim() == needle),
            "the command program lacks `{needle}`"
        );
    }
}

#[test]
fn every_command_the_program_declares_is_one_it_runs() {
    let script = SCRIPT;
    for (_, _, name) in Command::ALL {
        let runs = script
            .match_indices(&format!("command == {name}"))
            .any(|(at, m)| matches!(script[at + m.len()..].chars().next(), Some(':' | ' ')));
        assert!(
            runs,
            "the command program declares `{name}` but never runs it"
        );
    }
}

#[test]
fn the_program_starts_from_the_sequence_number_it_finds() {
    // A controller keeps its input registers after a client leaves: a program that started
    // from 0 would take the previous session's last command for its own, or stop on it.
    let start = SCRIPT
        .find("accepted = read_input_integer_register(IN_SEQUENCE)")
        .expect("the program reads its starting sequence number from the register");
    let loop_at = SCRIPT.find("\nwhile True:").unwrap();
    assert!(start < loop_at, "read before the command loop");
    for line in [
        "write_output_integer_register(OUT_ACCEPTED, accepted)",
        "write_output_integer_register(OUT_DONE, accepted)",
    ] {
        let at = SCRIPT.find(line).unwrap_or(usize::MAX);
        assert!(
            start < at && at < loop_at,
            "`{line}` reports the starting point"
        );
    }
}
