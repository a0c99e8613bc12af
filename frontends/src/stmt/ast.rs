//! The typed AST of a lowered Halide module.
//!
//! Mirrors Halide's IR after lowering: every [`Expr`] carries its [`Type`].
//! Blocks are flat `Vec`s; a `let` or `allocate` statement owns the rest of
//! its block as its body, as in Halide.

use super::types::Type;

/// One `module name=..., target=...` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub name: String,
    pub target: String,
    /// Constant buffers (`buffer NAME = {...}`); Halide does not print their
    /// contents.
    pub buffers: Vec<String>,
    pub funcs: Vec<Func>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    External,
    ExternalPlusMetadata,
    ExternalPlusArgv,
    Internal,
}

impl Linkage {
    pub fn name(self) -> &'static str {
        match self {
            Linkage::External => "external",
            Linkage::ExternalPlusMetadata => "external_plus_metadata",
            Linkage::ExternalPlusArgv => "external_plus_argv",
            Linkage::Internal => "internal",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [Linkage::External, Linkage::ExternalPlusMetadata, Linkage::ExternalPlusArgv, Linkage::Internal]
            .into_iter()
            .find(|l| l.name() == s)
    }
}

/// A lowered function: `external_plus_metadata func NAME (args) { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    pub linkage: Linkage,
    pub args: Vec<Arg>,
    pub body: Stmt,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: String,
    pub kind: ArgKind,
}

/// Argument kinds, recovered from the body. A buffer argument `b` is reached
/// through the handle `b.buffer`; its element type and dimensions come from
/// the `b.type` and `b.dimensions` checks. A scalar's type is the one its
/// uses print; a scalar the body never mentions is typed `int32`.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgKind {
    /// `ty` is the element type (one lane).
    Buffer { ty: Type, dims: u32 },
    Scalar { ty: Type },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForKind {
    Serial,
    Parallel,
    Vectorized,
    Unrolled,
}

impl ForKind {
    /// The keyword Halide prints: `for`, `parallel`, `vectorized`, `unrolled`.
    pub fn keyword(self) -> &'static str {
        match self {
            ForKind::Serial => "for",
            ForKind::Parallel => "parallel",
            ForKind::Vectorized => "vectorized",
            ForKind::Unrolled => "unrolled",
        }
    }
}

/// Where an `allocate` puts its buffer (`in Stack`); `Auto` prints nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryType {
    Auto,
    Heap,
    Stack,
    Register,
    LockedCache,
}

impl MemoryType {
    pub fn name(self) -> &'static str {
        match self {
            MemoryType::Auto => "Auto",
            MemoryType::Heap => "Heap",
            MemoryType::Stack => "Stack",
            MemoryType::Register => "Register",
            MemoryType::LockedCache => "LockedCache",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [MemoryType::Auto, MemoryType::Heap, MemoryType::Stack, MemoryType::Register, MemoryType::LockedCache]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// `aligned(modulus, remainder)` on a vector load or store index: the
/// index's first lane is `remainder` modulo `modulus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Alignment {
    pub modulus: i64,
    pub remainder: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let name = value`, scoping over `body` (the rest of the block).
    Let { name: String, value: Expr, body: Box<Stmt> },
    /// `assert(cond, message)`; `message` is usually a `halide_error_*` call.
    Assert { cond: Expr, message: Expr },
    /// `produce name { body }` or `consume name { body }`.
    ProducerConsumer { name: String, is_producer: bool, body: Box<Stmt> },
    /// `for (name, min, extent) { body }`; `name` is int32 and runs over
    /// `min .. min + extent`. Every kind may run serially.
    For { name: String, kind: ForKind, min: Expr, extent: Expr, body: Box<Stmt> },
    IfThenElse { cond: Expr, then_case: Box<Stmt>, else_case: Option<Box<Stmt>> },
    /// `allocate name[ty * extents...]`, live over `body` (the rest of the
    /// block, which normally ends with `free name`). `ty` is the element type.
    Allocate {
        name: String,
        ty: Type,
        extents: Vec<Expr>,
        memory: MemoryType,
        condition: Option<Expr>,
        body: Box<Stmt>,
    },
    Free { name: String },
    /// `name[index] = value`; lanes where `predicate` is false are not written.
    Store { name: String, index: Expr, value: Expr, predicate: Option<Expr>, alignment: Option<Alignment> },
    /// An expression run for its effect, e.g. a runtime call.
    Evaluate(Expr),
    /// `atomic { body }` or `atomic (mutex) { body }`.
    Atomic { mutex: Option<String>, body: Box<Stmt> },
    Block(Vec<Stmt>),
}

/// An expression and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub ty: Type,
    pub kind: ExprKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Halide division: rounds toward negative infinity for signed integers;
    /// x/0 is 0.
    Div,
    /// Halide modulus: never negative for signed integers; x%0 is 0.
    Mod,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as printed (`min` and `max` print as calls).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// The Halide op (`frontends/halide/*.sema`) the operator stands for.
    pub fn op_name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Mod => "mod",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }

    /// `==` to `>=`: bool result.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }

    /// `&&` and `||`: bool operands and result.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A signed integer constant of type `ty` (int8..int64).
    Int(i64),
    /// An unsigned (or bool) constant of type `ty`.
    UInt(u64),
    /// A float constant, exactly representable in `ty`.
    Float(f64),
    Str(String),
    Var(String),
    /// Value conversion to `ty` (Halide `Cast`: wraps, truncates, extends).
    Cast(Box<Expr>),
    /// Bit-preserving conversion to `ty` (same total bits).
    Reinterpret(Box<Expr>),
    /// Operands have the same type; comparisons and `&&`/`||` give bools.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `select(cond, t, f)`; `cond` is a bool scalar or has the lanes of `t`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `name[index]`: one element per index lane; `ty` is the buffer's
    /// element type with the index's lanes.
    Load { name: String, index: Box<Expr>, predicate: Option<Box<Expr>>, alignment: Option<Alignment> },
    /// `ramp(base, stride, lanes)`: `base + i*stride` for `i < lanes`.
    Ramp { base: Box<Expr>, stride: Box<Expr>, lanes: u32 },
    /// `xN(value)`: `value` repeated `lanes` times.
    Broadcast { value: Box<Expr>, lanes: u32 },
    Let { name: String, value: Box<Expr>, body: Box<Expr> },
    Call { callee: Callee, args: Vec<Expr> },
    /// Lane `i` of the result is lane `indices[i]` of the vectors
    /// concatenated. Prints as `concat_vectors`, `interleave_vectors`,
    /// `slice_vectors`, `extract_element` or `shuffle`.
    Shuffle { vectors: Vec<Expr>, indices: Vec<u32> },
    /// Reduces `value` to `ty.lanes` lanes; lane `i` combines the adjacent
    /// input lanes `i*k .. (i+1)*k`, `k = value.lanes / ty.lanes`.
    VectorReduce { op: ReduceOp, value: Box<Expr> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    SaturatingAdd,
    Mul,
    Min,
    Max,
    And,
    Or,
}

impl ReduceOp {
    /// The call name Halide prints: `vector_reduce_add`, ...
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Add => "vector_reduce_add",
            ReduceOp::SaturatingAdd => "vector_reduce_saturating_add",
            ReduceOp::Mul => "vector_reduce_mul",
            ReduceOp::Min => "vector_reduce_min",
            ReduceOp::Max => "vector_reduce_max",
            ReduceOp::And => "vector_reduce_and",
            ReduceOp::Or => "vector_reduce_or",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        use ReduceOp::*;
        [Add, SaturatingAdd, Mul, Min, Max, And, Or].into_iter().find(|r| r.name() == s)
    }
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    Intrinsic(Intrinsic),
    /// A runtime or C function: `halide_error_*`, `_halide_buffer_*`,
    /// `halide_do_par_for`, float math such as `sqrt_f32`.
    Extern(String),
}

impl Callee {
    pub fn name(&self) -> &str {
        match self {
            Callee::Intrinsic(i) => i.name(),
            Callee::Extern(s) => s,
        }
    }
}

macro_rules! intrinsics {
    ($($(#[$doc:meta])* $var:ident = $name:literal,)*) => {
        /// Halide's pure intrinsics (FPIR and the rest of `Call::IntrinsicOp`
        /// that survive lowering). Result types are in `infer::intrinsic_type`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Intrinsic {
            $($(#[$doc])* $var,)*
        }

        impl Intrinsic {
            pub const ALL: &'static [Intrinsic] = &[$(Intrinsic::$var,)*];

            /// The name Halide prints.
            pub fn name(self) -> &'static str {
                match self {
                    $(Intrinsic::$var => $name,)*
                }
            }

            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($name => Some(Intrinsic::$var),)*
                    _ => None,
                }
            }
        }
    };
}

intrinsics! {
    /// `widening_add(a, b)`: a + b in twice the bits, a's signedness.
    WideningAdd = "widening_add",
    /// `widening_sub(a, b)`: a - b in twice the bits, always signed.
    WideningSub = "widening_sub",
    /// `widening_mul(a, b)`: twice the bits; signed if either operand is.
    WideningMul = "widening_mul",
    /// `widen_right_add(a, b)`: a + widen(b); a is twice b's width.
    WidenRightAdd = "widen_right_add",
    WidenRightSub = "widen_right_sub",
    WidenRightMul = "widen_right_mul",
    /// `widening_shift_left(a, b)`: widen(a) << b.
    WideningShiftLeft = "widening_shift_left",
    WideningShiftRight = "widening_shift_right",
    /// `shift_left(a, b)`: a << b; a negative b shifts right.
    ShiftLeft = "shift_left",
    ShiftRight = "shift_right",
    RoundingShiftLeft = "rounding_shift_left",
    RoundingShiftRight = "rounding_shift_right",
    SaturatingAdd = "saturating_add",
    SaturatingSub = "saturating_sub",
    /// `saturating_cast(a)`: clamps to the (annotated) result type.
    SaturatingCast = "saturating_cast",
    HalvingAdd = "halving_add",
    HalvingSub = "halving_sub",
    RoundingHalvingAdd = "rounding_halving_add",
    /// `mul_shift_right(a, b, q)`: (widen(a) * widen(b)) >> q, narrowed with
    /// saturation.
    MulShiftRight = "mul_shift_right",
    RoundingMulShiftRight = "rounding_mul_shift_right",
    /// `absd(a, b)`: |a - b| as the unsigned type of a's width.
    Absd = "absd",
    /// `abs(a)`: unsigned of the same width for integers.
    Abs = "abs",
    BitwiseAnd = "bitwise_and",
    BitwiseOr = "bitwise_or",
    BitwiseXor = "bitwise_xor",
    BitwiseNot = "bitwise_not",
    CountLeadingZeros = "count_leading_zeros",
    CountTrailingZeros = "count_trailing_zeros",
    Popcount = "popcount",
    DivRoundToZero = "div_round_to_zero",
    ModRoundToZero = "mod_round_to_zero",
    SortedAvg = "sorted_avg",
    Lerp = "lerp",
    Likely = "likely",
    LikelyIfInnermost = "likely_if_innermost",
    PromiseClamped = "promise_clamped",
    UnsafePromiseClamped = "unsafe_promise_clamped",
    StrictFloat = "strict_float",
    /// `if_then_else(c, a[, b])`: a or b by a scalar condition.
    IfThenElse = "if_then_else",
    /// `return_second(a, b)`: evaluates a, then gives b.
    ReturnSecond = "return_second",
    /// `require(cond, value, error)`.
    Require = "require",
    /// `dynamic_shuffle(table, index, min, max)`: a lookup in a vector.
    DynamicShuffle = "dynamic_shuffle",
    Undef = "undef",
    /// `make_struct(...)`: a pointer to a stack struct of the arguments.
    MakeStruct = "make_struct",
    /// `load_typed_struct_member(ptr, prototype, index)`.
    LoadTypedStructMember = "load_typed_struct_member",
    GetUserContext = "get_user_context",
    Alloca = "alloca",
    Stringify = "stringify",
    SizeOfHalideBufferT = "size_of_halide_buffer_t",
    RegisterDestructor = "register_destructor",
}

impl Expr {
    pub fn new(ty: Type, kind: ExprKind) -> Self {
        Expr { ty, kind }
    }

    /// The direct subexpressions, in print order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Int(_) | ExprKind::UInt(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Var(_) => vec![],
            ExprKind::Cast(a) | ExprKind::Reinterpret(a) | ExprKind::Not(a) => vec![a],
            ExprKind::Broadcast { value, .. } | ExprKind::VectorReduce { value, .. } => vec![value],
            ExprKind::Binary(_, a, b) => vec![a, b],
            ExprKind::Select(c, t, f) => vec![c, t, f],
            ExprKind::Load { index, predicate, .. } => std::iter::once(&**index).chain(predicate.as_deref()).collect(),
            ExprKind::Ramp { base, stride, .. } => vec![base, stride],
            ExprKind::Let { value, body, .. } => vec![value, body],
            ExprKind::Call { args, .. } => args.iter().collect(),
            ExprKind::Shuffle { vectors, .. } => vectors.iter().collect(),
        }
    }

    /// Calls `f` on this expression and every subexpression, parents first.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }
}

impl Stmt {
    /// The expressions directly in this statement (not in nested statements).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::Let { value, .. } => vec![value],
            Stmt::Assert { cond, message } => vec![cond, message],
            Stmt::For { min, extent, .. } => vec![min, extent],
            Stmt::IfThenElse { cond, .. } => vec![cond],
            Stmt::Allocate { extents, condition, .. } => extents.iter().chain(condition).collect(),
            Stmt::Store { index, value, predicate, .. } => [index, value].into_iter().chain(predicate).collect(),
            Stmt::Evaluate(e) => vec![e],
            Stmt::ProducerConsumer { .. } | Stmt::Free { .. } | Stmt::Atomic { .. } | Stmt::Block(_) => vec![],
        }
    }

    /// The directly nested statements.
    pub fn children(&self) -> Vec<&Stmt> {
        match self {
            Stmt::Let { body, .. }
            | Stmt::ProducerConsumer { body, .. }
            | Stmt::For { body, .. }
            | Stmt::Allocate { body, .. }
            | Stmt::Atomic { body, .. } => vec![body],
            Stmt::IfThenElse { then_case, else_case, .. } => std::iter::once(&**then_case).chain(else_case.as_deref()).collect(),
            Stmt::Block(v) => v.iter().collect(),
            Stmt::Assert { .. } | Stmt::Free { .. } | Stmt::Store { .. } | Stmt::Evaluate(_) => vec![],
        }
    }

    /// Calls `f` on this statement and every nested one, parents first.
    pub fn visit(&self, f: &mut dyn FnMut(&Stmt)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }

    /// Calls `f` on every expression and subexpression in this statement and
    /// those nested in it.
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        self.visit(&mut |s| {
            for e in s.exprs() {
                e.visit(f);
            }
        });
    }
}
