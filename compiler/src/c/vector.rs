//! Naive vector expression lowering: a vector value is a C array of its
//! lanes filled by one fused lane loop. Instruction selection
//! ([`super::isel_emit`]) takes over through [`Emitter::lower_vector_expr`]
//! wherever a rule applies; what it leaves comes here.

use super::*;

impl<'g> Emitter<'g> {

    /// Computes the vector expression `e` into a fresh C array of its lanes
    /// and returns the array's name.
    ///
    /// This is the seam for instruction selection: every vector value the
    /// backend computes (let-bound vectors, stored values, reduction and
    /// shuffle operands) goes through here. The naive lowering fuses
    /// element-wise operations into one lane loop,
    /// `for (int l = 0; l < N; l++) v[l] = ...;`, materializing cross-lane
    /// operations (reductions, general shuffles) into arrays first.
    pub fn lower_vector_expr(&mut self, e: &Expr) -> Result<String, CompileError> {
        let n = e.ty.lanes;
        // A load under a constant predicate: its active lanes, read into an array.
        if let ExprKind::Load { name, index, predicate: Some(pr), .. } = &e.kind
            && self.promoted(name).is_none()
            && let Some(m) = self.const_mask(pr)?.filter(|m| *m != isel_emit::ConstMask::All)
        {
            return self.masked_load(e, name, index, &m);
        }
        match &e.kind {
            ExprKind::Var(name) => {
                let b = self.lookup(name)?;
                if b.ty.lanes == n {
                    return Ok(b.cname.clone());
                }
            }
            ExprKind::VectorReduce { op, value } => return self.reduce(e, *op, value),
            ExprKind::Shuffle { vectors, indices } if Self::single_source(vectors, indices).is_none() => return self.shuffle(e, vectors, indices),
            ExprKind::Reinterpret(a) if a.ty.lanes != n => return self.reinterpret_lanes(e, a),
            ExprKind::Call { callee: Callee::Intrinsic(i), args } if !Self::elementwise_intrinsic(*i) => return self.special_call(*i, args, e.ty),
            _ => {}
        }
        let le = self.lane(e, "l")?;
        let name = self.fresh("v");
        let ct = ctype(e.ty.element())?;
        self.line(&format!("{ct} {name}[{n}];"));
        self.line(&format!("for (int l = 0; l < {n}; l++) {name}[l] = {le};"));
        Ok(name)
    }

    /// A new array of `e`'s lanes, to be filled by the caller.
    pub(super) fn new_array(&mut self, e: &Expr) -> R<String> {
        let name = self.fresh("v");
        let ct = ctype(e.ty.element())?;
        self.line(&format!("{ct} {name}[{}];", e.ty.lanes));
        Ok(name)
    }

    /// A shuffle reading lanes `b + i*s` of one of its vectors: (that
    /// vector's position, b within it, s).
    pub(super) fn single_source(vectors: &[Expr], indices: &[u32]) -> Option<(usize, i64, i64)> {
        let (b, s) = affine(indices)?;
        let last = b + s * (indices.len() as i64 - 1);
        let mut off = 0i64;
        for (k, v) in vectors.iter().enumerate() {
            let end = off + v.ty.lanes as i64;
            if (off..end).contains(&b) && (off..end).contains(&last) && v.ty.lanes > 1 {
                return Some((k, b - off, s));
            }
            off = end;
        }
        None
    }

    /// Lane `idx` of vector expression `e` (a C expression in the lane
    /// index `idx`, with anything lane-invariant or cross-lane computed
    /// before the loop).
    pub(super) fn lane(&mut self, e: &Expr, idx: &str) -> R<String> {
        if e.ty.lanes == 1 {
            return self.hoist(e);
        }
        Ok(match &e.kind {
            ExprKind::Var(n) => {
                let b = self.lookup(n)?;
                format!("{}[{idx}]", b.cname)
            }
            ExprKind::Broadcast { value, .. } => {
                if value.ty.lanes == 1 {
                    self.hoist(value)?
                } else {
                    self.lane(value, &format!("(({idx}) % {})", value.ty.lanes))?
                }
            }
            ExprKind::Ramp { base, stride, .. } => {
                let m = base.ty.lanes;
                let (j, k) = if m == 1 { (idx.to_string(), format!("({idx})")) } else { (format!("(({idx}) % {m})"), format!("(({idx}) / {m})")) };
                let b = self.lane(base, &j)?;
                let s = self.lane(stride, &j)?;
                let et = e.ty.element();
                if et.is_float() {
                    let ct = ctype(et)?;
                    format!("({b} + ({ct}){k} * {s})")
                } else {
                    let it = int_type(et, "ramp")?;
                    let add = ops::binop(&mut self.g.helpers, "add", it);
                    let mul = ops::binop(&mut self.g.helpers, "mul", it);
                    format!("{add}({b}, {mul}(({}){k}, {s}))", it.c())
                }
            }
            ExprKind::Load { name, index, predicate, .. } => {
                // A predicate known at compile time: all on is no predicate;
                // otherwise only the active lanes are read, into an array.
                let predicate = match predicate.as_deref() {
                    Some(pr) => match self.const_mask(pr)? {
                        Some(isel_emit::ConstMask::All) => None,
                        Some(m) if self.promoted(name).is_none() => return Ok(format!("{}[{idx}]", self.masked_load(e, name, index, &m)?)),
                        _ => Some(pr),
                    },
                    None => None,
                };
                // A promoted buffer's whole locals, as their own lane array.
                if let Some(pr) = self.promoted(name)
                    && let Some(tmp) = self.spill_load(&pr, index, e.ty, predicate.is_some())?
                {
                    return Ok(format!("{tmp}[{idx}]"));
                }
                let p = self.read_host(name)?;
                let i = if idx == "l" {
                    self.index_lanes(index, false)?
                } else {
                    format!("(int64_t){}", self.lane(index, idx)?)
                };
                let v = self.load_elem(&p, e.ty, &i)?;
                match predicate {
                    Some(pr) => {
                        let c = self.lane(pr, idx)?;
                        format!("({c} ? {v} : 0)")
                    }
                    None => v,
                }
            }
            ExprKind::Let { name, value, body } => {
                let n = self.scope.len();
                self.bind_let(name, value)?;
                let r = self.lane(body, idx);
                self.scope.truncate(n);
                r?
            }
            ExprKind::Shuffle { vectors, indices } => match Self::single_source(vectors, indices) {
                Some((k, b, s)) => self.lane(&vectors[k], &format!("({b} + ({idx}) * {s})"))?,
                None => format!("{}[{idx}]", self.shuffle(e, vectors, indices)?),
            },
            ExprKind::VectorReduce { .. } => format!("{}[{idx}]", self.lower_vector_expr(e)?),
            ExprKind::Reinterpret(a) if a.ty.lanes != e.ty.lanes => format!("{}[{idx}]", self.reinterpret_lanes(e, a)?),
            ExprKind::Call { callee: Callee::Intrinsic(i), .. } if !Self::elementwise_intrinsic(*i) => format!("{}[{idx}]", self.lower_vector_expr(e)?),
            ExprKind::Call { callee: Callee::Extern(n), .. } if !Self::elementwise_extern(n) => {
                return Err(CompileError::unsupported(format!("vector call to `{n}`")));
            }
            _ => {
                let args: Vec<String> = e.children().into_iter().map(|c| self.lane(c, idx)).collect::<R<_>>()?;
                self.elementwise(e, &args)?
            }
        })
    }

    /// A general shuffle: its vectors concatenated, then lanes picked.
    pub(super) fn shuffle(&mut self, e: &Expr, vectors: &[Expr], indices: &[u32]) -> R<String> {
        let ct = ctype(e.ty.element())?;
        let total: u32 = vectors.iter().map(|v| v.ty.lanes).sum();
        let mut parts = Vec::new();
        for v in vectors {
            if v.ty.lanes == 1 {
                parts.push((self.hoist(v)?, 1));
            } else {
                parts.push((self.lower_vector_expr(v)?, v.ty.lanes));
            }
        }
        let cat = self.fresh("cat");
        self.line(&format!("{ct} {cat}[{total}];"));
        let mut off = 0;
        for (p, n) in parts {
            if n == 1 {
                self.line(&format!("{cat}[{off}] = {p};"));
            } else {
                self.line(&format!("for (int l = 0; l < {n}; l++) {cat}[{off} + l] = {p}[l];"));
            }
            off += n;
        }
        let out = self.new_array(e)?;
        let n = indices.len();
        if let Some((b, s)) = affine(indices) {
            self.line(&format!("for (int l = 0; l < {n}; l++) {out}[l] = {cat}[{b} + l * {s}];"));
        } else {
            let tbl = self.fresh("idx");
            let list: Vec<String> = indices.iter().map(|i| i.to_string()).collect();
            self.line(&format!("static const int32_t {tbl}[{n}] = {{{}}};", list.join(", ")));
            self.line(&format!("for (int l = 0; l < {n}; l++) {out}[l] = {cat}[{tbl}[l]];"));
        }
        Ok(out)
    }

    /// `vector_reduce_OP`: groups of adjacent lanes combined left to right.
    /// Returns an array, or a scalar variable for a one-lane result.
    pub(super) fn reduce(&mut self, e: &Expr, op: ReduceOp, value: &Expr) -> R<String> {
        let src = if value.ty.lanes == 1 { return self.scalar(value) } else { self.lower_vector_expr(value)? };
        let n = e.ty.lanes;
        let f = value.ty.lanes / n;
        let et = e.ty.element();
        let ct = ctype(et)?;
        let comb = |s: &mut Self, acc: &str, y: &str| -> R<String> {
            if et.is_bool() {
                return match op {
                    ReduceOp::And | ReduceOp::Min | ReduceOp::Mul => Ok(format!("({acc} & {y})")),
                    ReduceOp::Or | ReduceOp::Max => Ok(format!("({acc} | {y})")),
                    _ => Err(CompileError::unsupported(format!("`{}` of bools", op.name()))),
                };
            }
            if et.is_float() {
                return match op {
                    ReduceOp::Add => Ok(format!("({acc} + {y})")),
                    ReduceOp::Mul => Ok(format!("({acc} * {y})")),
                    ReduceOp::Min => Ok(format!("({y} < {acc} ? {y} : {acc})")),
                    ReduceOp::Max => Ok(format!("({y} > {acc} ? {y} : {acc})")),
                    _ => Err(CompileError::unsupported(format!("`{}` of floats", op.name()))),
                };
            }
            let it = int_type(et, op.name())?;
            let h = &mut s.g.helpers;
            Ok(match op {
                ReduceOp::Add => format!("{}({acc}, {y})", ops::binop(h, "add", it)),
                ReduceOp::Mul => format!("{}({acc}, {y})", ops::binop(h, "mul", it)),
                ReduceOp::Min => format!("{}({acc}, {y})", ops::binop(h, "min", it)),
                ReduceOp::Max => format!("{}({acc}, {y})", ops::binop(h, "max", it)),
                ReduceOp::SaturatingAdd => format!("{}({acc}, {y})", ops::saturating(h, false, it)),
                ReduceOp::And => format!("({ct})({acc} & {y})"),
                ReduceOp::Or => format!("({ct})({acc} | {y})"),
            })
        };
        let acc = self.fresh("acc");
        if n == 1 {
            let step = comb(self, &acc, &format!("{src}[k]"))?;
            self.line(&format!("{ct} {acc} = {src}[0];"));
            self.line(&format!("for (int k = 1; k < {f}; k++) {acc} = {step};"));
            return Ok(acc);
        }
        let step = comb(self, &acc, &format!("{src}[i * {f} + k]"))?;
        let out = self.new_array(e)?;
        self.line(&format!("for (int i = 0; i < {n}; i++) {{ {ct} {acc} = {src}[i * {f}]; for (int k = 1; k < {f}; k++) {acc} = {step}; {out}[i] = {acc}; }}"));
        Ok(out)
    }

    /// A reinterpret that changes the lane count: the bytes copied.
    pub(super) fn reinterpret_lanes(&mut self, e: &Expr, a: &Expr) -> R<String> {
        if e.ty.is_bool() || a.ty.is_bool() {
            return Err(CompileError::unsupported("reinterpret of bool vectors"));
        }
        let src = if a.ty.lanes == 1 { self.hoist(a)? } else { self.lower_vector_expr(a)? };
        let src_ref = if a.ty.lanes == 1 { format!("&{src}") } else { src };
        if e.ty.lanes == 1 {
            let name = self.fresh("s");
            let ct = ctype(e.ty)?;
            self.line(&format!("{ct} {name}; memcpy(&{name}, {src_ref}, sizeof {name});"));
            return Ok(name);
        }
        let out = self.new_array(e)?;
        self.line(&format!("memcpy({out}, {src_ref}, sizeof {out});"));
        Ok(out)
    }

    pub(super) fn elementwise_intrinsic(i: Intrinsic) -> bool {
        use Intrinsic::*;
        !matches!(i, IfThenElse | DynamicShuffle | MakeStruct | LoadTypedStructMember | GetUserContext | Alloca | Stringify | SizeOfHalideBufferT | RegisterDestructor | Require | Undef)
    }

    pub(super) fn elementwise_extern(name: &str) -> bool {
        math_fn(name).is_some()
    }

    /// One lane of an element-wise node, given its operands' lanes `a`.
    pub(super) fn elementwise(&mut self, e: &Expr, a: &[String]) -> R<String> {
        let t = e.ty.element();
        match &e.kind {
            ExprKind::Cast(x) => self.cast(t, x.ty.element(), &a[0]),
            ExprKind::Reinterpret(x) => self.reinterpret(t, x.ty.element(), &a[0]),
            ExprKind::Binary(op, x, _) => self.binary(*op, x.ty.element(), &a[0], &a[1]),
            ExprKind::Not(_) => Ok(format!("((uint8_t)!({}))", a[0])),
            ExprKind::Select(..) => Ok(format!("({} ? {} : {})", a[0], a[1], a[2])),
            ExprKind::Call { callee: Callee::Intrinsic(i), args } => self.intrinsic(*i, args, a, t),
            ExprKind::Call { callee: Callee::Extern(n), .. } => match math_fn(n) {
                Some(f) => Ok(format!("{f}({})", a.join(", "))),
                None => Err(CompileError::unsupported(format!("call to `{n}`"))),
            },
            other => Err(CompileError::new(format!("internal: elementwise {other:?}"))),
        }
    }

    pub(super) fn cast(&mut self, to: Type, from: Type, a: &str) -> R<String> {
        if to == from {
            return Ok(a.to_string());
        }
        let tc = ctype(to)?;
        ctype(from)?;
        Ok(match (from.code, to.code) {
            (TypeCode::Handle(_), TypeCode::Handle(_)) => format!("(({tc})({a}))"),
            (TypeCode::Handle(_), _) | (_, TypeCode::Handle(_)) => format!("(({tc})(uintptr_t)({a}))"),
            (_, TypeCode::Bool) => format!("((uint8_t)(({a}) != 0))"),
            (TypeCode::Float, TypeCode::Int | TypeCode::UInt) => {
                let it = int_type(to, "cast")?;
                format!("{}({a})", ops::float_to_int(&mut self.g.helpers, from.bits, it, self.g.avx512))
            }
            _ => format!("(({tc})({a}))"),
        })
    }

    /// A reinterpret of one lane as a type of the same width.
    pub(super) fn reinterpret(&mut self, to: Type, from: Type, a: &str) -> R<String> {
        if to == from {
            return Ok(a.to_string());
        }
        let tc = ctype(to)?;
        let fc = ctype(from)?;
        Ok(match (from.code, to.code) {
            (TypeCode::Handle(_), TypeCode::Handle(_)) => format!("(({tc})({a}))"),
            (TypeCode::Handle(_), _) | (_, TypeCode::Handle(_)) => format!("(({tc})(uintptr_t)({a}))"),
            (TypeCode::Float, _) | (_, TypeCode::Float) => {
                if from.bits != to.bits {
                    return Err(CompileError::new(format!("reinterpret of {from} as {to}")));
                }
                let f = ops::bitcast(&mut self.g.helpers, &fc, &tc, &from.to_string(), &to.to_string());
                format!("{f}({a})")
            }
            _ => format!("(({tc})({a}))"),
        })
    }

    pub(super) fn binary(&mut self, op: BinOp, t: Type, a: &str, b: &str) -> R<String> {
        if t.is_handle() {
            return match op {
                BinOp::Eq => Ok(format!("((uint8_t)((uintptr_t)({a}) == (uintptr_t)({b})))")),
                BinOp::Ne => Ok(format!("((uint8_t)((uintptr_t)({a}) != (uintptr_t)({b})))")),
                _ => Err(CompileError::unsupported(format!("`{}` of handles", op.symbol()))),
            };
        }
        if op.is_comparison() {
            return Ok(format!("((uint8_t)({a} {} {b}))", op.symbol()));
        }
        match op {
            BinOp::And => return Ok(format!("((uint8_t)({a} & {b}))")),
            BinOp::Or => return Ok(format!("((uint8_t)({a} | {b}))")),
            _ => {}
        }
        if t.is_float() {
            let ct = ctype(t)?;
            return Ok(match op {
                BinOp::Add => format!("(({ct})({a} + {b}))"),
                BinOp::Sub => format!("(({ct})({a} - {b}))"),
                BinOp::Mul => format!("(({ct})({a} * {b}))"),
                BinOp::Div => format!("(({ct})({a} / {b}))"),
                BinOp::Min => {
                    let h = self.float_helper("min", t, "return a < b ? a : b;")?;
                    format!("{h}({a}, {b})")
                }
                BinOp::Max => {
                    let h = self.float_helper("max", t, "return a > b ? a : b;")?;
                    format!("{h}({a}, {b})")
                }
                BinOp::Mod => {
                    let fl = if t.bits == 32 { "floorf" } else { "floor" };
                    let h = self.float_helper("mod", t, &format!("return a - b * {fl}(a / b);"))?;
                    format!("{h}({a}, {b})")
                }
                _ => unreachable!(),
            });
        }
        let it = int_type(t, op.symbol())?;
        let h = ops::binop(&mut self.g.helpers, op.op_name(), it);
        Ok(format!("{h}({a}, {b})"))
    }

    pub(super) fn float_helper(&mut self, op: &str, t: Type, body: &str) -> R<String> {
        let ct = ctype(t)?;
        let name = format!("h_{op}_f{}", t.bits);
        Ok(self.g.helpers.fixed(&name, &format!("static inline {ct} {name}({ct} a, {ct} b) {{ {body} }}")))
    }

    /// One lane of an element-wise intrinsic; `t` is the result element type.
    pub(super) fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], a: &[String], t: Type) -> R<String> {
        use Intrinsic::*;
        let name = i.name();
        let t0 = args.first().map(|x| x.ty.element()).ok_or_else(|| CompileError::new(format!("`{name}` without arguments")))?;
        let call = |f: String, a: &[String]| format!("{f}({})", a.join(", "));
        let no_wide = || CompileError::unsupported(format!("`{name}` of {t0}: no type twice as wide"));
        Ok(match i {
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | StrictFloat => a[0].clone(),
            ReturnSecond => a[1].clone(),
            BitwiseAnd | BitwiseOr | BitwiseXor => {
                let sym = match i {
                    BitwiseAnd => "&",
                    BitwiseOr => "|",
                    _ => "^",
                };
                if !(t0.is_int_or_uint() || t0.is_bool()) {
                    return Err(CompileError::unsupported(format!("`{name}` of {t0}")));
                }
                format!("(({})({} {sym} {}))", ctype(t)?, a[0], a[1])
            }
            BitwiseNot => {
                if t0.is_bool() {
                    format!("((uint8_t)({} ^ 1))", a[0])
                } else {
                    int_type(t0, name)?;
                    format!("(({})~({}))", ctype(t)?, a[0])
                }
            }
            Abs if t0.is_float() => format!("{}({})", if t0.bits == 32 { "fabsf" } else { "fabs" }, a[0]),
            Absd if t0.is_float() => format!("{}(({}) - ({}))", if t0.bits == 32 { "fabsf" } else { "fabs" }, a[0], a[1]),
            _ => {
                let it = int_type(t0, name)?;
                // A shift amount has the value's width and its own signedness.
                let amt = || int_type(args[1].ty.element(), name).map(|t1| (t1.signed, format!("({})({})", t1.c(), a[1])));
                match i {
                    WideningAdd => call(ops::widening_addsub(self.h(), false, it).ok_or_else(no_wide)?, a),
                    WideningSub => call(ops::widening_addsub(self.h(), true, it).ok_or_else(no_wide)?, a),
                    WideningMul => {
                        let it1 = int_type(args[1].ty.element(), name)?;
                        call(ops::widening_mul(self.h(), it, it1).ok_or_else(no_wide)?, a)
                    }
                    WidenRightAdd | WidenRightSub | WidenRightMul => {
                        let it1 = int_type(args[1].ty.element(), name)?;
                        if it.bits != 2 * it1.bits {
                            return Err(CompileError::new(format!("`{name}` of {t0} and {}", args[1].ty)));
                        }
                        let op = match i {
                            WidenRightAdd => "add",
                            WidenRightSub => "sub",
                            _ => "mul",
                        };
                        call(ops::widen_right(self.h(), op, it, it1), a)
                    }
                    WideningShiftLeft | WideningShiftRight => {
                        let (s1, b) = amt()?;
                        let f = ops::widening_shift(self.h(), i == WideningShiftLeft, it, s1).ok_or_else(no_wide)?;
                        call(f, &[a[0].clone(), b])
                    }
                    ShiftLeft | ShiftRight => {
                        let (s1, b) = amt()?;
                        call(ops::shift(self.h(), i == ShiftLeft, it, s1), &[a[0].clone(), b])
                    }
                    RoundingShiftLeft | RoundingShiftRight => {
                        let (s1, b) = amt()?;
                        call(ops::rounding_shift(self.h(), i == RoundingShiftLeft, it, s1), &[a[0].clone(), b])
                    }
                    SaturatingAdd | SaturatingSub => call(ops::saturating(self.h(), i == SaturatingSub, it), a),
                    HalvingAdd => call(ops::halving(self.h(), "hadd", it), a),
                    HalvingSub => call(ops::halving(self.h(), "hsub", it), a),
                    RoundingHalvingAdd => call(ops::halving(self.h(), "rhadd", it), a),
                    SaturatingCast => {
                        let to = int_type(t, name)?;
                        call(ops::saturating_cast(self.h(), it, to), a)
                    }
                    MulShiftRight | RoundingMulShiftRight => {
                        let f = ops::mul_shift_right(self.h(), i == RoundingMulShiftRight, it);
                        call(f, &[a[0].clone(), a[1].clone(), format!("({})({})", it.u(), a[2])])
                    }
                    Absd => call(ops::absd(self.h(), it), a),
                    Abs => call(ops::abs(self.h(), it), a),
                    CountLeadingZeros => call(ops::bitcount(self.h(), "clz", it), a),
                    CountTrailingZeros => call(ops::bitcount(self.h(), "ctz", it), a),
                    Popcount => call(ops::bitcount(self.h(), "popcount", it), a),
                    _ => return Err(CompileError::unsupported(format!("intrinsic `{name}`"))),
                }
            }
        })
    }
}
