//! Abstraction: concrete proved rules folded into abstract rules over
//! element width, lane count, vector size and signedness, each instance
//! proved before it is written.
//!
//! 1. [`generalize`]: each concrete rule becomes a template by fitting
//!    its numbers to its own parameters ([`fit`]); concrete rules with the
//!    same template are one abstract rule (their union is the provenance).
//! 2. [`Abstract::candidates`]: every assignment of the template's free
//!    variables (`?bw` 8..64, `?vsize` 128..512, `?sign` 0/1) whose
//!    instruction names exist and whose specs met their oracle here.
//! 3. The caller proves each candidate with the verifier (`run_job`).
//! 4. [`cover`]: the proved assignments, as few boxes (products of value
//!    sets, written as `(in ?v ...)`) as cover them exactly, so the written
//!    rule has no instance that was not proved.

pub mod fallback;
pub mod fit;
pub mod loops;
pub mod run;

use crate::target::{NameStyle, SynthTarget};
use fit::{Params, Slot, fit, generic_slot, lanes_of_vsize, mm_width, params_for};
use misaal_isa::SpecLibrary;
use misaal_rulesets::{Assignment, IntExpr, Rule, Term, expand_name};
use std::collections::BTreeMap;

/// A concrete rule read from a phase's output, with the comment above it.
#[derive(Clone, Debug)]
pub struct Concrete {
    pub rule: Rule,
    /// The comment line written above the rule (its provenance).
    pub comment: String,
    /// The phase that wrote it (`enumerate`, `swizzles`).
    pub phase: String,
}

/// Reads a rule file a synthesis phase wrote, keeping each rule's comment.
pub fn read_concrete(file: &str, text: &str, phase: &str) -> Result<Vec<Concrete>, String> {
    let rules = misaal_rulesets::parse_rules(file, text).map_err(|d| d.to_string())?;
    let lines: Vec<&str> = text.lines().collect();
    Ok(rules
        .into_iter()
        .map(|rule| {
            // The comment is the line above the rule's first line (1-based).
            let above = (rule.span.line as usize).checked_sub(2).and_then(|i| lines.get(i)).copied().unwrap_or("");
            let comment = above.strip_prefix(';').map(|c| c.trim().to_string()).unwrap_or_default();
            Concrete { rule, comment, phase: phase.into() }
        })
        .collect())
}

/// The similarity classes a concrete rule's comment names.
pub fn classes_of(comment: &str) -> String {
    if let Some(rest) = comment.split("classes ").nth(1) {
        return rest.split(')').next().unwrap_or("").to_string();
    }
    // Swizzle rules: `from INSTR (class)`.
    comment.rsplit_once('(').and_then(|(_, c)| c.strip_suffix(')')).unwrap_or("").to_string()
}

/// An abstract rule before its domain is settled.
#[derive(Clone, Debug)]
pub struct Abstract {
    pub name: String,
    pub lhs: String,
    pub rhs: String,
    /// Defined variables: `?n` from `?vsize`, and each name template's variable.
    pub defs: Vec<(String, IntExpr)>,
    /// Free variables, each with its full domain.
    pub free: Vec<(String, Vec<i128>)>,
    /// The concrete rules it came from (indices into the input).
    pub members: Vec<usize>,
    /// For a name variant, the template it was made from (its members are
    /// that template's; none need be its instances).
    pub variant_of: Option<String>,
    /// The target: its rule head and ruleset, and the widths of `?vsize`.
    pub target: &'static SynthTarget,
}

/// Domains of the free variables before proof.
const BW: [i128; 4] = [8, 16, 32, 64];
const SIGN: [i128; 2] = [0, 1];

pub fn render_int(e: &IntExpr) -> String {
    match e {
        IntExpr::Lit(x) => x.to_string(),
        IntExpr::Var(v) => format!("?{v}"),
        IntExpr::Op(o, a, b) => format!("({o} {} {})", render_int(a), render_int(b)),
    }
}

/// A concrete rule's text (for rules with nothing to fit).
pub fn render_term(t: &Term) -> String {
    render_term_for(t, "x86")
}

/// [`render_term`] under the rule head `head`.
pub fn render_term_for(t: &Term, head: &str) -> String {
    match t {
        Term::Var(v, _) => format!("?{v}"),
        Term::Int(e, _) => render_int(e),
        Term::Type(s, e, n, _) => render_type(s, e, n),
        Term::Instr(name, args, _) => render_app(&format!("{head} {}", quote(name)), args.iter().map(|a| render_term_for(a, head))),
        Term::Op(name, args, _) => render_app(name, args.iter().map(|a| render_term_for(a, head))),
    }
}

fn render_type(s: &IntExpr, e: &IntExpr, n: &IntExpr) -> String {
    match s {
        IntExpr::Lit(0) => format!("(u {} {})", render_int(e), render_int(n)),
        IntExpr::Lit(1) => format!("(i {} {})", render_int(e), render_int(n)),
        _ => format!("(t {} {} {})", render_int(s), render_int(e), render_int(n)),
    }
}

fn render_app(head: &str, args: impl Iterator<Item = String>) -> String {
    let mut s = format!("({head}");
    for a in args {
        s.push(' ');
        s.push_str(&a);
    }
    s.push(')');
    s
}

fn quote(name: &str) -> String {
    if name.contains('{') { format!("\"{name}\"") } else { name.to_string() }
}

struct Gen<'a> {
    target: &'static SynthTarget,
    p: Params,
    lanes_fitted: bool,
    halide: &'a SpecLibrary,
    defs: Vec<(String, IntExpr)>,
    /// Values lifted into the free variable `?c` (see [`lifted`]).
    lift: Vec<i128>,
}

impl Gen<'_> {
    fn num(&self, slot: Slot, e: &IntExpr) -> IntExpr {
        match e {
            IntExpr::Lit(x) if slot == Slot::Value && self.lift.contains(x) => IntExpr::Var("c".into()),
            IntExpr::Lit(x) if slot == Slot::Lanes && self.lanes_fitted && *x <= 2 && self.target.names() != NameStyle::X86 => fit::fit_lanes(*x, &self.p),
            IntExpr::Lit(x) => fit(slot, *x, &self.p, self.lanes_fitted),
            other => other.clone(),
        }
    }

    fn term(&mut self, t: &Term, slot: Slot) -> String {
        match t {
            Term::Var(v, _) => format!("?{v}"),
            Term::Int(e, _) => render_int(&self.num(slot, e)),
            Term::Type(s, e, n, _) => render_type(&self.num(Slot::Sign, s), &self.num(Slot::Bits, e), &self.num(Slot::Lanes, n)),
            Term::Instr(name, args, _) => {
                let n = match self.target.names() {
                    NameStyle::X86 => self.name(name),
                    NameStyle::Arm => self.arm_name(name),
                    NameStyle::Hvx => self.hvx_name(name),
                };
                let args: Vec<String> = args.iter().map(|a| self.term(a, Slot::Value)).collect();
                render_app(&format!("{} {}", self.target.name(), quote(&n)), args.into_iter())
            }
            Term::Op(name, args, _) => {
                let total = self.halide.generic(name).map(|g| g.generics.len()).unwrap_or(0);
                let mut filled = 0;
                let mut out = Vec::new();
                for a in args {
                    let s = match a {
                        Term::Type(..) if filled < total => {
                            filled += 3;
                            Slot::Value
                        }
                        Term::Int(..) if filled < total => {
                            filled += 1;
                            generic_slot(self.halide, name, filled - 1)
                        }
                        _ => {
                            filled = total;
                            Slot::Value
                        }
                    };
                    out.push(self.term(a, s));
                }
                render_app(name, out.into_iter())
            }
        }
    }

    /// `vaddq_u16` -> `vadd{q}_{su}{bw}`: the first part's `q` (or its
    /// absence) is `{q}` when it agrees with `?vsize`, the type suffix's
    /// letter `{su}` when it agrees with `?sign`, and its digits are fitted
    /// as x86's are. The template at the rule's own parameters is the name.
    fn arm_name(&mut self, name: &str) -> String {
        let (first, rest) = name.split_once('_').unwrap_or((name, ""));
        let mut out = match (first.strip_suffix('q'), self.p.vsize) {
            (Some(base), 128) => format!("{base}{{q}}"),
            (None, 64) => format!("{first}{{q}}"),
            _ => first.to_string(),
        };
        if rest.is_empty() {
            return out;
        }
        let (middle, suffix) = rest.rsplit_once('_').unwrap_or(("", rest));
        out.push('_');
        if !middle.is_empty() {
            out.push_str(middle);
            out.push('_');
        }
        let mut chars = suffix.chars();
        match (chars.next(), chars.as_str()) {
            (Some(l @ ('u' | 's')), digits) if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) => {
                if (l == 's') as i128 == self.p.sign {
                    out.push_str("{su}");
                } else {
                    out.push(l);
                }
                let fitted = self.digits(digits);
                out.push_str(&fitted);
            }
            _ => out.push_str(suffix),
        }
        out
    }

    /// `Q6_Vuh_vadd_VuhVuh_sat` -> `Q6_V{ty}_vadd_V{ty}V{ty}_sat`: an
    /// element type of `?bw` bits is `{ty}` (`u` for unsigned) when its
    /// signedness is `?sign`'s, or `{e}` (the signed letter whatever
    /// `?sign`) for a signed letter in an unsigned rule.
    fn hvx_name(&mut self, name: &str) -> String {
        let b: Vec<char> = name.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            if matches!(b[i], 'V' | 'W') && i + 1 < b.len() {
                let u = b[i + 1] == 'u';
                let k = i + 1 + u as usize;
                let width = match b.get(k) {
                    Some('b') => 8,
                    Some('h') => 16,
                    Some('w') => 32,
                    _ => 0,
                };
                let ends = b.get(k + 1).is_none_or(|c| *c == '_' || c.is_ascii_uppercase());
                if width != 0 && ends && width == self.p.bw {
                    out.push(b[i]);
                    let sign = (!u) as i128;
                    out.push_str(if sign == self.p.sign { "{ty}" } else if !u { "{e}" } else { "u" });
                    if sign != self.p.sign && u {
                        out.push(b[k]);
                    }
                    i = k + 1;
                    continue;
                }
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }

    /// The digits of a name fitted to the parameters (`{bw}`, `{bw2}`...).
    fn digits(&mut self, digits: &str) -> String {
        let mut out = String::new();
        self.flush_digits(&mut digits.to_string(), &mut out);
        out
    }

    /// Appends `digits` (a run of a name's digits) to `out` as the
    /// parameter expression they fit, defining a derived parameter
    /// (`?bw2`, ...) where needed, and empties `digits`.
    fn flush_digits(&mut self, digits: &mut String, out: &mut String) {
        if digits.is_empty() {
            return;
        }
        let v: i128 = digits.parse().expect("digits");
        let e = fit(Slot::NameDigits, v, &self.p, self.lanes_fitted);
        match &e {
            IntExpr::Lit(_) => out.push_str(digits),
            IntExpr::Var(v) => out.push_str(&format!("{{{v}}}")),
            IntExpr::Op(..) => {
                let var = match render_int(&e).as_str() {
                    "(* 2 ?bw)" => "bw2",
                    "(/ ?bw 2)" => "bwh",
                    "(* 4 ?bw)" => "bw4",
                    "(/ ?vsize 2)" => "vhalf",
                    _ => "k",
                }
                .to_string();
                if !self.defs.iter().any(|(d, _)| *d == var) {
                    self.defs.push((var.clone(), e.clone()));
                }
                out.push_str(&format!("{{{var}}}"));
            }
        }
        digits.clear();
    }

    /// `_mm256_cvtepu8_epi16` -> `_{mm}_cvtepu{bw}_epi{bw2}`, defining `?bw2`.
    fn name(&mut self, name: &str) -> String {
        let Some((w, rest)) = mm_width(name) else { return name.to_string() };
        let mut out = if w == self.p.vsize { "_{mm}_".to_string() } else { name[..name.len() - rest.len()].to_string() };
        let mut digits = String::new();
        for c in rest.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                self.flush_digits(&mut digits, &mut out);
                out.push(c);
            }
        }
        self.flush_digits(&mut digits, &mut out);
        out
    }
}

/// Constants to lift into `?c`: an operand value (a broadcast's, an
/// immediate's) found on both sides and below the element width, as a
/// shift count is: `shr(x, 3) -> srli(x, 3)` is one rule for every count,
/// whose instances the verifier then settles one by one.
fn lifted(lhs: &Term, rhs: &Term, halide: &SpecLibrary, bw: i128) -> Vec<i128> {
    fn values(t: &Term, halide: &SpecLibrary, out: &mut Vec<i128>) {
        match t {
            Term::Instr(_, args, _) => {
                for a in args {
                    match a {
                        Term::Int(IntExpr::Lit(x), _) => out.push(*x),
                        other => values(other, halide, out),
                    }
                }
            }
            Term::Op(name, args, _) => {
                let total = halide.generic(name).map(|g| g.generics.len()).unwrap_or(0);
                let mut filled = 0;
                for a in args {
                    match a {
                        Term::Type(..) if filled < total => filled += 3,
                        Term::Int(..) if filled < total => filled += 1,
                        Term::Int(IntExpr::Lit(x), _) => out.push(*x),
                        other => {
                            filled = total;
                            values(other, halide, out)
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let (mut l, mut r) = (Vec::new(), Vec::new());
    values(lhs, halide, &mut l);
    values(rhs, halide, &mut r);
    let mut out: Vec<i128> = l.into_iter().filter(|x| (0..bw).contains(x) && r.contains(x)).collect();
    out.sort();
    out.dedup();
    // One variable only: two different lifted values would need two.
    out.truncate(1);
    out
}

/// The left side with every shift's amount signedness (its S2 generic
/// and the type of the broadcast it shifts by) as `?sign2`, if it has a
/// shift whose S2 was fitted to `?sign`; likewise the broadcast `q` of a
/// multiply-shift (no S2 generic: Halide types it `u32` where the
/// enumeration typed it like the operands, and only its bits count).
fn amount_sign_variant(lhs: &str) -> Option<String> {
    const SHIFTS: [&str; 6] = ["shl", "shr", "rounding_shift_right", "rounding_shift_left", "widening_shift_left", "widening_shift_right"];
    const MUL_SHIFTS: [&str; 2] = ["mul_shift_right", "rounding_mul_shift_right"];
    let mut out = lhs.to_string();
    let mut any = MUL_SHIFTS.iter().any(|op| out.contains(&format!("({op} (t ?sign ?bw ?n) ")) && out.contains("(broadcast (t ?sign ?bw ?n) "));
    for op in SHIFTS {
        let from = format!("({op} (t ?sign ?bw ?n) ?sign ");
        if out.contains(&from) {
            out = out.replace(&from, &format!("({op} (t ?sign ?bw ?n) ?sign2 "));
            any = true;
        }
    }
    any.then(|| out.replace("(broadcast (t ?sign ?bw ?n) ", "(broadcast (t ?sign2 ?bw ?n) "))
}

/// `enum.add-min-not.u8x16.mm_adds_epu8` -> `add-min-not`; the op chain
/// part of a concrete rule's name.
fn lhs_part(c: &Concrete) -> String {
    let mut parts = c.rule.name.split('.');
    match (parts.next(), parts.next()) {
        (Some("enum"), Some(ops)) => ops.to_string(),
        _ => match &c.rule.lhs {
            Term::Op(op, ..) => op.clone(),
            _ => "rule".into(),
        },
    }
}

fn rhs_part(t: &Term, out: &mut Vec<String>) {
    match t {
        Term::Instr(name, args, _) => {
            let base = mm_width(name).map(|(_, r)| r).unwrap_or(name);
            let short: String = base.chars().filter(|c| !c.is_ascii_digit()).collect();
            if !out.contains(&short) {
                out.push(short);
            }
            args.iter().for_each(|a| rhs_part(a, out));
        }
        Term::Op(_, args, _) => args.iter().for_each(|a| rhs_part(a, out)),
        _ => {}
    }
}

/// Concrete x86 rules into templates; those with the same template merge.
pub fn generalize(concrete: &[Concrete], halide: &SpecLibrary) -> Vec<Abstract> {
    generalize_for(concrete, halide, &crate::target::X86)
}

/// [`generalize`] for the rules of any target.
pub fn generalize_for(concrete: &[Concrete], halide: &SpecLibrary, target: &'static SynthTarget) -> Vec<Abstract> {
    let mut by_key: BTreeMap<String, Abstract> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (k, c) in concrete.iter().enumerate() {
        let r = &c.rule;
        let (lhs, rhs, defs, free) = match params_for(&r.lhs, &r.rhs, target) {
            Some(p) => {
                let n_def = lanes_of_vsize(&p);
                let lift = lifted(&r.lhs, &r.rhs, halide, p.bw);
                let mut g = Gen { target, p, lanes_fitted: n_def.is_some(), halide, defs: Vec::new(), lift };
                let lhs = g.term(&r.lhs, Slot::Value);
                let rhs = g.term(&r.rhs, Slot::Value);
                let mut defs = Vec::new();
                let text = format!("{lhs} {rhs} {}", g.defs.iter().map(|(_, e)| render_int(e)).collect::<Vec<_>>().join(" "));
                if let Some(nd) = n_def.filter(|_| text.contains("?n ") || text.contains("?n)")) {
                    defs.push(("n".to_string(), nd));
                }
                defs.extend(g.defs);
                let all = format!("{text} {}", defs.iter().map(|(_, e)| render_int(e)).collect::<Vec<_>>().join(" "));
                let mut free = Vec::new();
                let uses = |v: &str| all.contains(&format!("?{v} ")) || all.contains(&format!("?{v})")) || all.contains(&format!("{{{v}}}"));
                if uses("bw") {
                    // The rule's own width is always tried (u128 broadcasts).
                    let mut d = BW.to_vec();
                    if !d.contains(&p.bw) {
                        d.push(p.bw);
                    }
                    free.push(("bw".to_string(), d));
                }
                if uses("vsize") || all.contains("{mm}") {
                    free.push(("vsize".to_string(), target.vector_widths().to_vec()));
                }
                if uses("sign") {
                    free.push(("sign".to_string(), SIGN.to_vec()));
                }
                // Only a lifted constant: `?c` is also the third pattern
                // variable of a three-input rule (acc + dot product).
                if uses("c") && !g.lift.is_empty() {
                    free.push(("c".to_string(), (0..64).collect()));
                }
                (lhs, rhs, defs, free)
            }
            None => (render_term_for(&r.lhs, target.name()), render_term_for(&r.rhs, target.name()), Vec::new(), Vec::new()),
        };
        let key = format!("{lhs} => {rhs} | {}", defs.iter().map(|(v, e)| format!("{v}={}", render_int(e))).collect::<Vec<_>>().join(","));
        if let Some(a) = by_key.get_mut(&key) {
            a.members.push(k);
            continue;
        }
        let mut instrs = Vec::new();
        rhs_part(&r.rhs, &mut instrs);
        let name = format!("synth.{}.{}", lhs_part(c), if instrs.is_empty() { "halide".into() } else { instrs.join("-") });
        // Intel marks some 64-bit element forms with a trailing `x`
        // (`set1_epi64x`, `set_epi64x`): the same name without it is the
        // family's other widths (`set1_epi8`). Tried as a variant; the
        // verifier settles which instances exist and hold.
        if rhs.contains("}x\"") {
            let vkey = format!("{key} | variant");
            let vrhs = rhs.replace("}x\"", "}\"");
            order.push(vkey.clone());
            let v = Abstract { name: format!("{name}.widths"), lhs: lhs.clone(), rhs: vrhs, defs: defs.clone(), free: free.clone(), members: vec![k], variant_of: Some(name.clone()), target };
            by_key.insert(vkey, v);
        }
        // Enumeration types a shift amount like the shifted value; Halide
        // also shifts by an amount of the other signedness (S2 != S,
        // `shr<1, 32, N, 0>`). Tried as a variant with its own ?sign2.
        if let Some(vlhs) = amount_sign_variant(&lhs) {
            let vkey = format!("{key} | amount-sign");
            order.push(vkey.clone());
            let mut vfree = free.clone();
            vfree.push(("sign2".to_string(), SIGN.to_vec()));
            let v = Abstract { name: format!("{name}.amount-sign"), lhs: vlhs, rhs: rhs.clone(), defs: defs.clone(), free: vfree, members: vec![k], variant_of: Some(name.clone()), target };
            by_key.insert(vkey, v);
        }
        order.push(key.clone());
        by_key.insert(key, Abstract { name, lhs, rhs, defs, free, members: vec![k], variant_of: None, target });
    }
    let mut out: Vec<Abstract> = order.into_iter().map(|k| by_key.remove(&k).expect("key")).collect();
    // Distinct names: the op chain and instructions can coincide (u and i
    // forms whose types did not merge).
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for a in &mut out {
        let k = seen.entry(a.name.clone()).or_insert(0);
        *k += 1;
        if *k > 1 {
            a.name = format!("{}.{}", a.name, k);
        }
    }
    out
}

impl Abstract {
    /// The rule text with the given domains for the free variables.
    pub fn text(&self, name: &str, domains: &[(String, Vec<i128>)]) -> String {
        let mut conds: Vec<String> = domains.iter().map(|(v, d)| format!("(in ?{v} {})", d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "))).collect();
        conds.extend(self.defs.iter().map(|(v, e)| format!("(= ?{v} {})", render_int(e))));
        if self.free.iter().any(|(v, _)| v == "sign2") {
            // The other signedness only: the same one is the template's.
            conds.push("(!= ?sign2 ?sign)".into());
        }
        if self.free.iter().any(|(v, _)| v == "c") && self.free.iter().any(|(v, _)| v == "bw") {
            conds.push("(< ?c ?bw)".into());
        }
        let when = if conds.is_empty() { String::new() } else { format!(" :when ({})", conds.join(" ")) };
        format!("(rewrite {} {}{when} :name {name:?} :ruleset {})", self.lhs, self.rhs, self.target.name())
    }

    /// The template as a rule over the full domains.
    pub fn full_rule(&self) -> Result<Rule, String> {
        let text = self.text(&self.name, &self.free);
        let mut r = misaal_rulesets::parse_rules("abstract", &text).map_err(|d| format!("{}: {d}", self.name))?;
        r.pop().ok_or_else(|| format!("{}: no rule", self.name))
    }

    /// The assignments worth proving: every x86 name the template makes
    /// exists, and each such spec passes `usable` (met its oracle here).
    pub fn candidates(&self, rule: &Rule, x86: &SpecLibrary, usable: &dyn Fn(&str) -> bool) -> Vec<Assignment> {
        let envs = misaal_rulesets::instantiations(rule, self.target.vector_widths()).unwrap_or_default();
        envs.into_iter()
            .filter(|env| {
                let mut ok = true;
                walk_names(&rule.lhs, &mut |n| ok &= expand_name(n, env).is_ok_and(|n| x86.instr(&n).is_some() && usable(&n)));
                walk_names(&rule.rhs, &mut |n| ok &= expand_name(n, env).is_ok_and(|n| x86.instr(&n).is_some() && usable(&n)));
                ok
            })
            .collect()
    }
}

fn walk_names(t: &Term, f: &mut dyn FnMut(&str)) {
    match t {
        Term::Instr(n, args, _) => {
            f(n);
            args.iter().for_each(|a| walk_names(a, f));
        }
        Term::Op(_, args, _) => args.iter().for_each(|a| walk_names(a, f)),
        _ => {}
    }
}

/// The free variables' values in `env`, in `vars` order.
pub fn project(env: &Assignment, vars: &[String]) -> Vec<i128> {
    vars.iter().map(|v| env.iter().find(|(n, _)| **n == **v).map(|(_, x)| *x).expect("free variable bound")).collect()
}

/// Boxes (one value set per variable) whose union is exactly `points`:
/// one box when the points are a product of their projections, else split
/// on the first variable, grouping its values whose remaining points agree.
pub fn cover(points: &[Vec<i128>], arity: usize, universe: &dyn Fn(&[i128]) -> bool) -> Vec<Vec<Vec<i128>>> {
    let mut pts: Vec<Vec<i128>> = points.to_vec();
    pts.sort();
    pts.dedup();
    if pts.is_empty() {
        return Vec::new();
    }
    if arity == 0 {
        return vec![Vec::new()];
    }
    let proj: Vec<Vec<i128>> = (0..arity)
        .map(|i| {
            let mut v: Vec<i128> = pts.iter().map(|p| p[i]).collect();
            v.sort();
            v.dedup();
            v
        })
        .collect();
    // A box stands for its points that meet the rule's conditions
    // (`universe`, e.g. `?c < ?bw`): it is exact when those are all proved.
    if proj.iter().map(|v| v.len()).product::<usize>() <= 4096 && product(&proj).iter().filter(|p| universe(p)).count() == pts.len() {
        return vec![proj];
    }
    // Split on the first variable: values with the same rest go together.
    let mut groups: BTreeMap<Vec<Vec<i128>>, Vec<i128>> = BTreeMap::new();
    for x in &proj[0] {
        let rest: Vec<Vec<i128>> = pts.iter().filter(|p| p[0] == *x).map(|p| p[1..].to_vec()).collect();
        groups.entry(rest).or_default().push(*x);
    }
    let mut out = Vec::new();
    for (rest, xs) in groups {
        // A rest point counts when the conditions admit it for any value
        // of the group: stricter than needed, never too lax.
        let sub = |p: &[i128]| {
            xs.iter().any(|x| {
                let mut full = vec![*x];
                full.extend_from_slice(p);
                universe(&full)
            })
        };
        for b in cover(&rest, arity - 1, &sub) {
            let mut bx = vec![xs.clone()];
            bx.extend(b);
            out.push(bx);
        }
    }
    // By the first variable's values, so the output does not depend on
    // how the groups were keyed.
    out.sort();
    out
}

fn product(sets: &[Vec<i128>]) -> Vec<Vec<i128>> {
    sets.iter().fold(vec![Vec::new()], |acc, s| acc.iter().flat_map(|p| s.iter().map(move |x| [p.clone(), vec![*x]].concat())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_is_exact() {
        let pts = vec![vec![8, 128], vec![8, 256], vec![16, 128], vec![16, 256], vec![64, 128]];
        let boxes = cover(&pts, 2, &|_| true);
        assert_eq!(boxes, vec![vec![vec![8, 16], vec![128, 256]], vec![vec![64], vec![128]]]);
        let mut back: Vec<Vec<i128>> = boxes.iter().flat_map(|b| b[0].iter().flat_map(move |x| b[1].iter().map(move |y| vec![*x, *y]))).collect();
        back.sort();
        let mut want = pts.clone();
        want.sort();
        assert_eq!(back, want);
    }
}
