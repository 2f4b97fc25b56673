//! The help teaches: every command explains itself with examples.

mod common;

#[test]
fn every_command_has_examples_in_its_help() {
    for command in ["fields", "check", "record", "replay", "plot", "sim"] {
        let run = common::run(&["help", command]);
        run.ok();
        assert!(
            run.stdout.contains("Example"),
            "`rtde help {command}` has no example:\n{}",
            run.stdout
        );
    }
    let run = common::run(&["--help"]);
    run.ok();
    for command in ["fields", "check", "record", "replay", "plot", "sim"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
    }
    assert!(run.stdout.contains("Start here:"), "{}", run.stdout);
}

#[test]
fn usage_mistakes_are_reported_by_clap_with_status_2() {
    let run = common::run(&[
        "record", "--robot", "r", "--sim", "--fields", "actual_q", "-o", "x.csv",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    let run = common::run(&[
        "record",
        "--fields",
        "actual_q",
        "-o",
        "x.csv",
        "--duration",
        "ten",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        run.stderr.contains("`ten` is no duration"),
        "{}",
        run.stderr
    );
}
