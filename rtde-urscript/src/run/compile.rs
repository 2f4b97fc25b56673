//! From a checked syntax tree to [`Code`]: each variable resolved to a slot by the
//! manual's scoping rules (the checker's [`scope`](crate::check::scope) says which names
//! are global), each call's arguments put in parameter order with the defaults filled in,
//! each loop and branch a jump.

use std::collections::{HashMap, HashSet};

use super::code::{Code, Function as Compiled, Op, Var};
use super::{Value, pure};
use crate::ast::{
    Arg, BinaryOp, Call, Expr, ExprKind, Function, FunctionKind, Program, Scope, Stmt, StmtKind,
};
use crate::check::scope;
use crate::error::{ErrorKind, ScriptError};
use crate::{Span, builtins};

/// Compiles a program that passed the checker.
pub(super) fn compile(program: &Program) -> Result<Code, ScriptError> {
    let mut found = HashMap::new();
    scope::collect_functions(&program.body, &mut found);
    let mut defs: Vec<&Function> = found.into_values().collect();
    defs.sort_by(|a, b| a.name.name.cmp(&b.name.name));
    let mut global_names: Vec<String> = scope::globals(&program.body).into_iter().collect();
    global_names.sort();
    let mut c = Compiler {
        signatures: defs
            .iter()
            .map(|f| (f.name.name.clone(), f.params.clone()))
            .collect(),
        ids: defs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.name.clone(), id(i + 1)))
            .collect(),
        globals: global_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), id(i)))
            .collect(),
        code: Code {
            globals: global_names,
            ..Code::default()
        },
        locals: None,
        loops: Vec::new(),
        defaults: HashMap::new(),
        span: Span::default(),
    };
    c.function("<program>", &[], &program.body, None)?;
    for f in &defs {
        c.function(&f.name.name, &f.params, &f.body, Some(f))?;
    }
    c.code.main = main_function(program, &c.ids);
    Ok(c.code)
}

/// The program a script runs: its top-level statements, or, when it has none but
/// definitions (a program sent as `def name(): … end`, as drivers send theirs), its first
/// top-level `def`, which the controller runs.
fn main_function(program: &Program, ids: &HashMap<String, u32>) -> u32 {
    let only_definitions = program.body.iter().all(|s| {
        matches!(
            s.kind,
            StmtKind::Function(_) | StmtKind::Marker { .. } | StmtKind::Pass
        )
    });
    if !only_definitions {
        return 0;
    }
    program
        .body
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::Function(f) if f.kind == FunctionKind::Def && f.params.is_empty() => {
                ids.get(&f.name.name).copied()
            }
            _ => None,
        })
        .unwrap_or(0)
}

fn id(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

struct Loop {
    start: u32,
    breaks: Vec<usize>,
    continues: Vec<usize>,
}

struct Compiler {
    code: Code,
    /// Each function's name and parameters, by id − 1.
    signatures: Vec<(String, Vec<crate::ast::Param>)>,
    ids: HashMap<String, u32>,
    globals: HashMap<String, u32>,
    /// The running function's slots; `None` at the top level, where all are global.
    locals: Option<Vec<String>>,
    loops: Vec<Loop>,
    /// Built-in parameters' defaults, parsed once from the table's text.
    defaults: HashMap<&'static str, Expr>,
    span: Span,
}

fn error(span: Span, message: impl Into<String>) -> ScriptError {
    ScriptError::new(ErrorKind::Unsupported, span, message)
}

impl Compiler {
    fn emit(&mut self, op: Op) -> usize {
        self.code.ops.push(op);
        self.code.spans.push(self.span);
        self.code.ops.len() - 1
    }

    fn here(&self) -> u32 {
        id(self.code.ops.len())
    }

    fn patch(&mut self, at: usize) {
        let to = self.here();
        match &mut self.code.ops[at] {
            Op::Jump(t) | Op::JumpIfFalse(t) | Op::ShortCircuit { to: t, .. } => *t = to,
            _ => unreachable!("only jumps are patched"),
        }
    }

    fn constant(&mut self, v: Value) {
        self.code.constants.push(v);
        let at = id(self.code.constants.len() - 1);
        self.emit(Op::Const(at));
    }

    fn name_constant(&mut self, name: &str) -> u32 {
        self.code.constants.push(Value::str(name));
        id(self.code.constants.len() - 1)
    }

    fn function(
        &mut self,
        name: &str,
        params: &[crate::ast::Param],
        body: &[Stmt],
        def: Option<&Function>,
    ) -> Result<(), ScriptError> {
        let entry = self.here();
        self.locals = def.map(|_| self.slots(params, body));
        self.block(body)?;
        self.constant(Value::None);
        self.emit(Op::Return);
        let locals = self.locals.take().unwrap_or_default();
        self.code.functions.push(Compiled {
            name: name.to_owned(),
            params: u16::try_from(params.len()).unwrap_or(u16::MAX),
            locals,
            entry,
        });
        Ok(())
    }

    /// A function's slots: its parameters, then what it declares `local`, then what it
    /// assigns that is not a global.
    fn slots(&self, params: &[crate::ast::Param], body: &[Stmt]) -> Vec<String> {
        let mut slots: Vec<String> = params.iter().map(|p| p.name.name.clone()).collect();
        let mut local = HashSet::new();
        declared_local(body, &mut local);
        let mut assigned = scope::Names::new();
        scope::assigned(body, &mut assigned);
        let mut rest: Vec<String> = assigned
            .into_iter()
            .filter(|n| local.contains(n) || !self.globals.contains_key(n))
            .filter(|n| !slots.contains(n))
            .collect();
        rest.sort();
        slots.extend(rest);
        slots
    }

    fn var(&self, name: &str) -> Option<Var> {
        if let Some(locals) = &self.locals
            && let Some(i) = locals.iter().position(|n| n == name)
        {
            return Some(Var::Local(u16::try_from(i).unwrap_or(u16::MAX)));
        }
        self.globals.get(name).map(|&g| Var::Global(g))
    }

    /// A slot for the compiler's own use (a `for` loop's end and step).
    fn hidden(&mut self, what: &str) -> Var {
        let name = format!("{what}@{}", self.code.ops.len());
        if let Some(locals) = &mut self.locals {
            locals.push(name);
            Var::Local(u16::try_from(locals.len() - 1).unwrap_or(u16::MAX))
        } else {
            self.code.globals.push(name);
            Var::Global(id(self.code.globals.len() - 1))
        }
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), ScriptError> {
        body.iter().try_for_each(|s| self.statement(s))
    }

    fn statement(&mut self, stmt: &Stmt) -> Result<(), ScriptError> {
        self.span = stmt.span;
        match &stmt.kind {
            StmtKind::Expr(e) => {
                self.expr(e)?;
                self.emit(Op::Pop);
            }
            StmtKind::Assign { target, value } => self.assign(target, value)?,
            StmtKind::Declare { name, value, .. } => {
                match value {
                    Some(v) => self.expr(v)?,
                    None => self.constant(Value::None),
                }
                let var = self.var_at(&name.name, name.span)?;
                self.emit(Op::Store(var));
            }
            StmtKind::If {
                branches,
                otherwise,
            } => self.if_chain(branches, otherwise.as_deref())?,
            StmtKind::While { condition, body } => {
                let start = self.here();
                self.expr(condition)?;
                let exit = self.emit(Op::JumpIfFalse(0));
                self.loop_body(start, body, start)?;
                self.patch(exit);
                self.close_loop();
            }
            StmtKind::For {
                variable,
                over,
                body,
            } => self.for_range(variable, over, body)?,
            StmtKind::Return(value) => {
                match value {
                    Some(v) => self.expr(v)?,
                    None => self.constant(Value::None),
                }
                self.span = stmt.span;
                self.emit(Op::Return);
            }
            StmtKind::Break | StmtKind::Continue => {
                let at = self.emit(Op::Jump(0));
                let Some(l) = self.loops.last_mut() else {
                    return Err(error(stmt.span, "`break` or `continue` outside a loop"));
                };
                if stmt.kind == StmtKind::Break {
                    l.breaks.push(at);
                } else {
                    l.continues.push(at);
                }
            }
            StmtKind::Halt => _ = self.emit(Op::Halt),
            StmtKind::Kill(e) | StmtKind::Join(e) => {
                self.expr(e)?;
                self.span = stmt.span;
                let op = if matches!(stmt.kind, StmtKind::Kill(_)) {
                    Op::Kill
                } else {
                    Op::Join
                };
                self.emit(op);
            }
            StmtKind::EnterCritical => _ = self.emit(Op::EnterCritical),
            StmtKind::ExitCritical => _ = self.emit(Op::ExitCritical),
            StmtKind::Function(_) | StmtKind::Pass | StmtKind::Marker { .. } => {}
        }
        Ok(())
    }

    fn var_at(&self, name: &str, span: Span) -> Result<Var, ScriptError> {
        self.var(name).ok_or_else(|| {
            ScriptError::new(
                ErrorKind::NameNotFound,
                span,
                format!("name `{name}` is not defined"),
            )
        })
    }

    fn assign(&mut self, target: &Expr, value: &Expr) -> Result<(), ScriptError> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.expr(value)?;
                let var = self.var_at(n, target.span)?;
                self.span = target.span;
                self.emit(Op::Store(var));
            }
            ExprKind::Index { base, index } => {
                let ExprKind::Name(n) = &base.kind else {
                    return Err(error(
                        target.span,
                        "only an element of a variable can be assigned",
                    ));
                };
                self.expr(index)?;
                self.expr(value)?;
                let var = self.var_at(n, base.span)?;
                self.span = target.span;
                self.emit(Op::StoreIndex(var));
            }
            ExprKind::Field { base, field } => {
                let ExprKind::Name(n) = &base.kind else {
                    return Err(error(
                        target.span,
                        "only a field of a variable can be assigned",
                    ));
                };
                self.expr(value)?;
                let var = self.var_at(n, base.span)?;
                let name = self.name_constant(&field.name);
                self.span = target.span;
                self.emit(Op::StoreField(var, name));
            }
            _ => return Err(error(target.span, "this cannot be assigned to")),
        }
        Ok(())
    }

    fn if_chain(
        &mut self,
        branches: &[(Expr, Vec<Stmt>)],
        otherwise: Option<&[Stmt]>,
    ) -> Result<(), ScriptError> {
        let mut ends = Vec::new();
        for (condition, body) in branches {
            self.expr(condition)?;
            let next = self.emit(Op::JumpIfFalse(0));
            self.block(body)?;
            ends.push(self.emit(Op::Jump(0)));
            self.patch(next);
        }
        if let Some(body) = otherwise {
            self.block(body)?;
        }
        for at in ends {
            self.patch(at);
        }
        Ok(())
    }

    /// Compiles a loop's body; `continue` goes to `next`, or, when `next` is not yet
    /// known, is patched by the caller through [`Loop::continues`].
    fn loop_body(&mut self, start: u32, body: &[Stmt], next: u32) -> Result<(), ScriptError> {
        self.loops.push(Loop {
            start,
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        self.block(body)?;
        if next == start {
            for at in std::mem::take(&mut self.loops.last_mut().expect("pushed above").continues) {
                self.code.ops[at] = Op::Jump(start);
            }
            self.emit(Op::Jump(start));
        }
        Ok(())
    }

    fn close_loop(&mut self) {
        let l = self.loops.pop().expect("a loop is open");
        for at in l.breaks {
            self.patch(at);
        }
        let _ = l.start;
    }

    fn for_range(
        &mut self,
        variable: &crate::ast::Ident,
        over: &Expr,
        body: &[Stmt],
    ) -> Result<(), ScriptError> {
        let ExprKind::Call(Call { callee, args }) = &over.kind else {
            return Err(error(over.span, "`for` runs over `range(…)` only"));
        };
        if callee.name != "range" || !(1..=3).contains(&args.len()) {
            return Err(error(over.span, "`for` runs over `range(…)` only"));
        }
        let (counter, end, step) = (
            self.hidden("counter"),
            self.hidden("end"),
            self.hidden("step"),
        );
        match args.len() {
            1 => self.constant(Value::Int(0)),
            _ => self.expr(&args[0].value)?,
        }
        self.emit(Op::Store(counter));
        self.expr(&args[usize::from(args.len() > 1)].value)?;
        self.emit(Op::Store(end));
        match args.get(2) {
            Some(a) => self.expr(&a.value)?,
            None => self.constant(Value::Int(1)),
        }
        self.emit(Op::Store(step));
        let start = self.here();
        for v in [counter, end, step] {
            self.emit(Op::Load(v));
        }
        self.emit(Op::RangeGoesOn);
        let exit = self.emit(Op::JumpIfFalse(0));
        self.emit(Op::Load(counter));
        let var = self.var_at(&variable.name, variable.span)?;
        self.emit(Op::Store(var));
        self.loop_body(start, body, u32::MAX)?;
        for at in std::mem::take(&mut self.loops.last_mut().expect("pushed").continues) {
            self.patch(at);
        }
        self.emit(Op::Load(counter));
        self.emit(Op::Load(step));
        self.emit(Op::Binary(BinaryOp::Add));
        self.emit(Op::Store(counter));
        self.emit(Op::Jump(start));
        self.patch(exit);
        self.close_loop();
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<(), ScriptError> {
        match &e.kind {
            ExprKind::Int(i) => {
                let i = i32::try_from(*i)
                    .map_err(|_| error(e.span, format!("{i} is beyond a 32-bit integer")))?;
                self.constant(Value::Int(i));
            }
            ExprKind::Float(f) => self.constant(Value::Float(*f)),
            ExprKind::Bool(b) => self.constant(Value::Bool(*b)),
            ExprKind::Str(s) => self.constant(Value::str(s)),
            ExprKind::Name(n) => match self.var(n) {
                Some(v) => _ = self.emit_at(e.span, Op::Load(v)),
                None if n == "pi" => self.constant(Value::Float(std::f64::consts::PI)),
                None => return Err(self.var_at(n, e.span).unwrap_err()),
            },
            ExprKind::List(items) => {
                items.iter().try_for_each(|i| self.expr(i))?;
                self.emit_at(e.span, Op::List(id(items.len())));
            }
            ExprKind::Pose(items) => {
                if items.len() != 6 {
                    return Err(ScriptError::new(
                        ErrorKind::TypeMismatch,
                        e.span,
                        format!("a pose has 6 numbers, not {}", items.len()),
                    ));
                }
                items.iter().try_for_each(|i| self.expr(i))?;
                self.emit_at(e.span, Op::Pose);
            }
            ExprKind::Struct(fields) => {
                let names = id(self.code.constants.len());
                for (n, _) in fields {
                    self.name_constant(&n.name);
                }
                fields.iter().try_for_each(|(_, v)| self.expr(v))?;
                self.emit_at(
                    e.span,
                    Op::Struct {
                        names,
                        count: id(fields.len()),
                    },
                );
            }
            ExprKind::Unary { op, operand } => {
                self.expr(operand)?;
                self.emit_at(e.span, Op::Unary(*op));
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.span)?,
            ExprKind::Call(call) => self.call(call, e.span)?,
            ExprKind::Run(call) => {
                let Some(&f) = self.ids.get(&call.callee.name) else {
                    return Err(ScriptError::new(
                        ErrorKind::NotAThread,
                        e.span,
                        format!("thread `{}` is not defined", call.callee.name),
                    ));
                };
                self.user_args(f, &call.args, e.span)?;
                self.emit_at(e.span, Op::Run(f));
            }
            ExprKind::Index { base, index } => {
                self.expr(base)?;
                self.expr(index)?;
                self.emit_at(e.span, Op::Index);
            }
            ExprKind::Field { base, field } => {
                self.expr(base)?;
                let name = self.name_constant(&field.name);
                self.emit_at(e.span, Op::Field(name));
            }
        }
        Ok(())
    }

    fn emit_at(&mut self, span: Span, op: Op) -> usize {
        self.span = span;
        self.emit(op)
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<(), ScriptError> {
        self.expr(lhs)?;
        let short = match op {
            BinaryOp::And => Some(false),
            BinaryOp::Or => Some(true),
            _ => None,
        };
        let Some(on) = short else {
            self.expr(rhs)?;
            self.emit_at(span, Op::Binary(op));
            return Ok(());
        };
        let jump = self.emit_at(span, Op::ShortCircuit { on, to: 0 });
        self.expr(rhs)?;
        // `rhs and True` / `rhs or False`: the right side's value, checked to be a bool.
        self.constant(Value::Bool(!on));
        self.emit_at(span, Op::Binary(op));
        self.patch(jump);
        Ok(())
    }

    fn call(&mut self, call: &Call, span: Span) -> Result<(), ScriptError> {
        let name = call.callee.name.as_str();
        if let Some(&f) = self.ids.get(name) {
            self.user_args(f, &call.args, span)?;
            self.emit_at(span, Op::Call(f));
            return Ok(());
        }
        let Some(builtin) = builtins::lookup(name) else {
            return Err(ScriptError::new(
                ErrorKind::NameNotFound,
                span,
                format!("function `{name}` is not defined"),
            ));
        };
        let names: Vec<&str> = builtin.params.iter().map(|p| p.name).collect();
        let given = order(&names, &call.args, span)?;
        for (param, arg) in builtin.params.iter().zip(given) {
            match (arg, param.default) {
                (Some(e), _) => self.expr(e)?,
                (None, Some(text)) => {
                    let default = self.default(text, span)?;
                    self.expr(&default)?;
                }
                (None, None) => return Err(missing(name, param.name, span)),
            }
        }
        let argc = u8::try_from(builtin.params.len()).unwrap_or(u8::MAX);
        let op = match name {
            "sync" => Op::Sync,
            "sleep" => Op::Sleep,
            "get_steptime" => Op::StepTime,
            _ => pure::lookup(name).map_or(Op::Host(builtin.name, argc), |f| Op::Pure(f, argc)),
        };
        self.emit_at(span, op);
        Ok(())
    }

    fn default(&mut self, text: &'static str, span: Span) -> Result<Expr, ScriptError> {
        if let Some(e) = self.defaults.get(text) {
            return Ok(e.clone());
        }
        let parsed = crate::parse(&format!("d = {text}\n"))
            .ok()
            .and_then(|p| p.body.into_iter().next())
            .and_then(|s| match s.kind {
                StmtKind::Assign { mut value, .. } => {
                    relocate(&mut value, span);
                    Some(value)
                }
                _ => None,
            })
            .ok_or_else(|| {
                error(
                    span,
                    format!("the built-in default `{text}` is not URScript"),
                )
            })?;
        self.defaults.insert(text, parsed.clone());
        Ok(parsed)
    }

    /// A user function's arguments, in parameter order, defaults filled in.
    fn user_args(&mut self, f: u32, args: &[Arg], span: Span) -> Result<(), ScriptError> {
        let (name, params) = self.signatures[f as usize - 1].clone();
        let names: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        let given = order(&names, args, span)?;
        for (param, arg) in params.iter().zip(given) {
            match (arg, &param.default) {
                (Some(e), _) | (None, Some(e)) => self.expr(e)?,
                (None, None) => return Err(missing(&name, &param.name.name, span)),
            }
        }
        Ok(())
    }
}

/// The expression given for each parameter, positional then by keyword.
fn order<'e>(
    params: &[&str],
    args: &'e [Arg],
    span: Span,
) -> Result<Vec<Option<&'e Expr>>, ScriptError> {
    let mut given = vec![None; params.len()];
    for (i, arg) in args.iter().enumerate() {
        let at = match &arg.keyword {
            None if i < params.len() => i,
            None => {
                return Err(ScriptError::new(
                    ErrorKind::ArgumentCount,
                    span,
                    format!("too many arguments: {} for {}", args.len(), params.len()),
                ));
            }
            Some(k) => params.iter().position(|p| *p == k.name).ok_or_else(|| {
                ScriptError::new(
                    ErrorKind::UnknownKeyword,
                    k.span,
                    format!("no parameter `{}`", k.name),
                )
            })?,
        };
        given[at] = Some(&arg.value);
    }
    Ok(given)
}

fn missing(function: &str, param: &str, span: Span) -> ScriptError {
    ScriptError::new(
        ErrorKind::ArgumentCount,
        span,
        format!("`{function}` needs its argument `{param}`"),
    )
}

/// The names declared `local` in a body, outside the functions defined in it.
fn declared_local(body: &[Stmt], out: &mut HashSet<String>) {
    for stmt in body {
        match &stmt.kind {
            StmtKind::Declare {
                scope: Scope::Local,
                name,
                ..
            } => {
                out.insert(name.name.clone());
            }
            StmtKind::If {
                branches,
                otherwise,
            } => {
                for (_, b) in branches {
                    declared_local(b, out);
                }
                if let Some(b) = otherwise {
                    declared_local(b, out);
                }
            }
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => declared_local(body, out),
            _ => {}
        }
    }
}

/// Puts a built-in default, parsed from the table's text, at the call it fills in.
fn relocate(e: &mut Expr, span: Span) {
    e.span = span;
    match &mut e.kind {
        ExprKind::List(items) | ExprKind::Pose(items) => {
            items.iter_mut().for_each(|i| relocate(i, span));
        }
        ExprKind::Unary { operand, .. } => relocate(operand, span),
        ExprKind::Binary { lhs, rhs, .. } => {
            relocate(lhs, span);
            relocate(rhs, span);
        }
        ExprKind::Call(c) => c.args.iter_mut().for_each(|a| relocate(&mut a.value, span)),
        _ => {}
    }
}
