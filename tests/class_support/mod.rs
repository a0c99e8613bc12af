//! What the per-target class tests (`arm_classes.rs`, `hvx_classes.rs`)
//! share: the verified specs, the comparison with Hydride's table, and the
//! account of every Hydride class we split.

use misaal_datalog::{Baseline, Class, ClassSet, FamilyComparison};
use misaal_isa::{Instr, Semantics, SpecLibrary, StatusTable};
use misaal_verifier::membership::{MembershipCheck, check_membership};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub type Pairs = Vec<(Arc<Instr>, Arc<Semantics>)>;

/// The specs of `target` whose derived status says they met their oracle,
/// as `misaal classes` takes them.
pub fn verified(target: &str) -> Pairs {
    let dir = misaal_isa::bundled_spec_dir(target);
    let mut lib = SpecLibrary::load_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
    let table = StatusTable::for_spec_dir(&dir).unwrap_or_else(|d| panic!("{d}"));
    lib.retain_verified(&table);
    assert!(!lib.is_empty(), "no verified {target} spec");
    lib.iter().map(|(i, s)| (i.clone(), s.clone())).collect()
}

/// Hydride's bundled class table for `target`.
pub fn hydride(target: &str) -> Baseline {
    Baseline::load(&Baseline::bundled(target).unwrap_or_else(|| panic!("bundled {target} table"))).expect("loads")
}

/// Whether `a` and `b` are members of one class.
pub fn same_class(set: &ClassSet, a: &str, b: &str) -> bool {
    matches!((set.class_of(a), set.class_of(b)), (Some((x, _)), Some((y, _))) if x.name == y.name)
}

/// The classes holding instructions of at least `targets` targets.
pub fn spanning(set: &ClassSet, targets: usize) -> Vec<&Class> {
    set.classes.iter().filter(|c| c.members.iter().map(|m| m.instr.target.as_str()).collect::<BTreeSet<_>>().len() >= targets).collect()
}

/// Prints how much a classification across targets folds (`what`: which
/// targets, and how many of one), beside Hydride's paper figure
/// (`paper`: instructions, classes), and how many classes span them.
pub fn print_folding(set: &ClassSet, what: &str, paper: (u32, u32), spanning: usize, span_what: &str) {
    let (n, c) = paper;
    eprintln!(
        "{what} in {} classes ({:.2}x; Hydride's paper: {n} in {c}, {:.2}x); {spanning} classes span {span_what}",
        set.classes.len(),
        set.member_count() as f64 / set.classes.len() as f64,
        f64::from(n) / f64::from(c)
    );
}

/// Every member of `classes` is proved (by Z3, or by quickcheck where Z3
/// gives up) to be its class's template at its row.
pub fn assert_members_proved(classes: &[&Class], pairs: &Pairs) {
    let sem: HashMap<&str, &Semantics> = pairs.iter().map(|(i, s)| (i.name.as_str(), s.as_ref())).collect();
    for c in classes {
        for m in &c.members {
            let r = check_membership(c, m, sem[m.instr.name.as_str()], 20_000);
            assert!(matches!(r, MembershipCheck::Z3 | MembershipCheck::Quickcheck(_)), "{} in {}: {r:?}", m.instr.name, c.name);
        }
    }
}

/// Prints the comparison with Hydride, family by family.
pub fn print_families(rows: &[FamilyComparison]) {
    for f in rows {
        eprintln!("{:<10} {:>5} in {:>3} ({:>5.2}x); shared {:>4}: ours {:>3}, Hydride {:>3}", f.family, f.instructions, f.classes, f.ratio(), f.shared, f.shared_classes, f.baseline_classes);
    }
}

/// For each Hydride class that holds members of more than one of ours:
/// our classes within it must be linked, pair by pair, by a reason
/// `split_reason` names (a graph over our classes, which must be
/// connected). The links made per reason, and each Hydride class whose
/// split is not fully explained.
pub fn split_reasons<R: Into<String>>(set: &ClassSet, hydride: &Baseline, split_reason: impl Fn(&str, &str) -> Option<R>) -> (BTreeMap<String, usize>, Vec<String>) {
    let ours: HashMap<&str, &str> = set.classes.iter().flat_map(|c| c.members.iter().map(move |m| (m.instr.name.as_str(), c.name.as_str()))).collect();
    let mut by_theirs: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for (name, class) in &ours {
        if let Some(t) = hydride.class_of(name) {
            by_theirs.entry(t).or_default().entry(class).or_default().push(name);
        }
    }
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for (theirs, groups) in &by_theirs {
        let names: Vec<&&str> = groups.keys().collect();
        let mut reached: BTreeSet<usize> = BTreeSet::from([0]);
        let mut grew = true;
        while grew {
            grew = false;
            for j in 0..names.len() {
                if reached.contains(&j) {
                    continue;
                }
                let link = reached.iter().find_map(|&i| groups[names[i]].iter().find_map(|a| groups[names[j]].iter().find_map(|b| split_reason(a, b))));
                if let Some(r) = link {
                    *reasons.entry(r.into()).or_default() += 1;
                    reached.insert(j);
                    grew = true;
                }
            }
        }
        if reached.len() != names.len() {
            unexplained.push(format!("{theirs}: {groups:?}"));
        }
    }
    eprintln!("Hydride classes split by us, by reason: {reasons:?}");
    (reasons, unexplained)
}
