//! Source text into a [`Program`]: the lexer ([`token`]), statements (here) and
//! expressions ([`expr`]). The first syntax error stops parsing, as on the controller.

mod expr;
mod token;

use crate::Span;
use crate::ast::{Function, FunctionKind, Ident, Param, Program, Scope, Stmt, StmtKind};
use crate::error::{ErrorKind, ScriptError};
use token::{Keyword, Tok, Token};

/// How deeply blocks and expressions may nest; deeper input is refused rather than
/// allowed to exhaust the stack.
const MAX_DEPTH: usize = 100;

/// Parses a script into its syntax tree.
///
/// # Errors
/// The first syntax error, at its line and column ([`ErrorKind::Syntax`]).
///
/// ```
/// use rtde_urscript::ast::StmtKind;
/// use rtde_urscript::parse;
///
/// let program = parse("def main():\n  movej([0, -1.57, 0, 0, 0, 0], a=1.2)\nend\n")?;
/// assert!(matches!(program.body[0].kind, StmtKind::Function(_)));
/// assert!(parse("if x\n end").is_err());
/// # Ok::<(), rtde_urscript::ScriptError>(())
/// ```
pub fn parse(source: &str) -> Result<Program, ScriptError> {
    let tokens = token::tokenize(source)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let body = parser.block(&[])?;
    Ok(Program { body })
}

pub(crate) struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        // `tokenize` always ends with Eof, and nothing moves past it.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)].tok
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn at(&self, tok: &Tok) -> bool {
        &self.peek().tok == tok
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        let hit = self.at(tok);
        if hit {
            self.next();
        }
        hit
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<Span, ScriptError> {
        if self.at(tok) {
            Ok(self.next().span)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn ident(&mut self, what: &str) -> Result<Ident, ScriptError> {
        match self.peek().tok.clone() {
            Tok::Name(name) => Ok(Ident {
                name,
                span: self.next().span,
            }),
            _ => Err(self.unexpected(what)),
        }
    }

    fn unexpected(&self, wanted: &str) -> ScriptError {
        let t = self.peek();
        ScriptError::new(
            ErrorKind::Syntax,
            t.span,
            format!("expected {wanted}, found {}", describe(&t.tok)),
        )
    }

    fn deeper(&mut self, span: Span) -> Result<(), ScriptError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScriptError::new(
                ErrorKind::Syntax,
                span,
                format!("nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        Ok(())
    }

    /// Statements up to one of `until` (left for the caller) or the end of the input.
    fn block(&mut self, until: &[Keyword]) -> Result<Vec<Stmt>, ScriptError> {
        let mut body = Vec::new();
        loop {
            while self.eat(&Tok::Newline) {}
            match &self.peek().tok {
                Tok::Eof if until.is_empty() => return Ok(body),
                Tok::Eof => return Err(self.unexpected("`end`")),
                Tok::Keyword(k) if until.contains(k) => return Ok(body),
                _ => body.push(self.statement()?),
            }
        }
    }

    /// A block's body after its header's `:`, then the `end` that closes it.
    fn body_to_end(&mut self) -> Result<Vec<Stmt>, ScriptError> {
        let body = self.block(&[Keyword::End])?;
        self.next();
        self.depth -= 1;
        Ok(body)
    }

    fn statement(&mut self) -> Result<Stmt, ScriptError> {
        let start = self.peek().span;
        let kind = match self.peek().tok {
            Tok::Keyword(k) => match self.keyword_statement(k, start)? {
                Some(kind) => kind,
                None => self.simple()?,
            },
            Tok::Dollar => self.marker()?,
            _ => self.simple()?,
        };
        if !self.eat(&Tok::Newline) && !self.at(&Tok::Eof) && !self.at_statement_keyword() {
            return Err(self.unexpected("the end of the line"));
        }
        Ok(Stmt { kind, span: start })
    }

    /// Whether the next token is a keyword that only opens (or closes) a statement. The
    /// controller takes such a statement on the line of the one before: ur_rtde 1.6.5
    /// sends `global reg_offset_float = # float register offset` with the value injected
    /// at the start of the next line, before that line's `global`.
    fn at_statement_keyword(&self) -> bool {
        use Keyword as K;
        match self.peek().tok {
            Tok::Keyword(k) => !matches!(
                k,
                K::And | K::Or | K::Xor | K::Not | K::True | K::False | K::Run | K::In
            ),
            _ => false,
        }
    }

    /// A statement that opens with a keyword; `None` for an expression that does
    /// (`run f()`, `not x`, `True`).
    fn keyword_statement(
        &mut self,
        k: Keyword,
        start: Span,
    ) -> Result<Option<StmtKind>, ScriptError> {
        use Keyword as K;
        let kind = match k {
            K::Def => self.function(FunctionKind::Def)?,
            K::Thread => self.function(FunctionKind::Thread)?,
            K::Sec => self.function(FunctionKind::Sec)?,
            K::If => self.if_statement(start)?,
            K::While => {
                self.next();
                self.deeper(start)?;
                let condition = self.expr()?;
                self.expect(&Tok::Punct(":"), "`:` after the condition")?;
                StmtKind::While {
                    condition,
                    body: self.body_to_end()?,
                }
            }
            K::For => self.for_statement(start)?,
            K::Return => {
                self.next();
                let value = if matches!(self.peek().tok, Tok::Newline | Tok::Eof) {
                    None
                } else {
                    Some(self.expr()?)
                };
                StmtKind::Return(value)
            }
            K::Global | K::Local => {
                self.next();
                let scope = if k == K::Global {
                    Scope::Global
                } else {
                    Scope::Local
                };
                let name = self.ident("a variable name")?;
                let value = if self.eat(&Tok::Punct("=")) {
                    Some(self.expr()?)
                } else {
                    None
                };
                StmtKind::Declare { scope, name, value }
            }
            K::Kill | K::Join => {
                self.next();
                let handle = self.expr()?;
                if k == K::Kill {
                    StmtKind::Kill(handle)
                } else {
                    StmtKind::Join(handle)
                }
            }
            K::Break | K::Continue | K::Halt | K::Pass | K::EnterCritical | K::ExitCritical => {
                self.next();
                // `enter_critical()` is written with parentheses too.
                if matches!(k, K::EnterCritical | K::ExitCritical) && self.eat(&Tok::Punct("(")) {
                    self.expect(&Tok::Punct(")"), "`)`")?;
                }
                match k {
                    K::Break => StmtKind::Break,
                    K::Continue => StmtKind::Continue,
                    K::Halt => StmtKind::Halt,
                    K::Pass => StmtKind::Pass,
                    K::EnterCritical => StmtKind::EnterCritical,
                    _ => StmtKind::ExitCritical,
                }
            }
            K::End | K::Elif | K::Else => {
                return Err(self.unexpected("a statement (no block is open here)"));
            }
            K::Run | K::Not | K::True | K::False => return Ok(None),
            K::In | K::And | K::Or | K::Xor => return Err(self.unexpected("a statement")),
        };
        Ok(Some(kind))
    }

    fn function(&mut self, kind: FunctionKind) -> Result<StmtKind, ScriptError> {
        let start = self.next().span;
        self.deeper(start)?;
        let name = self.ident("the function's name")?;
        self.expect(&Tok::Punct("("), "`(` and the parameters")?;
        let mut params = Vec::new();
        while !self.at(&Tok::Punct(")")) {
            let name = self.ident("a parameter name")?;
            let default = if self.eat(&Tok::Punct("=")) {
                Some(self.expr()?)
            } else {
                None
            };
            params.push(Param { name, default });
            if !self.eat(&Tok::Punct(",")) {
                break;
            }
        }
        self.expect(&Tok::Punct(")"), "`)` after the parameters")?;
        self.expect(&Tok::Punct(":"), "`:` after the parameters")?;
        let body = self.body_to_end()?;
        Ok(StmtKind::Function(Function {
            kind,
            name,
            params,
            body,
        }))
    }

    fn if_statement(&mut self, start: Span) -> Result<StmtKind, ScriptError> {
        self.next();
        self.deeper(start)?;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let condition = self.expr()?;
            self.expect(&Tok::Punct(":"), "`:` after the condition")?;
            let body = self.block(&[Keyword::Elif, Keyword::Else, Keyword::End])?;
            branches.push((condition, body));
            match self.next().tok {
                Tok::Keyword(Keyword::Elif) => {}
                Tok::Keyword(Keyword::Else) => {
                    self.expect(&Tok::Punct(":"), "`:` after `else`")?;
                    otherwise = Some(self.block(&[Keyword::End])?);
                    self.next();
                    break;
                }
                _ => break,
            }
        }
        self.depth -= 1;
        Ok(StmtKind::If {
            branches,
            otherwise,
        })
    }

    fn for_statement(&mut self, start: Span) -> Result<StmtKind, ScriptError> {
        self.next();
        self.deeper(start)?;
        let variable = self.ident("the loop variable")?;
        self.expect(&Tok::Keyword(Keyword::In), "`in`")?;
        let over = self.expr()?;
        self.expect(&Tok::Punct(":"), "`:` after the range")?;
        Ok(StmtKind::For {
            variable,
            over,
            body: self.body_to_end()?,
        })
    }

    fn marker(&mut self) -> Result<StmtKind, ScriptError> {
        self.next();
        let Tok::Int(number) = self.peek().tok else {
            return Err(self.unexpected("the marker's number after `$`"));
        };
        self.next();
        let mut labels = Vec::new();
        while let Tok::Str(s) = &self.peek().tok {
            labels.push(s.clone());
            self.next();
        }
        Ok(StmtKind::Marker { number, labels })
    }

    /// An expression, or an assignment to one.
    fn simple(&mut self) -> Result<StmtKind, ScriptError> {
        let target = self.expr()?;
        if !self.at(&Tok::Punct("=")) {
            return Ok(StmtKind::Expr(target));
        }
        if !expr::assignable(&target) {
            return Err(ScriptError::new(
                ErrorKind::Syntax,
                self.peek().span,
                "only a variable, an element (`q[0]`) or a field (`s.a`) can be assigned to",
            ));
        }
        self.next();
        let value = self.expr()?;
        Ok(StmtKind::Assign { target, value })
    }
}

/// A token as an error message names it.
fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Int(i) => format!("`{i}`"),
        Tok::Float(f) => format!("`{f}`"),
        Tok::Str(_) => "a string".to_owned(),
        Tok::PoseOpen => "`p[`".to_owned(),
        Tok::Keyword(k) => format!("`{}`", keyword_text(*k)),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Dollar => "`$`".to_owned(),
        Tok::Newline => "the end of the line".to_owned(),
        Tok::Eof => "the end of the script".to_owned(),
    }
}

fn keyword_text(k: Keyword) -> String {
    let s = format!("{k:?}");
    // EnterCritical → enter_critical; True and False keep their capital.
    if matches!(k, Keyword::True | Keyword::False) {
        return s;
    }
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
