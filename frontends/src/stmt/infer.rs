//! Typing rules: the result type of every operator, intrinsic and runtime
//! call, as Halide 21 defines them (IR.cpp, IROperator.cpp, FindIntrinsics).
//!
//! Halide prints few types, but the ones it omits are determined: a bare
//! integer literal is int32, a call or variable printed without a `(type)`
//! prefix is int32, and everything else follows from its operands. Where
//! Halide prints a type and a rule also gives one, the two must agree. The
//! rules return `Err(message)`; the parser adds the position.

use super::ast::{BinOp, ExprKind, Expr, Intrinsic, ReduceOp};
use super::types::{Type, TypeCode, round_float};

/// Whether `e` is a literal Halide prints bare (an int32 scalar constant):
/// such a literal takes the type of the other operand.
pub fn is_bare_literal(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(_)) && e.ty == Type::I32
}

/// Retypes a bare int32 literal to `to`'s element type, broadcast to its
/// lanes.
pub fn coerce_literal(e: Expr, to: Type) -> Result<Expr, String> {
    let ExprKind::Int(v) = e.kind else { return Ok(e) };
    let elem = to.element();
    let kind = match elem.code {
        TypeCode::Int if elem.holds(v as i128) => ExprKind::Int(v),
        TypeCode::UInt | TypeCode::Bool if elem.holds(v as i128) => ExprKind::UInt(v as u64),
        TypeCode::Float => ExprKind::Float(round_float(v as f64, elem.bits)),
        TypeCode::Handle(_) => return Err(format!("type mismatch: integer {v} where {to} is expected")),
        _ => return Err(format!("literal {v} does not fit {elem}")),
    };
    let scalar = Expr::new(elem, kind);
    Ok(if to.lanes > 1 {
        Expr::new(to, ExprKind::Broadcast { value: Box::new(scalar), lanes: to.lanes })
    } else {
        scalar
    })
}

/// Makes two operands agree when one is a bare literal; otherwise leaves them.
pub fn unify(a: Expr, b: Expr) -> Result<(Expr, Expr), String> {
    if a.ty.matches(b.ty) {
        Ok((a, b))
    } else if is_bare_literal(&a) && !b.ty.is_handle() {
        let ty = b.ty;
        Ok((coerce_literal(a, ty)?, b))
    } else if is_bare_literal(&b) && !a.ty.is_handle() {
        let ty = a.ty;
        Ok((a, coerce_literal(b, ty)?))
    } else {
        Ok((a, b))
    }
}

/// The type of `a op b` (after [`unify`]).
pub fn binary_type(op: BinOp, a: Type, b: Type) -> Result<Type, String> {
    let sym = op.symbol();
    if !a.matches(b) {
        return Err(format!("type mismatch: `{sym}` of {a} and {b}"));
    }
    if op.is_logical() {
        if !a.is_bool() {
            return Err(format!("type mismatch: `{sym}` needs bools, not {a}"));
        }
        return Ok(a);
    }
    if op.is_comparison() {
        if a.is_handle() && !matches!(op, BinOp::Eq | BinOp::Ne) {
            return Err(format!("type mismatch: `{sym}` of handles"));
        }
        return Ok(Type::bool().with_lanes(a.lanes));
    }
    if a.is_handle() || a.is_bool() {
        return Err(format!("type mismatch: `{sym}` of {a}"));
    }
    Ok(a)
}

/// The type of `select(c, t, f)` (after unifying `t` and `f`).
pub fn select_type(c: Type, t: Type, f: Type) -> Result<Type, String> {
    if !c.is_bool() {
        return Err(format!("type mismatch: select condition is {c}, not a bool"));
    }
    if !t.matches(f) {
        return Err(format!("type mismatch: select of {t} and {f}"));
    }
    if c.lanes != 1 && c.lanes != t.lanes {
        return Err(format!("lane mismatch: select condition has {} lanes, values have {}", c.lanes, t.lanes));
    }
    Ok(t)
}

pub fn cast_type(to: Type, from: Type) -> Result<Type, String> {
    if to.lanes != from.lanes {
        return Err(format!("lane mismatch: cast of {from} to {to}"));
    }
    Ok(to)
}

pub fn reinterpret_type(to: Type, from: Type) -> Result<Type, String> {
    if to.total_bits() != from.total_bits() {
        return Err(format!("type mismatch: reinterpret of {from} ({} bits) as {to} ({} bits)", from.total_bits(), to.total_bits()));
    }
    Ok(to)
}

/// `ramp(base, stride, lanes)` (after unifying base and stride).
pub fn ramp_type(base: Type, stride: Type, lanes: u32) -> Result<Type, String> {
    if !base.matches(stride) {
        return Err(format!("type mismatch: ramp base is {base}, stride is {stride}"));
    }
    if !base.is_int_or_uint() && !base.is_float() {
        return Err(format!("type mismatch: ramp of {base}"));
    }
    if lanes < 2 {
        return Err(format!("a ramp needs at least 2 lanes, not {lanes}"));
    }
    widen_lanes(base, lanes)
}

/// `xN(value)`.
pub fn broadcast_type(value: Type, lanes: u32) -> Result<Type, String> {
    if lanes < 2 {
        return Err(format!("a broadcast needs at least 2 lanes, not {lanes}"));
    }
    widen_lanes(value, lanes)
}

fn widen_lanes(t: Type, factor: u32) -> Result<Type, String> {
    t.lanes.checked_mul(factor).map(|l| t.with_lanes(l)).ok_or_else(|| "too many lanes".to_string())
}

/// The element type of the vectors of a shuffle, with one lane per index.
pub fn shuffle_type(vectors: &[Type], indices: &[u32]) -> Result<Type, String> {
    let Some(first) = vectors.first() else { return Err("a shuffle needs a vector".into()) };
    if let Some(v) = vectors.iter().find(|v| !v.element().matches(first.element())) {
        return Err(format!("type mismatch: shuffle of {first} and {v}"));
    }
    let total: u64 = vectors.iter().map(|v| v.lanes as u64).sum();
    if let Some(i) = indices.iter().find(|&&i| i as u64 >= total) {
        return Err(format!("shuffle index {i} out of range for {total} lanes"));
    }
    let lanes = u32::try_from(indices.len()).map_err(|_| "too many lanes".to_string())?;
    if lanes == 0 {
        return Err("a shuffle needs at least one index".into());
    }
    Ok(first.with_lanes(lanes))
}

/// `(T)vector_reduce_OP(value)`: T's element is value's; its lanes divide
/// value's. Without a printed type the result is one lane.
pub fn reduce_type(op: ReduceOp, value: Type, annot: Option<Type>) -> Result<Type, String> {
    let name = op.name();
    match op {
        ReduceOp::And | ReduceOp::Or if !value.is_bool() => return Err(format!("type mismatch: `{name}` of {value}, not bools")),
        ReduceOp::And | ReduceOp::Or => {}
        _ if value.is_bool() || value.is_handle() => return Err(format!("type mismatch: `{name}` of {value}")),
        _ => {}
    }
    let t = annot.unwrap_or(value.element());
    if t.element() != value.element() {
        return Err(format!("type mismatch: `{name}` of {value} gives {}, not {t}", value.element()));
    }
    if !value.lanes.is_multiple_of(t.lanes) {
        return Err(format!("lane mismatch: `{name}` of {} lanes to {} lanes", value.lanes, t.lanes));
    }
    Ok(t)
}

/// Result type of an intrinsic call with arguments of types `args`, given
/// the printed type `annot`. Some intrinsics are typed only by what Halide
/// prints (`saturating_cast`, `load_typed_struct_member`, ...); without a
/// printed type they are int32, as the printer implies (handles for
/// `make_struct` and friends).
pub fn intrinsic_type(op: Intrinsic, args: &[Type], annot: Option<Type>) -> Result<Type, String> {
    use Intrinsic::*;
    let name = op.name();
    let arity = |lo: usize, hi: usize| -> Result<(), String> {
        if args.len() < lo || args.len() > hi {
            let want = if lo == hi { format!("{lo}") } else if hi == usize::MAX { format!("at least {lo}") } else { format!("{lo} to {hi}") };
            return Err(format!("`{name}` takes {want} arguments, not {}", args.len()));
        }
        Ok(())
    };
    let integer = |t: Type| -> Result<(), String> {
        if t.is_int_or_uint() { Ok(()) } else { Err(format!("type mismatch: `{name}` needs integers, not {t}")) }
    };
    let same = |a: Type, b: Type| -> Result<(), String> {
        if a.matches(b) { Ok(()) } else { Err(format!("type mismatch: `{name}` of {a} and {b}")) }
    };
    // Same width and lanes, signedness free (shift amounts, mixed widening_mul).
    let same_shape = |a: Type, b: Type| -> Result<(), String> {
        integer(a)?;
        integer(b)?;
        if a.bits != b.bits || a.lanes != b.lanes { Err(format!("type mismatch: `{name}` of {a} and {b}")) } else { Ok(()) }
    };
    let widen = |a: Type| -> Result<Type, String> {
        if a.bits > 32 { Err(format!("`{name}` of {a}: there is no type twice as wide")) } else { Ok(a.with_bits(a.bits * 2)) }
    };
    let handle_default = || Type::handle("void *");

    let ruled: Option<Type> = match op {
        WideningAdd | WideningSub => {
            arity(2, 2)?;
            same(args[0], args[1])?;
            integer(args[0])?;
            let w = widen(args[0])?;
            Some(if op == WideningSub { w.with_code(TypeCode::Int) } else { w })
        }
        WideningMul => {
            arity(2, 2)?;
            same_shape(args[0], args[1])?;
            let signed = args[0].is_int() || args[1].is_int();
            Some(widen(args[0])?.with_code(if signed { TypeCode::Int } else { TypeCode::UInt }))
        }
        WidenRightAdd | WidenRightSub | WidenRightMul => {
            arity(2, 2)?;
            let (a, b) = (args[0], args[1]);
            integer(a)?;
            integer(b)?;
            if a.lanes != b.lanes || a.bits as u32 != 2 * b.bits as u32 {
                return Err(format!("type mismatch: `{name}` needs its first operand twice as wide as its second, not {a} and {b}"));
            }
            Some(a)
        }
        WideningShiftLeft | WideningShiftRight => {
            arity(2, 2)?;
            same_shape(args[0], args[1])?;
            Some(widen(args[0])?)
        }
        ShiftLeft | ShiftRight | RoundingShiftLeft | RoundingShiftRight => {
            arity(2, 2)?;
            same_shape(args[0], args[1])?;
            Some(args[0])
        }
        SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd | SortedAvg | DivRoundToZero
        | ModRoundToZero => {
            arity(2, 2)?;
            same(args[0], args[1])?;
            integer(args[0])?;
            Some(args[0])
        }
        BitwiseAnd | BitwiseOr | BitwiseXor => {
            arity(2, 2)?;
            same(args[0], args[1])?;
            if !args[0].is_int_or_uint() && !args[0].is_bool() {
                return Err(format!("type mismatch: `{name}` of {}", args[0]));
            }
            Some(args[0])
        }
        BitwiseNot => {
            arity(1, 1)?;
            if !args[0].is_int_or_uint() && !args[0].is_bool() {
                return Err(format!("type mismatch: `{name}` of {}", args[0]));
            }
            Some(args[0])
        }
        CountLeadingZeros | CountTrailingZeros | Popcount => {
            arity(1, 1)?;
            integer(args[0])?;
            Some(args[0])
        }
        MulShiftRight | RoundingMulShiftRight => {
            arity(3, 3)?;
            same(args[0], args[1])?;
            integer(args[0])?;
            let q = args[2];
            if !q.is_uint() || q.bits != args[0].bits || q.lanes != args[0].lanes {
                return Err(format!("type mismatch: `{name}` shift is {q}, not unsigned {} bits x {} lanes", args[0].bits, args[0].lanes));
            }
            Some(args[0])
        }
        Absd => {
            arity(2, 2)?;
            same(args[0], args[1])?;
            let a = args[0];
            if a.is_float() { Some(a) } else { integer(a)?; Some(a.with_code(TypeCode::UInt)) }
        }
        Abs => {
            arity(1, 1)?;
            let a = args[0];
            if a.is_float() { Some(a) } else { integer(a)?; Some(a.with_code(TypeCode::UInt)) }
        }
        Lerp => {
            arity(3, 3)?;
            same(args[0], args[1])?;
            Some(args[0])
        }
        Likely | LikelyIfInnermost | StrictFloat => {
            arity(1, 1)?;
            Some(args[0])
        }
        PromiseClamped | UnsafePromiseClamped => {
            arity(3, 3)?;
            Some(args[0])
        }
        IfThenElse => {
            arity(2, 3)?;
            if !args[0].is_bool() || !args[0].is_scalar() {
                return Err(format!("type mismatch: `{name}` condition is {}, not a bool scalar", args[0]));
            }
            if args.len() == 3 {
                same(args[1], args[2])?;
            }
            Some(args[1])
        }
        ReturnSecond => {
            arity(2, 2)?;
            Some(args[1])
        }
        Require => {
            arity(3, 3)?;
            Some(args[1])
        }
        DynamicShuffle => {
            arity(2, 4)?;
            Some(args[0].with_lanes(args[1].lanes))
        }
        SaturatingCast => {
            arity(1, 1)?;
            let t = annot.unwrap_or(Type::I32);
            if t.lanes != args[0].lanes {
                return Err(format!("lane mismatch: `{name}` of {} to {t}", args[0]));
            }
            if !(t.is_int_or_uint() || t.is_float()) || !(args[0].is_int_or_uint() || args[0].is_float()) {
                return Err(format!("type mismatch: `{name}` of {} to {t}", args[0]));
            }
            return Ok(t);
        }
        MakeStruct | GetUserContext | Alloca => {
            let t = annot.unwrap_or_else(handle_default);
            if !t.is_handle() {
                return Err(format!("type mismatch: `{name}` gives a handle, not {t}"));
            }
            return Ok(t);
        }
        Undef | LoadTypedStructMember | Stringify | SizeOfHalideBufferT | RegisterDestructor => None,
    };
    match (ruled, annot) {
        (Some(t), Some(a)) if !a.matches(t) => Err(format!("type mismatch: `{name}` gives {t}, not {a}")),
        (Some(t), _) => Ok(t),
        (None, a) => Ok(a.unwrap_or(Type::I32)),
    }
}

/// Whether `name` is a runtime or C function a lowered Stmt may call:
/// Halide's runtime (`halide_*`, `_halide_*`) and float math (`*_f16`,
/// `*_f32`, `*_f64`).
pub fn is_extern(name: &str) -> bool {
    name.starts_with("halide_")
        || name.starts_with("_halide_")
        || ["_f16", "_f32", "_f64"].iter().any(|s| name.ends_with(s) && name.len() > s.len())
}

/// The documented result type of a runtime function, if it has a fixed one.
pub fn extern_type(name: &str) -> Option<Type> {
    let buffer = || Type::handle("struct halide_buffer_t *");
    Some(match name {
        "_halide_buffer_get_host" => Type::handle("void *"),
        "_halide_buffer_get_device" => Type::uint(64),
        "_halide_buffer_get_device_interface" => Type::handle("struct halide_device_interface_t *"),
        "_halide_buffer_get_shape" => Type::handle("struct halide_dimension_t *"),
        "_halide_buffer_get_type" => Type::uint(32),
        "_halide_buffer_get_dimensions"
        | "_halide_buffer_get_min"
        | "_halide_buffer_get_max"
        | "_halide_buffer_get_extent"
        | "_halide_buffer_get_stride"
        | "_halide_buffer_set_host_dirty"
        | "_halide_buffer_set_device_dirty"
        | "_halide_buffer_retire_crop_after_extern_stage"
        | "_halide_buffer_retire_crops_after_extern_stage" => Type::I32,
        "_halide_buffer_get_host_dirty" | "_halide_buffer_get_device_dirty" | "_halide_buffer_is_bounds_query" => Type::bool(),
        "_halide_buffer_init" | "_halide_buffer_init_from_buffer" | "_halide_buffer_crop" | "_halide_buffer_set_bounds" => buffer(),
        _ => return None,
    })
}

/// Result type of a runtime call: its documented type (checked against a
/// printed one), else the printed type, else int32.
pub fn extern_call_type(name: &str, annot: Option<Type>) -> Result<Type, String> {
    match (extern_type(name), annot) {
        (Some(t), Some(a)) if !a.matches(t) => Err(format!("type mismatch: `{name}` gives {t}, not {a}")),
        (Some(t), Some(a)) if t.is_handle() => Ok(a),
        (Some(t), _) => Ok(t),
        (None, a) => Ok(a.unwrap_or(Type::I32)),
    }
}
