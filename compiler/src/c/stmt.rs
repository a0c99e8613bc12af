//! Statement lowering: `let`, `assert`, loops, `if`, allocations and
//! stores, one C statement (or block) per Halide statement.

use super::*;

impl<'g> Emitter<'g> {
    // ---- statements ----

    pub(super) fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Let { .. } => {
                // Iteratively: a function's prologue is a long chain of lets.
                let n = self.scope.len();
                let mut s = s;
                while let Stmt::Let { name, value, body } = s {
                    if !self.isel_let(name, value)? {
                        self.bind_let(name, value)?;
                    }
                    s = body;
                }
                self.stmt(s)?;
                self.scope.truncate(n);
            }
            Stmt::Assert { cond, message } => {
                let c = self.scalar(cond)?;
                let m = peel_lets(message);
                let code = match &m.kind {
                    ExprKind::Call { callee: Callee::Extern(n), .. } if n.starts_with("halide_error") => error_code(n).to_string(),
                    _ if m.ty.is_int_or_uint() && m.ty.is_scalar() => {
                        let (pre, v) = self.capture(|s| s.scalar(message))?;
                        if pre.is_empty() { format!("(int)({v})") } else { format!("(int)({{ {} {v}; }})", pre.trim()) }
                    }
                    _ => "-1".to_string(),
                };
                let frees = self.free_all();
                self.line(&format!("if (!({c})) {{ {frees}return {code}; }}"));
            }
            Stmt::ProducerConsumer { body, .. } | Stmt::Atomic { body, .. } => self.stmt(body)?,
            Stmt::For { name, min, extent, body, .. } => {
                let lo = self.fresh("lo");
                let ext = self.fresh("ext");
                let i = self.fresh("i");
                let m = self.scalar(min)?;
                self.line(&format!("int32_t {lo} = {m};"));
                let e = self.scalar(extent)?;
                self.line(&format!("int32_t {ext} = {e};"));
                let runs = const_int(extent).is_some_and(|n| n > 0);
                let hoisted = self.hoist_invariant_loads(name, body, &ext, runs)?;
                let narrow = self.g.narrow_counters;
                if narrow {
                    self.line(&format!("for (int32_t {i} = 0; {i} < {ext}; {i}++) {{"));
                } else {
                    self.line(&format!("for (int64_t {i} = {lo}; {i} < (int64_t){lo} + {ext}; {i}++) {{"));
                }
                self.indent += 1;
                let v = self.fresh_var(name);
                if narrow {
                    self.line(&format!("int32_t {v} = (int32_t)((uint32_t){lo} + (uint32_t){i});"));
                } else {
                    self.line(&format!("int32_t {v} = (int32_t){i};"));
                }
                let n = self.scope.len();
                self.bind(name.clone(), v, Type::I32);
                self.stmt(body)?;
                self.scope.truncate(n);
                self.invariant.truncate(self.invariant.len() - hoisted);
                self.indent -= 1;
                self.line("}");
            }
            Stmt::IfThenElse { cond, then_case, else_case } => {
                let c = self.scalar(cond)?;
                self.line(&format!("if ({c}) {{"));
                self.indent += 1;
                self.stmt(then_case)?;
                self.indent -= 1;
                if let Some(e) = else_case {
                    self.line("} else {");
                    self.indent += 1;
                    self.stmt(e)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            Stmt::Allocate { name, ty, extents, condition, body, .. } => self.allocate(name, *ty, extents, condition.as_ref(), body)?,
            Stmt::Free { name } => {
                let b = self.lookup(name)?.clone();
                if b.heap {
                    self.line(&format!("free({0}); {0} = NULL;", b.cname));
                }
            }
            Stmt::Store { name, index, value, predicate, .. } => self.store(name, index, value, predicate.as_ref())?,
            Stmt::Evaluate(e) => {
                if e.ty.lanes > 1 {
                    self.lower_vector_expr(e)?;
                } else if !trivial(e) {
                    let v = self.scalar(e)?;
                    self.line(&format!("(void)({v});"));
                }
            }
            Stmt::Block(ss) => {
                for s in ss {
                    self.stmt(s)?;
                }
            }
        }
        Ok(())
    }

    /// Binds `name` to `value` in the current C block.
    pub(super) fn bind_let(&mut self, name: &str, value: &Expr) -> R<()> {
        if value.ty.lanes > 1 {
            let arr = self.lower_vector_expr(value)?;
            self.bind(name.to_string(), arr, value.ty);
            return Ok(());
        }
        let addr = std::mem::replace(&mut self.addr, self.addr_lets.contains(name));
        let v = self.scalar(value);
        self.addr = addr;
        let v = v?;
        let cname = self.fresh_var(name);
        let ct = ctype(value.ty)?;
        self.line(&format!("{ct} {cname} = {v};"));
        let mut fields = None;
        let mut inner = value;
        while let ExprKind::Cast(a) = &inner.kind {
            inner = a;
        }
        if let ExprKind::Call { callee: Callee::Intrinsic(Intrinsic::MakeStruct), args } = &inner.kind {
            fields = Some(args.iter().map(|a| a.ty).collect());
        }
        if let ExprKind::Var(n) = &inner.kind
            && let Ok(b) = self.lookup(n)
        {
            fields = b.fields.clone();
        }
        self.scope.push(Binding { name: name.to_string(), cname, ty: value.ty, fields, heap: false });
        Ok(())
    }

    pub(super) fn allocate(&mut self, name: &str, ty: Type, extents: &[Expr], condition: Option<&Expr>, body: &Stmt) -> R<()> {
        if let Some(cname) = self.promote(name, ty, extents, condition, body)? {
            let n = self.scope.len();
            self.scope.push(Binding { name: name.to_string(), cname: cname.clone(), ty: Type::handle("void *"), fields: None, heap: false });
            self.stmt(body)?;
            self.scope.truncate(n);
            self.promoted.remove(&cname);
            return Ok(());
        }
        let et = ctype(ty.element())?;
        let cname = self.fresh_var(name);
        let consts: Option<Vec<i128>> = extents.iter().map(const_int).collect();
        let bytes_per = (ty.bits as u64).div_ceil(8).max(1);
        let mut heap = true;
        if let Some(c) = consts {
            let n = c.iter().try_fold(ty.lanes as i128, |acc, x| acc.checked_mul(*x)).unwrap_or(i128::MAX);
            if n >= 0 && (n as u128) * (bytes_per as u128) <= STACK_LIMIT as u128 {
                heap = false;
                let store = self.fresh("stack");
                // Cache-line aligned, as Halide allocates (its Stmt marks
                // these buffers' vectors `aligned(64, ..)`): a 32-byte load
                // at an odd 32-byte offset would straddle two lines, and the
                // frame's layout alone then decided a stencil's speed
                // (gaussian3x3 ran at 0.66x of the same code 32 bytes over).
                self.line(&format!("{et} {store}[{}] __attribute__((aligned(64)));", n.max(1)));
                self.line(&format!("void *{cname} = {store};"));
            }
        }
        if heap {
            let mut size = format!("(size_t){}", ty.lanes as u64 * bytes_per);
            for e in extents {
                let v = self.scalar(e)?;
                size = format!("{size} * (size_t)(int64_t)({v})");
            }
            let cond = match condition {
                Some(c) => self.scalar(c)?,
                None => "1".into(),
            };
            let sz = self.fresh("size");
            self.line(&format!("size_t {sz} = {size};"));
            self.line(&format!("void *{cname} = ({cond}) ? malloc({sz} ? {sz} : 1) : NULL;"));
            let frees = self.free_all();
            self.line(&format!("if (({cond}) && !{cname}) {{ {frees}return -11; }}"));
        }
        let n = self.scope.len();
        self.scope.push(Binding { name: name.to_string(), cname: cname.clone(), ty: Type::handle("void *"), fields: None, heap });
        self.stmt(body)?;
        self.scope.truncate(n);
        if heap {
            self.line(&format!("free({cname});"));
        }
        Ok(())
    }

    /// `((T *)p)[index]` for one element of buffer `p`.
    pub(super) fn elem(p: &str, ty: Type, index: &str) -> R<String> {
        Ok(format!("(({} *){p})[{index}]", ctype(ty.element())?))
    }

    pub(super) fn store(&mut self, name: &str, index: &Expr, value: &Expr, predicate: Option<&Expr>) -> R<()> {
        // A predicate known at compile time to be all on is none.
        let predicate = match predicate {
            Some(pr) if self.const_mask(pr)? == Some(isel_emit::ConstMask::All) => None,
            p => p,
        };
        let (hooked, scalar) = match self.isel_store(name, index, value, predicate)? {
            isel_emit::StoreHook::Done => return Ok(()),
            isel_emit::StoreHook::Array(a) => (Some(a), None),
            isel_emit::StoreHook::Scalar(v) => (None, Some(v)),
            isel_emit::StoreHook::Naive => (None, None),
        };
        let Some(pr) = self.promoted(name) else {
            let p = self.host(name)?;
            return self.store_at(&p, index, value, predicate, hooked, scalar);
        };
        // Held in registers: whole locals are assigned; anything else goes
        // to a spilled copy that is reloaded.
        if value.ty.lanes > 1 && predicate.is_none() {
            let v = match hooked {
                Some(a) => a,
                None => self.lower_vector_expr(value)?,
            };
            if self.store_promoted_array(&pr, index, value.ty, &v)? {
                return Ok(());
            }
            let tmp = self.spill_promoted(&pr)?;
            self.store_at(&tmp, index, value, None, Some(v), None)?;
            return self.reload_promoted(&pr, &tmp);
        }
        let tmp = self.spill_promoted(&pr)?;
        self.store_at(&tmp, index, value, predicate, hooked, scalar)?;
        self.reload_promoted(&pr, &tmp)
    }

    /// A store to the elements at `p` (a buffer's pointer, or a promoted
    /// buffer's spilled copy), its value lowered already if `hooked` or
    /// `scalar`.
    fn store_at(&mut self, p: &str, index: &Expr, value: &Expr, predicate: Option<&Expr>, hooked: Option<String>, scalar: Option<String>) -> R<()> {
        let ty = value.ty;
        if ty.lanes == 1 {
            let v = match scalar {
                Some(v) => v,
                None => self.scalar(value)?,
            };
            let i = self.addr_scalar(index)?;
            let dst = Self::elem(p, ty, &format!("(int64_t)({i})"))?;
            match predicate {
                Some(pr) => {
                    let c = self.scalar(pr)?;
                    self.line(&format!("if ({c}) {dst} = {v};"));
                }
                None => self.line(&format!("{dst} = {v};")),
            }
            return Ok(());
        }
        // The whole value (and predicate) first: a store may overwrite lanes
        // its own value reads.
        let v = match hooked {
            Some(a) => a,
            None => self.lower_vector_expr(value)?,
        };
        // A constant predicate: only the active lanes are written, no branch.
        if let Some(pr) = predicate
            && let Some(m) = self.const_mask(pr)?
        {
            let idx = self.index_lanes(index, true)?;
            let dst = Self::elem(p, ty, &idx)?;
            self.active_lanes_loop(&m, ty.lanes, &format!("{dst} = {v}[l];"));
            return Ok(());
        }
        let pr = match predicate {
            Some(pr) if pr.ty.lanes > 1 => Some(format!("{}[l]", self.lower_vector_expr(pr)?)),
            Some(pr) => Some(self.hoist(pr)?),
            None => None,
        };
        let idx = self.index_lanes(index, true)?;
        let dst = Self::elem(p, ty, &idx)?;
        let n = ty.lanes;
        match pr {
            Some(c) => self.line(&format!("for (int l = 0; l < {n}; l++) {{ if ({c}) {dst} = {v}[l]; }}")),
            None => self.line(&format!("for (int l = 0; l < {n}; l++) {dst} = {v}[l];")),
        }
        Ok(())
    }

    /// The element index of lane `l` of a vector index, as an int64
    /// expression. A ramp with scalar base and stride is computed directly
    /// (in 64 bits: Halide's 32-bit index arithmetic never overflows for an
    /// in-bounds access); any other index is computed per lane, or first
    /// into an array if `materialize`.
    pub(super) fn index_lanes(&mut self, index: &Expr, materialize: bool) -> R<String> {
        if let ExprKind::Ramp { base, stride, .. } = &index.kind
            && base.ty.lanes == 1
        {
            let b = self.hoist_addr(base)?;
            let s = self.hoist_addr(stride)?;
            return Ok(format!("((int64_t){b} + (int64_t)l * (int64_t){s})"));
        }
        if materialize {
            let a = self.lower_vector_expr(index)?;
            Ok(format!("(int64_t){a}[l]"))
        } else {
            Ok(format!("(int64_t){}", self.lane(index, "l")?))
        }
    }
}
