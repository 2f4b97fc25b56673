//! Each construct of the language parses to its node, at its line and column.

use rtde_urscript::ast::{
    Arg, BinaryOp, Call, Expr, ExprKind, FunctionKind, Scope, Stmt, StmtKind, UnaryOp,
};
use rtde_urscript::{ErrorKind, Span, parse};

fn only(source: &str) -> Stmt {
    let mut program = parse(source).unwrap_or_else(|e| panic!("{source:?}: {e}"));
    assert_eq!(program.body.len(), 1, "{source:?}");
    program.body.remove(0)
}

fn value(source: &str) -> Expr {
    match only(&format!("x = {source}\n")).kind {
        StmtKind::Assign { value, .. } => value,
        other => panic!("{other:?}"),
    }
}

fn call(e: &Expr) -> &Call {
    match &e.kind {
        ExprKind::Call(c) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn def_with_defaults_and_a_body() {
    let s = only("def f(a, b=2):\n  return a + b\nend\n");
    let StmtKind::Function(f) = s.kind else {
        panic!()
    };
    assert_eq!((f.kind, f.name.name.as_str()), (FunctionKind::Def, "f"));
    assert_eq!(f.params.len(), 2);
    assert!(f.params[0].default.is_none());
    assert_eq!(f.params[1].default.as_ref().unwrap().kind, ExprKind::Int(2));
    assert_eq!(f.params[1].name.span, Span::new(1, 10));
    assert_eq!(f.body[0].span, Span::new(2, 3));
    assert!(
        matches!(&f.body[0].kind, StmtKind::Return(Some(e)) if matches!(e.kind, ExprKind::Binary { op: BinaryOp::Add, .. }))
    );
}

#[test]
fn thread_and_secondary_program() {
    let StmtKind::Function(t) = only("thread t():\n  sync()\nend\n").kind else {
        panic!()
    };
    assert_eq!(t.kind, FunctionKind::Thread);
    let StmtKind::Function(s) = only("sec s():\n  pass\nend\n").kind else {
        panic!()
    };
    assert_eq!(s.kind, FunctionKind::Sec);
    assert_eq!(s.body[0].kind, StmtKind::Pass);
}

#[test]
fn keyword_arguments() {
    let e = value("movej(q, a=1.2, v=0.25)");
    let c = call(&e);
    assert_eq!(c.callee.name, "movej");
    let keywords: Vec<_> = c
        .args
        .iter()
        .map(|a: &Arg| a.keyword.as_ref().map(|k| k.name.as_str()))
        .collect();
    assert_eq!(keywords, [None, Some("a"), Some("v")]);
    assert_eq!(c.args[2].value.span, Span::new(1, 23));
}

#[test]
fn global_and_local() {
    let s = only("global g = 1\n");
    assert!(
        matches!(s.kind, StmtKind::Declare { scope: Scope::Global, ref name, value: Some(_) } if name.name == "g")
    );
    let s = only("local l\n");
    assert!(matches!(
        s.kind,
        StmtKind::Declare {
            scope: Scope::Local,
            value: None,
            ..
        }
    ));
}

#[test]
fn a_statement_opening_with_a_keyword_may_follow_on_the_same_line() {
    // ur_rtde 1.6.5 injects each register offset after its line's comment: the value ends
    // up at the start of the next line, before that line's `global`.
    let source = "global a = # offset\n0    global b = # offset\n24    global c = 2\n";
    let program = parse(source).unwrap_or_else(|e| panic!("{e}"));
    let declared: Vec<(&str, Span)> = program
        .body
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Declare { name, .. } => (name.name.as_str(), s.span),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        declared,
        [
            ("a", Span::new(1, 1)),
            ("b", Span::new(2, 6)),
            ("c", Span::new(3, 7))
        ]
    );
    // An operand after an expression is still no statement of its own.
    assert_eq!(parse("x = 1 2\n").unwrap_err().kind, ErrorKind::Syntax);
}

#[test]
fn if_elif_else() {
    let s = only("if a:\n  x = 1\nelif b:\n  x = 2\nelif c:\n  x = 3\nelse:\n  x = 4\nend\n");
    let StmtKind::If {
        branches,
        otherwise,
    } = s.kind
    else {
        panic!()
    };
    assert_eq!(branches.len(), 3);
    assert_eq!(branches[1].0.kind, ExprKind::Name("b".into()));
    assert_eq!(branches[2].1[0].span, Span::new(6, 3));
    assert_eq!(otherwise.unwrap()[0].span, Span::new(8, 3));
}

#[test]
fn while_with_break_and_continue() {
    let s = only("while (True):\n  if x:\n    break\n  end\n  continue\nend\n");
    let StmtKind::While { condition, body } = s.kind else {
        panic!()
    };
    assert_eq!(condition.kind, ExprKind::Bool(true));
    assert_eq!(body[1].kind, StmtKind::Continue);
}

#[test]
fn for_over_a_range() {
    let s = only("for i in range(0, 10):\n  sync()\nend\n");
    let StmtKind::For {
        variable,
        over,
        body,
    } = s.kind
    else {
        panic!()
    };
    assert_eq!(variable.name, "i");
    assert_eq!(call(&over).args.len(), 2);
    assert_eq!(body.len(), 1);
}

#[test]
fn threads_run_join_kill_and_critical_sections() {
    let program = parse("h = run t()\njoin h\nkill h\nenter_critical\nexit_critical\n").unwrap();
    let kinds: Vec<_> = program.body.iter().map(|s| &s.kind).collect();
    assert!(
        matches!(kinds[0], StmtKind::Assign { value: Expr { kind: ExprKind::Run(c), .. }, .. } if c.callee.name == "t")
    );
    assert!(matches!(kinds[1], StmtKind::Join(_)));
    assert!(matches!(kinds[2], StmtKind::Kill(_)));
    assert_eq!(kinds[3], &StmtKind::EnterCritical);
    assert_eq!(kinds[4], &StmtKind::ExitCritical);
}

#[test]
fn halt_and_return_without_value() {
    assert_eq!(only("halt\n").kind, StmtKind::Halt);
    let StmtKind::Function(f) = only("def f():\n  return\nend\n").kind else {
        panic!()
    };
    assert_eq!(f.body[0].kind, StmtKind::Return(None));
}

#[test]
fn literals() {
    assert_eq!(value("42").kind, ExprKind::Int(42));
    assert_eq!(value("1e-3").kind, ExprKind::Float(1e-3));
    assert_eq!(value("False").kind, ExprKind::Bool(false));
    assert_eq!(value(r#""a\tb""#).kind, ExprKind::Str("a\tb".into()));
    let ExprKind::List(items) = value("[1, 2.5, \"s\"]").kind else {
        panic!()
    };
    assert_eq!(items.len(), 3);
}

#[test]
fn poses_and_the_variable_p() {
    let ExprKind::Pose(items) = value("p[0.1, 0, 0.3, 0, 3.5, 0]").kind else {
        panic!()
    };
    assert_eq!(items[4].kind, ExprKind::Float(3.5));
    // `p[0]` is the first element of a variable `p`, not a pose.
    let e = value("p[0] * 2");
    let ExprKind::Binary { lhs, .. } = e.kind else {
        panic!()
    };
    assert!(
        matches!(lhs.kind, ExprKind::Index { ref base, .. } if base.kind == ExprKind::Name("p".into()))
    );
    let e = parse("x = p[1, 2]\n").unwrap_err();
    assert_eq!((e.kind, e.span), (ErrorKind::Syntax, Span::new(1, 5)));
}

#[test]
fn structs_and_fields() {
    let ExprKind::Struct(fields) = value("struct(a=1, b=\"x\")").kind else {
        panic!()
    };
    assert_eq!(fields[1].0.name, "b");
    let s = only("s.a = 2\n");
    assert!(matches!(
        s.kind,
        StmtKind::Assign {
            target: Expr {
                kind: ExprKind::Field { .. },
                ..
            },
            ..
        }
    ));
}

#[test]
fn precedence_and_unary_operators() {
    // a or b and not c == d + e * -f
    let e = value("a or b and not c == d + e * -f");
    let ExprKind::Binary {
        op: BinaryOp::Or,
        rhs,
        ..
    } = e.kind
    else {
        panic!()
    };
    let ExprKind::Binary {
        op: BinaryOp::And,
        rhs,
        ..
    } = rhs.kind
    else {
        panic!()
    };
    let ExprKind::Unary {
        op: UnaryOp::Not,
        operand,
    } = rhs.kind
    else {
        panic!()
    };
    let ExprKind::Binary {
        op: BinaryOp::Eq,
        rhs,
        ..
    } = operand.kind
    else {
        panic!()
    };
    let ExprKind::Binary {
        op: BinaryOp::Add,
        rhs,
        ..
    } = rhs.kind
    else {
        panic!()
    };
    let ExprKind::Binary {
        op: BinaryOp::Mul,
        rhs,
        ..
    } = rhs.kind
    else {
        panic!()
    };
    assert!(matches!(
        rhs.kind,
        ExprKind::Unary {
            op: UnaryOp::Neg,
            ..
        }
    ));
    assert!(matches!(
        value("a xor b").kind,
        ExprKind::Binary {
            op: BinaryOp::Xor,
            ..
        }
    ));
    assert!(matches!(
        value("a % b").kind,
        ExprKind::Binary {
            op: BinaryOp::Rem,
            ..
        }
    ));
    assert!(matches!(
        value("(a + b) * c").kind,
        ExprKind::Binary {
            op: BinaryOp::Mul,
            ..
        }
    ));
}

#[test]
fn indexes_and_element_assignment() {
    let s = only("q[2] = q[1] + 0.5\n");
    let StmtKind::Assign { target, .. } = s.kind else {
        panic!()
    };
    assert!(matches!(target.kind, ExprKind::Index { .. }));
}

#[test]
fn line_markers_and_comments() {
    let program = parse("# a comment\n$ 3 \"movej\" \"breakAfter\"\nmovej(q) # another\n").unwrap();
    assert_eq!(
        program.body[0].kind,
        StmtKind::Marker {
            number: 3,
            labels: vec!["movej".into(), "breakAfter".into()]
        }
    );
    assert_eq!(program.body[1].span, Span::new(3, 1));
}

#[test]
fn indentation_means_nothing_and_lines_continue_in_brackets() {
    let a = parse("def f():\nx = 1\n        y = [1,\n  2]\nend\n").unwrap();
    let b = parse("def f():\n  x = 1\n  y = [1, 2]\nend\n").unwrap();
    let StmtKind::Function(fa) = &a.body[0].kind else {
        panic!()
    };
    let StmtKind::Function(fb) = &b.body[0].kind else {
        panic!()
    };
    let strip = |s: &[Stmt]| {
        s.iter()
            .map(|s| format!("{:?}", std::mem::discriminant(&s.kind)))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&fa.body), strip(&fb.body));
    assert_eq!(fa.body[1].span, Span::new(3, 9));
}

#[test]
fn syntax_errors_have_their_line_and_column() {
    let cases = [
        ("if x\n  y = 1\nend\n", Span::new(1, 5)),
        ("def f():\n  x = 1\n", Span::new(3, 1)),
        ("x = (1 + 2\n", Span::new(2, 1)),
        ("x = 1 2\n", Span::new(1, 7)),
        ("end\n", Span::new(1, 1)),
        ("f(a=1, 2)\n", Span::new(1, 8)),
        ("1 = x\n", Span::new(1, 3)),
        ("$ x\n", Span::new(1, 3)),
    ];
    for (source, span) in cases {
        let e = parse(source).unwrap_err();
        assert_eq!(
            (e.kind, e.span),
            (ErrorKind::Syntax, span),
            "{source:?}: {e}"
        );
        assert!(e.to_string().starts_with("syntax_error_on_line: "), "{e}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // Up to the limit it parses, on a test thread's stack, in a debug build.
    let fine = format!("x = {}1{}\n", "(".repeat(95), ")".repeat(95));
    assert!(parse(&fine).is_ok());
    let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(parse(&deep).unwrap_err().kind, ErrorKind::Syntax);
    let deep = format!("{}\n", "if x:\n".repeat(5000));
    assert_eq!(parse(&deep).unwrap_err().kind, ErrorKind::Syntax);
    let negations = format!("x = {}1\n", "-".repeat(5000));
    assert_eq!(parse(&negations).unwrap_err().kind, ErrorKind::Syntax);
}
