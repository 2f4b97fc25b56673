//! Each operator on each type, as the manual defines it, and each runtime error kind at
//! the line and column of the expression that fails.

mod support;

use support::{failure, log_of};

fn show(expr: &str) -> String {
    log_of(&format!("textmsg({expr})\n")).remove(0)
}

#[test]
fn integers_stay_integers_and_divide_toward_zero() {
    assert_eq!(show("7 + 2"), "9");
    assert_eq!(show("7 - 9"), "-2");
    assert_eq!(show("7 * 3"), "21");
    assert_eq!(show("7 / 2"), "3");
    assert_eq!(show("-7 / 2"), "-3");
    assert_eq!(show("7 % 3"), "1");
    assert_eq!(show("-(4)"), "-4");
}

#[test]
fn integers_wrap_around_at_32_bits() {
    assert_eq!(show("2147483647 + 1"), "-2147483648");
    assert_eq!(show("65536 * 65536"), "0");
}

#[test]
fn an_integer_meets_a_float_as_a_float() {
    assert_eq!(show("7 / 2.0"), "3.5");
    assert_eq!(show("1 + 0.5"), "1.5");
    assert_eq!(show("2.5 * 2"), "5");
    assert_eq!(show("7.5 % 2"), "1.5");
    assert_eq!(show("1 == 1.0"), "True");
}

#[test]
fn comparisons_order_numbers_and_equality_takes_any_values() {
    assert_eq!(show("1 < 2"), "True");
    assert_eq!(show("2 <= 1.5"), "False");
    assert_eq!(show("3 > 2.9"), "True");
    assert_eq!(show("3 >= 3"), "True");
    assert_eq!(show("\"a\" == \"a\""), "True");
    assert_eq!(show("[1, 2] == [1, 2]"), "True");
    assert_eq!(show("[1, 2] != [1, 3]"), "True");
    assert_eq!(show("p[0, 0, 0, 0, 0, 0] == p[0, 0, 0, 0, 0, 0]"), "True");
    assert_eq!(show("True != False"), "True");
    assert_eq!(show("1 == \"1\""), "False");
}

#[test]
fn logic_takes_booleans_and_and_or_short_circuit() {
    assert_eq!(show("True and False"), "False");
    assert_eq!(show("True or False"), "True");
    assert_eq!(show("True xor True"), "False");
    assert_eq!(show("not False"), "True");
    // The right side would fail (index out of range) if it ran.
    assert_eq!(show("False and [1][5] == 1"), "False");
    assert_eq!(show("True or [1][5] == 1"), "True");
}

#[test]
fn poses_add_and_subtract_element_wise() {
    assert_eq!(
        show("p[1, 2, 3, 0, 0, 0] + p[0.5, 0, 0, 0, 0, 0.25]"),
        "p[1.5, 2, 3, 0, 0, 0.25]"
    );
    assert_eq!(
        show("p[1, 2, 3, 0, 0, 0] - p[1, 1, 1, 0, 0, 0]"),
        "p[0, 1, 2, 0, 0, 0]"
    );
    assert_eq!(show("-p[1, 0, 0, 0, 0, 0]"), "p[-1, 0, 0, 0, 0, 0]");
}

#[test]
fn indexing_reads_lists_poses_and_strings() {
    assert_eq!(show("[4, 5, 6][2]"), "6");
    assert_eq!(show("p[0.1, 0.2, 0.3, 0, 0, 0][1]"), "0.2");
    assert_eq!(show("\"abc\"[1]"), "b");
}

#[test]
fn division_by_zero_fails_at_the_operator() {
    assert_eq!(
        failure("x = 0\ny = 1 +  5 / x\n"),
        (2, 10, "division by zero".into())
    );
    assert_eq!(failure("x = 0.0\ny = 5 % x\n").0, 2);
}

#[test]
fn an_operator_on_the_wrong_types_fails_at_its_place() {
    let (line, column, message) = failure("s = \"a\"\nif True:\n  x = s + 1\nend\n");
    assert_eq!((line, column), (3, 7));
    assert_eq!(message, "`+` is not defined for string and int");
    assert_eq!(
        failure("x = [1] < [2]\n").2,
        "`<` is not defined for list and list"
    );
    assert_eq!(
        failure("b = 1\nx = b and True\n").2,
        "expected a boolean, got int"
    );
    assert_eq!(failure("x = not 3\n").2, "`not` takes a bool, not a int");
    assert_eq!(failure("x = -\"a\"\n").2, "cannot negate a string");
}

#[test]
fn an_index_out_of_range_fails_at_the_index() {
    assert_eq!(
        failure("l = [1, 2, 3]\nx =  l[3]\n"),
        (2, 6, "index 3 out of range for length 3".into())
    );
    assert_eq!(
        failure("l = [1, 2, 3]\nl[-1] = 0\n").2,
        "index -1 out of range for length 3"
    );
    assert_eq!(failure("x = 5\ny = x[0]\n").2, "a int cannot be indexed");
}

#[test]
fn a_condition_that_is_not_a_boolean_fails_at_the_condition() {
    assert_eq!(
        failure("x = 1\nwhile x:\n  x = 0\nend\n"),
        (2, 7, "expected a boolean, got int".into())
    );
}

#[test]
fn a_variable_read_before_it_has_a_value_fails_by_name() {
    assert_eq!(
        failure("def f():\n  if False:\n    v = 1\n  end\n  return v\nend\nf()\n"),
        (5, 10, "variable `v` has no value".into())
    );
}

#[test]
fn a_builtin_given_the_wrong_type_fails_at_the_call() {
    assert_eq!(
        failure("x = 1\ny = sqrt(-x)\n"),
        (2, 5, "math domain error".into())
    );
    assert_eq!(
        failure("x = \"a\"\ny = sin(x)\n").2,
        "expected a number, got string"
    );
}

#[test]
fn a_host_error_fails_at_the_call() {
    assert_eq!(
        failure("textmsg(1)\n  popup(\"hi\")\n"),
        (2, 3, "popup: no pendant".into())
    );
}

#[test]
fn recursion_without_end_fails_instead_of_exhausting_memory() {
    let (line, _, message) = failure("def f(n):\n  return f(n + 1)\nend\nf(0)\n");
    assert_eq!(line, 2);
    assert_eq!(message, "calls nested deeper than 256");
}
