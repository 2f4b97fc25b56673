//! The engine runs each construct of the language as the manual describes it: functions
//! with default and keyword arguments, globals and locals, branches and loops, values
//! and how they print, line markers.

mod support;

use rtde_urscript::run::{Machine, State, Value};
use rtde_urscript::{ControllerVersion, ErrorKind, check};
use support::{E_SERIES, POLYSCOPE_X, Robot, log_of, machine_at, run_on};

#[test]
fn a_program_sent_as_one_def_runs_that_def() {
    let log = log_of("def prog():\n  textmsg(\"in prog\")\nend\n");
    assert_eq!(log, ["in prog"]);
}

#[test]
fn top_level_statements_run_in_order_and_defs_only_when_called() {
    let log = log_of("def f():\n  textmsg(\"f\")\nend\ntextmsg(\"a\")\nf()\ntextmsg(\"b\")\n");
    assert_eq!(log, ["a", "f", "b"]);
}

#[test]
fn default_and_keyword_arguments_fill_parameters_by_name() {
    let log = log_of(
        "def f(a, b=2, c=3):\n  return a * 100 + b * 10 + c\nend\n\
         textmsg(f(1))\ntextmsg(f(1, 5))\ntextmsg(f(1, c=7))\ntextmsg(f(c=9, a=4))\n",
    );
    assert_eq!(log, ["123", "153", "127", "429"]);
}

#[test]
fn builtin_defaults_come_from_the_table_and_keywords_override_them() {
    let (robot, state) = support::run("movej([0, 0, 0, 0, 0, 0], v=0.5)\n");
    assert_eq!(state, State::Ended);
    let args = &robot.calls[0].2;
    assert_eq!(args.len(), 5);
    assert_eq!(args[1], Value::Float(1.4), "a's default");
    assert_eq!(args[2], Value::Float(0.5), "v given by keyword");
    assert_eq!(args[4], Value::Int(0), "r's default");
}

#[test]
fn a_function_writes_a_program_variable_and_keeps_its_own_locals() {
    let log = log_of(
        "def prog():\n  count = 0\n  def bump():\n    count = count + 1\n    mine = 5\n    return mine\n  end\n\
         bump()\n  bump()\n  textmsg(count)\nend\n",
    );
    assert_eq!(log, ["2"]);
}

#[test]
fn local_declaration_shadows_a_global_and_global_declaration_shares_one() {
    let log = log_of(
        "x = 1\ndef f():\n  local x = 10\n  global y = x + 1\n  return x\nend\n\
         textmsg(f())\ntextmsg(x)\ntextmsg(y)\n",
    );
    assert_eq!(log, ["10", "1", "11"]);
}

#[test]
fn parameters_are_local_to_each_call_and_recursion_keeps_frames_apart() {
    let log = log_of(
        "def fact(n):\n  if n <= 1:\n    return 1\n  end\n  return n * fact(n - 1)\nend\ntextmsg(fact(10))\n",
    );
    assert_eq!(log, ["3628800"]);
}

#[test]
fn if_elif_else_takes_the_first_true_branch() {
    let script = |x: i32| {
        format!(
            "x = {x}\nif x < 0:\n  textmsg(\"neg\")\nelif x == 0:\n  textmsg(\"zero\")\nelse:\n  textmsg(\"pos\")\nend\n"
        )
    };
    assert_eq!(log_of(&script(-3)), ["neg"]);
    assert_eq!(log_of(&script(0)), ["zero"]);
    assert_eq!(log_of(&script(4)), ["pos"]);
}

#[test]
fn while_with_break_and_continue() {
    let log = log_of(
        "i = 0\nwhile True:\n  i = i + 1\n  if i == 2:\n    continue\n  end\n  if i > 4:\n    break\n  end\n  textmsg(i)\nend\n",
    );
    assert_eq!(log, ["1", "3", "4"]);
}

#[test]
fn return_leaves_a_function_from_inside_a_loop() {
    let log = log_of(
        "def first_over(l, limit):\n  i = 0\n  while i < length(l):\n    if l[i] > limit:\n      return i\n    end\n    i = i + 1\n  end\n  return -1\nend\n\
         textmsg(first_over([1, 5, 9], 4))\ntextmsg(first_over([1], 4))\n",
    );
    assert_eq!(log, ["1", "-1"]);
}

#[test]
fn for_over_range_counts_up_down_and_with_continue() {
    let mut robot = Robot::default();
    let mut machine = machine_at(
        "for i in range(3):\n  textmsg(i)\nend\nfor j in range(10, 4, -3):\n  textmsg(j)\nend\n\
         for k in range(4):\n  if k == 1:\n    continue\n  end\n  textmsg(k)\nend\n",
        POLYSCOPE_X,
    );
    assert_eq!(run_on(&mut robot, &mut machine, 100), State::Ended);
    assert_eq!(robot.log, ["0", "1", "2", "10", "7", "0", "2", "3"]);
}

#[test]
fn structs_hold_fields_read_and_assigned_by_name() {
    let mut robot = Robot::default();
    let mut machine = machine_at(
        "s = struct(a=1, b=\"x\")\ns.a = s.a + 41\ntextmsg(s.a)\ntextmsg(s.b)\n",
        POLYSCOPE_X,
    );
    assert_eq!(run_on(&mut robot, &mut machine, 10), State::Ended);
    assert_eq!(robot.log, ["42", "x"]);
}

#[test]
fn lists_are_values_copied_on_assignment_and_when_passed() {
    let log = log_of(
        "def zero_first(l):\n  l[0] = 0\n  return l\nend\n\
         a = [1, 2, 3]\nb = a\nb[1] = 20\nc = zero_first(a)\ntextmsg(a)\ntextmsg(b)\ntextmsg(c)\n",
    );
    assert_eq!(log, ["[1, 2, 3]", "[1, 20, 3]", "[0, 2, 3]"]);
}

#[test]
fn poses_print_as_p_lists_and_elements_are_assignable() {
    let log =
        log_of("p = p[0.1, 0.2, 0.3, 0, 3.14159, 0]\np[2] = 0.5\ntextmsg(p)\ntextmsg(p[2])\n");
    assert_eq!(log, ["p[0.1, 0.2, 0.5, 0, 3.14159, 0]", "0.5"]);
}

#[test]
fn values_print_as_the_controller_prints_them() {
    let log = log_of(
        "textmsg(True)\ntextmsg(False)\ntextmsg(-7)\ntextmsg(2.0)\ntextmsg(1 / 3.0)\ntextmsg(1.5e-7)\ntextmsg(123456789.0)\ntextmsg(\"a\", 5)\n",
    );
    assert_eq!(
        log,
        [
            "True",
            "False",
            "-7",
            "2",
            "0.333333",
            "1.5e-07",
            "1.23457e+08",
            "a5"
        ]
    );
}

#[test]
fn line_markers_and_comments_change_nothing() {
    let plain = log_of("x = 1\nx = x + 1\ntextmsg(x)\n");
    let marked =
        log_of("$ 1 \"start\"\nx = 1 # one\n$ 2 \"step\" \"breakAfter\"\nx = x + 1\ntextmsg(x)\n");
    assert_eq!(plain, marked);
}

#[test]
fn the_main_program_ending_ends_the_program() {
    let mut robot = Robot::default();
    let mut machine = machine_at("textmsg(\"once\")\n", E_SERIES);
    assert_eq!(machine.tick(&mut robot), &State::Ended);
    assert_eq!(machine.tick(&mut robot), &State::Ended);
    assert_eq!(robot.log, ["once"], "an ended program runs nothing more");
}

#[test]
fn halt_stops_the_program_where_it_stands() {
    let log = log_of("textmsg(\"a\")\nhalt\ntextmsg(\"b\")\n");
    assert_eq!(log, ["a"]);
}

#[test]
fn globals_are_readable_by_name_for_tests() {
    let mut robot = Robot::default();
    let mut machine = machine_at("answer = 6 * 7\n", E_SERIES);
    run_on(&mut robot, &mut machine, 1);
    assert_eq!(machine.global("answer"), Some(&Value::Int(42)));
}

#[test]
fn cb3_ticks_every_8_ms_and_e_series_every_2() {
    let cb3 = check("x = get_steptime()\n", ControllerVersion::new(3, 15, 0, 0)).unwrap();
    assert_eq!(Machine::new(&cb3).unwrap().step_time(), 0.008);
    let e = check("x = get_steptime()\n", E_SERIES).unwrap();
    let mut machine = Machine::new(&e).unwrap();
    assert_eq!(machine.step_time(), 0.002);
    machine.tick(&mut Robot::default());
    assert_eq!(machine.global("x"), Some(&Value::Float(0.002)));
}

#[test]
fn what_the_engine_does_not_run_is_a_compile_error_at_its_place() {
    let checked = check("a = [[1, 2], [3]]\na[0][1] = 5\n", E_SERIES).unwrap();
    let e = Machine::new(&checked).unwrap_err();
    assert_eq!(
        (e.kind, e.span.line, e.span.column),
        (ErrorKind::Unsupported, 2, 1)
    );
}

/// Shapes drivers' control scripts use (written for this test in the form of ur_rtde's):
/// a parameter named `p` indexed beside pose literals, a call with a space before its
/// parenthesis, a boolean returned from a comparison, `global` with a thread handle
/// inside a branch.
#[test]
fn driver_script_shapes_run() {
    let log = log_of(
        "def control():\n  global started = False\n\
         def scale(p, factor):\n    return p[p[0] * factor, p[1] * factor, p[2] * factor, p[3], p[4], p[5]]\n  end\n\
         def is_null(p):\n    total = p[0] + p[1] + p[2] + p[3] + p[4] + p[5]\n    return (total < 0.0000000001)\n  end\n\
         def speed_in_base(tool_speed, frame):\n    t = p[tool_speed[0], tool_speed[1], tool_speed[2], 0, 0, 0]\n\
         \x20   moved = pose_sub(pose_trans (frame, t), frame)\n    r = norm([tool_speed[3], tool_speed[4], tool_speed[5]])\n\
         \x20   return [moved[0], moved[1], moved[2], r, 0, 0]\n  end\n\
         thread idle():\n    sync()\n  end\n\
         if not started:\n    global idle_thrd = run idle()\n    started = True\n  end\n\
         textmsg(scale(p[0.1, 0.2, 0.3, 0, 0, 0], 2))\n  textmsg(is_null(p[0, 0, 0, 0, 0, 0]))\n\
         textmsg(speed_in_base([0, 0, 0.02, 0, 0, 1], p[0.5, 0, 0, 0, 0, 0]))\n  join idle_thrd\nend\n",
    );
    assert_eq!(
        log,
        ["p[0.2, 0.4, 0.6, 0, 0, 0]", "True", "[0, 0, 0.02, 1, 0, 0]"]
    );
}
