//! Rules as parsed, before numeric instantiation.

use misaal_isa::diag::Span;

/// An integer expression over numeric variables.
#[derive(Clone, Debug, PartialEq)]
pub enum IntExpr {
    Lit(i128),
    Var(String),
    Op(char, Box<IntExpr>, Box<IntExpr>),
}

/// `x op y`, `None` on overflow or division by zero.
fn apply(op: char, x: i128, y: i128) -> Option<i128> {
    match op {
        '+' => x.checked_add(y),
        '-' => x.checked_sub(y),
        '*' => x.checked_mul(y),
        '/' => x.checked_div(y),
        '%' => x.checked_rem(y),
        _ => None,
    }
}

impl IntExpr {
    pub fn eval<S: AsRef<str>>(&self, env: &[(S, i128)]) -> Result<i128, String> {
        Ok(match self {
            IntExpr::Lit(n) => *n,
            IntExpr::Var(v) => env.iter().find(|(n, _)| n.as_ref() == v).map(|(_, x)| *x).ok_or_else(|| format!("?{v} has no value"))?,
            IntExpr::Op(op, a, b) => {
                let (x, y) = (a.eval(env)?, b.eval(env)?);
                if matches!(op, '/' | '%') && y == 0 {
                    return Err(format!("division by zero in ({op} {x} {y})"));
                }
                apply(*op, x, y).ok_or_else(|| format!("integer overflow in ({op} {x} {y})"))?
            }
        })
    }
    /// [`eval`](Self::eval) without the reason: instantiation evaluates
    /// every condition of every candidate assignment, most of them before
    /// their variables are bound, and the reasons were most of its time.
    pub fn value<S: AsRef<str>>(&self, env: &[(S, i128)]) -> Option<i128> {
        match self {
            IntExpr::Lit(n) => Some(*n),
            IntExpr::Var(v) => env.iter().find(|(n, _)| n.as_ref() == v).map(|(_, x)| *x),
            IntExpr::Op(op, a, b) => apply(*op, a.value(env)?, b.value(env)?),
        }
    }
    pub(crate) fn vars(&self, out: &mut Vec<String>) {
        match self {
            IntExpr::Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            IntExpr::Op(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
            IntExpr::Lit(_) => {}
        }
    }
}

/// A rule term before numeric instantiation. Generic arguments and
/// operands are told apart when the op's signature is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(String, Span),
    Int(IntExpr, Span),
    /// `(i E N)` / `(u E N)`: fills <S, E, N>.
    Type(IntExpr, IntExpr, IntExpr, Span),
    /// A target instruction, `(x86 NAME ...)`, `(arm NAME ...)` or
    /// `(hvx NAME ...)`: NAME is a spec of the rule file's target.
    Instr(String, Vec<Term>, Span),
    Op(String, Vec<Term>, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(_, s) | Term::Int(_, s) | Term::Type(.., s) | Term::Instr(_, _, s) | Term::Op(_, _, s) => *s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Define(String, IntExpr),
    In(String, Vec<i128>),
    Cmp(String, IntExpr, IntExpr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub name: String,
    pub lhs: Term,
    pub rhs: Term,
    pub bidirectional: bool,
    pub conds: Vec<Cond>,
    pub span: Span,
    pub file: String,
    /// The rule file's target: every instruction the file names is one of
    /// its specs, and `?vsize*` defaults to its register widths.
    pub target: &'static crate::target::TargetIsa,
}

impl Rule {
    /// Numeric variables (in conditions or integer positions), in order of appearance.
    pub fn numeric_vars(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.conds {
            match c {
                Cond::Define(v, e) => {
                    if !out.contains(v) {
                        out.push(v.clone());
                    }
                    e.vars(&mut out);
                }
                Cond::In(v, _) => {
                    if !out.contains(v) {
                        out.push(v.clone());
                    }
                }
                Cond::Cmp(_, a, b) => {
                    a.vars(&mut out);
                    b.vars(&mut out);
                }
            }
        }
        fn walk(t: &Term, out: &mut Vec<String>) {
            match t {
                Term::Int(e, _) => e.vars(out),
                Term::Type(a, b, c, _) => {
                    a.vars(out);
                    b.vars(out);
                    c.vars(out);
                }
                Term::Instr(name, args, _) => {
                    for part in name.split('{').skip(1) {
                        if let Some((v, _)) = part.split_once('}')
                            && !crate::instantiate::is_template_key(v)
                            && !out.iter().any(|o| o == v)
                        {
                            out.push(v.to_string());
                        }
                    }
                    args.iter().for_each(|a| walk(a, out));
                }
                Term::Op(_, args, _) => args.iter().for_each(|a| walk(a, out)),
                Term::Var(..) => {}
            }
        }
        walk(&self.lhs, &mut out);
        walk(&self.rhs, &mut out);
        out
    }
}

