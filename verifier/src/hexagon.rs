//! The HVX oracle: `Q6_*` intrinsics under `qemu-hexagon -cpu v67`, through
//! a freestanding C harness (`misaal-oracle-hvx`), batched as every
//! emulated target's is ([`crate::emulated`]).

use crate::emulated::{Emulated, EmulatedTarget};
use misaal_isa::Instr;
use misaal_oracle_hvx::{Harness, Toolchain};

pub struct Hvx;

pub type HvxQemu = Emulated<Hvx>;

impl EmulatedTarget for Hvx {
    const NAME: &'static str = "hvx";
    fn tools() -> Result<(), String> {
        Toolchain::find().map(|_| ())
    }
    fn harness(instrs: &[&Instr]) -> Result<(Harness, String), String> {
        let tc = Toolchain::find()?;
        Ok((misaal_oracle_hvx::harness::build(&tc, instrs)?, format!("{} -cpu v67 (HVX 128B)", tc.qemu_version)))
    }
}
