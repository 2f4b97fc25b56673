//! `rtde check-script` prints each error at FILE:LINE:COLUMN with the controller's code and
//! the closest known name, a summary, and exits 1; a good script exits 0.

mod common;

const BAD: &str = "def main():\n  movjl([0, 0, 0, 0, 0, 0])\n  x = tool_contact(p[0, 0, 1, 0, 0, 0])\n  servoj([0, 0, 0, 0, 0, 0], gian=300)\nend\n";

#[test]
fn errors_print_at_their_line_and_column_with_a_summary() {
    let dir = common::scratch("check-script-errors");
    std::fs::write(dir.join("bad.script"), BAD).unwrap();
    let run = common::run_in(&dir, &["check-script", "bad.script", "--version", "3.15"]);
    assert_eq!(run.status.code(), Some(1), "{run:#?}");
    assert_eq!(
        run.stdout,
        "bad.script:2:3: compile_error_name_not_found: name `movjl` is not defined; did you mean `movel`?\n\
         bad.script:3:7: warning: compile_error_name_not_found: `tool_contact` is known from 5.4 (e-Series) on (a driver's version gate, not the manual): controller 3.15.0 may not have it\n\
         bad.script:4:30: compile_error_unknown_keyword_argument: `servoj` has no parameter `gian`; did you mean `gain`?"
    );
    assert_eq!(
        run.stderr,
        "bad.script: 2 errors, 1 warning (controller 3.15.0)\n"
    );
}

#[test]
fn the_version_decides() {
    let dir = common::scratch("check-script-version");
    let script = "x = tool_contact(p[0, 0, 1, 0, 0, 0])\n";
    std::fs::write(dir.join("contact.script"), script).unwrap();
    let run = common::run_in(
        &dir,
        &["check-script", "contact.script", "--version", "5.4"],
    );
    assert_eq!(
        run.ok(),
        "contact.script: 1 lines, no errors (controller 5.4.0)\n"
    );
    assert!(run.stdout.is_empty());
    let run = common::run_in(
        &dir,
        &["check-script", "contact.script", "--version", "5.3"],
    );
    assert_eq!(
        run.ok(),
        "contact.script: 1 lines, no errors, 1 warning (controller 5.3.0)\n"
    );
    assert!(
        run.stdout.starts_with("contact.script:1:5: warning: "),
        "{run:#?}"
    );
}

#[test]
fn a_missing_file_or_an_unknown_generation_is_one_error_line() {
    let run = common::run(&["check-script", "no-such.script"]);
    assert!(
        run.one_line_error()
            .starts_with("error: cannot read no-such.script: ")
    );
    let dir = common::scratch("check-script-generation");
    std::fs::write(dir.join("ok.script"), "sync()\n").unwrap();
    let run = common::run_in(&dir, &["check-script", "ok.script", "--version", "4.1"]);
    assert!(
        run.one_line_error()
            .contains("4.1.0 is no known controller generation")
    );
}

#[test]
fn run_script_checks_first_unless_told_not_to() {
    let dir = common::scratch("check-script-run");
    std::fs::write(dir.join("bad.script"), BAD).unwrap();
    let run = common::run_in(&dir, &["run-script", "bad.script"]);
    let line = run.stderr.lines().last().unwrap_or_default();
    assert!(
        line.contains("fails the URScript check") && line.contains("(nothing was sent)"),
        "{run:#?}"
    );
    assert!(!run.stderr.contains("sent "), "{run:#?}");
    let run = common::run_in(&dir, &["run-script", "bad.script", "--no-check"]);
    assert!(run.stderr.contains("sent "), "{run:#?}");
    assert!(!run.stderr.contains("URScript check"), "{run:#?}");
}
