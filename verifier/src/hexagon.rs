//! The HVX oracle: `Q6_*` intrinsics under `qemu-hexagon -cpu v67`, through
//! a freestanding C harness (`misaal-oracle-hvx`).
//!
//! Like [`crate::qemu::ArmQemu`], [`HvxQemu::prefetch`] runs every case
//! [`crate::check_against`] will ask for, of every spec, in a few qemu
//! processes up front; `run_batch` answers from that store, and only
//! shrinking starts new processes.

use crate::differential::{DiffConfig, cases_for};
use crate::oracle::{Oracle, OracleError};
use misaal_isa::{BitVec, Instr};
use misaal_oracle_hvx::{Harness, Problem, Toolchain};
use std::collections::HashMap;
use std::sync::Mutex;

type Store = Mutex<HashMap<String, (Vec<Vec<BitVec>>, Vec<BitVec>)>>;

pub struct HvxQemu {
    harness: Harness,
    /// Evidence for the status table: the emulator, its version and CPU.
    pub evidence: String,
    store: Store,
}

impl HvxQemu {
    /// Whether clang-19, ld.lld-19 and qemu-hexagon are all here; the error
    /// names what is missing (a machine without them cannot check, as a CPU
    /// without a feature cannot: its specs are skipped, not failed).
    pub fn tools() -> Result<(), String> {
        Toolchain::find().map(|_| ())
    }

    /// Finds the tools and builds one harness for `instrs`. The error names
    /// a missing tool, so callers can skip with that message.
    pub fn new(instrs: &[&Instr]) -> Result<HvxQemu, String> {
        let tc = Toolchain::find()?;
        let harness = Harness::build(&tc, instrs)?;
        let evidence = format!("{} -cpu v67 (HVX 128B)", tc.qemu_version);
        Ok(HvxQemu { harness, evidence, store: Mutex::new(HashMap::new()) })
    }

    /// Runs the check's cases of every harnessed spec in `instrs` in `procs`
    /// qemu processes at once. A failed process leaves its specs to
    /// `run_batch`, which reports the failure per spec.
    pub fn prefetch(&self, instrs: &[&Instr], cfg: &DiffConfig, procs: usize) {
        let specs: Vec<&Instr> = instrs.iter().copied().filter(|i| self.harness.contains(&i.name)).collect();
        let chunk = specs.len().div_ceil(procs.max(1)).max(1);
        std::thread::scope(|s| {
            for part in specs.chunks(chunk) {
                s.spawn(move || {
                    // Each thread generates its own specs' cases: with 1024-bit
                    // operands, generating them costs more than running them.
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

impl Oracle for HvxQemu {
    fn name(&self) -> &'static str {
        "emulator"
    }

    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        if instr.target != "hvx" {
            return Err(OracleError::Unavailable(format!("`{}` is a {} instruction, not hvx", instr.name, instr.target)));
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
