//! Scalar expression lowering: one C expression per Halide scalar
//! expression, the non-element-wise intrinsics and the runtime calls
//! (buffer accessors, `halide_do_par_for`, float math).

use super::*;

impl<'g> Emitter<'g> {
    // ---- expressions ----

    /// A scalar expression as a C expression (statements it needs first,
    /// such as materialized vectors, are emitted before).
    pub(super) fn scalar(&mut self, e: &Expr) -> R<String> {
        let t = e.ty;
        if t.lanes != 1 {
            return Err(CompileError::new(format!("internal: scalar() of a {t}")));
        }
        Ok(match &e.kind {
            ExprKind::Int(v) => match t.code {
                TypeCode::Float => float_lit(t, *v as f64),
                TypeCode::Int | TypeCode::UInt => int_type(t, "literal")?.lit(*v as i128),
                _ => format!("(({})({v}))", ctype(t)?),
            },
            ExprKind::UInt(v) => match t.code {
                TypeCode::Int | TypeCode::UInt => int_type(t, "literal")?.lit(*v as i128),
                TypeCode::Float => float_lit(t, *v as f64),
                _ => format!("(({}){v}ULL)", ctype(t)?),
            },
            ExprKind::Float(v) => {
                if !t.is_float() {
                    return Err(CompileError::new(format!("float literal of type {t}")));
                }
                ctype(t)?;
                float_lit(t, *v)
            }
            ExprKind::Str(s) => c_string(s),
            ExprKind::Var(n) => {
                if let Some(task) = n.strip_prefix("::") {
                    let c = self.g.tasks.get(task).cloned().ok_or_else(|| CompileError::new(format!("unknown function `{task}`")))?;
                    format!("((halide_task_t){c})")
                } else {
                    self.lookup(n)?.cname.clone()
                }
            }
            ExprKind::Let { name, value, body } => {
                let n = self.scope.len();
                self.bind_let(name, value)?;
                let r = self.scalar(body);
                self.scope.truncate(n);
                r?
            }
            ExprKind::Load { name, index, predicate, .. } => {
                let p = self.read_host(name)?;
                let i = self.addr_scalar(index)?;
                let v = match self.invariant_load(&p, &ctype(t)?, &format!("(int64_t)({i})")) {
                    Some(v) if predicate.is_none() => v,
                    _ => self.load_elem(&p, t, &format!("(int64_t)({i})"))?,
                };
                match predicate {
                    Some(pr) => {
                        let c = self.scalar(pr)?;
                        format!("({c} ? {v} : 0)")
                    }
                    None => v,
                }
            }
            ExprKind::Shuffle { vectors, indices } => {
                let [k] = indices[..] else { return Err(CompileError::new("internal: scalar shuffle of several lanes")) };
                let (v, j) = Self::locate(vectors, k)?;
                if v.ty.lanes == 1 { self.scalar(v)? } else { self.lane(v, &j.to_string())? }
            }
            ExprKind::VectorReduce { op, value } => self.reduce(e, *op, value)?,
            ExprKind::Reinterpret(a) if a.ty.lanes != 1 => self.reinterpret_lanes(e, a)?,
            ExprKind::Call { callee: Callee::Intrinsic(i), args } if !Self::elementwise_intrinsic(*i) => self.special_call(*i, args, t)?,
            ExprKind::Call { callee: Callee::Extern(n), args } => self.runtime(n, args, t)?,
            ExprKind::Ramp { .. } | ExprKind::Broadcast { .. } => return Err(CompileError::new("internal: scalar ramp or broadcast")),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) if self.addr && t.is_int() && t.bits >= 32 => {
                // Address arithmetic, which Halide lets not overflow (see emit_addr).
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                format!("(({})({a} {} {b}))", ctype(t)?, op.symbol())
            }
            _ => {
                let args: Vec<String> = e.children().into_iter().map(|c| self.scalar(c)).collect::<R<_>>()?;
                self.elementwise(e, &args)?
            }
        })
    }

    /// The vector among `vectors` holding lane `k` of their concatenation,
    /// and the lane within it.
    pub(super) fn locate(vectors: &[Expr], k: u32) -> R<(&Expr, u32)> {
        let mut off = 0;
        for v in vectors {
            if k < off + v.ty.lanes {
                return Ok((v, k - off));
            }
            off += v.ty.lanes;
        }
        Err(CompileError::new(format!("shuffle index {k} out of range")))
    }

    /// A scalar index expression (address arithmetic; see [`emit_addr`]).
    pub(super) fn addr_scalar(&mut self, e: &Expr) -> R<String> {
        let addr = std::mem::replace(&mut self.addr, true);
        let r = self.scalar(e);
        self.addr = addr;
        r
    }

    /// [`Self::hoist`] of an index expression.
    pub(super) fn hoist_addr(&mut self, e: &Expr) -> R<String> {
        let addr = std::mem::replace(&mut self.addr, true);
        let r = self.hoist(e);
        self.addr = addr;
        r
    }

    /// A scalar needed inside a lane loop, computed once before it.
    pub(super) fn hoist(&mut self, e: &Expr) -> R<String> {
        let s = self.scalar(e)?;
        if trivial(e) {
            return Ok(s);
        }
        let name = self.fresh("s");
        let ct = ctype(e.ty)?;
        self.line(&format!("{ct} {name} = {s};"));
        Ok(name)
    }

    pub(super) fn load_elem(&mut self, p: &str, t: Type, index: &str) -> R<String> {
        let v = Self::elem(p, t, index)?;
        Ok(if t.is_bool() { format!("((uint8_t)({v} & 1))") } else { v })
    }


    /// Intrinsics that are not one C expression per lane. Returns a C
    /// expression for a scalar result, or the name of an array.
    pub(super) fn special_call(&mut self, i: Intrinsic, args: &[Expr], t: Type) -> R<String> {
        use Intrinsic::*;
        match i {
            IfThenElse => {
                let c = self.scalar(&args[0])?;
                if t.lanes == 1 {
                    let (pa, va) = self.capture(|s| s.scalar(&args[1]))?;
                    let (pb, vb) = match args.get(2) {
                        Some(b) => self.capture(|s| s.scalar(b))?,
                        None => (String::new(), format!("(({})0)", ctype(t)?)),
                    };
                    let wrap = |p: String, v: String| if p.is_empty() { v } else { format!("({{ {} {v}; }})", p.trim()) };
                    return Ok(format!("({c} ? {} : {})", wrap(pa, va), wrap(pb, vb)));
                }
                let out = self.fresh("v");
                let ct = ctype(t.element())?;
                self.line(&format!("{ct} {out}[{}];", t.lanes));
                self.line(&format!("if ({c}) {{"));
                self.indent += 1;
                let va = self.lower_vector_expr(&args[1])?;
                self.line(&format!("memcpy({out}, {va}, sizeof {out});"));
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                match args.get(2) {
                    Some(b) => {
                        let vb = self.lower_vector_expr(b)?;
                        self.line(&format!("memcpy({out}, {vb}, sizeof {out});"));
                    }
                    None => self.line(&format!("memset({out}, 0, sizeof {out});")),
                }
                self.indent -= 1;
                self.line("}");
                Ok(out)
            }
            DynamicShuffle => {
                let table = &args[0];
                let tbl = if table.ty.lanes == 1 { return Err(CompileError::unsupported("dynamic_shuffle of a scalar")) } else { self.lower_vector_expr(table)? };
                let n = table.ty.lanes;
                let one = |s: &mut Self, idx: &str| -> R<String> {
                    let k = s.lane(&args[1], idx)?;
                    Ok(format!("((uint64_t)(int64_t)({k}) < {n} ? {tbl}[(int64_t)({k})] : 0)"))
                };
                if t.lanes == 1 {
                    return one(self, "0");
                }
                let v = one(self, "l")?;
                let out = self.new_array(&Expr::new(t, ExprKind::Int(0)))?;
                self.line(&format!("for (int l = 0; l < {}; l++) {out}[l] = {v};", t.lanes));
                Ok(out)
            }
            MakeStruct => {
                if args.is_empty() {
                    return Ok("((void *)0)".into());
                }
                let fields: Vec<String> = args.iter().map(|a| ctype(a.ty)).collect::<R<_>>()?;
                if args.iter().any(|a| a.ty.lanes != 1) {
                    return Err(CompileError::unsupported("make_struct of vectors"));
                }
                let vals: Vec<String> = args.iter().map(|a| self.scalar(a)).collect::<R<_>>()?;
                let sn = self.g.struct_name(fields);
                Ok(format!("((void *)&(struct {sn}){{{}}})", vals.join(", ")))
            }
            LoadTypedStructMember => {
                let p = self.scalar(&args[0])?;
                let proto = match &args[1].kind {
                    ExprKind::Var(n) => self.lookup(n)?.fields.clone(),
                    ExprKind::Call { callee: Callee::Intrinsic(MakeStruct), args } => Some(args.iter().map(|a| a.ty).collect()),
                    _ => None,
                };
                let proto = proto.ok_or_else(|| CompileError::unsupported("load_typed_struct_member without a make_struct prototype"))?;
                let k = const_int(&args[2]).ok_or_else(|| CompileError::unsupported("load_typed_struct_member of a variable field"))? as usize;
                let fields: Vec<String> = proto.iter().map(|t| ctype(*t)).collect::<R<_>>()?;
                if k >= fields.len() {
                    return Err(CompileError::new(format!("struct field {k} of {}", fields.len())));
                }
                let sn = self.g.struct_name(fields);
                Ok(format!("(({})((struct {sn} *)({p}))->f{k})", ctype(t)?))
            }
            GetUserContext => Ok("((void *)0)".into()),
            SizeOfHalideBufferT => Ok("((int32_t)sizeof(struct halide_buffer_t))".into()),
            Alloca => {
                let n = self.scalar(&args[0])?;
                Ok(format!("(({})__builtin_alloca((size_t)({n})))", ctype(t)?))
            }
            Undef => {
                if t.lanes == 1 {
                    Ok(format!("(({})0)", ctype(t)?))
                } else {
                    let out = self.new_array(&Expr::new(t, ExprKind::Int(0)))?;
                    self.line(&format!("memset({out}, 0, sizeof {out});"));
                    Ok(out)
                }
            }
            _ => Err(CompileError::unsupported(format!("intrinsic `{}`", i.name()))),
        }
    }

    /// Runtime calls: buffer accessors and the rest of what lowered code
    /// calls.
    pub(super) fn runtime(&mut self, name: &str, args: &[Expr], t: Type) -> R<String> {
        if let Some(f) = math_fn(name) {
            let a: Vec<String> = args.iter().map(|x| self.scalar(x)).collect::<R<_>>()?;
            return Ok(format!("{f}({})", a.join(", ")));
        }
        let a: Vec<String> = match name {
            n if n.starts_with("_halide_buffer_") || n == "halide_do_par_for" => args.iter().map(|x| self.scalar(x)).collect::<R<_>>()?,
            _ => return Err(CompileError::unsupported(format!("call to `{name}`"))),
        };
        let arity = |k: usize| -> R<()> {
            if a.len() != k { Err(CompileError::new(format!("`{name}` takes {k} arguments, not {}", a.len()))) } else { Ok(()) }
        };
        let b = || format!("((struct halide_buffer_t *)({}))", a[0]);
        Ok(match name {
            "_halide_buffer_get_host" => {
                arity(1)?;
                format!("((void *){}->host)", b())
            }
            "_halide_buffer_get_device" => {
                arity(1)?;
                format!("((uint64_t){}->device)", b())
            }
            "_halide_buffer_get_device_interface" => {
                arity(1)?;
                format!("((struct halide_device_interface_t *){}->device_interface)", b())
            }
            "_halide_buffer_get_shape" => {
                arity(1)?;
                format!("((struct halide_dimension_t *){}->dim)", b())
            }
            "_halide_buffer_get_type" => {
                arity(1)?;
                let x = b();
                format!("((uint32_t){x}->type.code | ((uint32_t){x}->type.bits << 8) | ((uint32_t){x}->type.lanes << 16))")
            }
            "_halide_buffer_get_dimensions" => {
                arity(1)?;
                format!("((int32_t){}->dimensions)", b())
            }
            "_halide_buffer_get_min" | "_halide_buffer_get_extent" | "_halide_buffer_get_stride" => {
                arity(2)?;
                let field = name.rsplit('_').next().unwrap_or("min");
                format!("((int32_t){}->dim[{}].{field})", b(), a[1])
            }
            "_halide_buffer_get_max" => {
                arity(2)?;
                let x = b();
                format!("((int32_t)((uint32_t){x}->dim[{0}].min + (uint32_t){x}->dim[{0}].extent - 1u))", a[1])
            }
            "_halide_buffer_get_host_dirty" => {
                arity(1)?;
                format!("((uint8_t)(({}->flags & 1) != 0))", b())
            }
            "_halide_buffer_get_device_dirty" => {
                arity(1)?;
                format!("((uint8_t)(({}->flags & 2) != 0))", b())
            }
            "_halide_buffer_is_bounds_query" => {
                arity(1)?;
                let x = b();
                format!("((uint8_t)({x}->host == NULL && {x}->device == 0))")
            }
            "_halide_buffer_set_host_dirty" | "_halide_buffer_set_device_dirty" => {
                arity(2)?;
                let f = ops::runtime(&mut self.g.helpers, "h_buffer_set_flag");
                let flag = if name.contains("host") { 1 } else { 2 };
                format!("{f}({}, {flag}, {})", b(), a[1])
            }
            "_halide_buffer_init" => {
                arity(10)?;
                let f = ops::runtime(&mut self.g.helpers, "h_buffer_init");
                format!(
                    "(({})(void *){f}({}, (struct halide_dimension_t *)({}), (void *)({}), (uint64_t)({}), (const struct halide_device_interface_t *)({}), {}, {}, {}, (struct halide_dimension_t *)({}), (uint64_t)({})))",
                    ctype(t)?,
                    b(),
                    a[1],
                    a[2],
                    a[3],
                    a[4],
                    a[5],
                    a[6],
                    a[7],
                    a[8],
                    a[9]
                )
            }
            "halide_do_par_for" => {
                arity(4)?;
                let f = ops::runtime(&mut self.g.helpers, "h_do_par_for");
                format!("{f}((halide_task_t)({}), {}, {}, (uint8_t *)({}))", a[0], a[1], a[2], a[3])
            }
            _ => return Err(CompileError::unsupported(format!("call to `{name}`"))),
        })
    }
}

/// The C math function for Halide's `NAME_f32` / `NAME_f64` calls.
pub(super) fn math_fn(name: &str) -> Option<String> {
    let (base, suffix) = if let Some(b) = name.strip_suffix("_f32") {
        (b, "f")
    } else if let Some(b) = name.strip_suffix("_f64") {
        (b, "")
    } else {
        return None;
    };
    let c = match base {
        "sqrt" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sinh" | "cosh" | "tanh" | "asinh" | "acosh" | "atanh" | "exp" | "log" | "pow" | "floor" | "ceil" | "trunc" => base,
        "round" => "nearbyint",
        "abs" => "fabs",
        _ => return None,
    };
    Some(format!("{c}{suffix}"))
}
