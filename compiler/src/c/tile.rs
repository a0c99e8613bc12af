//! Register tiles: accumulator allocations larger than the register file
//! that the kernel reads and writes only at constant offsets (matmul's
//! `acc`), whose placement (registers or memory) the backend decides.

use super::*;

/// Whether `body` allocates a tile larger than the 16 ymm registers (over
/// 512 bytes, constant extents) that it only reads and writes at constant
/// offsets: an accumulator GCC would otherwise split into registers.
pub(super) fn has_register_tile(body: &Stmt) -> bool {
    let mut tiles: Vec<String> = Vec::new();
    body.visit(&mut |s| {
        if let Stmt::Allocate { name, ty, extents, condition: None, .. } = s {
            let n = extents.iter().map(const_int).try_fold(ty.lanes as i128, |acc, x| x.and_then(|x| acc.checked_mul(x)));
            if n.is_some_and(|n| n * ((ty.bits as i128 + 7) / 8) > 512) {
                tiles.push(name.clone());
            }
        }
    });
    let constant = |i: &Expr| match &i.kind {
        ExprKind::Ramp { base, stride, .. } => const_int(base).is_some() && const_int(stride).is_some(),
        _ => const_int(i).is_some(),
    };
    tiles.retain(|t| {
        let mut ok = true;
        body.visit(&mut |s| {
            if let Stmt::Store { name, index, .. } = s
                && name == t
            {
                ok &= constant(index);
            }
        });
        body.visit_exprs(&mut |e| {
            if let ExprKind::Load { name, index, .. } = &e.kind
                && name == t
            {
                ok &= constant(index);
            }
            // Passed by name (to a call): not a tile.
            if let ExprKind::Var(v) = &e.kind {
                ok &= v != t;
            }
        });
        ok
    });
    !tiles.is_empty()
}

