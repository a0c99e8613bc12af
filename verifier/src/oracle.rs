//! The oracle interface. An oracle runs real instructions: natively (x86 on
//! this CPU) or in one emulator process per batch (qemu for ARM and HVX,
//! where each start-up costs about 10 ms), so the interface takes batches.

use misaal_isa::{BitVec, Instr};
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OracleError {
    /// The oracle cannot run this instruction here (missing CPU feature,
    /// missing emulator, no glue). The spec stays unverified.
    Unavailable(String),
    /// The oracle itself failed (emulator crash, harness build error).
    Failed(String),
}

impl std::fmt::Display for OracleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OracleError::Unavailable(s) => write!(f, "unavailable: {s}"),
            OracleError::Failed(s) => write!(f, "oracle failed: {s}"),
        }
    }
}

impl std::error::Error for OracleError {}

pub trait Oracle: Sync {
    /// Short name recorded as the verification level, e.g. `silicon`.
    fn name(&self) -> &'static str;
    /// Whether `instr` can run here; `Unavailable` says why not.
    fn available(&self, instr: &Instr) -> Result<(), OracleError>;
    /// Runs `instr` on every case (operands in spec order, immediates
    /// included) and returns one result per case.
    fn run_batch(&self, instr: &Instr, cases: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError>;
}

/// x86's oracle, allowed only some CPU features (`--cpu-features`): it can
/// only make specs unavailable, never vouch for more than the CPU does.
pub struct Restricted<'a> {
    inner: &'a dyn Oracle,
    /// The features allowed, with the SSE/AVX levels each implies.
    pub allowed: BTreeSet<String>,
}

impl<'a> Restricted<'a> {
    pub fn new(inner: &'a dyn Oracle, list: &str) -> Self {
        // Each SSE/AVX level implies those below it, as CPUID levels do.
        const CHAIN: [&str; 8] = ["sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2"];
        let mut allowed = BTreeSet::new();
        for f in list.split(',').map(|f| f.trim().replace('.', "_")).filter(|f| !f.is_empty()) {
            if let Some(k) = CHAIN.iter().position(|c| *c == f) {
                allowed.extend(CHAIN[..=k].iter().map(|c| c.to_string()));
            }
            allowed.insert(f);
        }
        Restricted { inner, allowed }
    }
}

impl Oracle for Restricted<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        let banned: Vec<&str> = instr.features.iter().filter(|f| !self.allowed.contains(*f)).map(String::as_str).collect();
        if !banned.is_empty() {
            return Err(OracleError::Unavailable(format!("--cpu-features leaves out {} needed by `{}`", banned.join(", "), instr.name)));
        }
        self.inner.available(instr)
    }
    fn run_batch(&self, instr: &Instr, cases: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError> {
        self.available(instr)?;
        self.inner.run_batch(instr, cases)
    }
}

/// The oracle of a machine without the HVX tools: every spec is unavailable,
/// and the reason names the missing tool.
pub struct NoTools(pub String);

impl Oracle for NoTools {
    fn name(&self) -> &'static str {
        "emulator"
    }
    fn available(&self, _: &Instr) -> Result<(), OracleError> {
        Err(OracleError::Unavailable(self.0.clone()))
    }
    fn run_batch(&self, _: &Instr, _: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError> {
        Err(OracleError::Unavailable(self.0.clone()))
    }
}
