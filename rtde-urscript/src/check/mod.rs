//! The checker: what the controller's compiler refuses, found without running the
//! script. Unknown functions and variables (with the closest known name), built-ins the
//! target version lacks, argument counts and keywords, types knowable from the text,
//! `return`/`break`/`continue` out of place, `run` of something that is not a thread.
//!
//! Scoping follows the manual: a function or thread sees its parameters, the variables it
//! assigns, and the globals (assigned at the top level of the script or in the program,
//! the outermost `def`, or declared `global` anywhere); a variable assigned in a function
//! inside the program, without `global`, is not visible in another function or thread.

mod calls;
pub(crate) mod scope;
mod types;

use std::collections::HashMap;

use crate::ast::{Call, Expr, ExprKind, Function, FunctionKind, Program, Stmt, StmtKind};
use crate::builtins::{self, Feature};
use crate::error::{ErrorKind, ScriptError};
use crate::{ControllerVersion, Span, parse};
use scope::Scope;

/// A script that parsed and passed the checks for a controller version.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The syntax tree.
    pub program: Program,
    /// The version it was checked against.
    pub version: ControllerVersion,
    /// What the controller may refuse, though the built-in table cannot say it will: a
    /// built-in used before the first version a driver's gate knows it from
    /// ([`Since::confirmed`](crate::builtins::Since::confirmed)).
    pub warnings: Vec<ScriptError>,
}

/// What checking a program found: the errors the controller's compiler refuses it for,
/// and the warnings of [`Checked::warnings`]; each in the order of the script.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Review {
    /// What the controller refuses.
    pub errors: Vec<ScriptError>,
    /// What it may refuse.
    pub warnings: Vec<ScriptError>,
}

/// Parses a script and checks it against the built-ins of a controller version.
///
/// # Errors
/// Every error found, in the order of the script: a syntax error alone (parsing stops at
/// the first, as on the controller), otherwise each check's errors.
///
/// ```
/// use rtde_urscript::{check, ControllerVersion, ErrorKind};
///
/// let errors = check("movej([0, 0, 0, 0, 0, 0], speed=1)\n", ControllerVersion::new(5, 4, 0, 0)).unwrap_err();
/// assert_eq!(errors[0].kind, ErrorKind::UnknownKeyword);
/// // `tool_contact` is known from e-Series 5.4 by ur_rtde's version gate only: a CB3 script
/// // that calls it is warned, not refused.
/// let checked = check("x = tool_contact(p[0, 0, -1, 0, 0, 0])\n", ControllerVersion::new(3, 15, 0, 0)).unwrap();
/// assert_eq!(checked.warnings[0].kind, ErrorKind::NotInVersion);
/// assert!(check("x = tool_contact(p[0, 0, -1, 0, 0, 0])\n", ControllerVersion::new(5, 4, 0, 0)).unwrap().warnings.is_empty());
/// ```
pub fn check(source: &str, version: ControllerVersion) -> Result<Checked, Vec<ScriptError>> {
    let program = parse(source).map_err(|e| vec![e])?;
    let Review { errors, warnings } = review(&program, version);
    if errors.is_empty() {
        Ok(Checked {
            program,
            version,
            warnings,
        })
    } else {
        Err(errors)
    }
}

/// Checks a parsed program against a controller version; every error found, in the
/// order of the script.
///
/// ```
/// use rtde_urscript::{check_program, parse, ControllerVersion};
///
/// let program = parse("def f(a, b=1):\n  return a + b\nend\nf(1, c=2)\n")?;
/// let errors = check_program(&program, ControllerVersion::new(5, 4, 0, 0));
/// assert_eq!(errors.len(), 1);
/// assert_eq!((errors[0].span.line, errors[0].span.column), (4, 6));
/// # Ok::<(), rtde_urscript::ScriptError>(())
/// ```
#[must_use]
pub fn check_program(program: &Program, version: ControllerVersion) -> Vec<ScriptError> {
    review(program, version).errors
}

/// Checks a parsed program against a controller version: its errors and its warnings.
///
/// ```
/// use rtde_urscript::{parse, review, ControllerVersion};
///
/// let program = parse("for i in range(3):\n  textmsg(i)\nend\n")?;
/// let found = review(&program, ControllerVersion::new(5, 21, 0, 0));
/// assert!(found.errors.is_empty());
/// assert_eq!(found.warnings[0].span.line, 1);
/// # Ok::<(), rtde_urscript::ScriptError>(())
/// ```
#[must_use]
pub fn review(program: &Program, version: ControllerVersion) -> Review {
    let mut functions = HashMap::new();
    scope::collect_functions(&program.body, &mut functions);
    let mut checker = Checker {
        version,
        globals: scope::globals(&program.body),
        functions,
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let top = Scope::top_level();
    checker.block(&program.body, &top);
    checker.errors.sort_by_key(|e| e.span);
    checker.warnings.sort_by_key(|e| e.span);
    Review {
        errors: checker.errors,
        warnings: checker.warnings,
    }
}

struct Checker<'a> {
    version: ControllerVersion,
    globals: scope::Names,
    functions: HashMap<&'a str, &'a Function>,
    errors: Vec<ScriptError>,
    warnings: Vec<ScriptError>,
}

impl<'a> Checker<'a> {
    fn error(&mut self, kind: ErrorKind, span: Span, message: impl Into<String>) {
        self.errors.push(ScriptError::new(kind, span, message));
    }

    /// What the controller may refuse, though the table cannot say it will.
    fn warn(&mut self, kind: ErrorKind, span: Span, message: impl Into<String>) {
        self.warnings.push(ScriptError::new(kind, span, message));
    }

    fn feature(&mut self, feature: Feature, span: Span) {
        if feature.covers(self.version) {
            return;
        }
        let (name, version) = (feature.name(), self.version);
        if feature.since().refuses(version) {
            let message = format!("{name} need PolyScope X (10.x); the target is {version}");
            self.error(ErrorKind::NotInVersion, span, message);
        } else {
            let message = format!(
                "{name} are known on PolyScope X (10.x); the e-Series manuals read so far do \
                 not describe them, so controller {version} may refuse them"
            );
            self.warn(ErrorKind::NotInVersion, span, message);
        }
    }

    fn block(&mut self, body: &'a [Stmt], scope: &Scope<'_>) {
        for stmt in body {
            self.statement(stmt, scope);
        }
    }

    fn statement(&mut self, stmt: &'a Stmt, scope: &Scope<'_>) {
        match &stmt.kind {
            StmtKind::Expr(e) | StmtKind::Kill(e) | StmtKind::Join(e) => self.expr(e, scope),
            StmtKind::Assign { target, value } => {
                self.target(target, scope);
                self.expr(value, scope);
            }
            StmtKind::Declare { value, .. } => {
                if let Some(v) = value {
                    self.expr(v, scope);
                }
            }
            StmtKind::Function(f) => self.function(f, scope),
            StmtKind::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    self.expr(condition, scope);
                    self.block(body, scope);
                }
                if let Some(body) = otherwise {
                    self.block(body, scope);
                }
            }
            StmtKind::While { condition, body } => {
                self.expr(condition, scope);
                self.block(body, &scope.in_loop());
            }
            StmtKind::For { over, body, .. } => {
                self.feature(Feature::ForLoop, stmt.span);
                self.range(over, scope);
                self.block(body, &scope.in_loop());
            }
            StmtKind::Return(value) => {
                if !scope.in_function() {
                    self.error(
                        ErrorKind::Misplaced,
                        stmt.span,
                        "`return` outside a function",
                    );
                }
                if let Some(v) = value {
                    self.expr(v, scope);
                }
            }
            StmtKind::Break | StmtKind::Continue if !scope.in_loop_body() => {
                let word = if stmt.kind == StmtKind::Break {
                    "break"
                } else {
                    "continue"
                };
                self.error(
                    ErrorKind::Misplaced,
                    stmt.span,
                    format!("`{word}` outside a loop"),
                );
            }
            StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Halt
            | StmtKind::Pass
            | StmtKind::EnterCritical
            | StmtKind::ExitCritical
            | StmtKind::Marker { .. } => {}
        }
    }

    fn function(&mut self, f: &'a Function, outer: &Scope<'_>) {
        for p in &f.params {
            if let Some(d) = &p.default {
                self.expr(d, outer);
            }
        }
        let scope = Scope::function(f);
        self.block(&f.body, &scope);
    }

    /// The left side of `=`: a plain name defines it; an element or field needs its base.
    fn target(&mut self, target: &'a Expr, scope: &Scope<'_>) {
        match &target.kind {
            ExprKind::Name(_) => {}
            ExprKind::Index { base, index } => {
                self.expr(base, scope);
                self.expr(index, scope);
            }
            ExprKind::Field { base, .. } => {
                self.feature(Feature::Struct, target.span);
                self.expr(base, scope);
            }
            _ => self.expr(target, scope),
        }
    }

    /// `range(stop)`, `range(start, stop)` or `range(start, stop, step)` after `for … in`.
    fn range(&mut self, over: &'a Expr, scope: &Scope<'_>) {
        match &over.kind {
            ExprKind::Call(Call { callee, args }) if callee.name == "range" => {
                if !(1..=3).contains(&args.len()) {
                    self.error(
                        ErrorKind::ArgumentCount,
                        callee.span,
                        format!("`range` takes 1 to 3 arguments, not {}", args.len()),
                    );
                }
                for a in args {
                    self.expr(&a.value, scope);
                }
            }
            _ => self.expr(over, scope),
        }
    }

    fn expr(&mut self, e: &'a Expr, scope: &Scope<'_>) {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) => {}
            ExprKind::Name(name) => self.name(name, e.span, scope),
            ExprKind::List(items) | ExprKind::Pose(items) => {
                for i in items {
                    self.expr(i, scope);
                }
            }
            ExprKind::Struct(fields) => {
                self.feature(Feature::Struct, e.span);
                for (_, v) in fields {
                    self.expr(v, scope);
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand, scope),
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(lhs, scope);
                self.expr(rhs, scope);
                self.operands(*op, lhs, rhs);
            }
            ExprKind::Call(call) => self.call(call, scope),
            ExprKind::Run(call) => self.run(call, scope),
            ExprKind::Index { base, index } => {
                self.expr(base, scope);
                self.expr(index, scope);
            }
            ExprKind::Field { base, .. } => {
                self.feature(Feature::Struct, e.span);
                self.expr(base, scope);
            }
        }
    }

    fn name(&mut self, name: &str, span: Span, scope: &Scope<'_>) {
        if scope.sees(name) || self.globals.contains(name) || scope::CONSTANTS.contains(&name) {
            return;
        }
        let candidates = scope
            .names()
            .chain(self.globals.iter().map(String::as_str))
            .chain(scope::CONSTANTS.iter().copied());
        let suggestion = rtde_fields::closest(name, candidates, |n| n);
        let message = if self.functions.contains_key(name) || builtins::lookup(name).is_some() {
            format!("`{name}` is a function: call it, `{name}()`")
        } else {
            format!("name `{name}` is not defined")
        };
        self.errors
            .push(ScriptError::new(ErrorKind::NameNotFound, span, message).suggest(suggestion));
    }

    fn run(&mut self, call: &'a Call, scope: &Scope<'_>) {
        let name = call.callee.name.as_str();
        match self.functions.get(name).map(|f| f.kind) {
            Some(FunctionKind::Thread) => self.call(call, scope),
            Some(_) => self.error(
                ErrorKind::NotAThread,
                call.callee.span,
                format!("`run` starts a thread, and `{name}` is a function, not a thread"),
            ),
            None if builtins::lookup(name).is_some() => self.error(
                ErrorKind::NotAThread,
                call.callee.span,
                format!("`run` starts a thread, and `{name}` is a built-in function"),
            ),
            None => {
                let threads = self
                    .functions
                    .values()
                    .filter(|f| f.kind == FunctionKind::Thread)
                    .map(|f| f.name.name.as_str());
                let suggestion = rtde_fields::closest(name, threads, |n| n);
                self.errors.push(
                    ScriptError::new(
                        ErrorKind::NameNotFound,
                        call.callee.span,
                        format!("thread `{name}` is not defined"),
                    )
                    .suggest(suggestion),
                );
            }
        }
    }
}
