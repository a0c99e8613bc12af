//! The oracle interface. An oracle runs real instructions: natively (x86 on
//! this CPU) or in one emulator process per batch (qemu for ARM and HVX,
//! where each start-up costs about 10 ms), so the interface takes batches.

use misaal_isa::{BitVec, Instr};

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
