//! What the build scripts that generate Rust from the x86 specs share
//! (`misaal-oracle-x86`'s glue, `misaal-measure-x86`'s timing kernels):
//! the distinct specs of the spec folder, their features under Rust's
//! `target_feature` names, and the runtime feature check. Only signatures
//! are read: a spec with a body error still gets code, and `isa check`
//! reports the error.
//!
//! A crate of its own, not part of `misaal-isa`: the isa sources are
//! hashed into the committed proof keys (`verifier/build.rs`).

use misaal_isa::ast::Instr;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

/// The x86 specs of `dir`, the first of each name, in file order. Asks
/// cargo to rerun the build script when a spec file changes; a file that
/// does not parse is passed over with a warning that says what it lacks
/// (`what`: "no oracle glue").
fn distinct_specs(dir: &Path, what: &str) -> Vec<Instr> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut seen = BTreeSet::new();
    let mut specs = Vec::new();
    for path in misaal_isa::spec_files(dir).unwrap_or_default() {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("readable spec file");
        let file = match misaal_isa::parser::parse_file(&path.display().to_string(), &text) {
            Ok(f) => f,
            Err(e) => {
                println!("cargo:warning={what} for {}: {e}", path.display());
                continue;
            }
        };
        specs.extend(file.instrs.into_iter().filter(|i| i.target == "x86" && seen.insert(i.name.clone())));
    }
    specs
}

/// The generated code of every spec `dir` holds, and the table that lists
/// it: `one` writes a spec's code and returns its table row, given the
/// spec and its features quoted (`"avx2", "fma"`). A spec `one` refuses
/// is passed over with a warning (`what` it lacks, and why). Also the
/// features the code uses.
pub fn generate(dir: &Path, what: &str, mut one: impl FnMut(&Instr, &str, &mut String) -> Result<String, String>) -> (String, String, Features) {
    let (mut body, mut table, mut features) = (String::new(), String::new(), Features::default());
    for i in distinct_specs(dir, what) {
        let mut code = String::new();
        match one(&i, &quoted(&rust_features(&i)), &mut code) {
            Ok(row) => {
                body.push_str(&code);
                table.push_str(&row);
                features.0.extend(rust_features(&i));
            }
            Err(e) => println!("cargo:warning={what} for {}: {e}", i.name),
        }
    }
    (body, table, features)
}

/// `i`'s features under Rust's `target_feature` names.
pub fn rust_features(i: &Instr) -> Vec<String> {
    i.features.iter().map(|f| rust_feature(f)).collect()
}

/// Spec identifiers cannot hold dots: `sse4_1` is Rust's `sse4.1`.
fn rust_feature(f: &str) -> String {
    match f {
        "sse4_1" => "sse4.1".into(),
        "sse4_2" => "sse4.2".into(),
        other => other.into(),
    }
}

/// Every feature the generated code uses, for the runtime check.
#[derive(Default)]
pub struct Features(BTreeSet<String>);

impl Features {
    /// The `match feature { ... }` arms that detect each used feature at
    /// run time (`"avx2" => std::arch::is_x86_feature_detected!("avx2"),`),
    /// one a line; the caller adds the arm for an unknown name.
    pub fn detect_arms(&self) -> String {
        let mut arms = String::new();
        for f in &self.0 {
            let _ = writeln!(arms, "        \"{f}\" => std::arch::is_x86_feature_detected!(\"{f}\"),");
        }
        arms
    }
}

/// Feature names as the elements of a Rust string slice: `"avx2", "fma"`.
fn quoted(feats: &[String]) -> String {
    feats.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ")
}
