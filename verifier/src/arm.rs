//! The ARM oracle: NEON intrinsics under `qemu-aarch64 -cpu max`, through a
//! cross-compiled C harness (`misaal-oracle-arm`), batched as every
//! emulated target's is ([`crate::emulated`]).

use crate::emulated::{Emulated, EmulatedTarget};
use misaal_isa::Instr;
use misaal_oracle_arm::{Harness, Toolchain};

pub struct Arm;

pub type ArmQemu = Emulated<Arm>;

impl EmulatedTarget for Arm {
    const NAME: &'static str = "arm";
    fn tools() -> Result<(), String> {
        Toolchain::find().map(|_| ())
    }
    fn harness(instrs: &[&Instr]) -> Result<(Harness, String), String> {
        let tc = Toolchain::find()?;
        Ok((misaal_oracle_arm::harness::build(&tc, instrs)?, format!("{} -cpu max", tc.qemu_version)))
    }
}
