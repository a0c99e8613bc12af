//! The reference interpreter for lowered Halide Stmt: slow and obviously
//! right. Every arithmetic operation, scalar or vector, runs through the
//! Halide op semantics in `halide/*.sema`, the same meaning the verifier
//! proves rules against; only memory and buffer metadata live here.

use crate::stmt::ast::{BinOp, Callee, Expr, ExprKind, Func, Intrinsic, Stmt};
use crate::stmt::types::{Type, TypeCode};
use misaal_isa::{BitVec, SpecLibrary};

/// A buffer as `halide_buffer_t` describes it: element type, per-dimension
/// (min, extent, stride in elements), and little-endian host memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    pub elem: Type,
    pub dims: Vec<(i64, i64, i64)>,
    pub data: Vec<u8>,
}

impl Buffer {
    /// A dense buffer (dimension 0 innermost) of zeros.
    pub fn dense(elem: Type, mins: &[i64], extents: &[i64]) -> Buffer {
        let mut dims = Vec::new();
        let mut stride = 1;
        for (m, e) in mins.iter().zip(extents) {
            dims.push((*m, *e, stride));
            stride *= e;
        }
        let bytes = (stride as usize) * (elem.bits as usize).div_ceil(8);
        Buffer { elem, dims, data: vec![0; bytes] }
    }
    fn elem_bytes(&self) -> usize {
        (self.elem.bits as usize).div_ceil(8)
    }
    pub fn len(&self) -> usize {
        self.data.len() / self.elem_bytes()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

#[derive(Clone, Debug)]
pub enum ArgValue {
    Buffer(Buffer),
    Scalar(Type, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError(pub String);

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InterpError {}

type R<T> = Result<T, InterpError>;

fn err<T>(msg: impl Into<String>) -> R<T> {
    Err(InterpError(msg.into()))
}

#[derive(Clone, Debug)]
enum Value {
    /// Lanes packed little-endian, lane i at bits [i*E, i*E+E).
    Bits(Type, BitVec),
    /// A host pointer: buffer number.
    Host(usize),
    /// A `halide_buffer_t *`: buffer number.
    BufferT(usize),
    Null,
    Str(String),
    /// `make_struct(...)`: a parallel loop's closure, its members by value.
    Struct(Vec<Value>),
    /// `::name`: an internal function (a `halide_do_par_for` task).
    Func(String),
}

pub struct Interp<'a> {
    ops: &'a SpecLibrary,
    buffers: Vec<Buffer>,
    env: Vec<(String, Value)>,
    /// The module's functions, for the tasks of `halide_do_par_for`.
    funcs: &'a [Func],
}

/// `<S, E, N>` of a Halide type: signedness, element bits, lanes.
fn sen(t: Type) -> [i128; 3] {
    [matches!(t.code, TypeCode::Int) as i128, t.bits as i128, t.lanes as i128]
}

impl<'a> Interp<'a> {
    pub fn new(ops: &'a SpecLibrary) -> Self {
        Interp { ops, buffers: Vec::new(), env: Vec::new(), funcs: &[] }
    }

    /// The module's other functions, which `halide_do_par_for` calls by
    /// name (a `parallel` loop's body); without them such a call is an error.
    pub fn with_funcs(mut self, funcs: &'a [Func]) -> Self {
        self.funcs = funcs;
        self
    }

    /// Runs `func` on `args` (in the function's argument order) and returns
    /// the buffer arguments afterwards, in order, outputs included.
    pub fn run(mut self, func: &Func, args: Vec<ArgValue>) -> R<Vec<Buffer>> {
        if args.len() != func.args.len() {
            return err(format!("`{}` takes {} arguments, given {}", func.name, func.args.len(), args.len()));
        }
        let mut external = Vec::new();
        for (a, v) in func.args.iter().zip(args) {
            match v {
                ArgValue::Buffer(b) => {
                    self.buffers.push(b);
                    let id = self.buffers.len() - 1;
                    external.push(id);
                    self.env.push((format!("{}.buffer", a.name), Value::BufferT(id)));
                }
                ArgValue::Scalar(t, x) => {
                    let bits = BitVec::from_i128(t.bits as u32, x as i128);
                    self.env.push((a.name.clone(), Value::Bits(t, bits)));
                }
            }
        }
        self.exec(&func.body)?;
        Ok(external.into_iter().map(|i| self.buffers[i].clone()).collect())
    }

    /// Evaluates a closed expression (no variable bound, no buffer: an
    /// expression of constants, which a compiler computes at compile time):
    /// its lanes, packed as every value here is (lane i at bits
    /// [i*E, i*E+E), bools one bit each). A variable, load or runtime call
    /// in `e` is an error.
    pub fn eval_closed(mut self, e: &Expr) -> R<BitVec> {
        self.bits(e).map(|(_, b)| b)
    }

    fn lookup(&self, name: &str) -> R<&Value> {
        self.env.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v).ok_or_else(|| InterpError(format!("unknown variable `{name}`")))
    }

    fn op(&self, name: &str, generics: &[i128], args: &[&BitVec]) -> R<BitVec> {
        let (_, sem) = self.ops.instantiate(name, generics).map_err(|d| InterpError(format!("{name}<{generics:?}>: {}", d.message)))?;
        sem.eval(args).map_err(|e| InterpError(format!("{name}<{generics:?}>: {e}")))
    }

    fn bits(&mut self, e: &Expr) -> R<(Type, BitVec)> {
        match self.eval(e)? {
            Value::Bits(t, b) => Ok((t, b)),
            other => err(format!("expected a number, found {other:?}")),
        }
    }

    fn int(&mut self, e: &Expr) -> R<i64> {
        let (t, b) = self.bits(e)?;
        Ok(to_i64(t, &b))
    }

    fn truth(&mut self, e: &Expr) -> R<bool> {
        let (_, b) = self.bits(e)?;
        Ok(!b.is_zero())
    }

    fn exec(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Let { name, value, body } => {
                let v = self.eval(value)?;
                self.env.push((name.clone(), v));
                let r = self.exec(body);
                self.env.pop();
                r
            }
            Stmt::Assert { cond, message } => {
                if self.truth(cond)? {
                    return Ok(());
                }
                let m = match self.eval(message) {
                    Ok(Value::Str(s)) => s,
                    _ => format!("{message:?}"),
                };
                err(format!("assertion failed: {m}"))
            }
            Stmt::ProducerConsumer { body, .. } | Stmt::Atomic { body, .. } => self.exec(body),
            Stmt::For { name, min, extent, body, .. } => {
                let (lo, n) = (self.int(min)?, self.int(extent)?);
                for i in lo..lo + n.max(0) {
                    self.env.push((name.clone(), Value::Bits(Type::I32, BitVec::from_i128(32, i as i128))));
                    let r = self.exec(body);
                    self.env.pop();
                    r?;
                }
                Ok(())
            }
            Stmt::IfThenElse { cond, then_case, else_case } => {
                if self.truth(cond)? {
                    self.exec(then_case)
                } else if let Some(e) = else_case {
                    self.exec(e)
                } else {
                    Ok(())
                }
            }
            Stmt::Allocate { name, ty, extents, body, condition, .. } => {
                if let Some(c) = condition
                    && !self.truth(c)?
                {
                    return self.exec(body);
                }
                let mut n: i64 = ty.lanes as i64;
                for e in extents {
                    n = n.checked_mul(self.int(e)?).ok_or_else(|| InterpError(format!("allocation `{name}` is too large")))?;
                }
                if !(0..=(1 << 31)).contains(&n) {
                    return err(format!("allocation `{name}` of {n} elements"));
                }
                let elem = ty.with_lanes(1);
                self.buffers.push(Buffer::dense(elem, &[0], &[n]));
                let id = self.buffers.len() - 1;
                self.env.push((name.clone(), Value::Host(id)));
                let r = self.exec(body);
                self.env.pop();
                r
            }
            Stmt::Free { .. } => Ok(()),
            Stmt::Store { name, index, value, predicate, .. } => {
                let id = self.host(name)?;
                let (_, idx) = self.bits(index)?;
                let (vt, v) = self.bits(value)?;
                let mask = match predicate {
                    Some(p) => Some(self.bits(p)?.1),
                    None => None,
                };
                let lanes = vt.lanes as usize;
                let eb = vt.bits as u32;
                for l in 0..lanes {
                    if mask.as_ref().is_some_and(|m| !m.bit(l as u32)) {
                        continue;
                    }
                    let i = lane_i64(index.ty, &idx, l);
                    self.store(id, name, i, &v.extract(l as u32 * eb + eb - 1, l as u32 * eb))?;
                }
                Ok(())
            }
            Stmt::Evaluate(e) => self.eval(e).map(|_| ()),
            Stmt::Block(ss) => ss.iter().try_for_each(|s| self.exec(s)),
        }
    }

    fn host(&self, name: &str) -> R<usize> {
        match self.lookup(name)? {
            Value::Host(i) => Ok(*i),
            other => err(format!("`{name}` is not a buffer ({other:?})")),
        }
    }

    fn store(&mut self, id: usize, name: &str, i: i64, v: &BitVec) -> R<()> {
        let b = &mut self.buffers[id];
        let eb = b.elem_bytes();
        if i < 0 || i as usize >= b.len() {
            return err(format!("store to `{name}` at element {i} is out of bounds (0..{})", b.len()));
        }
        let bytes = v.to_bytes_le();
        b.data[i as usize * eb..(i as usize + 1) * eb].copy_from_slice(&bytes[..eb]);
        Ok(())
    }

    fn load(&self, id: usize, name: &str, i: i64) -> R<BitVec> {
        let b = &self.buffers[id];
        let eb = b.elem_bytes();
        if i < 0 || i as usize >= b.len() {
            return err(format!("load from `{name}` at element {i} is out of bounds (0..{})", b.len()));
        }
        Ok(BitVec::from_bytes_le(b.elem.bits as u32, &b.data[i as usize * eb..(i as usize + 1) * eb]))
    }

    fn eval(&mut self, e: &Expr) -> R<Value> {
        let t = e.ty;
        Ok(match &e.kind {
            ExprKind::Int(v) => Value::Bits(t, BitVec::from_i128(t.bits as u32, *v as i128)),
            ExprKind::UInt(v) => Value::Bits(t, BitVec::from_u128(t.bits as u32, *v as u128)),
            ExprKind::Float(_) => return err("unsupported: floating point"),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Var(n) if n.starts_with("::") => Value::Func(n[2..].to_string()),
            ExprKind::Var(n) => self.lookup(n)?.clone(),
            ExprKind::Cast(a) | ExprKind::Reinterpret(a) => {
                let reinterpret = matches!(e.kind, ExprKind::Reinterpret(_));
                let v = self.eval(a)?;
                match v {
                    Value::Bits(st, b) => {
                        if t.is_handle() {
                            return Ok(if b.is_zero() { Value::Null } else { return err("unsupported: a non-null integer used as a pointer") });
                        }
                        if reinterpret {
                            let mut g = sen(st).to_vec();
                            g.extend([sen(t)[0], sen(t)[1], sen(t)[2]]);
                            Value::Bits(t, self.op("reinterpret", &g, &[&b])?)
                        } else if t.is_bool() {
                            let zero = BitVec::zero(b.width());
                            Value::Bits(t, self.op("ne", &sen(st), &[&b, &zero])?)
                        } else {
                            let g = [sen(st)[0], sen(st)[1], sen(st)[2], sen(t)[0], sen(t)[1]];
                            Value::Bits(t, self.op("cast", &g, &[&b])?)
                        }
                    }
                    // Pointers to integers (`reinterpret<uint64>(buffer)`) only meet null checks.
                    Value::Null if !t.is_handle() => Value::Bits(t, BitVec::zero(t.bits as u32 * t.lanes)),
                    Value::Host(i) | Value::BufferT(i) if !t.is_handle() => Value::Bits(t, BitVec::from_u64(t.bits as u32 * t.lanes, 0x1000 + i as u64)),
                    other => other,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (va, vb) = (self.eval(a)?, self.eval(b)?);
                let (Value::Bits(ta, x), Value::Bits(_, y)) = (&va, &vb) else {
                    return self.pointer_compare(*op, &va, &vb, t);
                };
                Value::Bits(t, self.op(op.op_name(), &sen(*ta), &[x, y])?)
            }
            ExprKind::Not(a) => {
                let (ta, x) = self.bits(a)?;
                Value::Bits(t, self.op("not", &sen(ta), &[&x])?)
            }
            ExprKind::Select(c, x, y) => {
                let (_, cv) = self.bits(c)?;
                let (tx, xv) = self.bits(x)?;
                let (_, yv) = self.bits(y)?;
                let cv = if cv.width() == 1 && tx.lanes > 1 { if cv.is_zero() { BitVec::zero(tx.lanes) } else { BitVec::ones(tx.lanes) } } else { cv };
                Value::Bits(t, self.op("select", &sen(tx), &[&cv, &xv, &yv])?)
            }
            ExprKind::Load { name, index, predicate, .. } => {
                let id = self.host(name)?;
                let (it, idx) = self.bits(index)?;
                let mask = match predicate {
                    Some(p) => Some(self.bits(p)?.1),
                    None => None,
                };
                let eb = t.bits as u32;
                let mut out = BitVec::zero(eb * t.lanes);
                for l in 0..t.lanes as usize {
                    if mask.as_ref().is_some_and(|m| !m.bit(l as u32)) {
                        continue;
                    }
                    let v = self.load(id, name, lane_i64(it, &idx, l))?;
                    out = out.or(&v.zext(eb * t.lanes).shl_u(l as u64 * eb as u64));
                }
                Value::Bits(t, out)
            }
            ExprKind::Ramp { base, stride, lanes } => {
                let (bt, b) = self.bits(base)?;
                let (_, s) = self.bits(stride)?;
                if bt.lanes != 1 {
                    return err("unsupported: a ramp of vectors");
                }
                Value::Bits(t, self.op("ramp", &[sen(bt)[0], sen(bt)[1], *lanes as i128], &[&b, &s])?)
            }
            ExprKind::Broadcast { value, lanes } => {
                let (vt, v) = self.bits(value)?;
                if vt.lanes == 1 {
                    Value::Bits(t, self.op("broadcast", &[sen(vt)[0], sen(vt)[1], *lanes as i128], &[&v])?)
                } else {
                    // A broadcast of a vector repeats it.
                    let mut out = v.clone();
                    for _ in 1..*lanes {
                        out = BitVec::concat(&v, &out);
                    }
                    Value::Bits(t, out)
                }
            }
            ExprKind::Let { name, value, body } => {
                let v = self.eval(value)?;
                self.env.push((name.clone(), v));
                let r = self.eval(body);
                self.env.pop();
                r?
            }
            ExprKind::Shuffle { vectors, indices } => {
                let mut all: Vec<BitVec> = Vec::new();
                let mut eb = 0;
                for v in vectors {
                    let (vt, b) = self.bits(v)?;
                    eb = vt.bits as u32;
                    for l in 0..vt.lanes {
                        all.push(b.extract(l * eb + eb - 1, l * eb));
                    }
                }
                let mut out = BitVec::zero(eb * indices.len() as u32);
                for (k, &i) in indices.iter().enumerate() {
                    let lane = all.get(i as usize).ok_or_else(|| InterpError(format!("shuffle index {i} out of range")))?;
                    out = out.or(&lane.zext(out.width()).shl_u(k as u64 * eb as u64));
                }
                Value::Bits(t, out)
            }
            ExprKind::VectorReduce { op, value } => {
                let (vt, v) = self.bits(value)?;
                let f = vt.lanes / t.lanes;
                // The Halide op of the same name defines the reduction.
                Value::Bits(t, self.op(op.name(), &[sen(vt)[0], sen(vt)[1], t.lanes as i128, f as i128], &[&v])?)
            }
            ExprKind::Call { callee, args } => self.call(callee, args, t)?,
        })
    }

    fn pointer_compare(&self, op: BinOp, a: &Value, b: &Value, t: Type) -> R<Value> {
        let id = |v: &Value| match v {
            Value::Null => Some(None),
            Value::Host(i) | Value::BufferT(i) => Some(Some(*i)),
            _ => None,
        };
        let (Some(x), Some(y)) = (id(a), id(b)) else { return err(format!("unsupported: {op:?} of {a:?} and {b:?}")) };
        let r = match op {
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            _ => return err(format!("unsupported: {op:?} of pointers")),
        };
        Ok(Value::Bits(t, BitVec::from_u64(1, r as u64)))
    }

    fn call(&mut self, callee: &Callee, args: &[Expr], t: Type) -> R<Value> {
        match callee {
            Callee::Intrinsic(i) => self.intrinsic(*i, args, t),
            Callee::Extern(name) => self.runtime(name, args, t),
        }
    }

    fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], t: Type) -> R<Value> {
        use Intrinsic::*;
        let vals: Vec<(Type, BitVec)> = match i {
            MakeStruct => return Ok(Value::Struct(args.iter().map(|a| self.eval(a)).collect::<R<_>>()?)),
            LoadTypedStructMember => {
                let Value::Struct(members) = self.eval(&args[0])? else { return err("load_typed_struct_member of something not a make_struct") };
                let k = self.int(&args[2])?;
                return members.get(k as usize).cloned().ok_or_else(|| InterpError(format!("load_typed_struct_member: no member {k} of {}", members.len())));
            }
            Stringify => return Ok(Value::Str(format!("{i:?}"))),
            _ => args.iter().map(|a| self.bits(a)).collect::<R<_>>()?,
        };
        let a0 = vals.first().map(|v| v.0).ok_or_else(|| InterpError(format!("`{}` needs arguments", i.name())))?;
        let refs: Vec<&BitVec> = vals.iter().map(|(_, b)| b).collect();
        let g = sen(a0);
        let (name, generics): (&str, Vec<i128>) = match i {
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | StrictFloat => return Ok(Value::Bits(t, vals[0].1.clone())),
            ReturnSecond => return Ok(Value::Bits(t, vals[1].1.clone())),
            WideningMul => ("widening_mul", vec![g[0], g[1], g[2], sen(vals[1].0)[0]]),
            SaturatingCast => ("saturating_cast", vec![g[0], g[1], g[2], sen(t)[0], sen(t)[1]]),
            CountLeadingZeros => ("count_leading_zeros", g.to_vec()),
            // Shifts: <S, E, N> of the value, then S2, the amount's own
            // signedness (Halide shifts an int16 value by a uint16 amount).
            ShiftLeft => ("shl", vec![g[0], g[1], g[2], sen(vals[1].0)[0]]),
            ShiftRight => ("shr", vec![g[0], g[1], g[2], sen(vals[1].0)[0]]),
            WideningShiftLeft | WideningShiftRight | RoundingShiftLeft | RoundingShiftRight => (i.name(), vec![g[0], g[1], g[2], sen(vals[1].0)[0]]),
            BitwiseAnd => ("and", g.to_vec()),
            BitwiseOr => ("or", g.to_vec()),
            BitwiseXor => ("xor", g.to_vec()),
            BitwiseNot => ("not", g.to_vec()),
            WideningAdd | WideningSub | WidenRightAdd | WidenRightSub | WidenRightMul | SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd | MulShiftRight | RoundingMulShiftRight
            | Absd | Abs => {
                // widen_right_* take the wide operand first; its <S, E, N> is the narrow one's.
                let g = if matches!(i, WidenRightAdd | WidenRightSub | WidenRightMul) { sen(vals[1].0) } else { g };
                (i.name(), g.to_vec())
            }
            other => return err(format!("unsupported: intrinsic `{}`", other.name())),
        };
        Ok(Value::Bits(t, self.op(name, &generics, &refs)?))
    }

    fn buffer_arg(&mut self, e: &Expr) -> R<usize> {
        match self.eval(e)? {
            Value::BufferT(i) => Ok(i),
            other => err(format!("expected a halide_buffer_t, found {other:?}")),
        }
    }

    fn runtime(&mut self, name: &str, args: &[Expr], t: Type) -> R<Value> {
        let num = |t: Type, v: i64| Value::Bits(t, BitVec::from_i128(t.bits as u32, v as i128));
        let dim = |s: &mut Self, i: usize| -> R<(usize, usize)> {
            let b = s.buffer_arg(&args[0])?;
            let d = s.int(&args[1])? as usize;
            if d >= s.buffers[b].dims.len() {
                return err(format!("{name}: dimension {d} of a {}-dimensional buffer", s.buffers[b].dims.len()));
            }
            let _ = i;
            Ok((b, d))
        };
        Ok(match name {
            "_halide_buffer_get_host" => Value::Host(self.buffer_arg(&args[0])?),
            "_halide_buffer_get_min" => {
                let (b, d) = dim(self, 0)?;
                num(t, self.buffers[b].dims[d].0)
            }
            "_halide_buffer_get_extent" => {
                let (b, d) = dim(self, 0)?;
                num(t, self.buffers[b].dims[d].1)
            }
            "_halide_buffer_get_stride" => {
                let (b, d) = dim(self, 0)?;
                num(t, self.buffers[b].dims[d].2)
            }
            "_halide_buffer_get_max" => {
                let (b, d) = dim(self, 0)?;
                let (m, e, _) = self.buffers[b].dims[d];
                num(t, m + e - 1)
            }
            "_halide_buffer_get_dimensions" => {
                let b = self.buffer_arg(&args[0])?;
                num(t, self.buffers[b].dims.len() as i64)
            }
            "_halide_buffer_get_type" => {
                let b = self.buffer_arg(&args[0])?;
                let e = self.buffers[b].elem;
                let code = match e.code {
                    TypeCode::Int => 0,
                    TypeCode::UInt | TypeCode::Bool => 1,
                    TypeCode::Float => 2,
                    TypeCode::Handle(_) => 3,
                };
                num(t, code | ((e.bits as i64) << 8) | (1 << 16))
            }
            "_halide_buffer_get_device_dirty" | "_halide_buffer_get_host_dirty" | "_halide_buffer_is_bounds_query" => num(t, 0),
            "_halide_buffer_set_host_dirty" | "_halide_buffer_set_device_dirty" => num(t, 0),
            // A parallel loop, run serially: the task is an internal
            // function of (user context, loop variable, closure).
            "halide_do_par_for" => {
                let Value::Func(task) = self.eval(&args[0])? else { return err("halide_do_par_for: the task is not a function") };
                let f = self.funcs.iter().find(|f| f.name == task).ok_or_else(|| InterpError(format!("halide_do_par_for: no function `{task}` (Interp::with_funcs)")))?;
                if f.args.len() != 3 {
                    return err(format!("halide_do_par_for: task `{task}` takes {} arguments, not 3", f.args.len()));
                }
                let (lo, n) = (self.int(&args[1])?, self.int(&args[2])?);
                let closure = self.eval(&args[3])?;
                for i in lo..lo + n.max(0) {
                    let depth = self.env.len();
                    self.env.push((f.args[0].name.clone(), Value::Null));
                    self.env.push((f.args[1].name.clone(), Value::Bits(Type::I32, BitVec::from_i128(32, i as i128))));
                    self.env.push((f.args[2].name.clone(), closure.clone()));
                    let r = self.exec(&f.body);
                    self.env.truncate(depth);
                    r?;
                }
                num(t, 0)
            }
            n if n.starts_with("halide_error") => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(match self.eval(a) {
                        Ok(Value::Str(s)) => s,
                        Ok(Value::Bits(at, b)) => to_i64(at, &b).to_string(),
                        _ => "?".into(),
                    });
                }
                Value::Str(format!("{n}({})", parts.join(", ")))
            }
            other => return err(format!("unsupported: call to `{other}`")),
        })
    }
}

fn to_i64(t: Type, b: &BitVec) -> i64 {
    let w = b.width();
    let v = b.to_u128() as u64;
    if matches!(t.code, TypeCode::Int) && w < 64 && b.msb() { (v | (!0u64 << w)) as i64 } else { v as i64 }
}

fn lane_i64(t: Type, b: &BitVec, l: usize) -> i64 {
    let eb = t.bits as u32;
    let lane = b.extract(l as u32 * eb + eb - 1, l as u32 * eb);
    to_i64(t.with_lanes(1), &lane)
}
