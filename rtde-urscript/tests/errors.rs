//! Each kind of compile error, at its line and column, worded as the controller words
//! it; version gating; several errors reported together.

use rtde_urscript::builtins::Since;
use rtde_urscript::{ControllerVersion, ErrorKind, ScriptError, Span, check};

const E_SERIES: ControllerVersion = ControllerVersion::new(5, 9, 0, 0);
const CB3: ControllerVersion = ControllerVersion::new(3, 15, 0, 0);
const POLYSCOPE_X: ControllerVersion = ControllerVersion::new(10, 7, 0, 0);

fn errors(source: &str, version: ControllerVersion) -> Vec<ScriptError> {
    match check(source, version) {
        Ok(_) => Vec::new(),
        Err(e) => e,
    }
}

/// The one error a script has: its kind, line, column and text.
fn one(source: &str, version: ControllerVersion) -> (ErrorKind, Span, String) {
    let e = errors(source, version);
    assert_eq!(e.len(), 1, "{source:?}: {e:?}");
    (e[0].kind, e[0].span, e[0].to_string())
}

#[test]
fn an_unknown_function_names_the_closest_builtin() {
    let (kind, span, text) = one("def main():\n  movjl([0, 0, 0, 0, 0, 0])\nend\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::NameNotFound, Span::new(2, 3)));
    assert_eq!(
        text,
        "compile_error_name_not_found: name `movjl` is not defined; did you mean `movel`?"
    );
}

#[test]
fn an_unknown_function_may_be_closest_to_a_user_function() {
    let (_, span, text) = one(
        "def signal_ready():\n  sync()\nend\nsignal_raedy()\n",
        E_SERIES,
    );
    assert_eq!(span, Span::new(4, 1));
    assert!(text.ends_with("did you mean `signal_ready`?"), "{text}");
}

#[test]
fn an_undefined_variable_names_the_closest_visible_one() {
    let (kind, span, text) = one("speed = 1\nmovej(q=[0, 0, 0, 0, 0, 0], v=sped)\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::NameNotFound, Span::new(2, 31)));
    assert!(
        text.ends_with("name `sped` is not defined; did you mean `speed`?"),
        "{text}"
    );
}

#[test]
fn a_function_does_not_see_the_locals_of_the_function_around_it() {
    // The program's own variables are global; a function's inside it are not.
    let source = "def program():\n  pulse = 0.5\n  def f():\n    width = 2\n    global g = 1\n    thread t():\n      sleep(pulse * width * g)\n    end\n  end\nend\n";
    let (kind, span, _) = one(source, E_SERIES);
    assert_eq!((kind, span), (ErrorKind::NameNotFound, Span::new(7, 21)));
}

/// The warnings of a script that has no errors.
fn warnings(source: &str, version: ControllerVersion) -> Vec<(ErrorKind, Span, String)> {
    let checked = check(source, version).unwrap();
    checked
        .warnings
        .iter()
        .map(|w| (w.kind, w.span, w.to_string()))
        .collect()
}

#[test]
fn a_builtin_before_the_first_version_a_driver_knows_it_from_is_warned_not_refused() {
    let source = "d = p[0, 0, -1, 0, 0, 0]\nsteps = tool_contact(d)\n";
    assert_eq!(
        warnings(source, CB3),
        [(
            ErrorKind::NotInVersion,
            Span::new(2, 9),
            "compile_error_name_not_found: `tool_contact` is known from 5.4 (e-Series) on (a \
             driver's version gate, not the manual): controller 3.15.0 may not have it"
                .to_owned()
        )]
    );
    assert_eq!(
        warnings(source, ControllerVersion::new(5, 3, 0, 0)).len(),
        1
    );
    assert!(warnings(source, ControllerVersion::new(5, 4, 0, 0)).is_empty());
    assert!(warnings(source, POLYSCOPE_X).is_empty());
}

#[test]
fn a_cb3_minor_version_gates_too() {
    let source = "protective_stop()\n";
    assert_eq!(
        warnings(source, ControllerVersion::new(3, 7, 0, 0))[0].0,
        ErrorKind::NotInVersion
    );
    assert!(warnings(source, ControllerVersion::new(3, 8, 0, 0)).is_empty());
}

#[test]
fn only_a_first_version_from_the_manual_refuses() {
    let gate = |confirmed| Since {
        cb3: None,
        e_series: Some(4),
        confirmed,
    };
    assert!(gate(true).refuses(CB3));
    assert!(gate(true).refuses(ControllerVersion::new(5, 3, 0, 0)));
    assert!(!gate(true).refuses(ControllerVersion::new(5, 4, 0, 0)));
    assert!(!gate(false).refuses(CB3));
}

#[test]
fn for_loops_and_structs_are_warned_before_polyscope_x() {
    let source = "for i in range(3):\n  s = struct(a=i)\nend\n";
    let places: Vec<_> = warnings(source, E_SERIES)
        .into_iter()
        .map(|(kind, span, _)| (kind, span))
        .collect();
    assert_eq!(
        places,
        [
            (ErrorKind::NotInVersion, Span::new(1, 1)),
            (ErrorKind::NotInVersion, Span::new(2, 7))
        ]
    );
    assert!(warnings(source, POLYSCOPE_X).is_empty());
}

#[test]
fn too_many_arguments() {
    let (kind, span, text) = one("sleep(1, 2)\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::ArgumentCount, Span::new(1, 10)));
    assert!(
        text.starts_with("compile_error_wrong_number_of_arguments: `sleep` takes at most 1"),
        "{text}"
    );
}

#[test]
fn a_missing_argument() {
    let (kind, span, text) = one("x = pose_trans(p[0, 0, 0, 0, 0, 0])\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::ArgumentCount, Span::new(1, 5)));
    assert!(
        text.ends_with("`pose_trans` is missing its argument `p_from_to`"),
        "{text}"
    );
}

#[test]
fn user_functions_are_counted_too() {
    let source = "def f(a, b=1):\n  return a\nend\nf()\nf(1, 2, 3)\nf(1, b=2)\n";
    let e = errors(source, E_SERIES);
    let places: Vec<_> = e.iter().map(|e| (e.kind, e.span)).collect();
    assert_eq!(
        places,
        [
            (ErrorKind::ArgumentCount, Span::new(4, 1)),
            (ErrorKind::ArgumentCount, Span::new(5, 9))
        ]
    );
}

#[test]
fn an_unknown_keyword_names_the_closest_parameter() {
    let (kind, span, text) = one("servoj([0, 0, 0, 0, 0, 0], t=0.002, gian=300)\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::UnknownKeyword, Span::new(1, 37)));
    assert_eq!(
        text,
        "compile_error_unknown_keyword_argument: `servoj` has no parameter `gian`; did you mean `gain`?"
    );
}

#[test]
fn an_argument_given_twice() {
    let (kind, span, _) = one("movej([0, 0, 0, 0, 0, 0], 1.2, a=1.4)\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::UnknownKeyword, Span::new(1, 34)));
}

#[test]
fn a_literal_of_the_wrong_type() {
    let (kind, span, text) = one("set_standard_digital_out(0, \"on\")\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::TypeMismatch, Span::new(1, 29)));
    assert_eq!(
        text,
        "compile_error_type_mismatch: `set_standard_digital_out` takes a boolean as `b`, not a string"
    );
    // A list where a pose is needed, and a builtin's pose result where a list is needed.
    assert_eq!(
        one("x = pose_inv([0, 0, 0, 0, 0, 0])\n", E_SERIES).0,
        ErrorKind::TypeMismatch
    );
    assert_eq!(
        one("x = get_forward_kin(get_actual_tcp_pose())\n", E_SERIES).0,
        ErrorKind::TypeMismatch
    );
    // Poses and lists are both move targets; integers are numbers.
    assert!(
        errors(
            "movel([0, 0, 0, 0, 0, 0], a=1)\nmovel(p[0, 0, 0, 0, 0, 0])\n",
            E_SERIES
        )
        .is_empty()
    );
}

#[test]
fn arithmetic_on_a_string() {
    let (kind, span, text) = one("x = 1\ny = \"a\" + x\n", E_SERIES);
    assert_eq!((kind, span), (ErrorKind::TypeMismatch, Span::new(2, 5)));
    assert!(
        text.ends_with("operator `+` does not take a string"),
        "{text}"
    );
}

#[test]
fn return_break_and_continue_out_of_place() {
    let source = "return 1\nbreak\ndef f():\n  continue\nend\nwhile True:\n  break\nend\n";
    let e = errors(source, E_SERIES);
    let places: Vec<_> = e.iter().map(|e| (e.kind, e.span)).collect();
    assert_eq!(
        places,
        [
            (ErrorKind::Misplaced, Span::new(1, 1)),
            (ErrorKind::Misplaced, Span::new(2, 1)),
            (ErrorKind::Misplaced, Span::new(4, 3)),
        ]
    );
    assert!(e[0].to_string().ends_with("`return` outside a function"));
}

#[test]
fn run_of_something_that_is_not_a_thread() {
    let source = "def f():\n  sync()\nend\nthread worker():\n  sync()\nend\nh = run f()\nh = run sleep()\nh = run wroker()\nh = run worker()\n";
    let e = errors(source, E_SERIES);
    let places: Vec<_> = e.iter().map(|e| (e.kind, e.span)).collect();
    assert_eq!(
        places,
        [
            (ErrorKind::NotAThread, Span::new(7, 9)),
            (ErrorKind::NotAThread, Span::new(8, 9)),
            (ErrorKind::NameNotFound, Span::new(9, 9)),
        ]
    );
    assert_eq!(e[2].suggestion.as_deref(), Some("worker"));
}

#[test]
fn every_error_of_a_script_is_reported_in_order() {
    let source = "def main():\n  movjl(q)\n  sleep()\n  textmsg(x, y, z)\nend\n";
    let e = errors(source, E_SERIES);
    let lines: Vec<_> = e.iter().map(|e| e.span.line).collect();
    // movjl unknown, q undefined, sleep missing t, x/y/z undefined, too many arguments.
    assert_eq!(lines, [2, 2, 3, 4, 4, 4, 4]);
}

#[test]
fn a_syntax_error_comes_alone() {
    let e = errors("movjl(\nx = \n", E_SERIES);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].kind, ErrorKind::Syntax);
}

#[test]
fn pi_is_defined() {
    assert!(errors("x = d2r(180) - pi\n", CB3).is_empty());
}
