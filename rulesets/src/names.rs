//! Name resolution at load time. A rule that names an instruction or op that
//! does not exist is an error in the rule file, reported at its `line:col`,
//! never a verdict: a typo must not pass as a refutation.

use crate::ast::{Rule, Term};
use crate::instantiate::{describe_env, expand_name, instantiations};
use misaal_isa::{Diagnostic, Diagnostics};
use std::collections::HashSet;

/// Checks every instruction and op name of every rule. `x86` (the rule
/// file's target, whichever it is) and `op` say whether a (fully expanded)
/// name can be used, and why not. A templated instruction name is checked
/// at every instantiation of its rule.
pub fn check_names(
    rules: &[Rule],
    vector_widths: &[i128],
    x86: &dyn Fn(&str) -> Result<(), String>,
    op: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), Diagnostics> {
    // Instantiation errors (a variable with no domain) are reported by
    // the planner; names are then checked without templates only.
    let envs: Vec<Vec<crate::Assignment>> = rules.iter().map(|r| instantiations(r, vector_widths).unwrap_or_default()).collect();
    check_names_at(rules, &envs, x86, op)
}

/// [`check_names`] with each rule's instantiations enumerated beforehand
/// (`envs[k]` for `rules[k]`, none where enumeration failed).
pub fn check_names_at(
    rules: &[Rule],
    envs: &[Vec<crate::Assignment>],
    x86: &dyn Fn(&str) -> Result<(), String>,
    op: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), Diagnostics> {
    let mut errors = Vec::new();
    for (rule, envs) in rules.iter().zip(envs) {
        let mut visit = |t: &Term| walk(t, &mut |t| {
            let (name, span, is_x86) = match t {
                Term::Instr(n, _, s) => (n, *s, true),
                Term::Op(n, _, s) => (n, *s, false),
                _ => return,
            };
            let err = |m: String| Diagnostic::new(&rule.file, span, format!("rule {:?}: {m}", rule.name));
            if !is_x86 {
                if let Err(m) = op(name) {
                    errors.push(err(m));
                }
                return;
            }
            if !name.contains('{') {
                if let Err(m) = x86(name) {
                    errors.push(err(m));
                }
                return;
            }
            // Many instantiations spell the same name: check each name once.
            let mut seen: HashSet<String> = HashSet::new();
            for env in envs {
                let checked = expand_name(name, env).and_then(|n| if seen.insert(n.clone()) { x86(&n) } else { Ok(()) });
                if let Err(m) = checked {
                    errors.push(err(format!("{m} (template `{name}` at {})", describe_env(env))));
                    return;
                }
            }
        });
        visit(&rule.lhs);
        visit(&rule.rhs);
    }
    if errors.is_empty() { Ok(()) } else { Err(Diagnostics(errors)) }
}

fn walk(t: &Term, f: &mut dyn FnMut(&Term)) {
    f(t);
    if let Term::Instr(_, args, _) | Term::Op(_, args, _) = t {
        for a in args {
            walk(a, f);
        }
    }
}

/// The candidate nearest to `name` by edit distance, if it is near enough
/// to be a likely typo (at most a third of the name's length).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let dist = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + (ca != *cb) as usize).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    };
    candidates.into_iter().map(|c| (dist(name, c), c)).filter(|(d, _)| *d <= name.len().div_ceil(3)).min().map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn suggests_near_names_only() {
        assert_eq!(closest("_mm_avg_epu7", ["_mm_avg_epu8", "_mm_add_epi8"]), Some("_mm_avg_epu8"));
        assert_eq!(closest("rounding_halving_ad", ["rounding_halving_add", "add"]), Some("rounding_halving_add"));
        assert_eq!(closest("xyz", ["rounding_halving_add"]), None);
    }
}
