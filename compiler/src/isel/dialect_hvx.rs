//! Hexagon HVX (128-byte mode): owned by the hvx-compile work. Until it
//! is written every method refuses, so an HVX root is lowered naively and
//! counted (never wrong code).

use super::{Arg, Call, Dialect, Ret};
use misaal_isa::ast::Ty;

pub struct Hvx;

const TODO: &str = "HVX emission is not written yet (compiler/src/isel/dialect_hvx.rs)";

impl Dialect for Hvx {
    fn isa(&self) -> &'static str {
        "hvx"
    }
    fn header(&self) -> &'static str {
        "#include <hexagon_types.h>\n#include <hexagon_protos.h>\n\n"
    }
    fn reg_type(&self, _bits: u32) -> Result<String, String> {
        Err(TODO.into())
    }
    fn load(&self, _bits: u32, _ptr: &str) -> Result<(String, String), String> {
        Err(TODO.into())
    }
    fn store(&self, _bits: u32, _ptr: &str, _reg: &str) -> Result<(String, String), String> {
        Err(TODO.into())
    }
    fn scalar_type(&self, _bits: u32) -> Result<&'static str, String> {
        Err(TODO.into())
    }
    fn splat(&self, _bits: u32, _elem: u32, _arg: &str) -> Result<(String, String), String> {
        Err(TODO.into())
    }
    fn half(&self, _bits: u32, _reg: &str, _hi: bool) -> Option<(String, String)> {
        None
    }
    fn register_operand(&self, _name: &str, _k: Option<usize>, bits: u32) -> bool {
        bits > 64
    }
    fn call(&self, _name: &str, _args: &[Arg], _params: &[Ty], _ret: Ret) -> Result<Call, String> {
        Err(TODO.into())
    }
}
