//! Register tiles: accumulator allocations larger than the register file
//! that the kernel reads and writes only at constant offsets (matmul's
//! `acc`), whose placement (registers or memory) the backend decides.

use super::*;

/// The vector register file code for `isel` may use, in bits: AVX-512's
/// 32 zmm registers when the compile holds values in zmm (`--zmm` on an
/// AVX-512F target), else AVX2's 16 ymm registers.
pub(super) fn register_file_bits(isel: Option<&crate::isel::Options>) -> u64 {
    let zmm = isel.is_some_and(|o| o.zmm && o.features.as_ref().is_some_and(|f| f.register_bits("x86", 256) == 512));
    if zmm { 32 * 512 } else { 16 * 256 }
}

/// Whether `body` allocates a tile larger than the register file
/// (`file_bits`; constant extents) that it only reads and writes at
/// constant offsets: an accumulator GCC would otherwise split into
/// registers. (matmul's 1 KiB tile is such a tile for 16 ymm registers,
/// not for 32 zmm ones.)
pub(super) fn has_register_tile(body: &Stmt, file_bits: u64) -> bool {
    let mut tiles: Vec<String> = Vec::new();
    body.visit(&mut |s| {
        if let Stmt::Allocate { name, ty, extents, condition: None, .. } = s {
            let n = extents.iter().map(const_int).try_fold(ty.lanes as i128, |acc, x| x.and_then(|x| acc.checked_mul(x)));
            if n.is_some_and(|n| n * ((ty.bits as i128 + 7) / 8) > (file_bits / 8) as i128) {
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


/// Accumulator bits a split loop may keep in registers: half the register
/// file (8 ymm, or 16 zmm registers), leaving room for the shared loads
/// and broadcasts of a step.
fn split_budget_bits(file_bits: u64) -> u64 {
    file_bits / 2
}

/// Loop fission of register-tile accumulations. A serial loop whose body is
/// only stores `T[ramp(c, 1, n)] = f(T[ramp(c, 1, n)], loads)`, to one
/// buffer at distinct constant offsets, each reading `T` only at its own
/// offset and writing nothing else, is a set of independent recurrences:
/// running the loop once per group of stores computes the same values.
/// The stores are grouped by the vector loads they read (matmul's stores of
/// one column of the tile share the row of `b`), groups merged up to
/// [`split_budget_bits`]. Each split loop's accumulators then fit in
/// registers, where the whole tile (32 ymm registers' worth in matmul's
/// k loop, 16 in conv_nn's) was stored and reloaded every step: GCC keeps
/// them in memory, bound by one 256-bit store a cycle. The loads of `b` are
/// still read once per step over all groups; only the scalar broadcasts
/// (`a[k]`) are read once per group.
pub(super) fn split_tile_loops(s: &Stmt, file_bits: u64) -> Stmt {
    let rec = |b: &Stmt| Box::new(split_tile_loops(b, file_bits));
    match s {
        Stmt::For { name, kind: ForKind::Serial, min, extent, body } => {
            let body = split_tile_loops(body, file_bits);
            match tile_groups(&body, split_budget_bits(file_bits)) {
                Some(groups) => Stmt::Block(
                    groups
                        .into_iter()
                        .map(|g| Stmt::For { name: name.clone(), kind: ForKind::Serial, min: min.clone(), extent: extent.clone(), body: Box::new(Stmt::Block(g)) })
                        .collect(),
                ),
                None => Stmt::For { name: name.clone(), kind: ForKind::Serial, min: min.clone(), extent: extent.clone(), body: Box::new(body) },
            }
        }
        Stmt::For { name, kind, min, extent, body } => Stmt::For { name: name.clone(), kind: *kind, min: min.clone(), extent: extent.clone(), body: rec(body) },
        Stmt::Let { name, value, body } => Stmt::Let { name: name.clone(), value: value.clone(), body: rec(body) },
        Stmt::ProducerConsumer { name, is_producer, body } => Stmt::ProducerConsumer { name: name.clone(), is_producer: *is_producer, body: rec(body) },
        Stmt::IfThenElse { cond, then_case, else_case } => Stmt::IfThenElse { cond: cond.clone(), then_case: rec(then_case), else_case: else_case.as_ref().map(|e| rec(e)) },
        Stmt::Allocate { name, ty, extents, memory, condition, body } => {
            Stmt::Allocate { name: name.clone(), ty: *ty, extents: extents.clone(), memory: memory.clone(), condition: condition.clone(), body: rec(body) }
        }
        Stmt::Atomic { mutex, body } => Stmt::Atomic { mutex: mutex.clone(), body: rec(body) },
        Stmt::Block(v) => Stmt::Block(v.iter().map(|s| split_tile_loops(s, file_bits)).collect()),
        other => other.clone(),
    }
}

/// The groups of [`split_tile_loops`], if `body` is such a loop body and
/// splitting it leaves more than one group.
fn tile_groups(body: &Stmt, budget: u64) -> Option<Vec<Vec<Stmt>>> {
    let Stmt::Block(stores) = body else { return None };
    if stores.len() < 2 {
        return None;
    }
    let dense = |i: &Expr| match &i.kind {
        ExprKind::Ramp { base, stride, lanes } if const_int(stride) == Some(1) => const_int(base).map(|b| (b, *lanes as i128)),
        _ => None,
    };
    let mut tile: Option<&str> = None;
    let mut spans: Vec<(i128, i128)> = Vec::new();
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut total_bits = 0u64;
    for s in stores {
        let Stmt::Store { name, index, value, predicate: None, .. } = s else { return None };
        if *tile.get_or_insert(name) != name {
            return None;
        }
        let (b, n) = dense(index)?;
        if spans.iter().any(|&(b2, n2)| b < b2 + n2 && b2 < b + n) {
            return None;
        }
        spans.push((b, n));
        total_bits += value.ty.total_bits();
        // The value reads the tile only at its own offset, calls nothing
        // but pure intrinsics, and its vector loads are its group key.
        let mut ok = true;
        let mut key: Vec<String> = Vec::new();
        value.visit(&mut |e| match &e.kind {
            ExprKind::Load { name: l, index: li, .. } if l == name => ok &= dense(li) == Some((b, n)),
            ExprKind::Load { .. } if e.ty.lanes > 1 => key.push(e.to_string()),
            ExprKind::Call { callee, .. } => ok &= matches!(callee, Callee::Intrinsic(_)),
            // Each split loop computes its broadcasts again: only a load (or
            // a cast of one) is cheap enough to repeat. conv_nn's
            // `x16(int16(input[..]) - int16(zero))` is five instructions per
            // row and step; split four ways its k loop ran 9% slower.
            ExprKind::Broadcast { value, .. } => ok &= cheap_scalar(value),
            ExprKind::Var(v) => ok &= v != name,
            _ => {}
        });
        if !ok {
            return None;
        }
        key.sort();
        key.dedup();
        keys.push(key);
    }
    // Only a tile that does not fit the register file as it is.
    if total_bits <= 2 * budget {
        return None;
    }
    // Stores with the same loads, in order of first appearance.
    let mut order: Vec<Vec<String>> = Vec::new();
    for k in &keys {
        if !order.contains(k) {
            order.push(k.clone());
        }
    }
    let mut groups: Vec<(u64, Vec<Stmt>)> = Vec::new();
    for k in &order {
        let members: Vec<Stmt> = stores.iter().zip(&keys).filter(|(_, k2)| *k2 == k).map(|(s, _)| s.clone()).collect();
        let bits: u64 = members.iter().map(|s| if let Stmt::Store { value, .. } = s { value.ty.total_bits() } else { 0 }).sum();
        if bits > budget {
            return None;
        }
        match groups.last_mut() {
            Some((b, g)) if *b + bits <= budget => {
                *b += bits;
                g.extend(members);
            }
            _ => groups.push((bits, members)),
        }
    }
    (groups.len() > 1).then(|| groups.into_iter().map(|(_, g)| g).collect())
}

/// A scalar that is a load, a variable or a constant, or a cast of one.
fn cheap_scalar(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Cast(a) => cheap_scalar(a),
        ExprKind::Load { .. } | ExprKind::Var(_) | ExprKind::Int(_) | ExprKind::UInt(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(name: &str) -> Stmt {
        let f = concat!(env!("CARGO_MANIFEST_DIR"), "/../benchmarks/stmt/");
        let text = std::fs::read_to_string(format!("{f}{name}.stmt")).expect("read");
        let m = misaal_frontends::stmt::parse_module(name, &text).expect("parses");
        m.funcs.into_iter().find(|f| f.linkage != Linkage::Internal).expect("external").body
    }

    /// The serial loops named `var` and the stores in each one's body.
    fn loops(s: &Stmt, var: &str) -> Vec<usize> {
        let mut v = Vec::new();
        s.visit(&mut |s| {
            if let Stmt::For { name, body, .. } = s
                && name == var
            {
                let mut n = 0;
                body.visit(&mut |s| n += matches!(s, Stmt::Store { .. }) as usize);
                v.push(n);
            }
        });
        v
    }

    #[test]
    fn a_matmul_k_loop_is_split_by_tile_column() {
        let b = body("matmul_b1");
        assert_eq!(loops(&b, "acc.s1.k$x"), vec![16]);
        // Four loops of four stores: each keeps 8 ymm accumulators, the
        // stores of one column (one row of b) together.
        let s = split_tile_loops(&b, 16 * 256);
        assert_eq!(loops(&s, "acc.s1.k$x"), vec![4, 4, 4, 4]);
        let mut offsets: Vec<Vec<i128>> = Vec::new();
        s.visit(&mut |s| {
            if let Stmt::For { name, body, .. } = s
                && name == "acc.s1.k$x"
            {
                let mut o = Vec::new();
                body.visit(&mut |s| {
                    if let Stmt::Store { index, .. } = s
                        && let ExprKind::Ramp { base, .. } = &index.kind
                    {
                        o.push(const_int(base).expect("constant"));
                    }
                });
                offsets.push(o);
            }
        });
        assert_eq!(offsets, vec![vec![0, 64, 128, 192], vec![16, 80, 144, 208], vec![32, 96, 160, 224], vec![48, 112, 176, 240]]);
    }

    #[test]
    fn a_loop_whose_broadcasts_compute_is_not_split() {
        // conv_nn's broadcasts are differences (five instructions each),
        // which every split loop would compute again.
        let b = body("conv_nn");
        assert_eq!(loops(&split_tile_loops(&b, 16 * 256), "acc.s1.r$x"), loops(&b, "acc.s1.r$x"));
        // A stencil has no tile loop: nothing changes.
        let b = body("blur3x3");
        assert_eq!(split_tile_loops(&b, 16 * 256), b);
    }
}
