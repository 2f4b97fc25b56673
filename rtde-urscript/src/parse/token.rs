//! The lexer: source text into tokens, each with its line and column.
//!
//! Indentation carries no meaning in URScript (blocks close with `end`), so whitespace is
//! skipped; newlines end statements, except inside brackets and after a `\` at the end of
//! a line, where a statement continues.

use crate::Span;
use crate::error::{ErrorKind, ScriptError};

/// A token's kind; names and literals carry their text or value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    /// `p[`: a pose literal opens (or the index of a variable called `p`; the parser decides).
    PoseOpen,
    Keyword(Keyword),
    Punct(&'static str),
    Dollar,
    Newline,
    Eof,
}

/// The reserved words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keyword {
    Def,
    Thread,
    Sec,
    End,
    If,
    Elif,
    Else,
    While,
    For,
    In,
    Return,
    Break,
    Continue,
    Halt,
    Pass,
    Global,
    Local,
    Run,
    Join,
    Kill,
    EnterCritical,
    ExitCritical,
    And,
    Or,
    Xor,
    Not,
    True,
    False,
}

impl Keyword {
    fn from_name(name: &str) -> Option<Keyword> {
        use Keyword as K;
        Some(match name {
            "def" => K::Def,
            "thread" => K::Thread,
            "sec" => K::Sec,
            "end" => K::End,
            "if" => K::If,
            "elif" => K::Elif,
            "else" => K::Else,
            "while" => K::While,
            "for" => K::For,
            "in" => K::In,
            "return" => K::Return,
            "break" => K::Break,
            "continue" => K::Continue,
            "halt" => K::Halt,
            "pass" => K::Pass,
            "global" => K::Global,
            "local" => K::Local,
            "run" => K::Run,
            "join" => K::Join,
            "kill" => K::Kill,
            "enter_critical" => K::EnterCritical,
            "exit_critical" => K::ExitCritical,
            "and" => K::And,
            "or" => K::Or,
            "xor" => K::Xor,
            "not" => K::Not,
            "True" => K::True,
            "False" => K::False,
            _ => return None,
        })
    }
}

/// The operators and delimiters, longest first so that `<=` is not read as `<`.
const PUNCTUATION: [&str; 19] = [
    "==", "!=", "<=", ">=", "(", ")", "[", "]", ",", ":", "=", ".", "+", "-", "*", "/", "%", "<",
    ">",
];

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) span: Span,
}

/// Splits the whole source into tokens, ending with [`Tok::Eof`]; the first error stops it.
pub(crate) fn tokenize(source: &str) -> Result<Vec<Token>, ScriptError> {
    let mut lexer = Lexer {
        chars: source.chars().collect(),
        pos: 0,
        line: 1,
        column: 1,
        depth: 0,
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    column: u32,
    /// Open brackets: inside them a newline does not end the statement.
    depth: usize,
    tokens: Vec<Token>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn here(&self) -> Span {
        Span::new(self.line, self.column)
    }

    fn push(&mut self, tok: Tok, span: Span) {
        self.tokens.push(Token { tok, span });
    }

    fn run(&mut self) -> Result<(), ScriptError> {
        while let Some(c) = self.peek(0) {
            let span = self.here();
            match c {
                '\n' => {
                    self.bump();
                    if self.depth == 0 && !self.statement_continues() {
                        self.push(Tok::Newline, span);
                    }
                }
                ' ' | '\t' | '\r' | '\u{c}' => {
                    self.bump();
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                '\\' if self.continues_line() => {}
                '$' => {
                    self.bump();
                    self.push(Tok::Dollar, span);
                }
                '"' | '\'' => self.string(c, span)?,
                c if c.is_ascii_digit() => self.number(span)?,
                '.' if self.peek(1).is_some_and(|c| c.is_ascii_digit()) => self.number(span)?,
                c if c.is_alphabetic() || c == '_' => self.name(span),
                _ => self.punct(span)?,
            }
        }
        let span = self.here();
        if !matches!(
            self.tokens.last().map(|t| &t.tok),
            None | Some(Tok::Newline)
        ) {
            self.push(Tok::Newline, span);
        }
        self.push(Tok::Eof, span);
        Ok(())
    }

    /// Whether a newline here leaves the statement open: at the start, after another
    /// newline, and after an operator or a comma (a condition split after `or`, as the UR
    /// Client Library's script writes it).
    fn statement_continues(&self) -> bool {
        match self.tokens.last().map(|t| &t.tok) {
            None | Some(Tok::Newline) => true,
            Some(Tok::Keyword(k)) => {
                matches!(k, Keyword::And | Keyword::Or | Keyword::Xor | Keyword::Not)
            }
            Some(Tok::Punct(p)) => !matches!(*p, ")" | "]" | ":"),
            _ => false,
        }
    }

    /// A `\` followed by nothing but spaces up to the newline joins the two lines.
    fn continues_line(&mut self) -> bool {
        let mut ahead = 1;
        while matches!(self.peek(ahead), Some(' ' | '\t' | '\r')) {
            ahead += 1;
        }
        if self.peek(ahead) != Some('\n') {
            return false;
        }
        for _ in 0..=ahead {
            self.bump();
        }
        true
    }

    fn string(&mut self, quote: char, span: Span) -> Result<(), ScriptError> {
        self.bump();
        let mut text = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err(ScriptError::new(
                        ErrorKind::Syntax,
                        span,
                        "the string opened here is not closed on its line",
                    ));
                }
                Some(c) if c == quote => break,
                Some('\\') => match self.bump() {
                    Some('n') => text.push('\n'),
                    Some('t') => text.push('\t'),
                    Some('r') => text.push('\r'),
                    Some(c @ ('\\' | '"' | '\'')) => text.push(c),
                    // An unknown escape keeps its backslash, as text.
                    Some(c) if c != '\n' => {
                        text.push('\\');
                        text.push(c);
                    }
                    _ => {
                        return Err(ScriptError::new(
                            ErrorKind::Syntax,
                            span,
                            "the string opened here is not closed on its line",
                        ));
                    }
                },
                Some(c) => text.push(c),
            }
        }
        self.push(Tok::Str(text), span);
        Ok(())
    }

    fn digits(&mut self, text: &mut String) {
        while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
            text.push(c);
            self.bump();
        }
    }

    fn number(&mut self, span: Span) -> Result<(), ScriptError> {
        let mut text = String::new();
        self.digits(&mut text);
        let mut float = false;
        if self.peek(0) == Some('.') && !self.peek(1).is_some_and(char::is_alphabetic) {
            float = true;
            text.push('.');
            self.bump();
            self.digits(&mut text);
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek(1), Some('+' | '-')));
            if self.peek(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                float = true;
                for _ in 0..=sign {
                    text.extend(self.bump());
                }
                self.digits(&mut text);
            }
        }
        if self
            .peek(0)
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            return Err(ScriptError::new(
                ErrorKind::Syntax,
                span,
                format!("`{text}` runs into a name: a number ends at its last digit"),
            ));
        }
        let tok = if float {
            Tok::Float(text.parse().map_err(|_| bad_number(span, &text))?)
        } else {
            // URScript integers are 32-bit; a literal beyond 2^31 cannot be one.
            match text.parse::<i64>() {
                Ok(v) if v <= 1 << 31 => Tok::Int(v),
                _ => return Err(bad_number(span, &text)),
            }
        };
        self.push(tok, span);
        Ok(())
    }

    fn name(&mut self, span: Span) {
        let mut text = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
            text.push(c);
            self.bump();
        }
        if text == "p" && self.peek(0) == Some('[') {
            self.bump();
            self.depth += 1;
            self.push(Tok::PoseOpen, span);
            return;
        }
        let tok = match Keyword::from_name(&text) {
            Some(k) => Tok::Keyword(k),
            None => Tok::Name(text),
        };
        self.push(tok, span);
    }

    fn punct(&mut self, span: Span) -> Result<(), ScriptError> {
        let c0 = self.peek(0).unwrap_or(' ');
        let c1 = self.peek(1);
        let found = PUNCTUATION.iter().find(|p| {
            let mut pc = p.chars();
            pc.next() == Some(c0) && pc.next().is_none_or(|second| Some(second) == c1)
        });
        let Some(&p) = found else {
            return Err(ScriptError::new(
                ErrorKind::Syntax,
                span,
                format!("unexpected character `{}`", c0.escape_debug()),
            ));
        };
        for _ in 0..p.len() {
            self.bump();
        }
        match p {
            "(" | "[" => self.depth += 1,
            ")" | "]" => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        self.push(Tok::Punct(p), span);
        Ok(())
    }
}

fn bad_number(span: Span, text: &str) -> ScriptError {
    ScriptError::new(
        ErrorKind::Syntax,
        span,
        format!("`{text}` is not a number URScript can hold (integers are 32-bit)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_in_every_form() {
        assert_eq!(
            toks("1 2.5 1e-3 .5 3E+2"),
            vec![
                Tok::Int(1),
                Tok::Float(2.5),
                Tok::Float(1e-3),
                Tok::Float(0.5),
                Tok::Float(300.0),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn newlines_inside_brackets_and_after_a_backslash_continue_the_statement() {
        assert_eq!(
            toks("f(1,\n 2) \\\n + 3\n"),
            vec![
                Tok::Name("f".into()),
                Tok::Punct("("),
                Tok::Int(1),
                Tok::Punct(","),
                Tok::Int(2),
                Tok::Punct(")"),
                Tok::Punct("+"),
                Tok::Int(3),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn a_trailing_operator_continues_the_statement() {
        assert_eq!(
            toks("x = a or\n  b +\n c\n"),
            vec![
                Tok::Name("x".into()),
                Tok::Punct("="),
                Tok::Name("a".into()),
                Tok::Keyword(Keyword::Or),
                Tok::Name("b".into()),
                Tok::Punct("+"),
                Tok::Name("c".into()),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn strings_unescape_and_comments_vanish() {
        assert_eq!(
            toks(r#"textmsg("a\"b\n") # comment"#),
            vec![
                Tok::Name("textmsg".into()),
                Tok::Punct("("),
                Tok::Str("a\"b\n".into()),
                Tok::Punct(")"),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn spans_count_lines_and_characters() {
        let t = tokenize("x = 1\n  é = \"ü\" + y").unwrap();
        let y = t.iter().find(|t| t.tok == Tok::Name("y".into())).unwrap();
        assert_eq!(y.span, Span::new(2, 13));
    }

    #[test]
    fn errors_have_their_place() {
        let e = tokenize("x = 1\ny = \"open").unwrap_err();
        assert_eq!((e.kind, e.span), (ErrorKind::Syntax, Span::new(2, 5)));
        let e = tokenize("x = 3000000000").unwrap_err();
        assert_eq!(e.span, Span::new(1, 5));
        let e = tokenize("x = 1 ; y").unwrap_err();
        assert_eq!(e.span, Span::new(1, 7));
    }
}
