//! Expressions, by precedence from loosest to tightest: `or`/`xor`, `and`, `not`,
//! comparisons, `+`/`-`, `*`/`/`/`%`, unary `-`, then calls, indexes and fields.

use super::Parser;
use super::token::{Keyword, Tok};
use crate::Span;
use crate::ast::{Arg, BinaryOp, Call, Expr, ExprKind, Ident, UnaryOp};
use crate::error::{ErrorKind, ScriptError};

/// How many numbers a pose has.
const POSE_LEN: usize = 6;

/// Whether an expression can stand left of `=`.
pub(super) fn assignable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(_) => true,
        ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => assignable(base),
        _ => false,
    }
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr {
        span: lhs.span,
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    }
}

impl Parser {
    pub(super) fn expr(&mut self) -> Result<Expr, ScriptError> {
        let span = self.peek().span;
        self.deeper(span)?;
        let e = self.or_expr();
        self.depth -= 1;
        e
    }

    fn or_expr(&mut self) -> Result<Expr, ScriptError> {
        let mut lhs = self.and_expr()?;
        loop {
            let op = match self.peek().tok {
                Tok::Keyword(Keyword::Or) => BinaryOp::Or,
                Tok::Keyword(Keyword::Xor) => BinaryOp::Xor,
                _ => return Ok(lhs),
            };
            self.next();
            lhs = binary(op, lhs, self.and_expr()?);
        }
    }

    fn and_expr(&mut self) -> Result<Expr, ScriptError> {
        let mut lhs = self.not_expr()?;
        while self.eat(&Tok::Keyword(Keyword::And)) {
            lhs = binary(BinaryOp::And, lhs, self.not_expr()?);
        }
        Ok(lhs)
    }

    fn not_expr(&mut self) -> Result<Expr, ScriptError> {
        if self.at(&Tok::Keyword(Keyword::Not)) {
            let span = self.next().span;
            self.deeper(span)?;
            let operand = self.not_expr();
            self.depth -= 1;
            return Ok(Expr {
                span,
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand: Box::new(operand?),
                },
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, ScriptError> {
        let mut lhs = self.sum()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct("==") => BinaryOp::Eq,
                Tok::Punct("!=") => BinaryOp::Ne,
                Tok::Punct("<") => BinaryOp::Lt,
                Tok::Punct("<=") => BinaryOp::Le,
                Tok::Punct(">") => BinaryOp::Gt,
                Tok::Punct(">=") => BinaryOp::Ge,
                _ => return Ok(lhs),
            };
            self.next();
            lhs = binary(op, lhs, self.sum()?);
        }
    }

    fn sum(&mut self) -> Result<Expr, ScriptError> {
        let mut lhs = self.product()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct("+") => BinaryOp::Add,
                Tok::Punct("-") => BinaryOp::Sub,
                _ => return Ok(lhs),
            };
            self.next();
            lhs = binary(op, lhs, self.product()?);
        }
    }

    fn product(&mut self) -> Result<Expr, ScriptError> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct("*") => BinaryOp::Mul,
                Tok::Punct("/") => BinaryOp::Div,
                Tok::Punct("%") => BinaryOp::Rem,
                _ => return Ok(lhs),
            };
            self.next();
            lhs = binary(op, lhs, self.unary()?);
        }
    }

    fn unary(&mut self) -> Result<Expr, ScriptError> {
        if self.at(&Tok::Punct("-")) || self.at(&Tok::Punct("+")) {
            let t = self.next();
            self.deeper(t.span)?;
            let operand = self.unary();
            self.depth -= 1;
            let operand = operand?;
            if t.tok == Tok::Punct("+") {
                return Ok(operand);
            }
            return Ok(Expr {
                span: t.span,
                kind: ExprKind::Unary {
                    op: UnaryOp::Neg,
                    operand: Box::new(operand),
                },
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, ScriptError> {
        let mut e = self.atom()?;
        loop {
            if self.eat(&Tok::Punct("[")) {
                let index = self.expr()?;
                self.expect(&Tok::Punct("]"), "`]` after the index")?;
                e = Expr {
                    span: e.span,
                    kind: ExprKind::Index {
                        base: Box::new(e),
                        index: Box::new(index),
                    },
                };
            } else if self.eat(&Tok::Punct(".")) {
                let field = self.ident("a field name after `.`")?;
                e = Expr {
                    span: e.span,
                    kind: ExprKind::Field {
                        base: Box::new(e),
                        field,
                    },
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, ScriptError> {
        let t = self.peek().clone();
        let span = t.span;
        let kind = match t.tok {
            Tok::Int(v) => {
                self.next();
                ExprKind::Int(v)
            }
            Tok::Float(v) => {
                self.next();
                ExprKind::Float(v)
            }
            Tok::Str(s) => {
                self.next();
                ExprKind::Str(s)
            }
            Tok::Keyword(Keyword::True) => {
                self.next();
                ExprKind::Bool(true)
            }
            Tok::Keyword(Keyword::False) => {
                self.next();
                ExprKind::Bool(false)
            }
            Tok::Keyword(Keyword::Run) => {
                self.next();
                let callee = self.ident("a thread's name after `run`")?;
                self.expect(&Tok::Punct("("), "`(` after the thread's name")?;
                ExprKind::Run(self.call(callee)?)
            }
            Tok::Name(name) => {
                let callee = Ident {
                    name,
                    span: self.next().span,
                };
                if !self.eat(&Tok::Punct("(")) {
                    ExprKind::Name(callee.name)
                } else if callee.name == "struct" {
                    self.struct_literal()?
                } else {
                    ExprKind::Call(self.call(callee)?)
                }
            }
            Tok::Punct("(") => {
                self.next();
                let inner = self.expr()?;
                self.expect(&Tok::Punct(")"), "`)`")?;
                return Ok(inner);
            }
            Tok::Punct("[") => {
                self.next();
                ExprKind::List(self.items("]")?)
            }
            Tok::PoseOpen => {
                self.next();
                self.pose(span)?
            }
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr { kind, span })
    }

    /// Comma-separated expressions up to `close`, which is consumed.
    fn items(&mut self, close: &'static str) -> Result<Vec<Expr>, ScriptError> {
        let mut items = Vec::new();
        while !self.at(&Tok::Punct(close)) {
            items.push(self.expr()?);
            if !self.eat(&Tok::Punct(",")) {
                break;
            }
        }
        self.expect(&Tok::Punct(close), &format!("`,` or `{close}`"))?;
        Ok(items)
    }

    /// After `p[`: six numbers make a pose; one expression is the index of a variable
    /// called `p` (`p[0] = …` in a function whose parameter is `p`).
    fn pose(&mut self, span: Span) -> Result<ExprKind, ScriptError> {
        let items = self.items("]")?;
        match items.len() {
            POSE_LEN => Ok(ExprKind::Pose(items)),
            1 => Ok(ExprKind::Index {
                base: Box::new(Expr {
                    kind: ExprKind::Name("p".to_owned()),
                    span,
                }),
                index: Box::new(items.into_iter().next().ok_or_else(|| {
                    ScriptError::new(ErrorKind::Syntax, span, "an index is missing")
                })?),
            }),
            n => Err(ScriptError::new(
                ErrorKind::Syntax,
                span,
                format!("a pose has {POSE_LEN} numbers (x, y, z, rx, ry, rz), not {n}"),
            )),
        }
    }

    /// The arguments after `name(`, up to and with the `)`.
    pub(super) fn call(&mut self, callee: Ident) -> Result<Call, ScriptError> {
        let mut args = Vec::new();
        while !self.at(&Tok::Punct(")")) {
            let keyword = match (&self.peek().tok, self.peek_at(1)) {
                (Tok::Name(_), Tok::Punct("=")) => {
                    let k = self.ident("a keyword")?;
                    self.next();
                    Some(k)
                }
                _ => None,
            };
            if keyword.is_none() && args.iter().any(|a: &Arg| a.keyword.is_some()) {
                return Err(ScriptError::new(
                    ErrorKind::Syntax,
                    self.peek().span,
                    "a positional argument cannot follow a keyword argument",
                ));
            }
            let value = self.expr()?;
            args.push(Arg { keyword, value });
            if !self.eat(&Tok::Punct(",")) {
                break;
            }
        }
        self.expect(&Tok::Punct(")"), "`,` or `)` in the arguments")?;
        Ok(Call { callee, args })
    }

    fn struct_literal(&mut self) -> Result<ExprKind, ScriptError> {
        let mut fields = Vec::new();
        while !self.at(&Tok::Punct(")")) {
            let name = self.ident("a field name (`struct(a=1)`)")?;
            self.expect(&Tok::Punct("="), "`=` after the field name")?;
            fields.push((name, self.expr()?));
            if !self.eat(&Tok::Punct(",")) {
                break;
            }
        }
        self.expect(&Tok::Punct(")"), "`,` or `)` in the struct")?;
        Ok(ExprKind::Struct(fields))
    }
}
