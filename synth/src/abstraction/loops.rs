//! Rewrite loops among the Halide-level rules: two expansions that undo
//! each other's form (a saturating cast of u32 expanded into one of i32 of
//! a `min`, and that one back into one of u32 of a `max`), or one whose
//! right side holds a term its own left side matches, re-fire on their own
//! output and grow the e-graph by new nested terms at every iteration
//! until the selector's limit (matmul_bias_gelu_matmul: 47k e-nodes, 6 s
//! of extraction, against 12k with the hand rules). Each rule is proved;
//! the set of them does not terminate.
//!
//! Instance A feeds instance B when B's left side matches a new node of
//! A's right side (an operator node, not one of A's variables; below it a
//! variable of A matches anything, as an e-class may). Loops are the
//! strongly connected parts of that graph (a self-feeding instance is
//! one). A loop is broken by dropping the instances that rewrite a term an
//! instruction rule already lowers (the expansion adds nothing there);
//! where none does, the last instance of the loop in file order.

use misaal_rulesets::{Assignment, IntExpr, Rule, Term};
use std::collections::HashSet;

/// A rule side at one instance: numeric variables filled in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ground {
    Var(String),
    Int(i128),
    Node(String, Vec<Ground>),
}

impl Ground {
    /// Whether a target instruction occurs in it.
    pub fn has_instr(&self) -> bool {
        match self {
            Ground::Node(h, kids) => h.starts_with("x86 ") || kids.iter().any(Ground::has_instr),
            _ => false,
        }
    }

    pub(crate) fn nodes<'a>(&'a self, out: &mut Vec<&'a Ground>) {
        if let Ground::Node(_, kids) = self {
            out.push(self);
            kids.iter().for_each(|k| k.nodes(out));
        }
    }
}

/// An op's head: its name, its type and generics, and the shape of each
/// operand (a variable, the op at its root, or a broadcast and its value),
/// e.g. `shr (t 0 8 16) 0 _ broadcast(3)`. Two left sides with one head match the same terms.
pub fn head(g: &Ground) -> Option<String> {
    let Ground::Node(op, kids) = g else { return None };
    let mut out = op.clone();
    for k in kids {
        out.push(' ');
        match k {
            Ground::Int(v) => out.push_str(&v.to_string()),
            Ground::Var(_) => out.push('_'),
            Ground::Node(h, ks) if h == "t" => out.push_str(&format!("{ks:?}")),
            // A broadcast constant is part of the shape: a rule for `x / 2`
            // does not lower `x / 7`.
            Ground::Node(h, ks) if h == "broadcast" => match ks.last() {
                Some(Ground::Int(v)) => out.push_str(&format!("broadcast({v})")),
                _ => out.push_str("broadcast(_)"),
            },
            // A nested op with its type: a blend on a comparison of its own
            // width does not lower one on a comparison of another.
            Ground::Node(h, ks) => match ks.first() {
                Some(Ground::Node(t, tk)) if t == "t" => out.push_str(&format!("{h}{tk:?}")),
                _ => out.push_str(h),
            },
        }
    }
    Some(out)
}

/// An op's head without its operands' shapes: name, type and generics.
pub fn op_key(g: &Ground) -> Option<String> {
    let Ground::Node(op, kids) = g else { return None };
    let mut out = op.clone();
    for k in kids {
        match k {
            Ground::Int(v) => out.push_str(&format!(" {v}")),
            Ground::Node(h, ks) if h == "t" => out.push_str(&format!(" {ks:?}")),
            _ => {}
        }
    }
    Some(out)
}

/// The op nodes of `g`, root first (types left out).
pub fn op_nodes<'a>(g: &'a Ground, out: &mut Vec<&'a Ground>) {
    let mut all = Vec::new();
    g.nodes(&mut all);
    out.extend(all.into_iter().filter(|n| !matches!(n, Ground::Node(h, _) if h == "t")));
}

/// `t` at `env` (None where a numeric expression does not evaluate).
pub fn ground(t: &Term, env: &Assignment, numeric: &[String]) -> Option<Ground> {
    let int = |e: &IntExpr| e.eval(env).ok().map(Ground::Int);
    Some(match t {
        Term::Var(v, _) if numeric.contains(v) => int(&IntExpr::Var(v.clone()))?,
        Term::Var(v, _) => Ground::Var(v.clone()),
        Term::Int(e, _) => int(e)?,
        Term::Type(s, e, n, _) => Ground::Node("t".into(), vec![int(s)?, int(e)?, int(n)?]),
        Term::Instr(n, args, _) => Ground::Node(format!("x86 {}", misaal_rulesets::expand_name(n, env).ok()?), args.iter().map(|a| ground(a, env, numeric)).collect::<Option<_>>()?),
        Term::Op(n, args, _) => Ground::Node(n.clone(), args.iter().map(|a| ground(a, env, numeric)).collect::<Option<_>>()?),
    })
}

/// Both sides of `rule` at `env`.
pub fn sides(rule: &Rule, env: &Assignment) -> Option<(Ground, Ground)> {
    let numeric = rule.numeric_vars();
    Some((ground(&rule.lhs, env, &numeric)?, ground(&rule.rhs, env, &numeric)?))
}

/// Whether `r` is `l` with its variables permuted (a commutation): such a
/// rewrite closes over finitely many terms, whatever it feeds or is fed
/// by, so it is no part of a loop.
pub fn permutes(l: &Ground, r: &Ground) -> bool {
    fn shape(a: &Ground, b: &Ground) -> bool {
        match (a, b) {
            (Ground::Var(_), Ground::Var(_)) => true,
            (Ground::Int(x), Ground::Int(y)) => x == y,
            (Ground::Node(h, ks), Ground::Node(g, ls)) => h == g && ks.len() == ls.len() && ks.iter().zip(ls).all(|(k, l)| shape(k, l)),
            _ => false,
        }
    }
    fn vars(g: &Ground, out: &mut Vec<String>) {
        match g {
            Ground::Var(v) => out.push(v.clone()),
            Ground::Node(_, ks) => ks.iter().for_each(|k| vars(k, out)),
            Ground::Int(_) => {}
        }
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    vars(l, &mut a);
    vars(r, &mut b);
    a.sort();
    b.sort();
    shape(l, r) && a == b
}

/// Whether pattern `p` may match term `t`: a pattern variable binds
/// anything (consistently), and a variable of `t` (an e-class we cannot
/// see into) may be anything.
fn may_match(p: &Ground, t: &Ground, binds: &mut Vec<(String, Ground)>) -> bool {
    match (p, t) {
        (Ground::Var(v), _) => match binds.iter().find(|(b, _)| b == v) {
            Some((_, old)) => old == t || matches!(t, Ground::Var(_)) || matches!(old, Ground::Var(_)),
            None => {
                binds.push((v.clone(), t.clone()));
                true
            }
        },
        (_, Ground::Var(_)) => true,
        (Ground::Int(a), Ground::Int(b)) => a == b,
        (Ground::Node(h, ks), Ground::Node(g, ls)) => h == g && ks.len() == ls.len() && ks.iter().zip(ls).all(|(k, l)| may_match(k, l, binds)),
        _ => false,
    }
}

/// Whether `b_lhs` matches a node `a_rhs` creates.
pub fn feeds(a_rhs: &Ground, b_lhs: &Ground) -> bool {
    let mut nodes = Vec::new();
    a_rhs.nodes(&mut nodes);
    nodes.iter().any(|n| may_match(b_lhs, n, &mut Vec::new()))
}

/// Strongly connected parts with a cycle (Tarjan), over `edges[a]`.
fn loops(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct St<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut St, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for k in 0..s.edges[v].len() {
            let w = s.edges[v][k];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on[w] => s.low[v] = s.low[v].min(i),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut part = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                part.push(w);
                if w == v {
                    break;
                }
            }
            if part.len() > 1 || s.edges[v].contains(&v) {
                part.sort();
                s.out.push(part);
            }
        }
    }
    let n = edges.len();
    let mut s = St { edges, index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), next: 0, out: Vec::new() };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The instances (indices into `rewrites`, Halide-level (lhs, rhs) pairs
/// in file order) to drop so that no loop remains. `lowered`: left sides
/// an instruction rule rewrites.
pub fn breakers(rewrites: &[(Ground, Ground)], lowered: &HashSet<Ground>) -> Vec<usize> {
    // Left sides by root key (op and type): only those can match a node.
    let key = |g: &Ground| match g {
        Ground::Node(h, kids) => Some((h.clone(), kids.first().cloned())),
        _ => None,
    };
    let mut by_key: std::collections::HashMap<(String, Option<Ground>), Vec<usize>> = std::collections::HashMap::new();
    for (i, (l, _)) in rewrites.iter().enumerate() {
        if let Some(k) = key(l) {
            by_key.entry(k).or_default().push(i);
        }
    }
    let succ: Vec<Vec<usize>> = rewrites
        .iter()
        .map(|(_, r)| {
            let mut nodes = Vec::new();
            r.nodes(&mut nodes);
            let mut out: Vec<usize> = nodes.iter().filter_map(|n| by_key.get(&key(n)?)).flatten().copied().filter(|&b| feeds(r, &rewrites[b].0)).collect();
            out.sort();
            out.dedup();
            out
        })
        .collect();
    let mut dropped: Vec<usize> = Vec::new();
    loop {
        let live: Vec<usize> = (0..rewrites.len()).filter(|i| !dropped.contains(i)).collect();
        let pos: std::collections::HashMap<usize, usize> = live.iter().enumerate().map(|(j, &i)| (i, j)).collect();
        let edges: Vec<Vec<usize>> = live.iter().map(|&a| succ[a].iter().filter_map(|b| pos.get(b).copied()).collect()).collect();
        let parts = loops(&edges);
        if parts.is_empty() {
            dropped.sort();
            return dropped;
        }
        for part in parts {
            let members: Vec<usize> = part.iter().map(|&j| live[j]).collect();
            let direct: Vec<usize> = members.iter().copied().filter(|&i| lowered.iter().any(|l| may_match(&rewrites[i].0, l, &mut Vec::new()) && may_match(l, &rewrites[i].0, &mut Vec::new()))).collect();
            if direct.is_empty() {
                dropped.push(*members.last().expect("a loop has members"));
            } else {
                dropped.extend(direct);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Rule {
        misaal_rulesets::parse_rules("t.egg", text).unwrap_or_else(|d| panic!("{d}")).pop().unwrap()
    }
    fn inst(text: &str) -> (Ground, Ground) {
        let r = parse(text);
        let env = misaal_rulesets::instantiations(&r, &[128, 256]).unwrap().into_iter().next().expect("an instance");
        sides(&r, &env).unwrap()
    }

    #[test]
    fn two_expansions_that_undo_each_other_loop_and_the_lowered_one_goes() {
        let uu = inst("(rewrite (saturating_cast (u 32 8) 0 16 ?x) (saturating_cast (i 32 8) 0 16 (min (u 32 8) ?x (broadcast (u 32 8) 65535))) :name \"uu\" :ruleset x86)");
        let iu = inst("(rewrite (saturating_cast (i 32 8) 0 16 ?x) (saturating_cast (u 32 8) 0 16 (max (i 32 8) ?x (broadcast (i 32 8) 0))) :name \"iu\" :ruleset x86)");
        let split = inst("(rewrite (add (u 32 16) ?a ?b) (concat (u 32 8) 8 (add (u 32 8) (slice (u 32 8) 16 0 1 ?a) (slice (u 32 8) 16 0 1 ?b)) (add (u 32 8) (slice (u 32 8) 16 8 1 ?a) (slice (u 32 8) 16 8 1 ?b))) :name \"s\" :ruleset x86)");
        assert!(feeds(&uu.1, &iu.0) && feeds(&iu.1, &uu.0));
        assert!(!feeds(&split.1, &split.0), "a split feeds only narrower ops");
        let packus = inst("(rewrite (saturating_cast (i 32 8) 0 16 ?x) (x86 _mm256_packus_epi32 ?x ?x) :name \"p\" :ruleset x86)");
        let lowered: HashSet<Ground> = [packus.0.clone()].into();
        assert_eq!(breakers(&[uu.clone(), iu.clone(), split.clone()], &lowered), vec![1]);
        // With nothing lowered, the later one of the loop goes.
        assert_eq!(breakers(&[uu, iu, split], &HashSet::new()), vec![1]);
    }

    #[test]
    fn a_commutation_permutes_and_a_split_does_not() {
        let c = inst("(rewrite (add (u 32 8) ?a ?b) (add (u 32 8) ?b ?a) :name \"c\" :ruleset x86)");
        assert!(permutes(&c.0, &c.1));
        let d = inst("(rewrite (sub (u 32 8) ?a ?b) (add (u 32 8) ?b ?a) :name \"d\" :ruleset x86)");
        assert!(!permutes(&d.0, &d.1));
    }

    #[test]
    fn a_rule_whose_output_it_matches_loops_alone() {
        let r = inst("(rewrite (rounding_shift_right (i 32 8) 0 ?x ?y) (add (i 32 8) (shl (i 32 8) 0 ?x ?y) (rounding_shift_right (i 32 8) 0 (shr (i 32 8) 0 ?x ?y) (broadcast (u 32 8) 1))) :name \"r\" :ruleset x86)");
        assert!(feeds(&r.1, &r.0));
        assert_eq!(breakers(&[r], &HashSet::new()), vec![0]);
    }
}
