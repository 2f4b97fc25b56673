//! `rtde fields` and `rtde check` print what the registry says.

use std::process::{Command, Output};

fn rtde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtde"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn fields_finds_by_substring_in_any_case() {
    let o = rtde(&["fields", "TCP_FORCE"]);
    assert!(o.status.success());
    let text = stdout(&o);
    // With its units and frame, from the registry.
    assert!(
        text.contains("actual_TCP_force  output VECTOR6D [N, Nm; frame: base axes;"),
        "{text}"
    );
    assert!(
        text.contains("tcp_force_scalar  output DOUBLE [N]"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| !l.starts_with(' ')).count(),
        2,
        "{text}"
    );
}

#[test]
fn fields_suggests_the_closest_name_for_a_typo() {
    let o = rtde(&["fields", "acutal_tcp_pose"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "no field matches `acutal_tcp_pose`; did you mean:\nactual_TCP_pose  output VECTOR6D"
        ),
        "{text}"
    );
}

#[test]
fn fields_shows_versions_registers_and_filters() {
    let text = stdout(&rtde(&["fields", "ft_raw_wrench"]));
    assert!(
        text.contains("CB3 3.x: absent; e-Series 5.x: since 5.9.0; PolyScope X 10.x: since 10.7.0"),
        "{text}"
    );

    let text = stdout(&rtde(&[
        "fields",
        "input_int_register_2",
        "--direction",
        "input",
    ]));
    assert!(
        text.contains("input_int_register_23  input INT32"),
        "{text}"
    );
    assert!(
        text.contains("int register in the range 0..23 reserved for fieldbus/PLC adapters; registers 24..47 are meant for external clients"),
        "{text}"
    );
    assert!(!text.contains("  output "), "direction filter: {text}");

    // On CB3 3.8 the upper registers do not exist yet.
    let text = stdout(&rtde(&[
        "fields",
        "input_int_register_2",
        "--direction",
        "input",
        "--controller",
        "3.8",
    ]));
    assert!(text.contains("input_int_register_23 "), "{text}");
    assert!(!text.contains("input_int_register_24 "), "{text}");
}

#[test]
fn fields_fails_with_one_line_when_nothing_is_close() {
    let o = rtde(&["fields", "banana_split"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: no field matches `banana_split`\n"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn check_says_which_version_each_field_needs() {
    let o = rtde(&[
        "check",
        "--controller",
        "5.4",
        "actual_q",
        "ft_raw_wrench",
        "actual_tcp_pose",
    ]);
    assert_eq!(o.status.code(), Some(1), "ft_raw_wrench is missing on 5.4");
    assert_eq!(
        stdout(&o),
        "actual_q (output VECTOR6D): available on 5.4.0\n\
         ft_raw_wrench (output VECTOR6D): not on 5.4.0; requires 5.9.0 or later\n\
         actual_TCP_pose (output VECTOR6D): available on 5.4.0\n"
    );
    let o = rtde(&["check", "--controller", "3.15.8.106339", "ft_raw_wrench"]);
    assert_eq!(
        stdout(&o),
        "ft_raw_wrench (output VECTOR6D): does not exist on CB3 3.x; exists on e-Series 5.x 5.9.0, PolyScope X 10.x 10.7.0\n"
    );
    let o = rtde(&[
        "check",
        "--controller",
        "5.23",
        "actual_q",
        "input_int_register_24",
    ]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("input_int_register_24 (input INT32): available on 5.23.0"));
}

#[test]
fn check_reports_unknown_fields_and_bad_versions() {
    let o = rtde(&["check", "--controller", "5.4", "controller_step"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "controller_step: unknown field; did you mean `control_step`?\n"
    );

    let o = rtde(&["check", "--controller", "five", "actual_q"]);
    assert_eq!(o.status.code(), Some(2), "clap usage error");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("a controller version holds only decimal digits and dots")
    );

    let o = rtde(&["check", "--controller", "4.1", "actual_q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .starts_with("error: 4.1.0 is no known controller generation")
    );
}

#[test]
fn fields_prints_the_object_dictionary_as_a_table_and_as_csv() {
    let text = stdout(&rtde(&["fields", "--dictionary", "actual_q"]));
    assert!(text.contains("GB/T 32197-2015"), "{text}");
    assert!(text.contains("2025"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("2006h  01h"))
        .unwrap_or_else(|| panic!("{text}"));
    for cell in ["actual_q[0]", "REAL64", "ro", "yes", "rad"] {
        assert!(row.contains(cell), "{row}");
    }
    let csv = stdout(&rtde(&["fields", "--dictionary", "--csv"]));
    let rows = rtde_fields::dictionary::from_csv(&csv).unwrap();
    assert_eq!(rows, rtde_fields::dictionary::rows());
}

#[test]
fn fields_prints_a_recipe_as_its_pdo_mapping() {
    let text = stdout(&rtde(&["fields", "--pdo", "timestamp,actual_q"]));
    assert!(text.starts_with("TPDO"), "{text}");
    assert!(
        text.contains("2006h:01h  64    0x20060140  actual_q[0]"),
        "{text}"
    );
    let text = stdout(&rtde(&[
        "fields",
        "--pdo",
        "speed_slider_mask,speed_slider_fraction",
    ]));
    assert!(text.starts_with("RPDO"), "{text}");
    let o = rtde(&["fields", "--pdo", "actual_q,speed_slider_mask"]);
    assert!(!o.status.success());
}
