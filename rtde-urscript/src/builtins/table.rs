//! The table itself: one row per built-in function, grouped as the manual groups them.
//!
//! Versions: the first CB3 (3.x) and e-Series (5.x) minor version that has each function,
//! from UR's URScript manual where its text says so, otherwise from the version gates in
//! ur_rtde's control script and the UR Client Library's external-control script
//! (docs/urscript.md lists which).

use super::{Builtin, Param, Since, Type};

const fn req(name: &'static str, ty: Type) -> Param {
    Param {
        name,
        ty,
        default: None,
    }
}

const fn opt(name: &'static str, ty: Type, default: &'static str) -> Param {
    Param {
        name,
        ty,
        default: Some(default),
    }
}

/// First versions from a driver's version gate or remembered change notes, not yet found
/// in the manual's text (docs/urscript.md gives each one's source).
const fn since(cb3: Option<u32>, e_series: Option<u32>) -> Since {
    Since {
        cb3,
        e_series,
        confirmed: false,
    }
}

/// Every CB3 and e-Series version.
const ALL: Since = Since {
    cb3: Some(0),
    e_series: Some(0),
    confirmed: true,
};

const fn f(name: &'static str, params: &'static [Param], returns: Type, since: Since) -> Builtin {
    Builtin {
        name,
        params,
        returns,
        since,
    }
}

/// Every built-in function the checker knows, grouped as the manual groups them.
pub static BUILTINS: [Builtin; 147] = [
    // Motion
    f(
        "movej",
        &[
            req("q", Type::PoseOrList),
            opt("a", Type::Number, "1.4"),
            opt("v", Type::Number, "1.05"),
            opt("t", Type::Number, "0"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "movel",
        &[
            req("pose", Type::PoseOrList),
            opt("a", Type::Number, "1.2"),
            opt("v", Type::Number, "0.25"),
            opt("t", Type::Number, "0"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "movep",
        &[
            req("pose", Type::PoseOrList),
            opt("a", Type::Number, "1.2"),
            opt("v", Type::Number, "0.25"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "movec",
        &[
            req("pose_via", Type::PoseOrList),
            req("pose_to", Type::PoseOrList),
            opt("a", Type::Number, "1.2"),
            opt("v", Type::Number, "0.25"),
            opt("r", Type::Number, "0"),
            opt("mode", Type::Int, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "optimovej",
        &[
            req("q", Type::PoseOrList),
            opt("a", Type::Number, "0.3"),
            opt("v", Type::Number, "0.3"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        since(None, Some(21)),
    ),
    f(
        "optimovel",
        &[
            req("pose", Type::PoseOrList),
            opt("a", Type::Number, "0.3"),
            opt("v", Type::Number, "0.3"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        since(None, Some(21)),
    ),
    f(
        "servoj",
        &[
            req("q", Type::List),
            opt("a", Type::Number, "0"),
            opt("v", Type::Number, "0"),
            opt("t", Type::Number, "0.002"),
            opt("lookahead_time", Type::Number, "0.1"),
            opt("gain", Type::Number, "300"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "servoc",
        &[
            req("pose", Type::PoseOrList),
            opt("a", Type::Number, "1.2"),
            opt("v", Type::Number, "0.25"),
            opt("r", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "speedj",
        &[
            req("qd", Type::List),
            req("a", Type::Number),
            opt("t", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "speedl",
        &[
            req("xd", Type::List),
            req("a", Type::Number),
            opt("t", Type::Number, "0"),
            opt("aRot", Type::Number, "0"),
        ],
        Type::Nothing,
        ALL,
    ),
    f("stopj", &[req("a", Type::Number)], Type::Nothing, ALL),
    f(
        "stopl",
        &[req("a", Type::Number), opt("aRot", Type::Number, "0")],
        Type::Nothing,
        ALL,
    ),
    f(
        "force_mode",
        &[
            req("task_frame", Type::Pose),
            req("selection_vector", Type::List),
            req("wrench", Type::List),
            req("type", Type::Int),
            req("limits", Type::List),
        ],
        Type::Nothing,
        ALL,
    ),
    f("end_force_mode", &[], Type::Nothing, ALL),
    f(
        "force_mode_set_damping",
        &[req("damping", Type::Number)],
        Type::Nothing,
        since(Some(5), Some(0)),
    ),
    f(
        "force_mode_set_gain_scaling",
        &[req("scaling", Type::Number)],
        Type::Nothing,
        since(None, Some(0)),
    ),
    f("teach_mode", &[], Type::Nothing, ALL),
    f("end_teach_mode", &[], Type::Nothing, ALL),
    f(
        "freedrive_mode",
        &[
            opt("freeAxes", Type::List, "[1, 1, 1, 1, 1, 1]"),
            opt("feature", Type::Pose, "p[0, 0, 0, 0, 0, 0]"),
        ],
        Type::Nothing,
        ALL,
    ),
    f("end_freedrive_mode", &[], Type::Nothing, ALL),
    f(
        "get_freedrive_status",
        &[],
        Type::Int,
        since(None, Some(10)),
    ),
    f(
        "tool_contact",
        &[req("direction", Type::PoseOrList)],
        Type::Int,
        since(None, Some(4)),
    ),
    f(
        "direct_torque",
        &[
            req("torque", Type::List),
            opt("friction_comp", Type::Bool, "True"),
            opt("viscous_scale", Type::List, "[1, 1, 1, 1, 1, 1]"),
            opt("coulomb_scale", Type::List, "[1, 1, 1, 1, 1, 1]"),
        ],
        Type::Nothing,
        since(None, Some(23)),
    ),
    f(
        "protective_stop",
        &[],
        Type::Nothing,
        since(Some(8), Some(0)),
    ),
    f("sleep", &[req("t", Type::Number)], Type::Nothing, ALL),
    f("sync", &[], Type::Nothing, ALL),
    f(
        "set_speed_slider_fraction",
        &[req("slider_fraction", Type::Number)],
        Type::Nothing,
        ALL,
    ),
    // Settings
    f("set_tcp", &[req("pose", Type::Pose)], Type::Nothing, ALL),
    f(
        "set_payload",
        &[
            req("m", Type::Number),
            opt("cog", Type::List, "get_target_payload_cog()"),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_payload_mass",
        &[req("m", Type::Number)],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_payload_cog",
        &[req("CoG", Type::List)],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_target_payload",
        &[
            req("m", Type::Number),
            req("cog", Type::List),
            opt("inertia", Type::List, "[0, 0, 0, 0, 0, 0]"),
            opt("transition_time", Type::Number, "0"),
        ],
        Type::Nothing,
        since(None, Some(10)),
    ),
    f("set_gravity", &[req("d", Type::List)], Type::Nothing, ALL),
    f("zero_ftsensor", &[], Type::Nothing, ALL),
    f(
        "enable_external_ft_sensor",
        &[
            req("enable", Type::Bool),
            opt("sensor_mass", Type::Number, "0.0"),
            opt("sensor_measuring_offset", Type::List, "[0.0, 0.0, 0.0]"),
            opt("sensor_cog", Type::List, "[0.0, 0.0, 0.0]"),
        ],
        Type::Nothing,
        since(None, Some(9)),
    ),
    f(
        "ft_rtde_input_enable",
        &[
            req("enable", Type::Bool),
            opt("sensor_mass", Type::Number, "0.0"),
            opt("sensor_measuring_offset", Type::List, "[0.0, 0.0, 0.0]"),
            opt("sensor_cog", Type::List, "[0.0, 0.0, 0.0]"),
        ],
        Type::Nothing,
        since(None, Some(9)),
    ),
    f(
        "set_tool_voltage",
        &[req("voltage", Type::Int)],
        Type::Nothing,
        ALL,
    ),
    f(
        "rtde_set_watchdog",
        &[
            req("variable_name", Type::Str),
            req("min_frequency", Type::Number),
            opt("action", Type::Str, "\"pause\""),
        ],
        Type::Nothing,
        since(Some(3), Some(0)),
    ),
    // Kinematics and poses
    f(
        "get_inverse_kin",
        &[
            req("x", Type::Pose),
            opt("qnear", Type::List, "get_actual_joint_positions()"),
            opt("maxPositionError", Type::Number, "1e-10"),
            opt("maxOrientationError", Type::Number, "1e-10"),
            opt("tcp", Type::Pose, "get_tcp_offset()"),
        ],
        Type::List,
        ALL,
    ),
    f(
        "get_inverse_kin_has_solution",
        &[
            req("pose", Type::Pose),
            opt("qnear", Type::List, "get_actual_joint_positions()"),
            opt("maxPositionError", Type::Number, "1e-10"),
            opt("maxOrientationError", Type::Number, "1e-10"),
            opt("tcp", Type::Pose, "get_tcp_offset()"),
        ],
        Type::Bool,
        since(Some(15), Some(10)),
    ),
    f(
        "get_forward_kin",
        &[
            opt("q", Type::List, "get_actual_joint_positions()"),
            opt("tcp", Type::Pose, "get_tcp_offset()"),
        ],
        Type::Pose,
        ALL,
    ),
    f(
        "pose_trans",
        &[req("p_from", Type::Pose), req("p_from_to", Type::Pose)],
        Type::Pose,
        ALL,
    ),
    f("pose_inv", &[req("p_from", Type::Pose)], Type::Pose, ALL),
    f(
        "pose_add",
        &[req("p_1", Type::Pose), req("p_2", Type::Pose)],
        Type::Pose,
        ALL,
    ),
    f(
        "pose_sub",
        &[req("p_to", Type::Pose), req("p_from", Type::Pose)],
        Type::Pose,
        ALL,
    ),
    f(
        "pose_dist",
        &[req("p_from", Type::Pose), req("p_to", Type::Pose)],
        Type::Number,
        ALL,
    ),
    f(
        "point_dist",
        &[req("p_from", Type::Pose), req("p_to", Type::Pose)],
        Type::Number,
        ALL,
    ),
    f(
        "interpolate_pose",
        &[
            req("p_from", Type::Pose),
            req("p_to", Type::Pose),
            req("alpha", Type::Number),
        ],
        Type::Pose,
        ALL,
    ),
    f(
        "wrench_trans",
        &[req("T_from_to", Type::Pose), req("w_from", Type::List)],
        Type::List,
        ALL,
    ),
    f(
        "is_within_safety_limits",
        &[
            req("pose", Type::PoseOrList),
            opt("qnear", Type::List, "get_actual_joint_positions()"),
        ],
        Type::Bool,
        ALL,
    ),
    f("get_tcp_offset", &[], Type::Pose, since(Some(6), Some(0))),
    // State
    f("get_actual_joint_positions", &[], Type::List, ALL),
    f("get_actual_joint_speeds", &[], Type::List, ALL),
    f("get_actual_tcp_pose", &[], Type::Pose, ALL),
    f("get_actual_tcp_speed", &[], Type::List, ALL),
    f("get_actual_tool_flange_pose", &[], Type::Pose, ALL),
    f(
        "get_actual_joint_positions_history",
        &[opt("steps", Type::Int, "0")],
        Type::List,
        since(None, Some(4)),
    ),
    f("get_joint_positions", &[], Type::List, ALL),
    f("get_target_joint_positions", &[], Type::List, ALL),
    f("get_target_joint_speeds", &[], Type::List, ALL),
    f("get_target_tcp_pose", &[], Type::Pose, ALL),
    f("get_target_tcp_speed", &[], Type::List, ALL),
    f(
        "get_target_waypoint",
        &[],
        Type::Pose,
        since(Some(10), Some(3)),
    ),
    f(
        "get_target_payload",
        &[],
        Type::Number,
        since(Some(10), Some(0)),
    ),
    f(
        "get_target_payload_cog",
        &[],
        Type::List,
        since(Some(10), Some(0)),
    ),
    f(
        "get_target_payload_inertia",
        &[],
        Type::List,
        since(None, Some(10)),
    ),
    f("get_joint_torques", &[], Type::List, ALL),
    f("get_joint_temp", &[req("j", Type::Int)], Type::Number, ALL),
    f("get_tcp_force", &[], Type::List, ALL),
    f("get_steptime", &[], Type::Number, since(Some(10), Some(4))),
    f("is_steady", &[], Type::Bool, ALL),
    f("get_controller_temp", &[], Type::Number, ALL),
    // Registers
    f(
        "read_input_boolean_register",
        &[req("address", Type::Int)],
        Type::Bool,
        since(Some(3), Some(0)),
    ),
    f(
        "read_output_boolean_register",
        &[req("address", Type::Int)],
        Type::Bool,
        since(Some(3), Some(0)),
    ),
    f(
        "write_output_boolean_register",
        &[req("address", Type::Int), req("value", Type::Bool)],
        Type::Nothing,
        since(Some(3), Some(0)),
    ),
    f(
        "read_input_integer_register",
        &[req("address", Type::Int)],
        Type::Int,
        since(Some(3), Some(0)),
    ),
    f(
        "read_output_integer_register",
        &[req("address", Type::Int)],
        Type::Int,
        since(Some(3), Some(0)),
    ),
    f(
        "write_output_integer_register",
        &[req("address", Type::Int), req("value", Type::Int)],
        Type::Nothing,
        since(Some(3), Some(0)),
    ),
    f(
        "read_input_float_register",
        &[req("address", Type::Int)],
        Type::Number,
        since(Some(3), Some(0)),
    ),
    f(
        "read_output_float_register",
        &[req("address", Type::Int)],
        Type::Number,
        since(Some(3), Some(0)),
    ),
    f(
        "write_output_float_register",
        &[req("address", Type::Int), req("value", Type::Number)],
        Type::Nothing,
        since(Some(3), Some(0)),
    ),
    // I/O
    f(
        "set_standard_digital_out",
        &[req("n", Type::Int), req("b", Type::Bool)],
        Type::Nothing,
        ALL,
    ),
    f(
        "get_standard_digital_in",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "get_standard_digital_out",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "set_configurable_digital_out",
        &[req("n", Type::Int), req("b", Type::Bool)],
        Type::Nothing,
        ALL,
    ),
    f(
        "get_configurable_digital_in",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "get_configurable_digital_out",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "set_tool_digital_out",
        &[req("n", Type::Int), req("b", Type::Bool)],
        Type::Nothing,
        ALL,
    ),
    f(
        "get_tool_digital_in",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "get_tool_digital_out",
        &[req("n", Type::Int)],
        Type::Bool,
        ALL,
    ),
    f(
        "get_standard_analog_in",
        &[req("n", Type::Int)],
        Type::Number,
        ALL,
    ),
    f(
        "get_standard_analog_out",
        &[req("n", Type::Int)],
        Type::Number,
        ALL,
    ),
    f(
        "set_standard_analog_out",
        &[req("n", Type::Int), req("f", Type::Number)],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_standard_analog_input_domain",
        &[req("port", Type::Int), req("domain", Type::Int)],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_analog_outputdomain",
        &[req("port", Type::Int), req("domain", Type::Int)],
        Type::Nothing,
        ALL,
    ),
    f(
        "get_tool_analog_in",
        &[req("n", Type::Int)],
        Type::Number,
        ALL,
    ),
    f(
        "set_tool_analog_input_domain",
        &[req("port", Type::Int), req("domain", Type::Int)],
        Type::Nothing,
        ALL,
    ),
    f(
        "set_digital_out",
        &[req("n", Type::Int), req("b", Type::Bool)],
        Type::Nothing,
        ALL,
    ),
    f("get_digital_in", &[req("n", Type::Int)], Type::Bool, ALL),
    f("get_digital_out", &[req("n", Type::Int)], Type::Bool, ALL),
    f(
        "set_analog_out",
        &[req("n", Type::Int), req("f", Type::Number)],
        Type::Nothing,
        ALL,
    ),
    f("get_analog_in", &[req("n", Type::Int)], Type::Number, ALL),
    // Messages
    f(
        "textmsg",
        &[req("s1", Type::Any), opt("s2", Type::Any, "\"\"")],
        Type::Nothing,
        ALL,
    ),
    f(
        "popup",
        &[
            req("s", Type::Any),
            opt("title", Type::Str, "\"Popup\""),
            opt("warning", Type::Bool, "False"),
            opt("error", Type::Bool, "False"),
            opt("blocking", Type::Bool, "False"),
        ],
        Type::Nothing,
        ALL,
    ),
    // Math
    f("sin", &[req("f", Type::Number)], Type::Number, ALL),
    f("cos", &[req("f", Type::Number)], Type::Number, ALL),
    f("tan", &[req("f", Type::Number)], Type::Number, ALL),
    f("asin", &[req("f", Type::Number)], Type::Number, ALL),
    f("acos", &[req("f", Type::Number)], Type::Number, ALL),
    f("atan", &[req("f", Type::Number)], Type::Number, ALL),
    f("sqrt", &[req("f", Type::Number)], Type::Number, ALL),
    f("d2r", &[req("f", Type::Number)], Type::Number, ALL),
    f("r2d", &[req("f", Type::Number)], Type::Number, ALL),
    f(
        "atan2",
        &[req("y", Type::Number), req("x", Type::Number)],
        Type::Number,
        ALL,
    ),
    f(
        "pow",
        &[req("base", Type::Number), req("exponent", Type::Number)],
        Type::Number,
        ALL,
    ),
    f(
        "log",
        &[req("b", Type::Number), req("f", Type::Number)],
        Type::Number,
        ALL,
    ),
    f("floor", &[req("f", Type::Number)], Type::Int, ALL),
    f("ceil", &[req("f", Type::Number)], Type::Int, ALL),
    f("norm", &[req("a", Type::Any)], Type::Number, ALL),
    f(
        "normalize",
        &[req("v", Type::List)],
        Type::List,
        since(Some(10), Some(0)),
    ),
    f("random", &[], Type::Number, ALL),
    f(
        "binary_list_to_integer",
        &[req("l", Type::List)],
        Type::Int,
        ALL,
    ),
    f(
        "integer_to_binary_list",
        &[req("x", Type::Int)],
        Type::List,
        ALL,
    ),
    f("length", &[req("v", Type::Any)], Type::Int, ALL),
    f(
        "get_list_length",
        &[req("v", Type::List)],
        Type::Int,
        since(Some(3), Some(0)),
    ),
    f(
        "make_list",
        &[
            req("length", Type::Int),
            req("initial_value", Type::Any),
            opt("capacity", Type::Int, "0"),
        ],
        Type::List,
        since(None, Some(15)),
    ),
    // Strings
    f(
        "to_str",
        &[req("val", Type::Any)],
        Type::Str,
        since(Some(5), Some(0)),
    ),
    f(
        "to_num",
        &[req("str", Type::Str)],
        Type::Number,
        since(Some(5), Some(0)),
    ),
    f(
        "str_cat",
        &[req("op1", Type::Any), req("op2", Type::Any)],
        Type::Str,
        since(Some(5), Some(0)),
    ),
    f(
        "str_len",
        &[req("str", Type::Str)],
        Type::Int,
        since(Some(5), Some(0)),
    ),
    f(
        "str_sub",
        &[
            req("src", Type::Str),
            req("index", Type::Int),
            opt("len", Type::Int, "0"),
        ],
        Type::Str,
        since(Some(5), Some(0)),
    ),
    f(
        "str_find",
        &[
            req("src", Type::Str),
            req("target", Type::Str),
            opt("start_from", Type::Int, "0"),
        ],
        Type::Int,
        since(Some(5), Some(0)),
    ),
    f(
        "str_at",
        &[req("src", Type::Str), req("index", Type::Int)],
        Type::Str,
        since(Some(5), Some(0)),
    ),
    f(
        "str_empty",
        &[req("str", Type::Str)],
        Type::Bool,
        since(Some(5), Some(0)),
    ),
    // Sockets
    f(
        "socket_open",
        &[
            req("address", Type::Str),
            req("port", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Bool,
        ALL,
    ),
    f(
        "socket_close",
        &[opt("socket_name", Type::Str, "\"socket_0\"")],
        Type::Nothing,
        ALL,
    ),
    f(
        "socket_read_binary_integer",
        &[
            req("number", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
            opt("timeout", Type::Number, "2"),
        ],
        Type::List,
        ALL,
    ),
    f(
        "socket_read_ascii_float",
        &[
            req("number", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
            opt("timeout", Type::Number, "2"),
        ],
        Type::List,
        ALL,
    ),
    f(
        "socket_read_byte_list",
        &[
            req("number", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
            opt("timeout", Type::Number, "2"),
        ],
        Type::List,
        ALL,
    ),
    f(
        "socket_read_string",
        &[
            opt("socket_name", Type::Str, "\"socket_0\""),
            opt("prefix", Type::Str, "\"\""),
            opt("suffix", Type::Str, "\"\""),
            opt("interpret_escape", Type::Bool, "False"),
            opt("timeout", Type::Number, "2"),
        ],
        Type::Str,
        ALL,
    ),
    f(
        "socket_read_line",
        &[
            opt("socket_name", Type::Str, "\"socket_0\""),
            opt("timeout", Type::Number, "2"),
        ],
        Type::Str,
        ALL,
    ),
    f(
        "socket_send_int",
        &[
            req("value", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Bool,
        ALL,
    ),
    f(
        "socket_send_string",
        &[
            req("str", Type::Any),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Bool,
        ALL,
    ),
    f(
        "socket_send_line",
        &[
            req("str", Type::Any),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Bool,
        ALL,
    ),
    f(
        "socket_send_byte",
        &[
            req("value", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Bool,
        ALL,
    ),
    f(
        "socket_set_var",
        &[
            req("name", Type::Str),
            req("value", Type::Int),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Nothing,
        ALL,
    ),
    f(
        "socket_get_var",
        &[
            req("name", Type::Str),
            opt("socket_name", Type::Str, "\"socket_0\""),
        ],
        Type::Int,
        ALL,
    ),
];
