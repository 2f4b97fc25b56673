//! The built-in table: it holds every built-in the drivers' scripts call, at the versions
//! they call them at, and its rows are well formed.

use std::collections::HashSet;

use rtde_urscript::builtins::{BUILTINS, lookup};
use rtde_urscript::{ControllerVersion, check, parse};

/// The built-ins ur_rtde's control script (scripts/rtde_control.script) calls, each with
/// the lowest version its version markers send it to (written down from reading the
/// script; its text is not copied here).
const UR_RTDE: &[(&str, &str)] = &[
    ("end_force_mode", "3.3"),
    ("end_freedrive_mode", "5.10"),
    ("end_teach_mode", "3.3"),
    ("enable_external_ft_sensor", "5.9"),
    ("force_mode", "3.3"),
    ("force_mode_set_damping", "3.5"),
    ("force_mode_set_gain_scaling", "5.0"),
    ("freedrive_mode", "5.10"),
    ("ft_rtde_input_enable", "5.9"),
    ("get_actual_joint_positions_history", "5.4"),
    ("get_actual_tcp_pose", "3.3"),
    ("get_forward_kin", "3.3"),
    ("get_freedrive_status", "5.10"),
    ("get_inverse_kin", "3.3"),
    ("get_inverse_kin_has_solution", "3.15"),
    ("get_inverse_kin_has_solution", "5.10"),
    ("get_joint_torques", "3.3"),
    ("get_steptime", "5.4"),
    ("get_target_payload", "5.0"),
    ("get_target_payload_cog", "5.0"),
    ("get_target_tcp_speed", "5.4"),
    ("get_target_waypoint", "5.3"),
    ("get_tcp_offset", "3.6"),
    ("is_steady", "3.3"),
    ("is_within_safety_limits", "3.3"),
    ("movec", "3.3"),
    ("movej", "3.3"),
    ("movel", "3.3"),
    ("movep", "3.3"),
    ("pose_add", "3.3"),
    ("pose_trans", "3.3"),
    ("protective_stop", "3.8"),
    ("read_input_float_register", "3.3"),
    ("read_input_integer_register", "3.3"),
    ("rtde_set_watchdog", "3.3"),
    ("servoc", "3.3"),
    ("servoj", "3.3"),
    ("set_gravity", "3.3"),
    ("set_payload", "3.3"),
    ("set_tcp", "3.3"),
    ("speedj", "3.3"),
    ("speedl", "3.3"),
    ("stopj", "3.3"),
    ("stopl", "3.3"),
    ("sync", "3.3"),
    ("teach_mode", "3.3"),
    ("textmsg", "3.3"),
    ("tool_contact", "5.4"),
    ("write_output_float_register", "3.3"),
    ("write_output_integer_register", "3.3"),
    ("zero_ftsensor", "3.3"),
];

/// The built-ins the UR Client Library's resources/external_control.urscript calls
/// outside its version-templated sections, at the lowest versions it supports (CB3 3.14,
/// e-Series 5.9), and those inside its sections at their section's version.
const CLIENT_LIBRARY: &[(&str, &str)] = &[
    ("direct_torque", "5.23"),
    ("end_force_mode", "3.14"),
    ("end_freedrive_mode", "3.14"),
    ("force_mode", "3.14"),
    ("force_mode_set_damping", "3.14"),
    ("force_mode_set_gain_scaling", "5.9"),
    ("freedrive_mode", "3.14"),
    ("get_actual_joint_positions_history", "5.9"),
    ("get_actual_tcp_speed", "3.14"),
    ("get_inverse_kin", "3.14"),
    ("get_joint_positions", "3.14"),
    ("get_list_length", "3.14"),
    ("get_steptime", "3.14"),
    ("get_target_joint_positions", "3.14"),
    ("get_target_joint_speeds", "3.14"),
    ("movec", "3.14"),
    ("movej", "3.14"),
    ("movel", "3.14"),
    ("movep", "3.14"),
    ("norm", "3.14"),
    ("optimovej", "5.21"),
    ("optimovel", "5.21"),
    ("popup", "3.14"),
    ("pow", "3.14"),
    ("servoj", "3.14"),
    ("set_gravity", "3.14"),
    ("set_payload", "3.14"),
    ("set_target_payload", "5.10"),
    ("set_tcp", "3.14"),
    ("set_tool_voltage", "3.14"),
    ("sleep", "3.14"),
    ("socket_close", "3.14"),
    ("socket_open", "3.14"),
    ("socket_read_binary_integer", "3.14"),
    ("socket_send_int", "3.14"),
    ("speedj", "3.14"),
    ("speedl", "3.14"),
    ("stopj", "3.14"),
    ("stopl", "3.14"),
    ("str_cat", "3.14"),
    ("sync", "3.14"),
    ("textmsg", "3.14"),
    ("to_str", "3.14"),
    ("tool_contact", "5.9"),
    ("write_output_float_register", "3.14"),
    ("zero_ftsensor", "3.14"),
];

/// Built-ins found in UR's CB3 URScript manuals, by the manual's version (3.3.4 of
/// December 2016, 3.10 of May 2019; docs/urscript.md names them). The names are written
/// down from reading the manuals.
const CB3_MANUALS: &[(&str, &[&str])] = &[
    (
        "3.3",
        &[
            "rtde_set_watchdog",
            "read_input_boolean_register",
            "read_output_boolean_register",
            "write_output_boolean_register",
            "read_input_integer_register",
            "read_output_integer_register",
            "write_output_integer_register",
            "read_input_float_register",
            "read_output_float_register",
            "write_output_float_register",
            "get_list_length",
        ],
    ),
    (
        "3.10",
        &[
            "to_str",
            "to_num",
            "str_cat",
            "str_len",
            "str_sub",
            "str_find",
            "str_at",
            "str_empty",
            "normalize",
            "get_steptime",
            "get_target_payload",
            "get_target_payload_cog",
            "get_target_waypoint",
            "get_tcp_offset",
            "force_mode_set_damping",
            "get_forward_kin",
            "wrench_trans",
        ],
    ),
];

#[test]
fn every_builtin_of_a_manual_is_in_the_table_at_its_version() {
    let mut missing = Vec::new();
    for (version, names) in CB3_MANUALS {
        let version: ControllerVersion = version.parse().unwrap();
        for name in *names {
            match lookup(name) {
                Some(b) if b.since.covers(version) => {}
                Some(b) => missing.push(format!("{name} at {version} (table: {})", b.since)),
                None => missing.push(format!("{name} (not in the table)")),
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
    // UR's development team on UR's forum: variable-length lists come with PolyScope 5.15.
    let make_list = lookup("make_list").unwrap().since;
    assert!(
        make_list.covers("5.15".parse().unwrap()) && !make_list.covers("5.14".parse().unwrap())
    );
}

#[test]
fn every_builtin_the_drivers_call_is_in_the_table_at_their_versions() {
    let mut missing = Vec::new();
    for (name, version) in UR_RTDE.iter().chain(CLIENT_LIBRARY) {
        let version: ControllerVersion = version.parse().unwrap();
        match lookup(name) {
            Some(b) if b.since.covers(version) => {}
            Some(b) => missing.push(format!("{name} at {version} (table: {})", b.since)),
            None => missing.push(format!("{name} (not in the table)")),
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn the_issue_s_builtins_are_all_there() {
    let names = [
        "movej",
        "movel",
        "movep",
        "movec",
        "servoj",
        "servoc",
        "speedj",
        "speedl",
        "stopj",
        "stopl",
        "force_mode",
        "end_force_mode",
        "force_mode_set_damping",
        "force_mode_set_gain_scaling",
        "teach_mode",
        "end_teach_mode",
        "freedrive_mode",
        "end_freedrive_mode",
        "zero_ftsensor",
        "set_tcp",
        "set_payload",
        "set_gravity",
        "get_inverse_kin",
        "get_forward_kin",
        "pose_trans",
        "pose_inv",
        "pose_add",
        "pose_sub",
        "pose_dist",
        "point_dist",
        "interpolate_pose",
        "is_within_safety_limits",
        "get_actual_joint_positions",
        "get_actual_tcp_pose",
        "get_target_joint_positions",
        "get_target_tcp_pose",
        "get_steptime",
        "get_tcp_force",
        "get_actual_joint_positions_history",
        "read_input_integer_register",
        "read_input_float_register",
        "read_input_boolean_register",
        "write_output_integer_register",
        "write_output_float_register",
        "write_output_boolean_register",
        "set_standard_digital_out",
        "get_standard_digital_in",
        "set_standard_analog_out",
        "get_standard_analog_in",
        "set_tool_digital_out",
        "get_tool_digital_in",
        "get_tool_analog_in",
        "set_configurable_digital_out",
        "get_configurable_digital_in",
        "rtde_set_watchdog",
        "textmsg",
        "popup",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sqrt",
        "pow",
        "log",
        "floor",
        "ceil",
        "norm",
        "d2r",
        "r2d",
        "length",
        "str_len",
        "str_cat",
        "str_sub",
        "to_str",
        "to_num",
        "str_find",
        "str_at",
        "binary_list_to_integer",
        "integer_to_binary_list",
        "sync",
        "sleep",
        "socket_open",
        "socket_read_binary_integer",
        "socket_read_ascii_float",
        "socket_send_int",
        "socket_send_string",
        "socket_send_line",
        "socket_send_byte",
        "socket_close",
    ];
    let missing: Vec<_> = names.iter().filter(|n| lookup(n).is_none()).collect();
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn rows_are_well_formed() {
    let mut seen = HashSet::new();
    let newest = ControllerVersion::new(5, 99, 0, 0);
    for b in &BUILTINS {
        assert!(seen.insert(b.name), "{} twice", b.name);
        assert!(
            b.since.cb3.is_some() || b.since.e_series.is_some(),
            "{} in no version",
            b.name
        );
        // Required parameters come first; every default is an expression that parses
        // and checks.
        let first_optional = b.params.iter().position(|p| p.default.is_some());
        if let Some(i) = first_optional {
            assert!(
                b.params[i..].iter().all(|p| p.default.is_some()),
                "{}",
                b.name
            );
        }
        for p in b.params {
            if let Some(d) = p.default {
                let source = format!("x = {d}\n");
                assert!(parse(&source).is_ok(), "{}: default {d}", b.name);
                assert!(check(&source, newest).is_ok(), "{}: default {d}", b.name);
            }
        }
    }
}

/// docs/urscript.md lists every built-in that needs a version, with the versions the table
/// gives, and nothing else.
#[test]
fn the_docs_list_the_versions_the_table_gives() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/urscript.md"))
        .unwrap();
    let rows: Vec<&str> = docs.lines().filter(|l| l.starts_with("| `")).collect();
    let mut gated = 0;
    for b in &BUILTINS {
        if b.since.cb3 == Some(0) && b.since.e_series == Some(0) {
            assert!(
                docs.contains(&format!("`{}`", b.name)),
                "docs/urscript.md omits {}",
                b.name
            );
            continue;
        }
        gated += 1;
        let row = format!("| `{}` | {} |", b.name, b.since);
        assert!(
            rows.iter().any(|r| r.starts_with(&row)),
            "docs/urscript.md lacks {row}"
        );
    }
    let documented = rows
        .iter()
        .filter(|r| r.split('`').nth(1).and_then(lookup).is_some())
        .count();
    assert_eq!(
        documented, gated,
        "docs/urscript.md lists a built-in the table does not gate"
    );
}
