//! The emulated oracles: specs run under qemu through a batch harness
//! (`misaal-oracle-qemu`), built by the target's crate (`misaal-oracle-arm`,
//! `misaal-oracle-hvx`). [`Emulated::prefetch`] runs every case
//! [`crate::check_against`] will ask for, of every spec, in a few qemu
//! processes up front; `run_batch` answers from that store, and only
//! shrinking starts new processes.

use crate::differential::{DiffConfig, cases_for};
use crate::oracle::{Oracle, OracleError};
use misaal_isa::{BitVec, Instr};
use misaal_oracle_qemu::{Harness, Problem, QemuOracle, Toolchain};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Mutex;

/// A target whose specs run under an emulator: its oracle crate's
/// description of itself.
pub trait EmulatedTarget {
    const ORACLE: &'static QemuOracle;
}

/// ARM NEON under `qemu-aarch64 -cpu max`, through a cross-compiled C
/// harness (`misaal-oracle-arm`).
pub struct Arm;
impl EmulatedTarget for Arm {
    const ORACLE: &'static QemuOracle = &misaal_oracle_arm::ORACLE;
}
pub type ArmQemu = Emulated<Arm>;

/// HVX's `Q6_*` intrinsics under `qemu-hexagon -cpu v67`, through a
/// freestanding C harness (`misaal-oracle-hvx`).
pub struct Hvx;
impl EmulatedTarget for Hvx {
    const ORACLE: &'static QemuOracle = &misaal_oracle_hvx::ORACLE;
}
pub type HvxQemu = Emulated<Hvx>;

pub struct Emulated<T> {
    pub harness: Harness,
    /// Evidence for the status table: the emulator and its version.
    pub evidence: String,
    store: Mutex<HashMap<String, Prefetched>>,
    // A marker only: `fn() -> T` keeps the oracle Send and Sync whatever T is.
    target: PhantomData<fn() -> T>,
}

/// A spec's prefetched cases and the emulator's results for them.
type Prefetched = (Vec<Vec<BitVec>>, Vec<BitVec>);

impl<T: EmulatedTarget> Emulated<T> {
    /// Finds the tools and builds one harness for `instrs`. The error names
    /// a missing tool, so callers can skip with that message.
    pub fn new(instrs: &[&Instr]) -> Result<Self, String> {
        let oracle = T::ORACLE;
        let tc = Toolchain::find(&oracle.tools)?;
        let (harness, evidence) = ((oracle.build)(&tc, instrs)?, format!("{} {}", tc.qemu_version, oracle.cpu));
        Ok(Emulated { harness, evidence, store: Mutex::new(HashMap::new()), target: PhantomData })
    }

    /// Whether the tools are all here; the error names what is missing (a
    /// machine without them cannot check, as a CPU without a feature
    /// cannot: its specs are skipped, not failed).
    pub fn tools() -> Result<(), String> {
        Toolchain::find(&T::ORACLE.tools).map(|_| ())
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

    /// Runs other cases than the check's (see
    /// [`crate::differential::uniform_edge_cases`]) for many specs, in
    /// `procs` qemu processes at once; by spec name.
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

impl<T: EmulatedTarget> Oracle for Emulated<T> {
    fn name(&self) -> &'static str {
        "emulator"
    }

    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        if instr.target != T::ORACLE.name {
            return Err(OracleError::Unavailable(format!("`{}` is a {} instruction, not {}", instr.name, instr.target, T::ORACLE.name)));
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
