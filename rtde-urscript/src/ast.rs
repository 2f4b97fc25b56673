//! The syntax tree: every node carries the [`Span`] where it starts, so that the checker
//! now, and the interpreter later, report errors where the controller would.

use crate::Span;

/// A whole script: its top-level statements, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The statements.
    pub body: Vec<Stmt>,
}

/// A statement and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where it starts.
    pub span: Span,
}

/// The statements of URScript.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StmtKind {
    /// An expression evaluated for its effect, usually a call.
    Expr(Expr),
    /// `target = value`; the target is a name, an index (`q[0]`) or a struct field (`s.a`).
    Assign {
        /// What is assigned to.
        target: Expr,
        /// The value.
        value: Expr,
    },
    /// `global name = value` or `local name = value` (the value may be left out).
    Declare {
        /// `global` or `local`.
        scope: Scope,
        /// The variable.
        name: Ident,
        /// Its first value.
        value: Option<Expr>,
    },
    /// `def`, `thread` or `sec`.
    Function(Function),
    /// `if … elif … else … end`.
    If {
        /// Each condition with its body: the `if`, then each `elif`.
        branches: Vec<(Expr, Vec<Stmt>)>,
        /// The `else` body.
        otherwise: Option<Vec<Stmt>>,
    },
    /// `while condition: … end`.
    While {
        /// Checked before each round.
        condition: Expr,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `for name in range(…): … end` (PolyScope X).
    For {
        /// The loop variable.
        variable: Ident,
        /// What it runs over.
        over: Expr,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `return` with or without a value.
    Return(Option<Expr>),
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `halt`: stops the program.
    Halt,
    /// `pass`: does nothing.
    Pass,
    /// `kill thread_handle`.
    Kill(Expr),
    /// `join thread_handle`.
    Join(Expr),
    /// `enter_critical`.
    EnterCritical,
    /// `exit_critical`.
    ExitCritical,
    /// A line marker, `$ 3 "movej"`: the pendant's program tree position.
    Marker {
        /// The marker's number.
        number: i64,
        /// Its texts (a name, then sometimes `"breakAfter"`).
        labels: Vec<String>,
    },
}

/// `global` or `local`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Visible to every function and thread.
    Global,
    /// Visible in the enclosing function only.
    Local,
}

/// What kind of function a [`Function`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// `def`: called.
    Def,
    /// `thread`: started with `run`.
    Thread,
    /// `sec`: a secondary program.
    Sec,
}

/// A function, thread or secondary program definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// `def`, `thread` or `sec`.
    pub kind: FunctionKind,
    /// Its name.
    pub name: Ident,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// Its statements.
    pub body: Vec<Stmt>,
}

/// A parameter, with its default value if it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name.
    pub name: Ident,
    /// The default, which makes the argument optional.
    pub default: Option<Expr>,
}

/// A name and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is.
    pub span: Span,
}

/// An expression and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub span: Span,
}

/// The expressions of URScript.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExprKind {
    /// An integer literal (32-bit on the controller).
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// `True` or `False`.
    Bool(bool),
    /// A string literal, its escapes resolved.
    Str(String),
    /// A variable.
    Name(String),
    /// `[a, b, …]`: a list (an array).
    List(Vec<Expr>),
    /// `p[x, y, z, rx, ry, rz]`: a pose.
    Pose(Vec<Expr>),
    /// `struct(a=1, b="x")` (PolyScope X).
    Struct(Vec<(Ident, Expr)>),
    /// `-x`, `not x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// `a + b`, `a and b`, …
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
    /// `name(args…)`.
    Call(Call),
    /// `run thread_name()`: starts a thread, giving its handle.
    Run(Call),
    /// `base[index]`.
    Index {
        /// The list, pose or string.
        base: Box<Expr>,
        /// The position.
        index: Box<Expr>,
    },
    /// `base.field`: a struct's field.
    Field {
        /// The struct.
        base: Box<Expr>,
        /// The field.
        field: Ident,
    },
}

/// A call of a named function.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The function's name.
    pub callee: Ident,
    /// The arguments, positional first.
    pub args: Vec<Arg>,
}

/// An argument: positional, or by keyword (`a=1.2`).
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// The keyword, if given by name.
    pub keyword: Option<Ident>,
    /// The value.
    pub value: Expr,
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-`.
    Neg,
    /// `not`.
    Not,
}

/// An infix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each is its symbol
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

impl BinaryOp {
    /// The operator as written.
    #[must_use]
    pub const fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
        }
    }
}
