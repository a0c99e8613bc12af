//! Abstract syntax of the semantics language.

use crate::diag::Span;
use std::sync::Arc;

/// Operand and result types. All are bit-vectors; the kind decides how an
/// oracle passes the value (vector register, mask register, immediate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Bv(u32),
    Mask(u32),
    Imm(u32),
}

impl Ty {
    pub fn width(self) -> u32 {
        match self {
            Ty::Bv(w) | Ty::Mask(w) | Ty::Imm(w) => w,
        }
    }
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Bv(w) => write!(f, "bv{w}"),
            Ty::Mask(w) => write!(f, "mask{w}"),
            Ty::Imm(w) => write!(f, "imm{w}"),
        }
    }
}

/// How a value sits in registers, beyond its width. Every form is a plain
/// bit-vector to the DAG, the evaluator and Z3; the form only tells oracles
/// and code generators how to pass it, and lets a spec name a pair's halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Form {
    #[default]
    Plain,
    /// `pairN`: two N-bit registers (an HVX vector pair), a 2N-bit value
    /// whose low half is the lo register and high half the hi register;
    /// `x.lo` and `x.hi` name the halves.
    Pair,
    /// `predN`: a predicate register (an HVX Q register) of N bits, one bit
    /// per byte of a vector; its type is `maskN`.
    Pred,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    /// `bv(E*N)` in a generic instruction: the width, computed from the
    /// generic parameters at instantiation.
    pub size: Option<Expr>,
    /// `n: imm4 in 1 to 8`: the values an immediate may take (inclusive),
    /// where the intrinsic accepts fewer than its width holds (ARM's
    /// `vshr_n_s8` takes 1..8). Oracles and case generators stay inside it.
    pub range: Option<(u64, u64)>,
    /// `pairN` or `predN` rather than `bvN`/`maskN`.
    pub form: Form,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    pub latency: f64,
    /// Reciprocal throughput, cycles per instruction.
    pub throughput: f64,
    pub source: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Ty,
    /// The result's form (`-> pair1024`, `-> pred128`).
    pub ret_form: Form,
    pub target: String,
    pub features: Vec<String>,
    pub mnemonic: String,
    pub cost: Option<Cost>,
    pub body: Vec<Stmt>,
    pub span: Span,
    pub file: Arc<str>,
    /// The spec file's stem: `add.sema` holds family `add`.
    pub family: String,
    /// Generic size parameters (`instr add<S, E, N>(...)`); empty for a
    /// concrete instruction.
    pub generics: Vec<String>,
    pub ret_size: Option<Expr>,
    /// Values of the generic parameters of an instantiated instruction; the
    /// body sees them as compile-time integers.
    pub bindings: Vec<(String, i128)>,
}

impl Instr {
    /// This instruction without its body: what type-checking a use needs,
    /// without copying the semantics.
    pub fn signature(&self) -> Instr {
        Instr {
            name: self.name.clone(),
            params: self.params.clone(),
            ret: self.ret,
            ret_form: self.ret_form,
            target: self.target.clone(),
            features: self.features.clone(),
            mnemonic: self.mnemonic.clone(),
            cost: self.cost.clone(),
            body: Vec::new(),
            span: self.span,
            file: self.file.clone(),
            family: self.family.clone(),
            generics: self.generics.clone(),
            ret_size: self.ret_size.clone(),
            bindings: self.bindings.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Def {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Ty,
    pub body: Vec<Stmt>,
    pub span: Span,
    pub file: Arc<str>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    For { var: String, from: Expr, to: Expr, down: bool, body: Vec<Stmt>, span: Span },
    If { cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, span: Span },
    Assign { target: LValue, value: Expr, span: Span },
    Return { value: Expr, span: Span },
}

#[derive(Clone, Debug, PartialEq)]
pub struct LValue {
    pub name: String,
    /// `dst.lo[..]` / `dst.hi[..]` of a pair: `Some(false)` lo, `Some(true)` hi.
    pub half: Option<bool>,
    pub index: Option<Index>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// `x[hi:lo]`, inclusive.
    Range(Box<Expr>, Box<Expr>),
    /// `x[i]`, one bit.
    Bit(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    URem,
    And,
    Or,
    Xor,
    Shl,
    LShr,
    AShr,
    Eq,
    Ne,
    /// `signed: None` only type-checks on compile-time integers.
    Lt { signed: Option<bool> },
    Le { signed: Option<bool> },
    Gt { signed: Option<bool> },
    Ge { signed: Option<bool> },
}

impl BinOp {
    pub fn symbol(self) -> String {
        let sfx = |s: Option<bool>| match s {
            Some(true) => "s",
            Some(false) => "u",
            None => "",
        };
        match self {
            BinOp::Add => "+".into(),
            BinOp::Sub => "-".into(),
            BinOp::Mul => "*".into(),
            BinOp::UDiv => "/u".into(),
            BinOp::URem => "%u".into(),
            BinOp::And => "AND".into(),
            BinOp::Or => "OR".into(),
            BinOp::Xor => "XOR".into(),
            BinOp::Shl => "<<".into(),
            BinOp::LShr => ">>u".into(),
            BinOp::AShr => ">>s".into(),
            BinOp::Eq => "==".into(),
            BinOp::Ne => "!=".into(),
            BinOp::Lt { signed } => format!("<{}", sfx(signed)),
            BinOp::Le { signed } => format!("<={}", sfx(signed)),
            BinOp::Gt { signed } => format!(">{}", sfx(signed)),
            BinOp::Ge { signed } => format!(">={}", sfx(signed)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Num(i128),
    Var(String),
    Call(String, Vec<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Index(Box<Expr>, Index),
    /// `x.lo` (`false`) or `x.hi` (`true`) of a pair.
    Half(String, bool),
}

#[derive(Clone, Debug, Default)]
pub struct SpecFile {
    pub instrs: Vec<Instr>,
    pub defs: Vec<Def>,
}
