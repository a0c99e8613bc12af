//! The ARM oracle: NEON intrinsics under `qemu-aarch64 -cpu max`, through a
//! cross-compiled C harness (`misaal-oracle-arm`).
//!
//! [`ArmQemu::prefetch`] runs the cases [`crate::check_against`] will ask
//! for, of every spec at once, in a few qemu processes (one per thread);
//! `run_batch` then answers from that store, and only shrinking starts new
//! processes.

use crate::differential::{DiffConfig, cases_for};
use crate::oracle::{Oracle, OracleError};
use misaal_isa::{BitVec, Instr};
use misaal_oracle_arm::{Harness, Problem, Toolchain};
use std::collections::HashMap;
use std::sync::Mutex;

pub struct ArmQemu {
    harness: Harness,
    /// Evidence for the status table: the emulator and its version.
    pub evidence: String,
    store: Mutex<HashMap<String, (Vec<Vec<BitVec>>, Vec<BitVec>)>>,
}

impl ArmQemu {
    /// Finds the tools and builds one harness for `instrs`. The error names
    /// a missing tool, so callers can skip with that message.
    pub fn new(instrs: &[&Instr]) -> Result<ArmQemu, String> {
        let tc = Toolchain::find()?;
        let harness = Harness::build(&tc, instrs)?;
        let evidence = format!("{} -cpu max", tc.qemu_version);
        Ok(ArmQemu { harness, evidence, store: Mutex::new(HashMap::new()) })
    }

    /// Runs the check's cases of every harnessed spec in `instrs` in `procs`
    /// qemu processes at once. A failed process leaves its specs to
    /// `run_batch`, which reports the failure per spec.
    pub fn prefetch(&self, instrs: &[&Instr], cfg: &DiffConfig, procs: usize) {
        let jobs: Vec<(&str, Vec<Vec<BitVec>>)> = instrs.iter().filter(|i| self.harness.contains(&i.name)).map(|i| (i.name.as_str(), cases_for(i, cfg))).collect();
        let chunk = jobs.len().div_ceil(procs.max(1)).max(1);
        std::thread::scope(|s| {
            for part in jobs.chunks(chunk) {
                s.spawn(move || {
                    let refs: Vec<(&str, &[Vec<BitVec>])> = part.iter().map(|(n, c)| (*n, c.as_slice())).collect();
                    if let Ok(res) = self.harness.run(&refs) {
                        let mut st = self.store.lock().expect("store");
                        for ((n, c), r) in part.iter().zip(res) {
                            st.insert(n.to_string(), (c.clone(), r));
                        }
                    }
                });
            }
        });
    }
}

impl ArmQemu {
    /// Runs other cases than the check's (see [`uniform_edge_cases`]) for
    /// many specs, in `procs` qemu processes at once; by spec name.
    pub fn run_many(&self, jobs: &[(&Instr, Vec<Vec<BitVec>>)], procs: usize) -> HashMap<String, Result<Vec<BitVec>, String>> {
        let jobs: Vec<&(&Instr, Vec<Vec<BitVec>>)> = jobs.iter().filter(|(i, _)| self.harness.contains(&i.name)).collect();
        let chunk = jobs.len().div_ceil(procs.max(1)).max(1);
        let out = Mutex::new(HashMap::new());
        std::thread::scope(|s| {
            for part in jobs.chunks(chunk) {
                let out = &out;
                s.spawn(move || {
                    let refs: Vec<(&str, &[Vec<BitVec>])> = part.iter().map(|(i, c)| (i.name.as_str(), c.as_slice())).collect();
                    let res = self.harness.run(&refs);
                    let mut o = out.lock().expect("results");
                    for (k, (i, _)) in part.iter().enumerate() {
                        let r = match &res {
                            Ok(all) => Ok(all[k].clone()),
                            Err(e) => Err(e.clone()),
                        };
                        o.insert(i.name.clone(), r);
                    }
                });
            }
        });
        out.into_inner().expect("results")
    }
}

/// Cases where every element of an operand holds the same edge value, the
/// first vector operand one value and every other operand another, for
/// each element width and each pair of edge values: so a lane-selecting
/// or by-scalar doubling multiply sees MIN meet MIN in the lane it reads,
/// which per-element random edges reach in a given lane about once in 300
/// cases. Immediates step through their range, one value per case.
pub fn uniform_edge_cases(instr: &Instr) -> Vec<Vec<BitVec>> {
    use crate::differential::edge_values;
    use misaal_isa::ast::Ty;
    let mut cases = Vec::new();
    for e in [8u32, 16, 32, 64] {
        let edges = edge_values(e);
        for x in &edges {
            for y in &edges {
                let k = cases.len() as u64;
                let mut first = true;
                let case = instr
                    .params
                    .iter()
                    .map(|p| match p.ty {
                        Ty::Imm(w) => {
                            let (lo, hi) = p.range.unwrap_or((0, if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }));
                            BitVec::from_u64(w, lo + k % (hi - lo).saturating_add(1).max(1))
                        }
                        Ty::Bv(w) | Ty::Mask(w) => {
                            let v = if std::mem::take(&mut first) { x } else { y };
                            fill(w, v, e)
                        }
                    })
                    .collect();
                cases.push(case);
            }
        }
    }
    cases
}

/// A `w`-bit value of `e`-bit elements all equal to `v` (its low `w` bits
/// when the operand is narrower than one element).
fn fill(w: u32, v: &BitVec, e: u32) -> BitVec {
    let mut out = BitVec::zero(w);
    for b in 0..w {
        out.set_bit(b, v.bit(b % e));
    }
    out
}

impl Oracle for ArmQemu {
    fn name(&self) -> &'static str {
        "emulator"
    }

    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        if instr.target != "arm" {
            return Err(OracleError::Unavailable(format!("`{}` is a {} instruction, not arm", instr.name, instr.target)));
        }
        match self.harness.problems.get(&instr.name) {
            None if self.harness.contains(&instr.name) => Ok(()),
            None => Err(OracleError::Unavailable(format!("`{}` was not given to the harness", instr.name))),
            Some(Problem::Unavailable(s)) => Err(OracleError::Unavailable(s.clone())),
            Some(Problem::Mismatch(s)) => Err(OracleError::Failed(s.clone())),
        }
    }

    fn run_batch(&self, instr: &Instr, cases: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError> {
        self.available(instr)?;
        if let Some((c, r)) = self.store.lock().expect("store").get(&instr.name)
            && c.as_slice() == cases
        {
            return Ok(r.clone());
        }
        let mut out = self.harness.run(&[(instr.name.as_str(), cases)]).map_err(OracleError::Failed)?;
        Ok(out.remove(0))
    }
}

/// What a batched emulator oracle needs from its harness: the HVX harness
/// (`crate::hexagon`) implements it; the ARM one above could too.
pub trait BatchHarness: Sync {
    /// The target its specs carry (`hvx`).
    fn target(&self) -> &'static str;
    fn contains(&self, name: &str) -> bool;
    /// Why `name` is not in the harness: `Unavailable` (not runnable here)
    /// or `Failed` (the spec contradicts the intrinsic's prototype).
    fn problem(&self, name: &str) -> Option<OracleError>;
    /// Runs every (intrinsic, cases) job in one emulator process.
    fn run(&self, jobs: &[(&str, &[Vec<BitVec>])]) -> Result<Vec<Vec<BitVec>>, String>;
}

/// An oracle over a [`BatchHarness`]: [`Batched::prefetch`] runs every case
/// [`crate::check_against`] will ask for, of every spec, in a few emulator
/// processes up front; `run_batch` answers from that store, and only
/// shrinking starts new processes.
pub struct Batched<H> {
    pub harness: H,
    /// Evidence for the status table: the emulator and its version.
    pub evidence: String,
    store: Mutex<HashMap<String, Prefetched>>,
}

/// A spec's prefetched cases and the emulator's results for them.
type Prefetched = (Vec<Vec<BitVec>>, Vec<BitVec>);

impl<H: BatchHarness> Batched<H> {
    pub fn with(harness: H, evidence: String) -> Self {
        Batched { harness, evidence, store: Mutex::new(HashMap::new()) }
    }

    /// Runs the check's cases of every harnessed spec in `instrs` in `procs`
    /// processes at once, each thread generating its own specs' cases (for
    /// wide vectors, generating costs more than running). A failed process
    /// leaves its specs to `run_batch`, which reports the failure per spec.
    pub fn prefetch(&self, instrs: &[&Instr], cfg: &DiffConfig, procs: usize) {
        let specs: Vec<&Instr> = instrs.iter().copied().filter(|i| self.harness.contains(&i.name)).collect();
        let chunk = specs.len().div_ceil(procs.max(1)).max(1);
        std::thread::scope(|s| {
            for part in specs.chunks(chunk) {
                s.spawn(move || {
                    let part: Vec<(&str, Vec<Vec<BitVec>>)> = part.iter().map(|i| (i.name.as_str(), cases_for(i, cfg))).collect();
                    let refs: Vec<(&str, &[Vec<BitVec>])> = part.iter().map(|(n, c)| (*n, c.as_slice())).collect();
                    if let Ok(res) = self.harness.run(&refs) {
                        let mut st = self.store.lock().expect("store");
                        for ((n, c), r) in part.iter().zip(res) {
                            st.insert(n.to_string(), (c.clone(), r));
                        }
                    }
                });
            }
        });
    }
}

impl<H: BatchHarness> Oracle for Batched<H> {
    fn name(&self) -> &'static str {
        "emulator"
    }

    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        let target = self.harness.target();
        if instr.target != target {
            return Err(OracleError::Unavailable(format!("`{}` is a {} instruction, not {target}", instr.name, instr.target)));
        }
        match self.harness.problem(&instr.name) {
            None if self.harness.contains(&instr.name) => Ok(()),
            None => Err(OracleError::Unavailable(format!("`{}` was not given to the harness", instr.name))),
            Some(e) => Err(e),
        }
    }

    fn run_batch(&self, instr: &Instr, cases: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError> {
        self.available(instr)?;
        if let Some((c, r)) = self.store.lock().expect("store").get(&instr.name)
            && c.as_slice() == cases
        {
            return Ok(r.clone());
        }
        let mut out = self.harness.run(&[(instr.name.as_str(), cases)]).map_err(OracleError::Failed)?;
        Ok(out.remove(0))
    }
}
