//! Calls: the callee is a user function or a built-in of the target version, and the
//! arguments fit its parameters (count, keywords, types knowable from the text).

use super::Checker;
use super::scope::Scope;
use super::types::{refused_operand, type_of};
use crate::ast::{Arg, BinaryOp, Call, Expr, Function};
use crate::builtins::{self, Type};
use crate::error::{ErrorKind, ScriptError};

/// A parameter as the argument matching sees it, from a built-in or a user function.
struct Slot<'p> {
    name: &'p str,
    ty: Type,
    optional: bool,
}

impl<'a> Checker<'a> {
    pub(super) fn call(&mut self, call: &'a Call, scope: &Scope<'_>) {
        for a in &call.args {
            self.expr(&a.value, scope);
        }
        let name = call.callee.name.as_str();
        if let Some(f) = self.functions.get(name).copied() {
            self.arguments(call, &user_slots(f));
            return;
        }
        let Some(builtin) = builtins::lookup(name) else {
            self.unknown_function(call);
            return;
        };
        if !builtin.since.covers(self.version) {
            let since = builtin.since;
            if since.refuses(self.version) {
                let message = format!(
                    "`{name}` is not in controller {}: it needs {since}",
                    self.version
                );
                self.error(ErrorKind::NotInVersion, call.callee.span, message);
                return;
            }
            let message = format!(
                "`{name}` is known from {since} on (a driver's version gate, not the manual): \
                 controller {} may not have it",
                self.version
            );
            self.warn(ErrorKind::NotInVersion, call.callee.span, message);
        }
        let slots: Vec<Slot<'_>> = builtin
            .params
            .iter()
            .map(|p| Slot {
                name: p.name,
                ty: p.ty,
                optional: p.default.is_some(),
            })
            .collect();
        self.arguments(call, &slots);
    }

    fn unknown_function(&mut self, call: &Call) {
        let name = call.callee.name.as_str();
        let version = self.version;
        let known = builtins::BUILTINS
            .iter()
            .filter(|b| b.since.covers(version))
            .map(|b| b.name)
            .chain(self.functions.keys().copied());
        let suggestion = rtde_fields::closest(name, known, |n| n);
        self.errors.push(
            ScriptError::new(
                ErrorKind::NameNotFound,
                call.callee.span,
                format!("name `{name}` is not defined"),
            )
            .suggest(suggestion),
        );
    }

    /// Matches the arguments to the parameters: positional ones in order, then keywords.
    fn arguments(&mut self, call: &Call, slots: &[Slot<'_>]) {
        let name = call.callee.name.as_str();
        let mut filled = vec![false; slots.len()];
        let positional = call.args.iter().take_while(|a| a.keyword.is_none()).count();
        if positional > slots.len() {
            let extra = &call.args[slots.len()].value;
            self.error(
                ErrorKind::ArgumentCount,
                extra.span,
                format!(
                    "`{name}` takes at most {} arguments, not {}",
                    slots.len(),
                    call.args.len()
                ),
            );
            return;
        }
        for (i, arg) in call.args.iter().enumerate() {
            let slot = match &arg.keyword {
                None => i,
                Some(k) => match slots.iter().position(|s| s.name == k.name) {
                    Some(s) => s,
                    None => {
                        let suggestion = rtde_fields::closest(&k.name, slots.iter(), |s| s.name);
                        self.errors.push(
                            ScriptError::new(
                                ErrorKind::UnknownKeyword,
                                k.span,
                                format!("`{name}` has no parameter `{}`", k.name),
                            )
                            .suggest(suggestion.map(|s| s.name)),
                        );
                        continue;
                    }
                },
            };
            if std::mem::replace(&mut filled[slot], true) {
                self.error(
                    ErrorKind::UnknownKeyword,
                    arg.value.span,
                    format!("`{name}` got parameter `{}` twice", slots[slot].name),
                );
                continue;
            }
            self.argument_type(name, &slots[slot], arg);
        }
        let missing: Vec<&str> = slots
            .iter()
            .zip(&filled)
            .filter(|(s, f)| !s.optional && !**f)
            .map(|(s, _)| s.name)
            .collect();
        if !missing.is_empty() {
            self.error(
                ErrorKind::ArgumentCount,
                call.callee.span,
                format!(
                    "`{name}` is missing its argument `{}`",
                    missing.join("`, `")
                ),
            );
        }
    }

    fn argument_type(&mut self, function: &str, slot: &Slot<'_>, arg: &Arg) {
        let actual = type_of(&arg.value);
        if !slot.ty.accepts(actual) {
            self.error(
                ErrorKind::TypeMismatch,
                arg.value.span,
                format!(
                    "`{function}` takes {} as `{}`, not {actual}",
                    slot.ty, slot.name
                ),
            );
        }
    }

    pub(super) fn operands(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) {
        if let Some(t) = refused_operand(op, type_of(lhs), type_of(rhs)) {
            self.error(
                ErrorKind::TypeMismatch,
                lhs.span,
                format!("operator `{}` does not take {t}", op.symbol()),
            );
        }
    }
}

/// A user function's parameters: any type, optional where a default is given.
fn user_slots(f: &Function) -> Vec<Slot<'_>> {
    f.params
        .iter()
        .map(|p| Slot {
            name: &p.name.name,
            ty: Type::Any,
            optional: p.default.is_some(),
        })
        .collect()
}
