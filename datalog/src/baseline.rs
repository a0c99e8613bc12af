//! A published class table to measure our classes against, family by
//! family: Hydride's x86, ARM and HVX AutoLLVM tables ship in
//! `datalog/baselines/`.
//!
//! `hydride_arm_classes.csv` is the class of every intrinsic in
//! `code-synthesizer/hydride/ir/arm/get_name.rkt` of `akothen/Hydride` at
//! commit `0085ee8e6857308f0aa85836b150e8649cfe4ba0` (the `_dsl` struct a
//! name is emitted for): 111 classes, 943 intrinsics. That file lists
//! immediate shifts once per immediate (`vshr_n_u64__n_29`); the table
//! keeps the intrinsic once (`vshr_n_u64`), since our specs take the
//! immediate as a parameter, and every instance of one intrinsic is in one
//! class there. It is not the paper's 1,221-to-177 table, which was not
//! available in a readable size.
//!
//! `hydride_hvx_classes.csv` is the class of every intrinsic in
//! `code-synthesizer/hydride/ir/hvx/get_name.rkt` of `akothen/Hydride` at
//! commit `e0c79f39e4604092b328857825768de484ddbf88`: 305 `V6_*_128B`
//! builtins in 110 classes (the paper's 115 also count five generic
//! swizzle classes that name no instruction). Hydride names builtins
//! (`hexagon_V6_vaddh_128B`) and we name the `Q6_*` intrinsics of clang
//! 19's `hvx_hexagon_protos.h`, so each row is an intrinsic whose macro
//! calls that builtin, seen through the `vandvrt`/`vandqrt` wrappers that
//! carry predicates (`Q6_Q_vcmp_gt_VbVb` is `V6_vgtb`): 305 intrinsics.
//! A class is named after Hydride's `_dsl` struct, without `_dsl`.
//!
//! The comparison is over the instructions both tables hold, so a family
//! where one side simply has more variants does not look better for it.

use crate::ClassSet;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Instruction -> class, as another tool published it.
#[derive(Clone, Debug)]
pub struct Baseline {
    pub name: String,
    class_of: HashMap<String, String>,
}

impl Baseline {
    /// The bundled table for `target`, if there is one.
    pub fn bundled(target: &str) -> Option<PathBuf> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("baselines")
            .join(format!("hydride_{target}_classes.csv"));
        p.exists().then_some(p)
    }

    /// Reads a `class,instruction` CSV. Errors name `file:line:col`.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Baseline::parse(&path.display().to_string(), &text)
    }

    /// Parses the text of a `class,instruction` CSV; `file` names it in
    /// errors, and its stem names the baseline.
    pub fn parse(file: &str, text: &str) -> Result<Baseline, String> {
        let name = Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Baseline::parse_table(file, text).map(|class_of| Baseline { name, class_of })
    }

    fn parse_table(file: &str, text: &str) -> Result<HashMap<String, String>, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h.trim_end() == "class,instruction" => {}
            _ => {
                return Err(format!(
                    "{file}:1:1: expected the header `class,instruction`"
                ));
            }
        }
        let ident =
            |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let mut class_of: HashMap<String, String> = HashMap::new();
        for (i, line) in lines {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            let at = |col: usize| format!("{file}:{}:{col}", i + 1);
            if fields.len() != 2 {
                return Err(format!(
                    "{}: expected two fields `class,instruction`, found {}",
                    at(1),
                    fields.len()
                ));
            }
            if !ident(fields[0]) {
                return Err(format!(
                    "{}: expected a class name (letters, digits, `_`), found `{}`",
                    at(1),
                    fields[0]
                ));
            }
            if !ident(fields[1]) {
                return Err(format!(
                    "{}: expected an instruction name (letters, digits, `_`), found `{}`",
                    at(fields[0].len() + 2),
                    fields[1]
                ));
            }
            if let Some(old) = class_of.insert(fields[1].to_string(), fields[0].to_string())
                && old != fields[0]
            {
                return Err(format!(
                    "{}: `{}` is already in class `{old}`",
                    at(fields[0].len() + 2),
                    fields[1]
                ));
            }
        }
        Ok(class_of)
    }

    /// One table from several targets' tables, for a cross-ISA run; its
    /// name joins theirs with `+`. An instruction the tables place in
    /// different classes is an error, naming both.
    pub fn merge(parts: Vec<Baseline>) -> Result<Baseline, String> {
        let name = parts.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join("+");
        let mut class_of: HashMap<String, String> = HashMap::new();
        for b in &parts {
            for (i, c) in &b.class_of {
                if let Some(old) = class_of.insert(i.clone(), c.clone())
                    && &old != c
                {
                    return Err(format!("{}: `{i}` is in class `{c}`, but another table puts it in `{old}`", b.name));
                }
            }
        }
        Ok(Baseline { name, class_of })
    }

    pub fn class_of(&self, instr: &str) -> Option<&str> {
        self.class_of.get(instr).map(|s| s.as_str())
    }

    pub fn len(&self) -> usize {
        self.class_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.class_of.is_empty()
    }

    pub fn class_count(&self) -> usize {
        self.class_of.values().collect::<BTreeSet<_>>().len()
    }
}

/// One family (spec file) of our classes, and the baseline on the
/// instructions both hold.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyComparison {
    pub family: String,
    pub instructions: usize,
    pub classes: usize,
    /// Our instructions the baseline also classifies.
    pub shared: usize,
    /// Our classes over the shared instructions.
    pub shared_classes: usize,
    /// The baseline's classes over the shared instructions.
    pub baseline_classes: usize,
}

impl FamilyComparison {
    pub fn ratio(&self) -> f64 {
        self.instructions as f64 / self.classes.max(1) as f64
    }
    pub fn shared_ratio(&self) -> Option<f64> {
        (self.shared > 0).then(|| self.shared as f64 / self.shared_classes as f64)
    }
    pub fn baseline_ratio(&self) -> Option<f64> {
        (self.shared > 0).then(|| self.shared as f64 / self.baseline_classes as f64)
    }
}

/// Per-family comparison, families in name order, then the row `all`.
pub fn compare(set: &ClassSet, baseline: Option<&Baseline>) -> Vec<FamilyComparison> {
    #[derive(Default)]
    struct Acc<'a> {
        instructions: usize,
        classes: BTreeSet<&'a str>,
        shared: usize,
        shared_classes: BTreeSet<&'a str>,
        baseline_classes: BTreeSet<&'a str>,
    }
    impl<'a> Acc<'a> {
        fn add(&mut self, class: &'a str, theirs: Option<&'a str>) {
            self.instructions += 1;
            self.classes.insert(class);
            if let Some(b) = theirs {
                self.shared += 1;
                self.shared_classes.insert(class);
                self.baseline_classes.insert(b);
            }
        }
        fn row(&self, family: &str) -> FamilyComparison {
            FamilyComparison {
                family: family.to_string(),
                instructions: self.instructions,
                classes: self.classes.len(),
                shared: self.shared,
                shared_classes: self.shared_classes.len(),
                baseline_classes: self.baseline_classes.len(),
            }
        }
    }
    // Families are spec files, and two targets may both have an `add.sema`:
    // a set spanning targets names families `target/family`.
    let targets: BTreeSet<&str> = set
        .classes
        .iter()
        .flat_map(|c| c.members.iter().map(|m| m.instr.target.as_str()))
        .collect();
    let family = |i: &misaal_isa::Instr| {
        if targets.len() > 1 {
            format!("{}/{}", i.target, i.family)
        } else {
            i.family.clone()
        }
    };
    let mut fams: BTreeMap<String, Acc> = BTreeMap::new();
    let mut all = Acc::default();
    for c in &set.classes {
        for m in &c.members {
            let theirs = baseline.and_then(|b| b.class_of(&m.instr.name));
            fams.entry(family(&m.instr))
                .or_default()
                .add(&c.name, theirs);
            all.add(&c.name, theirs);
        }
    }
    let mut rows: Vec<FamilyComparison> = fams.iter().map(|(f, a)| a.row(f)).collect();
    rows.push(all.row("all"));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_tables_name_line_and_column() {
        let e = Baseline::parse("t.csv", "class,instr\n").unwrap_err();
        assert_eq!(e, "t.csv:1:1: expected the header `class,instruction`");
        let e = Baseline::parse("t.csv", "class,instruction\na,b\nc\n").unwrap_err();
        assert_eq!(
            e,
            "t.csv:3:1: expected two fields `class,instruction`, found 1"
        );
        let e = Baseline::parse("t.csv", "class,instruction\nabc,b-x\n").unwrap_err();
        assert_eq!(
            e,
            "t.csv:2:5: expected an instruction name (letters, digits, `_`), found `b-x`"
        );
        let e = Baseline::parse("t.csv", "class,instruction\na,x\nb,x\n").unwrap_err();
        assert_eq!(e, "t.csv:3:3: `x` is already in class `a`");
        assert_eq!(
            Baseline::parse("t.csv", "class,instruction\na,x\na,x\n\n")
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn merged_tables_keep_both_and_refuse_a_conflict() {
        let a = Baseline::parse("a.csv", "class,instruction\nk,x\nk,y\n").unwrap();
        let b = Baseline::parse("b.csv", "class,instruction\nm,z\n").unwrap();
        let m = Baseline::merge(vec![a.clone(), b]).unwrap();
        assert_eq!((m.name.as_str(), m.len(), m.class_count()), ("a+b", 3, 2));
        let c = Baseline::parse("c.csv", "class,instruction\nn,x\n").unwrap();
        let e = Baseline::merge(vec![a, c]).unwrap_err();
        assert_eq!(e, "c: `x` is in class `n`, but another table puts it in `k`");
    }

    #[test]
    fn bundled_arm_table_loads() {
        let b = Baseline::load(&Baseline::bundled("arm").expect("bundled")).expect("loads");
        assert_eq!((b.len(), b.class_count()), (943, 111));
        // Hydride folds signedness into a parameter: one class for both.
        assert_eq!(b.class_of("vabd_u8"), b.class_of("vabd_s8"));
        assert_eq!(b.class_of("vshr_n_u64"), Some("vshrq_n_s32__n_6"));
    }

    #[test]
    fn bundled_hvx_table_loads() {
        let b = Baseline::load(&Baseline::bundled("hvx").expect("bundled")).expect("loads");
        assert_eq!((b.len(), b.class_count()), (305, 110));
        // One Hydride class holds wrapping and saturating adds of every width.
        assert_eq!(b.class_of("Q6_Vh_vadd_VhVh"), Some("hexagon_V6_vaddhsat_128B"));
        assert_eq!(b.class_of("Q6_Vub_vadd_VubVub_sat"), b.class_of("Q6_Ww_vadd_WwWw"));
        // A compare into a predicate is the compare, not its wrapper.
        assert_eq!(b.class_of("Q6_Q_vcmp_gt_VbVb"), Some("hexagon_V6_vgtb_128B"));
    }

    #[test]
    fn bundled_x86_table_loads() {
        let b = Baseline::load(&Baseline::bundled("x86").expect("bundled")).expect("loads");
        assert_eq!((b.len(), b.class_count()), (2054, 183));
        assert_eq!(
            b.class_of("_mm512_maskz_add_epi8"),
            b.class_of("_mm512_mask_add_epi8")
        );
    }
}
