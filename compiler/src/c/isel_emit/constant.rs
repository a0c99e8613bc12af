//! Constant vectors in emission: data computed at compile time.
//!
//! A vector expression of constants (the encoder's
//! [`is_constant_vector`] leaves, such as Halide's GuardWithIf tail
//! predicate `ramp(0, 1, 24) <= x24(7)`) is evaluated once, here, by the
//! reference interpreter ([`Interp::eval_closed`], the meaning every rule is
//! proved against), and emitted as a `static const` aligned array of its
//! lanes: data, not instructions, so it is no fallback. Its consumers load
//! it into the register they need ([`Emitter::in_reg`]), read it as a lane
//! array, or, for a mask operand, take the mask as one literal.
//!
//! A predicated load or store whose predicate is such a constant (or a
//! `let` bound to one) needs no per-lane branch: all lanes on is a plain
//! access, and otherwise only the active lanes are touched, in a loop over
//! a prefix of lanes or over a constant table of them (an inactive lane's
//! address may be out of bounds). A predicated load's inactive lanes are
//! zero, as in the interpreter.

use super::{CompileError, Emitter, R, Val, ctype};
use crate::isel::encode::{is_closed, is_constant_vector};
use misaal_frontends::interp::Interp;
use misaal_frontends::stmt::ast::{Expr, ExprKind};
use misaal_frontends::stmt::types::Type;

/// The lanes of a constant vector, each its bits zero-extended (a bool
/// lane is 0 or 1).
pub(super) type Lanes = Vec<u64>;

/// Which lanes of a constant predicate are on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::c) enum ConstMask {
    /// Every lane: a plain access.
    All,
    /// Lanes `0..k` (k may be 0).
    Prefix(u32),
    /// These lanes, in order.
    Lanes(Vec<u32>),
}

impl ConstMask {
    fn of(on: &[bool]) -> ConstMask {
        let k = on.iter().take_while(|&&b| b).count();
        if k == on.len() {
            ConstMask::All
        } else if on[k..].iter().all(|&b| !b) {
            ConstMask::Prefix(k as u32)
        } else {
            ConstMask::Lanes(on.iter().enumerate().filter(|(_, b)| **b).map(|(l, _)| l as u32).collect())
        }
    }
}

/// A lane's C literal in an initializer of element type `t`.
fn lane_literal(t: Type, v: u64) -> String {
    let bits = t.bits.clamp(1, 64) as u32;
    if t.is_int() {
        let x = ((v << (64 - bits)) as i64) >> (64 - bits);
        match (bits, x) {
            (64, i64::MIN) => "(-9223372036854775807LL - 1)".into(),
            (64, x) => format!("{x}LL"),
            (32, x) if x == i32::MIN as i64 => "(-2147483647 - 1)".into(),
            (_, x) => x.to_string(),
        }
    } else if bits == 64 {
        format!("{v}ULL")
    } else {
        format!("{v}u")
    }
}

impl Emitter<'_> {
    /// The lanes of closed vector expression `e`, by the reference
    /// interpreter; `None` when isel is off (no Halide op semantics loaded).
    fn eval_lanes(&mut self, e: &Expr) -> R<Option<Lanes>> {
        let Some(st) = self.g.isel.as_ref() else { return Ok(None) };
        let bits = Interp::new(&st.target.halide).eval_closed(e).map_err(|err| CompileError::new(format!("constant `{e}`: {err}")))?;
        let eb = e.ty.bits.max(1) as u32;
        if !(1..=64).contains(&eb) || bits.width() != eb * e.ty.lanes {
            return Err(CompileError::new(format!("constant `{e}`: {} bits for a {}", bits.width(), e.ty)));
        }
        Ok(Some((0..e.ty.lanes).map(|l| bits.extract(l * eb + eb - 1, l * eb).to_u64()).collect()))
    }

    /// A constant vector leaf (see [`is_constant_vector`]) as a `static
    /// const` array of its lanes; None for any other expression. If the
    /// interpreter cannot evaluate it, it is lowered naively and counted as
    /// a fallback.
    pub(super) fn constant_leaf(&mut self, e: &Expr) -> R<Option<Val>> {
        if !is_constant_vector(e) || self.g.isel.is_none() {
            return Ok(None);
        }
        match self.eval_lanes(e) {
            Ok(Some(lanes)) => Ok(Some(Val::Arr(self.const_array(e.ty, lanes)?, e.ty))),
            Ok(None) => Ok(None),
            Err(err) => {
                self.isel().report.naive_nodes += 1;
                self.line(&format!("/* not computed at compile time: {} */", err.to_string().replace("*/", "* /")));
                Ok(Some(Val::Arr(self.lower_vector_expr(e)?, e.ty)))
            }
        }
    }

    /// Declares `static const T cv[N] = {...};` of `lanes` (of type `t`)
    /// and remembers its lanes by its name.
    fn const_array(&mut self, t: Type, lanes: Lanes) -> R<String> {
        let ct = ctype(t.element())?;
        let name = self.fresh("cv");
        let bytes = (t.lanes as u64 * t.bits.div_ceil(8) as u64).max(1);
        let align = bytes.next_power_of_two().min(64);
        let list: Vec<String> = lanes.iter().map(|&v| lane_literal(t.element(), v)).collect();
        self.line(&format!("static const {ct} {name}[{}] __attribute__((aligned({align}))) = {{{}}};", t.lanes, list.join(", ")));
        self.isel().consts.insert(name.clone(), lanes);
        Ok(name)
    }

    /// The lanes of lane array `arr` if it is a constant emitted here.
    pub(super) fn const_lanes(&mut self, arr: &str) -> Option<Lanes> {
        self.g.isel.as_ref()?.consts.get(arr).cloned()
    }

    /// A mask literal for a constant bool lane array of `lanes` lanes.
    pub(super) fn const_mask_literal(&mut self, arr: &str, lanes: u32) -> Option<String> {
        let v = self.const_lanes(arr)?;
        if v.len() != lanes as usize || lanes > 64 {
            return None;
        }
        let m = v.iter().enumerate().fold(0u64, |m, (l, &b)| m | ((b & 1) << l));
        Some(format!("{m:#x}ULL"))
    }

    /// Predicate `pr` (a bool vector) if it is known at compile time: a
    /// closed expression, or a variable bound to a constant array. None
    /// otherwise, or when isel is off.
    pub(in crate::c) fn const_mask(&mut self, pr: &Expr) -> R<Option<ConstMask>> {
        if self.g.isel.is_none() || !pr.ty.is_bool() || pr.ty.lanes < 2 {
            return Ok(None);
        }
        let lanes = match &pr.kind {
            ExprKind::Var(n) => {
                let Ok(cname) = self.lookup(n).map(|b| b.cname.clone()) else { return Ok(None) };
                self.const_lanes(&cname)
            }
            _ if is_closed(pr) => self.eval_lanes(pr)?,
            _ => None,
        };
        Ok(lanes.filter(|v| v.len() == pr.ty.lanes as usize).map(|v| ConstMask::of(&v.iter().map(|&b| b & 1 != 0).collect::<Vec<_>>())))
    }

    /// `for` over the active lanes of `mask` (of `n` lanes), with `l` the
    /// lane in `body` (which reads `l`). Nothing for no active lane.
    pub(in crate::c) fn active_lanes_loop(&mut self, mask: &ConstMask, n: u32, body: &str) {
        match mask {
            ConstMask::All => self.line(&format!("for (int l = 0; l < {n}; l++) {{ {body} }}")),
            ConstMask::Prefix(0) => {}
            ConstMask::Prefix(k) => self.line(&format!("for (int l = 0; l < {k}; l++) {{ {body} }}")),
            ConstMask::Lanes(on) if on.is_empty() => {}
            ConstMask::Lanes(on) => {
                let tbl = self.fresh("lanes");
                let list: Vec<String> = on.iter().map(|l| l.to_string()).collect();
                self.line(&format!("static const int32_t {tbl}[{}] = {{{}}};", on.len(), list.join(", ")));
                self.line(&format!("for (int {tbl}_i = 0; {tbl}_i < {}; {tbl}_i++) {{ const int l = {tbl}[{tbl}_i]; {body} }}", on.len()));
            }
        }
    }

    /// A load with a constant predicate that is not all on: its active
    /// lanes read into a zeroed array (no inactive lane's element is
    /// touched); returns the array.
    pub(in crate::c) fn masked_load(&mut self, e: &Expr, name: &str, index: &Expr, mask: &ConstMask) -> R<String> {
        let p = self.read_host(name)?;
        let i = self.index_lanes(index, false)?;
        let v = self.load_elem(&p, e.ty, &i)?;
        let ct = ctype(e.ty.element())?;
        let out = self.fresh("v");
        self.line(&format!("{ct} {out}[{}] = {{0}};", e.ty.lanes));
        self.active_lanes_loop(mask, e.ty.lanes, &format!("{out}[l] = {v};"));
        Ok(out)
    }
}
