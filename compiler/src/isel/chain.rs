//! Whether a ruleset derives one rule side from the other by chaining its
//! rules, as the selector would: both sides go into one e-graph (each
//! variable an opaque leaf), the ruleset's proved instances that their
//! Halide ops reach are loaded, the e-graph is saturated within limits,
//! and the two sides must end in one e-class. Rediscovery uses it for hand
//! rules that no single synthesized rule matches but several in a row do
//! (a concat/slice identity is a split rule followed by the half-of-a-
//! concatenation identity).
//!
//! Equality in the e-graph is exact, never approximate: each step is a
//! proved rule instance, so a `true` is a derivation. A `false` says only
//! that none was found within the limits.

use super::RULESET;
use super::encode::{LEAF, SORT, declarations, instr_ctor};
use super::rules::{Pat, RuleBook, Verdicts, program};
use super::schedule::{Limits, StopReason, run};
use super::Target;
use std::collections::BTreeSet;

/// The side as an egglog term, each variable a `Leaf` named after it.
fn term(p: &Pat) -> String {
    p.render_with(&|v| format!("({LEAF} {v:?} 0)"))
}

/// What a chaining attempt found.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub derived: bool,
    /// Rule instances loaded for the two sides' ops.
    pub instances: usize,
    pub stop: StopReason,
}

/// Whether `book`'s proved instances rewrite `lhs` into `rhs` (or both
/// into one term) within `limits`.
pub fn derives(target: &Target, book: &RuleBook, lhs: &Pat, rhs: &Pat, verdicts: Verdicts, limits: &Limits) -> Result<Chain, String> {
    let mut heads = lhs.halide_heads();
    heads.extend(rhs.halide_heads());
    heads.sort();
    heads.dedup();
    let loaded = book.load(&target.rule_env(), &heads, None, verdicts, false, None)?;
    let mut egraph = egglog::EGraph::default();
    egraph.set_num_threads(1);
    egraph.parse_and_run_program(None, &declarations(&target.halide)).map_err(|e| format!("egglog declarations: {e}"))?;
    egraph.parse_and_run_program(None, &program(&loaded, &target.instrs, &|_| 1.0, RULESET)).map_err(|e| format!("egglog rules: {e}"))?;
    // Instructions the sides name that no loaded rule produces.
    let declared = loaded.instructions();
    let mut extra: BTreeSet<String> = lhs.instructions().into_iter().collect();
    extra.extend(rhs.instructions());
    let mut decls = String::new();
    for name in extra.difference(&declared) {
        let i = target.instrs.instr(name).ok_or_else(|| format!("no spec `{name}`"))?;
        decls.push_str(&format!("(constructor {} ({}) {SORT} :cost 1)\n", instr_ctor(name), vec![SORT; i.params.len()].join(" ")));
    }
    decls.push_str(&format!("(let chain_lhs {})\n(let chain_rhs {})\n", term(lhs), term(rhs)));
    egraph.parse_and_run_program(None, &decls).map_err(|e| format!("egglog sides: {e}"))?;
    let report = run(&mut egraph, "chain", RULESET, limits);
    let derived = egraph.parse_and_run_program(None, "(check (= chain_lhs chain_rhs))").is_ok();
    Ok(Chain { derived, instances: loaded.instances.len(), stop: report.stop })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(v: &str) -> Pat {
        Pat::Var(v.into())
    }
    fn op(name: &str, generics: &[i64], kids: Vec<Pat>) -> Pat {
        Pat::Halide { name: name.into(), generics: generics.to_vec(), kids }
    }

    /// A split of a 256-bit u32 add into halves and the half-of-a-concat
    /// identities: together they derive add(concat, concat) = concat(adds),
    /// and nothing derives the commuted add.
    #[test]
    fn a_split_and_the_concat_identities_chain_and_commutation_does_not() {
        let target = Target::x86().unwrap();
        let rules = "(rewrite (add (u 32 8) ?a ?b) (concat (u 32 4) 4 (add (u 32 4) (slice (u 32 4) 8 0 1 ?a) (slice (u 32 4) 8 0 1 ?b)) (add (u 32 4) (slice (u 32 4) 8 4 1 ?a) (slice (u 32 4) 8 4 1 ?b))) :name \"split\" :ruleset x86)\n\
                     (rewrite (slice (u 32 4) 8 0 1 (concat (u 32 4) 4 ?x ?y)) ?x :name \"lo\" :ruleset x86)\n\
                     (rewrite (slice (u 32 4) 8 4 1 (concat (u 32 4) 4 ?x ?y)) ?y :name \"hi\" :ruleset x86)\n";
        let book = RuleBook::new(&target.rule_env(), "chain-test.egg", rules).unwrap();
        let cat = |x: &str, y: &str| op("concat", &[0, 32, 4, 4], vec![var(x), var(y)]);
        let lhs = op("add", &[0, 32, 8], vec![cat("a", "b"), cat("c", "d")]);
        let rhs = op("concat", &[0, 32, 4, 4], vec![op("add", &[0, 32, 4], vec![var("a"), var("c")]), op("add", &[0, 32, 4], vec![var("b"), var("d")])]);
        let limits = Limits::default();
        let got = derives(&target, &book, &lhs, &rhs, Verdicts::NoCache, &limits).unwrap();
        assert!(got.derived, "{got:?}");
        assert_eq!(got.instances, 3);
        let swapped = op("add", &[0, 32, 8], vec![cat("c", "d"), cat("a", "b")]);
        assert!(!derives(&target, &book, &lhs, &swapped, Verdicts::NoCache, &limits).unwrap().derived);
    }
}
