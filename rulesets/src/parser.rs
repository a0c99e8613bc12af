//! Rule files: the egglog subset misaal reads, audits and compiles with.
//!
//! ```text
//! ; a comment
//! (rewrite LHS RHS :name "x86.avg-u8" [:when (COND ...)] [:ruleset NAME])
//! (birewrite LHS RHS :name "...")
//! (ruleset x86)                       ; declarations are accepted; one naming a
//!                                     ; target (x86, arm, hvx) fixes the file's target
//!
//! TERM := ?a                          ; a vector input
//!       | INT                         ; a constant operand, as wide as its position
//!       | (x86 NAME TERM...)          ; a target instruction (also `arm`, `hvx`); NAME may
//!                                     ; be a "template" with {var}, {mm} (mm, mm256, mm512
//!                                     ; by ?vsize), {q} ("" or q by ?vsize), {su} (s or u by
//!                                     ; ?sign), {ty} (b, ub, h, uh, w, uw by ?sign, ?bw)
//!       | (OP GENERIC... TERM...)     ; a Halide op; its generic parameters come first:
//!                                     ; a type (i E N) or (u E N) fills <S, E, N>,
//!                                     ; then integers fill the rest
//! INT  := 12 | ?bw | (+ INT INT) | (- ..) | (* ..) | (/ ..) | (% ..)
//! COND := (= ?x INT) | (in ?x 8 16 ..) | (range ?x LO HI) | (< INT INT) | (<= ..) | (> ..) | (>= ..) | (!= ..)
//! ```
//!
//! A `?name` is numeric when it appears where an integer is expected or in a
//! condition; otherwise it is a vector input. Numeric variables without a
//! domain take a default by name: `?bw*` element widths 8..64, `?vsize*`
//! the target's register widths (x86 128..512, ARM 64 and 128, HVX 1024),
//! `?sign*` 0 or 1.
//!
//! A file has one target, given by its instruction heads (or a
//! `(ruleset x86|arm|hvx)` declaration): heads of two targets in one file
//! are a load error. A file without either is an x86 file.

use crate::ast::{Cond, IntExpr, Rule, Term};
use crate::sexp::{Sexp, for_each_sexp, parse_sexps};
use crate::target::{TargetIsa, X86};
use misaal_isa::{Diagnostic, Diagnostics, diag::Span};

struct P<'a> {
    file: &'a str,
    /// Names used in integer positions or conditions (numeric variables).
    numeric: Vec<String>,
    /// Instruction heads, in order, with their positions.
    heads: Vec<(&'static TargetIsa, Span)>,
}

impl P<'_> {
    fn err<T>(&self, span: Span, msg: impl Into<String>) -> Result<T, Diagnostic> {
        Err(Diagnostic::new(self.file, span, msg))
    }

    fn int(&mut self, s: &Sexp) -> Result<IntExpr, Diagnostic> {
        match s {
            Sexp::Atom(a, span) => {
                if let Some(v) = a.strip_prefix('?') {
                    if !self.numeric.iter().any(|n| n == v) {
                        self.numeric.push(v.to_string());
                    }
                    return Ok(IntExpr::Var(v.to_string()));
                }
                a.parse::<i128>().map(IntExpr::Lit).or_else(|_| self.err(*span, format!("expected an integer or ?var, found `{a}`")))
            }
            Sexp::List(items, span) => {
                let op = match items.first() {
                    Some(Sexp::Atom(o, _)) if ["+", "-", "*", "/", "%"].contains(&o.as_str()) => o.chars().next().expect("op"),
                    _ => return self.err(*span, "expected an integer expression: (+ a b), (- a b), (* a b), (/ a b) or (% a b)"),
                };
                if items.len() != 3 {
                    return self.err(*span, format!("`{op}` takes 2 operands, found {}", items.len() - 1));
                }
                Ok(IntExpr::Op(op, Box::new(self.int(&items[1])?), Box::new(self.int(&items[2])?)))
            }
            Sexp::Str(_, span) => self.err(*span, "expected an integer, found a string"),
        }
    }

    fn term(&mut self, s: &Sexp) -> Result<Term, Diagnostic> {
        match s {
            Sexp::Atom(a, span) => {
                if let Some(v) = a.strip_prefix('?') {
                    if v.is_empty() {
                        return self.err(*span, "`?` needs a name");
                    }
                    return Ok(Term::Var(v.to_string(), *span));
                }
                match a.parse::<i128>() {
                    Ok(n) => Ok(Term::Int(IntExpr::Lit(n), *span)),
                    Err(_) => self.err(*span, format!("expected a term (?var, integer or (op ...)), found `{a}`")),
                }
            }
            Sexp::Str(_, span) => self.err(*span, "a string is only allowed as an instruction name"),
            Sexp::List(items, span) => {
                let Some(Sexp::Atom(head, _)) = items.first() else {
                    return self.err(*span, "expected an operator name at the start of a list");
                };
                match head.as_str() {
                    "i" | "u" => {
                        if items.len() != 3 {
                            return self.err(*span, format!("a type is ({head} BITS LANES)"));
                        }
                        let s = IntExpr::Lit((head == "i") as i128);
                        Ok(Term::Type(s, self.int(&items[1])?, self.int(&items[2])?, *span))
                    }
                    // Either signedness, for rules that hold for both:
                    // (t ?sign BITS LANES), ?sign 1 for signed.
                    "t" => {
                        if items.len() != 4 {
                            return self.err(*span, "a type of either signedness is (t SIGN BITS LANES)");
                        }
                        Ok(Term::Type(self.int(&items[1])?, self.int(&items[2])?, self.int(&items[3])?, *span))
                    }
                    "+" | "-" | "*" | "/" | "%" => Ok(Term::Int(self.int(s)?, *span)),
                    t if TargetIsa::by_name(t).is_some() => {
                        let target = TargetIsa::by_name(t).expect("matched");
                        let name = match items.get(1) {
                            Some(Sexp::Atom(n, _)) | Some(Sexp::Str(n, _)) => n.clone(),
                            _ => return self.err(*span, format!("expected ({t} INTRINSIC operands...)")),
                        };
                        self.heads.push((target, *span));
                        let args = items[2..].iter().map(|a| self.term(a)).collect::<Result<_, _>>()?;
                        Ok(Term::Instr(name, args, *span))
                    }
                    op => {
                        let args = items[1..].iter().map(|a| self.term(a)).collect::<Result<_, _>>()?;
                        Ok(Term::Op(op.to_string(), args, *span))
                    }
                }
            }
        }
    }

    fn cond(&mut self, s: &Sexp) -> Result<Cond, Diagnostic> {
        let Sexp::List(items, span) = s else { return self.err(s.span(), format!("expected a condition list, found {}", s.describe())) };
        let Some(Sexp::Atom(head, _)) = items.first() else { return self.err(*span, "expected a condition such as (= ?n (/ ?vsize ?bw))") };
        let var = |p: &mut Self, i: usize| -> Result<String, Diagnostic> {
            match items.get(i) {
                Some(Sexp::Atom(a, _)) if a.starts_with('?') => {
                    let v = a[1..].to_string();
                    if !p.numeric.contains(&v) {
                        p.numeric.push(v.clone());
                    }
                    Ok(v)
                }
                Some(other) => p.err(other.span(), format!("expected a ?var, found {}", other.describe())),
                None => p.err(*span, format!("`{head}` needs a ?var")),
            }
        };
        match head.as_str() {
            "in" => {
                let v = var(self, 1)?;
                let vals = items[2..].iter().map(|x| self.int(x).and_then(|e| e.eval::<&str>(&[]).or_else(|m| self.err(x.span(), m)))).collect::<Result<Vec<_>, _>>()?;
                if vals.is_empty() {
                    return self.err(*span, "`in` needs at least one value");
                }
                Ok(Cond::In(v, vals))
            }
            "range" => {
                let v = var(self, 1)?;
                if items.len() != 4 {
                    return self.err(*span, "expected (range ?x LO HI)");
                }
                let lo = self.int(&items[2])?.eval::<&str>(&[]).or_else(|m| self.err(items[2].span(), m))?;
                let hi = self.int(&items[3])?.eval::<&str>(&[]).or_else(|m| self.err(items[3].span(), m))?;
                if hi < lo || hi.checked_sub(lo).is_none_or(|d| d > 4096) {
                    return self.err(*span, "a range needs LO <= HI and at most 4096 values");
                }
                Ok(Cond::In(v, (lo..=hi).collect()))
            }
            "=" if matches!(items.get(1), Some(Sexp::Atom(a, _)) if a.starts_with('?')) && items.len() == 3 => {
                let v = var(self, 1)?;
                Ok(Cond::Define(v, self.int(&items[2])?))
            }
            "=" | "!=" | "<" | "<=" | ">" | ">=" => {
                if items.len() != 3 {
                    return self.err(*span, format!("`{head}` takes 2 operands"));
                }
                Ok(Cond::Cmp(head.clone(), self.int(&items[1])?, self.int(&items[2])?))
            }
            other => self.err(*span, format!("unknown condition `{other}`; expected =, !=, <, <=, >, >=, in or range")),
        }
    }
}

/// The line [`join_sources`] puts before each file's text.
pub const SOURCE_MARK: &str = "; misaal source: ";

/// Several rule files read as one (a target's hand-written and synthesized
/// files, or repeated `--rules`): each file's text after a [`SOURCE_MARK`]
/// line naming it, so [`parse_rules`] reports every error at its own file's
/// line and column, not at a line of the joined text.
pub fn join_sources(files: &[(String, String)]) -> String {
    let mut text = String::new();
    for (name, body) in files {
        text.push_str(SOURCE_MARK);
        text.push_str(name);
        text.push('\n');
        text.push_str(body);
        if !body.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// The rule files at `paths`, read and joined by [`join_sources`] under
/// their displayed paths.
pub fn read_sources(paths: &[std::path::PathBuf]) -> Result<String, String> {
    let mut files = Vec::new();
    for p in paths {
        files.push((p.display().to_string(), std::fs::read_to_string(p).map_err(|e| format!("error: cannot read {}: {e}", p.display()))?));
    }
    Ok(join_sources(&files))
}

/// `src` cut at its [`SOURCE_MARK`] lines: (file, text) pieces, the text
/// before the first mark (if any) under `file`.
fn sources<'a>(file: &str, src: &'a str) -> Vec<(String, &'a str)> {
    let mut out = Vec::new();
    let (mut name, mut start, mut at) = (file.to_string(), 0usize, 0usize);
    for line in src.split_inclusive('\n') {
        if let Some(next) = line.strip_prefix(SOURCE_MARK) {
            if at > start {
                out.push((name, &src[start..at]));
            }
            name = next.trim_end().to_string();
            start = at + line.len();
        }
        at += line.len();
    }
    out.push((name, &src[start..]));
    out
}

/// Parses every rule of a file (or of files joined by [`join_sources`]:
/// one target and distinct rule names across them all).
pub fn parse_rules(file: &str, src: &str) -> Result<Vec<Rule>, Diagnostics> {
    // Each item is converted as soon as it is read, and its tree dropped:
    // x86.egg's trees are 11 MB, and held beside the rules they were a
    // small kernel's peak memory. What the target checks below need is
    // kept: each `(ruleset T)` declaration, and each item's result.
    let mut decls: Vec<(&'static TargetIsa, Span, String)> = Vec::new();
    let mut parsed: Vec<(String, Result<Option<(Rule, Heads)>, Diagnostic>)> = Vec::new();
    for (name, text) in sources(file, src) {
        for_each_sexp(&name, text, |item| {
            if let Sexp::List(xs, _) = &item
                && let [Sexp::Atom(h, _), Sexp::Atom(t, span), ..] = &xs[..]
                && h == "ruleset"
                && let Some(t) = TargetIsa::by_name(t)
            {
                decls.push((t, *span, name.clone()));
            }
            parsed.push((name.clone(), parse_rule(&name, &item)));
        })?;
    }
    let mut rules: Vec<Rule> = Vec::new();
    let mut errors = Vec::new();
    // The file's target: the first `(ruleset T)` naming a target, else the
    // first instruction head; every other head must agree.
    let mut target: Option<(&'static TargetIsa, Span, &'static str, String)> = None;
    for (t, span, file) in decls {
        match &target {
            None => target = Some((t, span, "declared", file)),
            Some((first, at, _, at_file)) if *first != t => errors.push(Diagnostic::new(
                &file,
                span,
                format!("`(ruleset {})` in a file declared for {} at {at_file}:{}:{}: a rule file has one target", t.name, first.name, at.line, at.col),
            )),
            Some(_) => {}
        }
    }
    for (file, result) in parsed {
        let file = file.as_str();
        match result {
            Ok(Some((mut r, heads))) => {
                for (t, span) in heads {
                    match &target {
                        None => target = Some((t, span, "first used", file.to_string())),
                        Some((first, at, how, at_file)) if *first != t => errors.push(Diagnostic::new(
                            file,
                            span,
                            format!("`({} ...)` in a file whose rules are for {} ({how} at {at_file}:{}:{}): a rule file has one target", t.name, first.name, at.line, at.col),
                        )),
                        Some(_) => {}
                    }
                }
                r.target = target.as_ref().map_or(&X86, |t| t.0);
                if let Some(prev) = rules.iter().find(|p| p.name == r.name) {
                    let at = if prev.file == r.file { format!("{}:{}", prev.span.line, prev.span.col) } else { format!("{}:{}:{}", prev.file, prev.span.line, prev.span.col) };
                    errors.push(Diagnostic::new(file, r.span, format!("duplicate rule name {:?} (first at {at})", r.name)));
                } else {
                    rules.push(r);
                }
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        let t = target.map_or(&X86, |t| t.0);
        for r in &mut rules {
            r.target = t;
        }
        Ok(rules)
    } else {
        Err(Diagnostics(errors))
    }
}

/// The target of a rule file's text (see [`parse_rules`]); x86 for a file
/// that names no target.
pub fn file_target(file: &str, src: &str) -> Result<&'static TargetIsa, Diagnostics> {
    let rules = parse_rules(file, src)?;
    if let Some(r) = rules.first() {
        return Ok(r.target);
    }
    // No rules: only a declaration can say.
    let items = parse_sexps(file, src)?;
    Ok(items
        .iter()
        .find_map(|i| match i {
            Sexp::List(xs, _) => match &xs[..] {
                [Sexp::Atom(h, _), Sexp::Atom(t, _), ..] if h == "ruleset" => TargetIsa::by_name(t),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or(&X86))
}

type Heads = Vec<(&'static TargetIsa, Span)>;

fn parse_rule(file: &str, item: &Sexp) -> Result<Option<(Rule, Heads)>, Diagnostic> {
    let mut p = P { file, numeric: Vec::new(), heads: Vec::new() };
    let Sexp::List(items, span) = item else { return p.err(item.span(), format!("expected (rewrite ...) or (birewrite ...), found {}", item.describe())) };
    let head = match items.first() {
        Some(Sexp::Atom(h, _)) => h.as_str(),
        _ => return p.err(*span, "expected (rewrite ...) or (birewrite ...)"),
    };
    let bidirectional = match head {
        "rewrite" => false,
        "birewrite" => true,
        "ruleset" | "datatype" | "sort" | "function" | "constructor" | "relation" => return Ok(None),
        other => return p.err(*span, format!("expected (rewrite ...) or (birewrite ...), found `({other} ...)`")),
    };
    if items.len() < 3 {
        return p.err(*span, format!("`{head}` needs a left-hand side and a right-hand side"));
    }
    let lhs = p.term(&items[1])?;
    let rhs = p.term(&items[2])?;
    let mut name = None;
    let mut conds = Vec::new();
    let mut k = 3;
    while k < items.len() {
        let key = match &items[k] {
            Sexp::Atom(a, _) if a.starts_with(':') => a.as_str(),
            other => return p.err(other.span(), format!("expected :name, :when or :ruleset, found {}", other.describe())),
        };
        let Some(val) = items.get(k + 1) else { return p.err(items[k].span(), format!("`{key}` needs a value")) };
        match key {
            ":name" => match val {
                Sexp::Str(s, _) | Sexp::Atom(s, _) => name = Some(s.clone()),
                other => return p.err(other.span(), "expected a rule name string after :name"),
            },
            ":when" => match val {
                Sexp::List(cs, _) => {
                    for c in cs {
                        conds.push(p.cond(c)?);
                    }
                }
                other => return p.err(other.span(), "expected a list of conditions after :when"),
            },
            ":ruleset" => {}
            other => return p.err(items[k].span(), format!("unknown option `{other}`; expected :name, :when or :ruleset")),
        }
        k += 2;
    }
    let Some(name) = name else { return p.err(*span, "every rule needs :name \"...\"") };
    Ok(Some((Rule { name, lhs, rhs, bidirectional, conds, span: *span, file: file.to_string(), target: &X86 }, p.heads)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Joined files keep their own names and lines: rules, parse errors
    /// and cross-file duplicates.
    #[test]
    fn joined_sources_report_each_files_own_lines() {
        let a = "; a\n(rewrite (add (u 8 16) ?a ?b) (x86 _mm_add_epi8 ?a ?b) :name \"add\")\n".to_string();
        let b = "\n\n(rewrite (sub (u 8 16) ?a ?b) (x86 _mm_sub_epi8 ?a ?b) :name \"sub\")\n".to_string();
        let rules = parse_rules("a.egg", &join_sources(&[("a.egg".into(), a.clone()), ("b.egg".into(), b)])).unwrap();
        let at: Vec<(&str, u32)> = rules.iter().map(|r| (r.file.as_str(), r.span.line)).collect();
        assert_eq!(at, [("a.egg", 2), ("b.egg", 3)]);
        let dup = "(rewrite (sub (u 8 16) ?a ?b) (x86 _mm_sub_epi8 ?a ?b) :name \"add\")\n".to_string();
        let err = parse_rules("a.egg", &join_sources(&[("a.egg".into(), a.clone()), ("c.egg".into(), dup)])).unwrap_err().to_string();
        assert_eq!(err, "c.egg:1:1: error: duplicate rule name \"add\" (first at a.egg:2:1)");
        let open = "\n(rewrite (sub (u 8 16) ?a ?b)\n".to_string();
        let err = parse_rules("a.egg", &join_sources(&[("a.egg".into(), a), ("d.egg".into(), open)])).unwrap_err().to_string();
        assert!(err.starts_with("d.egg:3:1: error: unbalanced `(`: the list opened at 2:1"), "{err}");
    }
}
