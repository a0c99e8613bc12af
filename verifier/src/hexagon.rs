//! The HVX oracle: `Q6_*` intrinsics under `qemu-hexagon -cpu v67`, through
//! a freestanding C harness (`misaal-oracle-hvx`), batched by
//! [`crate::arm::Batched`] like the ARM oracle: every case of every spec
//! runs up front in a few qemu processes.

use crate::oracle::OracleError;
use crate::arm::{BatchHarness, Batched};
use misaal_isa::{BitVec, Instr};
use misaal_oracle_hvx::{Harness, Problem, Toolchain};

pub type HvxQemu = Batched<Harness>;

impl BatchHarness for Harness {
    fn target(&self) -> &'static str {
        "hvx"
    }
    fn contains(&self, name: &str) -> bool {
        Harness::contains(self, name)
    }
    fn problem(&self, name: &str) -> Option<OracleError> {
        self.problems.get(name).map(|p| match p {
            Problem::Unavailable(s) => OracleError::Unavailable(s.clone()),
            Problem::Mismatch(s) => OracleError::Failed(s.clone()),
        })
    }
    fn run(&self, jobs: &[(&str, &[Vec<BitVec>])]) -> Result<Vec<Vec<BitVec>>, String> {
        Harness::run(self, jobs)
    }
}

impl Batched<Harness> {
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
        Ok(Batched::with(harness, evidence))
    }
}
