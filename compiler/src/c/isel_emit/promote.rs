//! Small accumulator buffers held in vector registers.
//!
//! An allocation whose every access is a dense, unpredicated vector load or
//! store at a constant offset, in whole registers on register boundaries,
//! and which never escapes (no scalar, gathered or variable-offset access,
//! never named as a value) is one C local per register instead of a stack
//! array, as Halide's own allocations become LLVM values (fully_connected's
//! `acc`). GCC scalarizes such an array too, but into the canonical
//! register type (NEON's `uint8x16_t`), which it then fails to coalesce
//! with the `int32x4_t` adds updating it: a `mov` per accumulator per
//! iteration. The locals take the element type ([`Dialect::typed_reg`]).
//!
//! The emitter handles every access whatever the analysis admitted: a dense
//! access on the register grid reads or assigns locals; any other (a naive
//! lane loop, a scalar) goes through a temporary array the locals are
//! spilled to (and, for a store, reloaded from).

use super::*;
use crate::c::const_int;
use std::ops::Range;

/// An allocation held in locals.
#[derive(Clone, Debug)]
pub(in crate::c) struct Promoted {
    /// Bits per local: a register width.
    chunk: u32,
    /// The locals, low addresses first.
    locals: Vec<String>,
    elem: Type,
    /// The locals' conversions to and from the canonical register type,
    /// where their type is another ([`Dialect::typed_reg`]).
    to_reg: Option<String>,
    from_reg: Option<String>,
}

/// The constant element range `[base, base + lanes)` of a dense,
/// unpredicated access, if it is one.
fn dense_const(index: &Expr, predicate: bool) -> Option<(i128, i128)> {
    let ExprKind::Ramp { base, stride, lanes } = &index.kind else { return None };
    (!predicate && base.ty.lanes == 1 && const_int(stride) == Some(1)).then_some(())?;
    Some((const_int(base)?, *lanes as i128))
}

/// The register layout of allocation `name` of `ty` (constant `extents`)
/// if every access to it in `body` is a dense vector load or store at a
/// constant offset that `load_pieces` splits into the same registers
/// (`min(bits, reg_bits)` wide, on their boundaries) and it never escapes:
/// (bits per register, registers). None beyond `budget_bits` of registers.
pub(in crate::c) fn layout(name: &str, ty: Type, extents: &[Expr], body: &Stmt, reg_bits: u32, budget_bits: u64) -> Option<(u32, usize)> {
    if ty.lanes != 1 || !ty.is_int_or_uint() {
        return None;
    }
    let n = extents.iter().map(const_int).try_fold(1i128, |acc, x| x.and_then(|x| acc.checked_mul(x)))?;
    // Each access's element range, None for one that is not dense and
    // constant (or is named or shadowed otherwise).
    let mut accesses: Vec<Option<(i128, i128)>> = Vec::new();
    let access = |index: &Expr, t: Type, predicate: bool| dense_const(index, predicate).filter(|_| t.bits == ty.bits && t.is_int_or_uint());
    body.visit(&mut |s| match s {
        Stmt::Store { name: b, index, value, predicate, .. } if b == name => accesses.push(access(index, value.ty, predicate.is_some())),
        Stmt::Allocate { name: b, .. } | Stmt::Let { name: b, .. } | Stmt::For { name: b, .. } if b == name => accesses.push(None),
        _ => {}
    });
    body.visit_exprs(&mut |e| match &e.kind {
        ExprKind::Load { name: b, index, predicate, .. } if b == name => accesses.push(access(index, e.ty, predicate.is_some())),
        ExprKind::Var(b) | ExprKind::Let { name: b, .. } if b == name => accesses.push(None),
        _ => {}
    });
    let accesses: Vec<(i128, i128)> = accesses.into_iter().collect::<Option<_>>()?;
    let mut ok = true;
    let elem = ty.bits as i128;
    let chunk = accesses.first().map(|&(_, lanes)| (lanes * elem).min(reg_bits as i128))?;
    for &(base, lanes) in &accesses {
        let bits = lanes * elem;
        ok &= bits.min(reg_bits as i128) == chunk && bits % chunk == 0 && (base * elem) % chunk == 0 && base >= 0 && base + lanes <= n;
    }
    let count = n * elem / chunk;
    (ok && count > 0 && (count * chunk) as u64 <= budget_bits).then_some((chunk as u32, count as usize))
}

impl Emitter<'_> {
    /// `allocate`'s hook: declares `name`'s locals if it [qualifies](layout)
    /// (and selection is on for the function); its binding's C name, else
    /// None (an array as before).
    pub(in crate::c) fn promote(&mut self, name: &str, ty: Type, extents: &[Expr], condition: Option<&Expr>, body: &Stmt) -> R<Option<String>> {
        let Some(st) = self.g.isel.as_ref().filter(|st| st.sel.is_some()) else { return Ok(None) };
        if condition.is_some_and(|c| const_int(c) != Some(1)) {
            return Ok(None);
        }
        let reg = st.target.register_bits as u32;
        // x86: up to its register file (16 ymm, 32 zmm); a larger tile is
        // left in memory on purpose (`has_register_tile`, no SRA). Else up
        // to twice the 32 registers: GCC scalarizes such a tile anyway, and
        // typed locals spill less (ARM matmul's 64-register k loop: 139 ->
        // 102 cycles under llvm-mca).
        let file = reg as u64 * if st.target.isa != "x86" { 64 } else if reg < 512 { 16 } else { 32 };
        let Some((chunk, count)) = layout(name, ty, extents, body, reg, file) else { return Ok(None) };
        let Ok(rt) = self.reg_type(chunk) else { return Ok(None) };
        let (lt, to_reg, from_reg) = match self.dialect().typed_reg(chunk, ty.is_int(), ty.bits as u32) {
            Some((t, to, from)) => (t, Some(to), Some(from)),
            None => (rt, None, None),
        };
        // Zeroed, as no path reads a local before it is assigned otherwise
        // (a Stmt reading before writing read garbage from the array).
        let z = format!("({})0", self.dialect().scalar_type(8).map_err(CompileError::unsupported)?);
        let (zero, f) = self.dialect().splat(chunk, 8, &z).map_err(CompileError::unsupported)?;
        let init = from_reg.as_ref().map_or(zero.clone(), |c| format!("{c}({zero})"));
        let cname = self.fresh_var(name);
        let locals: Vec<String> = (0..count).map(|k| format!("{cname}_{k}")).collect();
        for l in &locals {
            self.line(&format!("{lt} {l} = {init};"));
            self.count(&f);
        }
        self.promoted.insert(cname.clone(), Promoted { chunk, locals, elem: ty, to_reg, from_reg });
        Ok(Some(cname))
    }

    /// Buffer `name`'s locals, if it is held in them.
    pub(in crate::c) fn promoted(&self, name: &str) -> Option<Promoted> {
        self.lookup(name).ok().and_then(|b| self.promoted.get(&b.cname)).cloned()
    }

    /// The locals a dense access of type `t` at `index` covers exactly.
    fn chunks_of(p: &Promoted, index: &Expr, t: Type, predicate: bool) -> Option<Range<usize>> {
        let (base, lanes) = dense_const(index, predicate)?;
        let (elem, chunk) = (p.elem.bits as i128, p.chunk as i128);
        let (start, bits) = (base * elem, lanes * elem);
        let fits = t.bits == p.elem.bits && start >= 0 && start % chunk == 0 && bits % chunk == 0 && (start + bits) / chunk <= p.locals.len() as i128;
        fits.then(|| (start / chunk) as usize..((start + bits) / chunk) as usize)
    }

    /// A fresh register holding local `k` (a copy: the local may be
    /// assigned while the value is still in use, as a `let`).
    fn read_local(&mut self, p: &Promoted, k: usize) -> R<String> {
        let rt = self.reg_type(p.chunk)?;
        let r = self.fresh("r");
        let e = match &p.to_reg {
            Some(f) => format!("{f}({})", p.locals[k]),
            None => p.locals[k].clone(),
        };
        self.line(&format!("{rt} {r} = {e};"));
        Ok(r)
    }

    fn write_local(&mut self, p: &Promoted, k: usize, reg: &str) {
        let e = match &p.from_reg {
            Some(f) => format!("{f}({reg})"),
            None => reg.to_string(),
        };
        self.line(&format!("{} = {e};", p.locals[k]));
    }

    /// A dense load of `name` (a selection leaf) read from its locals, if
    /// it covers them exactly.
    pub(super) fn load_promoted(&mut self, p: &Promoted, e: &Expr) -> R<Option<Val>> {
        let ExprKind::Load { index, predicate, .. } = &e.kind else { return Ok(None) };
        let Some(ks) = Self::chunks_of(p, index, e.ty, predicate.is_some()) else { return Ok(None) };
        let mut regs = Vec::new();
        for k in ks {
            regs.push(self.read_local(p, k)?);
        }
        Ok(Some(if regs.len() == 1 { Val::Reg(regs.remove(0), p.chunk) } else { Val::Regs(regs, p.chunk) }))
    }

    /// Registers `regs` (of `bits` each) stored densely at `index`: assigned
    /// to the locals if they are those locals' registers.
    pub(super) fn store_promoted_regs(&mut self, p: &Promoted, index: &Expr, ty: Type, regs: &[String], bits: u32) -> bool {
        match Self::chunks_of(p, index, ty, false) {
            Some(ks) if bits == p.chunk && ks.len() == regs.len() => {
                for (k, r) in ks.zip(regs) {
                    self.write_local(p, k, r);
                }
                true
            }
            _ => false,
        }
    }

    /// Lane array `arr` of type `ty` stored at `index` (unpredicated):
    /// loaded into the locals it covers, if it covers whole ones.
    pub(in crate::c) fn store_promoted_array(&mut self, p: &Promoted, index: &Expr, ty: Type, arr: &str) -> R<bool> {
        let Some(ks) = Self::chunks_of(p, index, ty, false) else { return Ok(false) };
        let first = ks.start;
        for k in ks {
            let r = self.load_reg(p.chunk, &format!("((const char *){arr} + {})", (k - first) as u32 * p.chunk / 8))?;
            self.write_local(p, k, &r);
        }
        Ok(true)
    }

    /// The locals stored to a fresh array (for an access they cannot
    /// serve): its name, a pointer to the buffer's elements.
    pub(in crate::c) fn spill_promoted(&mut self, p: &Promoted) -> R<String> {
        let (ct, align) = (ctype(p.elem)?, self.isel().target.register_bits / 8);
        let tmp = self.fresh("spill");
        self.line(&format!("{ct} {tmp}[{}] __attribute__((aligned({align})));", p.locals.len() as u64 * p.chunk as u64 / p.elem.bits as u64));
        for k in 0..p.locals.len() {
            let r = self.read_local(p, k)?;
            self.store_reg(p.chunk, &format!("((char *){tmp} + {})", k as u32 * p.chunk / 8), &r)?;
        }
        Ok(tmp)
    }

    /// The locals a dense load (`index`, type `t`) covers exactly, stored
    /// to a fresh lane array of `t`: its name, if they are whole locals.
    pub(in crate::c) fn spill_load(&mut self, p: &Promoted, index: &Expr, t: Type, predicate: bool) -> R<Option<String>> {
        let Some(ks) = Self::chunks_of(p, index, t, predicate) else { return Ok(None) };
        let (ct, align) = (ctype(t.element())?, self.isel().target.register_bits / 8);
        let tmp = self.fresh("spill");
        self.line(&format!("{ct} {tmp}[{}] __attribute__((aligned({align})));", t.lanes));
        let first = ks.start;
        for k in ks {
            let r = self.read_local(p, k)?;
            self.store_reg(p.chunk, &format!("((char *){tmp} + {})", (k - first) as u32 * p.chunk / 8), &r)?;
        }
        Ok(Some(tmp))
    }

    /// The locals reloaded from `tmp` after a store to it.
    pub(in crate::c) fn reload_promoted(&mut self, p: &Promoted, tmp: &str) -> R<()> {
        for k in 0..p.locals.len() {
            let r = self.load_reg(p.chunk, &format!("((const char *){tmp} + {})", k as u32 * p.chunk / 8))?;
            self.write_local(p, k, &r);
        }
        Ok(())
    }

    /// The element pointer of buffer `name` for a read: a promoted
    /// buffer's locals spilled, else its pointer.
    pub(in crate::c) fn read_host(&mut self, name: &str) -> R<String> {
        match self.promoted(name) {
            Some(p) => self.spill_promoted(&p),
            None => self.host(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misaal_frontends::stmt::parse_module;

    /// `layout` of `acc` (int32 * 16) in a loop whose body is `body`, for
    /// 256-bit registers and a budget of `budget` bits.
    fn layout_of(body: &str, budget: u64) -> Option<(u32, usize)> {
        let text = format!(
            "module name=t, target=x86-64-linux-avx2\nexternal func t (a, o) {{\n\
             let a = (void *)_halide_buffer_get_host((struct halide_buffer_t *)a.buffer)\n\
             let o = (void *)_halide_buffer_get_host((struct halide_buffer_t *)o.buffer)\n\
             allocate acc[int32 * 16]\n\
             for (k, 0, 4) {{\n{body}\n}}\n\
             free acc\n}}\n"
        );
        let m = parse_module("t", &text).expect("parses");
        let mut got = None;
        m.funcs[0].body.visit(&mut |s| {
            if let Stmt::Allocate { name, ty, extents, body, .. } = s {
                got = Some(layout(name, *ty, extents, body, 256, budget));
            }
        });
        got.expect("an allocation")
    }

    const DENSE: &str = " acc[ramp(0, 1, 8)] = (int32x8)acc[ramp(0, 1, 8)] + (int32x8)a[ramp(k*8, 1, 8)]\n \
                         acc[ramp(8, 1, 8)] = (int32x8)acc[ramp(8, 1, 8)] + (int32x8)a[ramp(k*8, 1, 8)]\n \
                         o[ramp(k*16, 1, 16)] = (int32x16)acc[ramp(0, 1, 16)]";

    #[test]
    fn dense_constant_register_accesses_qualify() {
        assert_eq!(layout_of(DENSE, 4096), Some((256, 2)));
        // Over the budget: left in memory.
        assert_eq!(layout_of(DENSE, 256), None);
    }

    #[test]
    fn any_other_access_keeps_the_array() {
        let variable = format!("{DENSE}\n acc[ramp(k*8 % 16, 1, 8)] = (int32x8)a[ramp(k*8, 1, 8)]");
        let scalar = format!("{DENSE}\n o[k] = (int32)acc[3]");
        // 128 bits where the others are 256: another partition.
        let narrow = format!("{DENSE}\n o[ramp(k*4, 1, 4)] = (int32x4)acc[ramp(0, 1, 4)]");
        let unaligned = format!("{DENSE}\n o[ramp(k*8, 1, 8)] = (int32x8)acc[ramp(4, 1, 8)]");
        let predicated = format!("{DENSE}\n predicate (x8(k) < ramp(0, 1, 8))\n acc[ramp(0, 1, 8)] = x8(k)");
        let predicated_load = format!("{DENSE}\n o[ramp(k*8, 1, 8)] = (int32x8)acc[ramp(0, 1, 8)] if (x8(k) < ramp(0, 1, 8))");
        let escapes = format!("{DENSE}\n o[k] = (int32)halide_peek(acc)");
        for (what, body) in [("variable", variable), ("scalar", scalar), ("narrow", narrow), ("unaligned", unaligned), ("predicated", predicated), ("predicated load", predicated_load), ("escapes", escapes)] {
            assert_eq!(layout_of(&body, 4096), None, "{what}");
        }
    }
}
