//! Byte comparison and the `bit_exact` verdict every target writes: our
//! output against the reference interpreter, Halide's object and our own
//! baselines, and a row says `yes` only when some reference saw it.

use crate::Kernel;
use crate::inputs::InputSet;
use misaal_frontends::interp::{ArgValue, Interp};
use misaal_frontends::stmt::ast::Module;

/// The reference interpreter on one input set: the module's public function run on the
/// manifest's arguments, the input buffers holding the set's bytes (the
/// rest zeroed, at the manifest's mins). Returns the output buffers'
/// bytes, concatenated in manifest order (as every harness writes them).
pub fn interpret(ops: &misaal_isa::SpecLibrary, module: &Module, k: &Kernel, set: &InputSet) -> Result<Vec<u8>, String> {
    let func = crate::public_func(module)?;
    let mut vals = Vec::new();
    // Buffer arguments by the manifest, which the interpreter returns: an
    // input the body never reads parses as no buffer at all.
    let mut buffers = Vec::new();
    for fa in &func.args {
        let spec = k.args.iter().find(|a| a.name == fa.name).ok_or(format!("the manifest lacks argument `{}`", fa.name))?;
        if !spec.buffer {
            vals.push(ArgValue::Scalar(spec.ty, spec.value));
            continue;
        }
        let mins: Vec<i64> = (0..spec.dims.len()).map(|d| spec.min.get(d).copied().unwrap_or(0)).collect();
        buffers.push(spec.name.as_str());
        let mut b = misaal_frontends::interp::Buffer::dense(spec.ty, &mins, &spec.dims);
        if let Some((_, d)) = set.iter().find(|(n, _)| *n == spec.name) {
            b.data = d.clone();
        }
        vals.push(ArgValue::Buffer(b));
    }
    let res = Interp::new(ops).with_funcs(&module.funcs).run(func, vals).map_err(|e| format!("interpreter: {e}"))?;
    // The interpreter returns every buffer argument, in `func`'s order.
    let mut out = Vec::new();
    for a in k.args.iter().filter(|a| a.output) {
        let i = buffers.iter().position(|n| *n == a.name).ok_or(format!("output `{}` is not a buffer of the Stmt", a.name))?;
        out.extend_from_slice(&res[i].data);
    }
    Ok(out)
}

/// The interpreter's outputs for every input set, one set per core. It is
/// the slow check (seconds to a minute per set), so it runs after the
/// timed harness, never beside it.
pub fn interpret_all(module: &Module, k: &Kernel, sets: &[InputSet]) -> Result<Vec<Vec<u8>>, String> {
    use rayon::prelude::*;
    let ops = misaal_frontends::halide_ops().map_err(|d| d.to_string())?;
    sets.par_iter().map(|s| interpret(&ops, module, k, s)).collect()
}

/// What one kernel's outputs were compared with, and what differed.
#[derive(Debug, Default)]
pub struct Verdict {
    pub inputs: usize,
    /// Disagreements, each `input N: ...`.
    pub problems: Vec<String>,
    /// (input set, reference) pairs compared byte for byte.
    pub compared: usize,
    /// The references that agreed, in order (`Halide`, `interpreter`),
    /// and how ours ran when not natively (`simde`).
    pub refs: Vec<&'static str>,
    /// Why nothing was compared, when nothing was.
    pub unchecked_why: Vec<String>,
    /// Each failed byte comparison in full ([`difference`]), for the
    /// README of the folder a failed row keeps ([`crate::keep`]).
    pub details: Vec<String>,
}

impl Verdict {
    pub fn new(inputs: usize) -> Verdict {
        Verdict { inputs, ..Default::default() }
    }

    /// Our output of input set `run` against a reference's.
    pub fn compare(&mut self, run: usize, ours: &[u8], theirs: &[u8], what: &str) {
        self.compared += 1;
        if ours != theirs {
            let first = ours.iter().zip(theirs).position(|(a, b)| a != b);
            self.problems.push(format!("input {run}: differs from {what} (first byte {first:?} of {})", ours.len()));
            self.details.push(difference(run, what, ours, theirs));
        }
    }

    /// A baseline of ours (`what`: the naive build, the scalar C) that must
    /// give our bytes: a problem when it does not, not a reference compared.
    pub fn baseline(&mut self, run: usize, ours: &[u8], theirs: &[u8], what: &str) {
        if ours != theirs {
            self.problems.push(format!("input {run}: {what} differs from ours"));
            self.details.push(difference(run, what, ours, theirs));
        }
    }

    /// Ours (`ours[r]`, input set `r`'s output) against the reference
    /// interpreter on every set, which then counts as a reference, when
    /// `interp` asks for it. The interpreter's outputs (none when skipped),
    /// for the folder a failed row keeps.
    pub fn against_interpreter(&mut self, interp: bool, module: &Module, k: &Kernel, sets: &[InputSet], ours: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        if !interp {
            return Ok(Vec::new());
        }
        let want = interpret_all(module, k, sets)?;
        for (r, w) in want.iter().enumerate() {
            self.compare(r, &ours[r], w, "the reference interpreter");
        }
        self.refs.push("interpreter");
        Ok(want)
    }

    /// The `bit_exact` cell: `no: ...`, `unchecked (...)` or `yes (N
    /// inputs, REFS...)`.
    pub fn cell(&self) -> String {
        if !self.problems.is_empty() {
            format!("no: {}", self.problems.join("; "))
        } else if self.compared == 0 {
            format!("unchecked ({})", self.unchecked_why.join(", "))
        } else {
            let refs: String = self.refs.iter().map(|r| format!(", {r}")).collect();
            format!("yes ({} inputs{refs})", self.inputs)
        }
    }
}

/// Where `ours` and `theirs` (input set `run`'s outputs, `what` the other
/// side) differ: how many bytes, the first index and both bytes there, and
/// the lengths when they differ.
pub fn difference(run: usize, what: &str, ours: &[u8], theirs: &[u8]) -> String {
    let n = ours.iter().zip(theirs).filter(|(a, b)| a != b).count();
    let mut s = format!("input {run}: ours vs {what}: {n} of {} bytes differ", ours.len().min(theirs.len()));
    if let Some(i) = ours.iter().zip(theirs).position(|(a, b)| a != b) {
        s.push_str(&format!("; first at byte {i}: ours {:#04x}, theirs {:#04x}", ours[i], theirs[i]));
    }
    if ours.len() != theirs.len() {
        s.push_str(&format!("; lengths differ: ours {} bytes, theirs {}", ours.len(), theirs.len()));
    }
    s
}

/// How a row's `bit_exact` counts toward the run's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Exact,
    /// Nothing compared, or a tool the check needs is missing.
    Unchecked,
    Failed,
}

/// (failed, unchecked) over a run's `bit_exact` cells: what the exit status
/// is decided from.
pub fn tally<'a>(cells: impl Iterator<Item = &'a str>) -> (usize, usize) {
    cells.fold((0, 0), |(f, u), c| match outcome(c) {
        Outcome::Failed => (f + 1, u),
        Outcome::Unchecked => (f, u + 1),
        Outcome::Exact => (f, u),
    })
}

pub fn outcome(bit_exact: &str) -> Outcome {
    if bit_exact.starts_with("yes") {
        Outcome::Exact
    } else if bit_exact.starts_with("unchecked") || bit_exact.starts_with("skipped") {
        Outcome::Unchecked
    } else {
        Outcome::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_yes_only_when_something_was_compared() {
        let mut v = Verdict::new(3);
        v.unchecked_why = vec!["no Halide object".into(), "interpreter skipped".into()];
        assert_eq!(v.cell(), "unchecked (no Halide object, interpreter skipped)");
        v.compare(0, b"ab", b"ab", "the reference interpreter");
        v.refs = vec!["interpreter", "simde"];
        assert_eq!(v.cell(), "yes (3 inputs, interpreter, simde)");
        v.compare(1, b"ab", b"aX", "Halide's object");
        assert!(v.cell().starts_with("no: input 1: differs from Halide's object (first byte Some(1)"), "{}", v.cell());
        assert_eq!(v.details, ["input 1: ours vs Halide's object: 1 of 2 bytes differ; first at byte 1: ours 0x62, theirs 0x58"]);
        v.baseline(2, b"ab", b"ab", "the naive build");
        assert_eq!(v.problems.len(), 1, "equal bytes are no problem");
        assert_eq!(difference(0, "x", b"abc", b"ab"), "input 0: ours vs x: 0 of 2 bytes differ; lengths differ: ours 3 bytes, theirs 2");
        assert_eq!(outcome("skipped: SIMDe"), Outcome::Unchecked);
    }
}
