//! The x86 oracle: the instruction itself on this CPU.

use crate::oracle::{Oracle, OracleError};
use misaal_isa::{BitVec, Instr};

pub struct X86Silicon;

impl Oracle for X86Silicon {
    fn name(&self) -> &'static str {
        "silicon"
    }

    fn available(&self, instr: &Instr) -> Result<(), OracleError> {
        if instr.target != "x86" {
            return Err(OracleError::Unavailable(format!("`{}` is a {} instruction, not x86", instr.name, instr.target)));
        }
        let Some(x) = misaal_oracle_x86::lookup(&instr.name) else {
            return Err(OracleError::Unavailable(format!("no core::arch glue for `{}` (see the build warnings of misaal-oracle-x86)", instr.name)));
        };
        let missing = x.missing_features();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(OracleError::Unavailable(format!("this CPU lacks {} needed by `{}`", missing.join(", "), instr.name)))
        }
    }

    fn run_batch(&self, instr: &Instr, cases: &[Vec<BitVec>]) -> Result<Vec<BitVec>, OracleError> {
        self.available(instr)?;
        let x = misaal_oracle_x86::lookup(&instr.name).expect("checked by available");
        let width = instr.ret.width();
        cases
            .iter()
            .map(|ops| {
                let bytes: Vec<Vec<u8>> = ops.iter().map(|o| o.to_bytes_le()).collect();
                let refs: Vec<&[u8]> = bytes.iter().map(|b| b.as_slice()).collect();
                let out = x.call(&refs).map_err(|m| OracleError::Unavailable(format!("this CPU lacks {}", m.join(", "))))?;
                Ok(BitVec::from_bytes_le(width, &out))
            })
            .collect()
    }
}
