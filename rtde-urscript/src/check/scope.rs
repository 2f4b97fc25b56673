//! Which names a piece of script sees: its function's parameters and assigned variables,
//! the globals, the constants; and whether it is inside a function or a loop.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{ExprKind, Function, Scope as Declared, Stmt, StmtKind};

/// A set of variable names.
pub(crate) type Names = HashSet<String>;

/// The names the language defines.
pub(super) const CONSTANTS: [&str; 1] = ["pi"];

/// Where a statement is: in which function (if any), in a loop or not.
#[derive(Clone, Debug)]
pub(super) struct Scope<'s> {
    /// The function's own variables; `None` at the top level, where only globals count.
    locals: Option<Rc<Names>>,
    /// The enclosing function's name; `None` at the top level.
    function: Option<&'s str>,
    in_loop: bool,
}

impl<'s> Scope<'s> {
    pub(super) fn top_level() -> Self {
        Scope {
            locals: None,
            function: None,
            in_loop: false,
        }
    }

    /// The scope of a function's body: its parameters and what it assigns.
    pub(super) fn function(f: &'s Function) -> Self {
        let mut names: Names = f.params.iter().map(|p| p.name.name.clone()).collect();
        assigned(&f.body, &mut names);
        Scope {
            locals: Some(Rc::new(names)),
            function: Some(&f.name.name),
            in_loop: false,
        }
    }

    pub(super) fn in_loop(&self) -> Self {
        Scope {
            in_loop: true,
            ..self.clone()
        }
    }

    pub(super) fn in_function(&self) -> bool {
        self.function.is_some()
    }

    pub(super) fn in_loop_body(&self) -> bool {
        self.in_loop
    }

    pub(super) fn sees(&self, name: &str) -> bool {
        self.locals.as_ref().is_some_and(|l| l.contains(name))
    }

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.locals
            .iter()
            .flat_map(|l| l.iter().map(String::as_str))
    }
}

/// Every `def`, `thread` and `sec` in the script, at any depth, by name.
pub(crate) fn collect_functions<'a>(body: &'a [Stmt], out: &mut HashMap<&'a str, &'a Function>) {
    for stmt in body {
        if let StmtKind::Function(f) = &stmt.kind {
            out.entry(f.name.name.as_str()).or_insert(f);
        }
        for_each_block(stmt, &mut |b| collect_functions(b, out));
    }
}

/// The globals: variables assigned at the top level, or in the body of a function
/// defined at the top level (the manual: "every variable declared inside a program exists
/// at a global scope, except when they are declared inside a function", the program being
/// the outermost `def`), and those declared `global` anywhere.
pub(crate) fn globals(body: &[Stmt]) -> Names {
    let mut names = Names::new();
    assigned(body, &mut names);
    for stmt in body {
        if let StmtKind::Function(program) = &stmt.kind {
            assigned(&program.body, &mut names);
        }
    }
    declared_global(body, &mut names);
    names
}

fn declared_global(body: &[Stmt], out: &mut Names) {
    for stmt in body {
        if let StmtKind::Declare {
            scope: Declared::Global,
            name,
            ..
        } = &stmt.kind
        {
            out.insert(name.name.clone());
        }
        for_each_block(stmt, &mut |b| declared_global(b, out));
    }
}

/// The variables a body assigns or declares, in its nested blocks too, but not in the
/// functions defined inside it (those have their own scope).
pub(crate) fn assigned(body: &[Stmt], out: &mut Names) {
    for stmt in body {
        match &stmt.kind {
            StmtKind::Assign { target, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    out.insert(n.clone());
                }
            }
            StmtKind::Declare { name, .. } => {
                out.insert(name.name.clone());
            }
            StmtKind::For { variable, .. } => {
                out.insert(variable.name.clone());
            }
            StmtKind::Function(_) => continue,
            _ => {}
        }
        for_each_block(stmt, &mut |b| assigned(b, out));
    }
}

/// Calls `f` on each block directly inside a statement (bodies of `if`, loops and
/// functions).
fn for_each_block<'a>(stmt: &'a Stmt, f: &mut impl FnMut(&'a [Stmt])) {
    match &stmt.kind {
        StmtKind::Function(func) => f(&func.body),
        StmtKind::If {
            branches,
            otherwise,
        } => {
            for (_, b) in branches {
                f(b);
            }
            if let Some(b) = otherwise {
                f(b);
            }
        }
        StmtKind::While { body, .. } | StmtKind::For { body, .. } => f(body),
        _ => {}
    }
}
