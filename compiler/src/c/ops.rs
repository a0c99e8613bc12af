//! Exact C definitions of Halide's integer ops, one `static inline` helper
//! per op and element type, generated on demand.
//!
//! Each helper follows the op's definition in `frontends/halide/*.sema`
//! (the interpreter's reference) bit for bit and avoids undefined behaviour:
//! wrapping arithmetic is done in unsigned types, shifts by the element
//! width or more are handled explicitly, division by zero gives 0. Narrowing
//! conversions to signed types rely on the modulo behaviour GCC and Clang
//! document for implementation-defined conversions, and `>>` of a negative
//! value on their arithmetic shift.

use std::collections::HashSet;
use std::fmt::Write;

/// The helper definitions a translation unit needs, in dependency order.
#[derive(Default)]
pub struct Helpers {
    defs: Vec<String>,
    seen: HashSet<String>,
}

impl Helpers {
    /// Whether `name` is already defined; if not, records that it will be.
    fn want(&mut self, name: &str) -> bool {
        self.seen.insert(name.to_string())
    }

    fn push(&mut self, def: String) {
        self.defs.push(def);
    }

    /// Defines a fixed helper `name` once.
    pub fn fixed(&mut self, name: &str, def: &str) -> String {
        if self.want(name) {
            self.push(def.to_string());
        }
        name.to_string()
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        for d in &self.defs {
            s.push_str(d);
            if !d.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }
}

/// An integer element type: signedness and bits (8, 16, 32 or 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IT {
    pub signed: bool,
    pub bits: u8,
}

impl IT {
    pub fn new(signed: bool, bits: u8) -> IT {
        IT { signed, bits }
    }
    /// The C type.
    pub fn c(self) -> String {
        format!("{}int{}_t", if self.signed { "" } else { "u" }, self.bits)
    }
    /// The unsigned C type of the same width.
    pub fn u(self) -> String {
        format!("uint{}_t", self.bits)
    }
    /// The unsigned type arithmetic is done in (at least 32 bits, so that
    /// integer promotion never makes it signed).
    pub fn uc(self) -> &'static str {
        if self.bits <= 32 { "uint32_t" } else { "uint64_t" }
    }
    pub fn sfx(self) -> String {
        format!("{}{}", if self.signed { "i" } else { "u" }, self.bits)
    }
    pub fn unsigned(self) -> IT {
        IT { signed: false, bits: self.bits }
    }
    pub fn with_signed(self, signed: bool) -> IT {
        IT { signed, bits: self.bits }
    }
    /// Twice as wide, same signedness (None above 32 bits).
    pub fn widen(self) -> Option<IT> {
        (self.bits <= 32).then_some(IT { signed: self.signed, bits: self.bits * 2 })
    }
    pub fn min_val(self) -> i128 {
        if self.signed { -(1i128 << (self.bits - 1)) } else { 0 }
    }
    pub fn max_val(self) -> i128 {
        if self.signed { (1i128 << (self.bits - 1)) - 1 } else { (1i128 << self.bits) - 1 }
    }
    /// A C constant of this type with value `v` (which it must hold).
    pub fn lit(self, v: i128) -> String {
        lit(self, v)
    }
    /// The exact-product type: twice the bits (128 for 64-bit lanes), this
    /// signedness.
    fn wide_c(self) -> &'static str {
        match (self.signed, self.bits <= 32) {
            (true, true) => "int64_t",
            (false, true) => "uint64_t",
            (true, false) => "__int128",
            (false, false) => "unsigned __int128",
        }
    }
    fn wide_bits(self) -> u32 {
        if self.bits <= 32 { 64 } else { 128 }
    }
}

/// A C constant of type `t` with value `v`.
pub fn lit(t: IT, v: i128) -> String {
    let c = t.c();
    if t.signed {
        if t.bits == 64 && v == i64::MIN as i128 {
            "INT64_MIN".into()
        } else if v < 0 {
            format!("(({c})(-{}LL))", -v)
        } else {
            format!("(({c}){v}LL)")
        }
    } else {
        format!("(({c}){v}ULL)")
    }
}

fn def(h: &mut Helpers, name: &str, body: impl FnOnce() -> String) -> String {
    if h.want(name) {
        let d = body();
        h.push(d);
    }
    name.to_string()
}

/// `add`, `sub`, `mul` (wrapping), `div`, `mod` (Euclidean, 0 on a zero
/// divisor), `min`, `max`.
pub fn binop(h: &mut Helpers, op: &str, t: IT) -> String {
    let (c, uc, s) = (t.c(), t.uc(), t.sfx());
    let name = format!("h_{op}_{s}");
    def(h, &name.clone(), || match op {
        "add" | "sub" | "mul" => {
            let sym = match op {
                "add" => "+",
                "sub" => "-",
                _ => "*",
            };
            format!("static inline {c} {name}({c} a, {c} b) {{ return ({c})(({uc})a {sym} ({uc})b); }}")
        }
        "min" => format!("static inline {c} {name}({c} a, {c} b) {{ return a < b ? a : b; }}"),
        "max" => format!("static inline {c} {name}({c} a, {c} b) {{ return a > b ? a : b; }}"),
        // A constant positive power-of-two divisor (every fixed-point
        // kernel's `/ 16384`) is an arithmetic shift and its remainder a
        // mask: Euclidean division by b > 0 rounds toward -inf, as `>>`
        // does on GCC's and Clang's two's-complement signed values. GCC
        // folds `__builtin_constant_p` after inlining; the general body
        // below stays branchy (about 8 instructions) even for constants.
        "div" if t.signed => format!(
            "static inline {c} {name}({c} a, {c} b) {{\n  if (__builtin_constant_p(b) && b > 0 && (b & (b - 1)) == 0) return ({c})(a >> __builtin_ctzll(({uc})b));\n  if (b == 0) return 0;\n  {uc} ax = a < 0 ? -({uc})a : ({uc})a, ay = b < 0 ? -({uc})b : ({uc})b;\n  {uc} q = ax / ay, r = ax % ay;\n  if (a < 0 && r != 0) q += 1;\n  if ((a < 0) != (b < 0)) q = -q;\n  return ({c})q;\n}}"
        ),
        "div" => format!("static inline {c} {name}({c} a, {c} b) {{ return b == 0 ? 0 : ({c})(a / b); }}"),
        "mod" if t.signed => format!(
            "static inline {c} {name}({c} a, {c} b) {{\n  if (__builtin_constant_p(b) && b > 0 && (b & (b - 1)) == 0) return ({c})(a & (b - 1));\n  if (b == 0) return 0;\n  {uc} ax = a < 0 ? -({uc})a : ({uc})a, ay = b < 0 ? -({uc})b : ({uc})b;\n  {uc} r = ax % ay;\n  if (a < 0 && r != 0) r = ay - r;\n  return ({c})r;\n}}"
        ),
        "mod" => format!("static inline {c} {name}({c} a, {c} b) {{ return b == 0 ? 0 : ({c})(a % b); }}"),
        _ => unreachable!("binop {op}"),
    })
}

/// Shift by an unsigned magnitude: left (wrapping, 0 from the width up) or
/// right (arithmetic for signed, sign fill from the width up; logical for
/// unsigned, 0 from the width up).
fn shift_mag(h: &mut Helpers, left: bool, t: IT) -> String {
    let (c, uc, s, e) = (t.c(), t.uc(), t.sfx(), t.bits);
    let name = format!("h_{}m_{s}", if left { "shl" } else { "shr" });
    def(h, &name.clone(), || {
        if left {
            format!("static inline {c} {name}({c} x, {uc} n) {{ return n >= {e} ? 0 : ({c})(({uc})x << n); }}")
        } else if t.signed {
            format!("static inline {c} {name}({c} x, {uc} n) {{ return n >= {e} ? (x < 0 ? -1 : 0) : ({c})(x >> n); }}")
        } else {
            format!("static inline {c} {name}({c} x, {uc} n) {{ return n >= {e} ? 0 : ({c})(x >> n); }}")
        }
    })
}

/// `shift_left` / `shift_right`: the amount has the value's width and its
/// own signedness (`amt_signed`); a negative (signed) amount shifts the
/// other way. The value's signedness decides the kind of right shift.
pub fn shift(h: &mut Helpers, left: bool, t: IT, amt_signed: bool) -> String {
    let (c, uc, s) = (t.c(), t.uc(), t.sfx());
    let ac = t.with_signed(amt_signed).c();
    let l = shift_mag(h, true, t);
    let r = shift_mag(h, false, t);
    let name = format!("h_{}_{s}_{}", if left { "shl" } else { "shr" }, if amt_signed { "i" } else { "u" });
    let (fwd, back) = if left { (&l, &r) } else { (&r, &l) };
    def(h, &name.clone(), || {
        if amt_signed {
            format!("static inline {c} {name}({c} x, {ac} y) {{ return y < 0 ? {back}(x, -({uc})y) : {fwd}(x, ({uc})y); }}")
        } else {
            format!("static inline {c} {name}({c} x, {ac} y) {{ return {fwd}(x, ({uc})y); }}")
        }
    })
}

/// `rounding_shift_right` / `rounding_shift_left`: the amount as in `shift`.
pub fn rounding_shift(h: &mut Helpers, left: bool, t: IT, amt_signed: bool) -> String {
    let (c, uc, s) = (t.c(), t.uc(), t.sfx());
    let ac = t.with_signed(amt_signed).c();
    let l = shift_mag(h, true, t);
    let r = shift_mag(h, false, t);
    let name = format!("h_r{}_{s}_{}", if left { "shl" } else { "shr" }, if amt_signed { "i" } else { "u" });
    def(h, &name.clone(), || match (left, amt_signed) {
        (false, true) => format!(
            "static inline {c} {name}({c} x, {ac} y) {{\n  if (y < 0) return {l}(x, -({uc})y);\n  if (y == 0) return x;\n  return ({c})(({uc}){r}(x, ({uc})y) + (({uc}){r}(x, ({uc})y - 1) & 1));\n}}"
        ),
        (false, false) => format!(
            "static inline {c} {name}({c} x, {ac} y) {{\n  if (y == 0) return x;\n  return ({c})(({uc}){r}(x, ({uc})y) + (({uc}){r}(x, ({uc})y - 1) & 1));\n}}"
        ),
        (true, true) => format!(
            "static inline {c} {name}({c} x, {ac} y) {{\n  if (y >= 0) return {l}(x, ({uc})y);\n  return ({c})(({uc}){r}(x, -({uc})y) + (({uc}){r}(x, ({uc})({ac})~y) & 1));\n}}"
        ),
        (true, false) => format!("static inline {c} {name}({c} x, {ac} y) {{ return {l}(x, ({uc})y); }}"),
    })
}

/// `widening_add` (a's signedness) and `widening_sub` (always signed).
pub fn widening_addsub(h: &mut Helpers, sub: bool, t: IT) -> Option<String> {
    let w = t.widen()?;
    let r = if sub { w.with_signed(true) } else { w };
    let (c, rc, ruc, s) = (t.c(), r.c(), r.uc(), t.sfx());
    let name = format!("h_w{}_{s}", if sub { "sub" } else { "add" });
    let sym = if sub { "-" } else { "+" };
    Some(def(h, &name.clone(), || format!("static inline {rc} {name}({c} a, {c} b) {{ return ({rc})(({ruc})({rc})a {sym} ({ruc})({rc})b); }}")))
}

/// `widening_mul(a, b)`: a and b share a width, not necessarily a sign; the
/// result is signed if either is.
pub fn widening_mul(h: &mut Helpers, a: IT, b: IT) -> Option<String> {
    let r = a.widen()?.with_signed(a.signed || b.signed);
    let (ac, bc, rc, ruc) = (a.c(), b.c(), r.c(), r.uc());
    let name = format!("h_wmul_{}_{}", a.sfx(), b.sfx());
    Some(def(h, &name.clone(), || format!("static inline {rc} {name}({ac} a, {bc} b) {{ return ({rc})(({ruc})({rc})a * ({ruc})({rc})b); }}")))
}

/// `widen_right_add/sub/mul(a, b)`: a (twice b's width) op b extended by
/// b's signedness, wrapping at a's width.
pub fn widen_right(h: &mut Helpers, op: &str, a: IT, b: IT) -> String {
    let wb = IT::new(b.signed, b.bits * 2);
    let (ac, auc, bc, wbc) = (a.c(), a.uc(), b.c(), wb.c());
    let sym = match op {
        "add" => "+",
        "sub" => "-",
        _ => "*",
    };
    let name = format!("h_wr{op}_{}_{}", a.sfx(), b.sfx());
    def(h, &name.clone(), || format!("static inline {ac} {name}({ac} a, {bc} b) {{ return ({ac})(({auc})a {sym} ({auc})({wbc})b); }}"))
}

/// `widening_shift_left/right(a, b)`: a widened (its signedness) shifted by
/// b widened by its own signedness, as shift_left/right at twice the width.
pub fn widening_shift(h: &mut Helpers, left: bool, t: IT, amt_signed: bool) -> Option<String> {
    let w = t.widen()?;
    let inner = shift(h, left, w, amt_signed);
    let (c, wc, s) = (t.c(), w.c(), t.sfx());
    let (ac, wac) = (t.with_signed(amt_signed).c(), w.with_signed(amt_signed).c());
    let name = format!("h_w{}_{s}_{}", if left { "shl" } else { "shr" }, if amt_signed { "i" } else { "u" });
    Some(def(h, &name.clone(), || format!("static inline {wc} {name}({c} a, {ac} b) {{ return {inner}(({wc})a, ({wac})b); }}")))
}

/// `saturating_add` / `saturating_sub`.
pub fn saturating(h: &mut Helpers, sub: bool, t: IT) -> String {
    let (c, s, e) = (t.c(), t.sfx(), t.bits);
    let (lo, hi) = (t.lit(t.min_val()), t.lit(t.max_val()));
    let name = format!("h_s{}_{s}", if sub { "sub" } else { "add" });
    def(h, &name.clone(), || {
        let sym = if sub { "-" } else { "+" };
        match (t.signed, e) {
            (true, 64) => {
                let b = if sub { "__builtin_sub_overflow" } else { "__builtin_add_overflow" };
                format!("static inline {c} {name}({c} a, {c} b) {{ {c} r; if ({b}(a, b, &r)) r = a < 0 ? {lo} : {hi}; return r; }}")
            }
            (true, _) => {
                let w = if e <= 16 { "int32_t" } else { "int64_t" };
                format!("static inline {c} {name}({c} a, {c} b) {{ {w} r = ({w})a {sym} ({w})b; return ({c})(r < {lo} ? {lo} : (r > {hi} ? {hi} : r)); }}")
            }
            (false, _) if sub => format!("static inline {c} {name}({c} a, {c} b) {{ return a < b ? 0 : ({c})(a - b); }}"),
            (false, 64) => format!("static inline {c} {name}({c} a, {c} b) {{ {c} r = a + b; return r < a ? {hi} : r; }}"),
            (false, _) => {
                let w = if e <= 16 { "uint32_t" } else { "uint64_t" };
                format!("static inline {c} {name}({c} a, {c} b) {{ {w} r = ({w})a + ({w})b; return ({c})(r > {hi} ? {hi} : r); }}")
            }
        }
    })
}

/// `halving_add` floor((a+b)/2), `rounding_halving_add` floor((a+b+1)/2),
/// `halving_sub` floor((a-b)/2) wrapped to the type.
pub fn halving(h: &mut Helpers, op: &str, t: IT) -> String {
    let (c, uc, s) = (t.c(), t.uc(), t.sfx());
    let name = format!("h_{op}_{s}");
    def(h, &name.clone(), || match op {
        "hadd" => format!("static inline {c} {name}({c} a, {c} b) {{ return ({c})((a >> 1) + (b >> 1) + (a & b & 1)); }}"),
        "rhadd" => format!("static inline {c} {name}({c} a, {c} b) {{ return ({c})((a >> 1) + (b >> 1) + ((a | b) & 1)); }}"),
        "hsub" => {
            let w = if t.bits <= 32 { "int64_t" } else { "__int128" };
            let _ = uc;
            format!("static inline {c} {name}({c} a, {c} b) {{ return ({c})((({w})a - ({w})b) >> 1); }}")
        }
        _ => unreachable!("halving {op}"),
    })
}

/// `saturating_cast` from one integer type to another: clamp to the
/// destination's range, then convert.
pub fn saturating_cast(h: &mut Helpers, from: IT, to: IT) -> String {
    let name = format!("h_satcast_{}_{}", from.sfx(), to.sfx());
    def(h, &name.clone(), || {
        let (fc, tc) = (from.c(), to.c());
        let lo = from.min_val().max(to.min_val());
        let hi = from.max_val().min(to.max_val());
        let mut e = "x".to_string();
        if hi < from.max_val() {
            e = format!("(x > {} ? {} : {e})", from.lit(hi), from.lit(hi));
        }
        if lo > from.min_val() {
            e = format!("(x < {} ? {} : {e})", from.lit(lo), from.lit(lo));
        }
        format!("static inline {tc} {name}({fc} x) {{ return ({tc}){e}; }}")
    })
}

/// `mul_shift_right(a, b, q)` and `rounding_mul_shift_right`: the exact
/// product shifted right by q (unsigned; the shift is arithmetic for signed
/// lanes), rounded to nearest with ties up if rounding, then clamped.
pub fn mul_shift_right(h: &mut Helpers, rounding: bool, t: IT) -> String {
    let (c, u, s) = (t.c(), t.u(), t.sfx());
    let p = t.wide_c();
    let pb = t.wide_bits();
    let name = format!("h_{}mulshr_{s}", if rounding { "r" } else { "" });
    let (lo, hi) = (t.lit(t.min_val()), t.lit(t.max_val()));
    def(h, &name.clone(), || {
        let sh = |amount: &str| {
            if t.signed {
                format!("(p >> ({amount} > {m} ? {m} : {amount}))", m = pb - 1)
            } else {
                format!("({amount} > {m} ? 0 : p >> {amount})", m = pb - 1)
            }
        };
        let r = if rounding { format!("s == 0 ? p : {} + ({} & 1)", sh("s"), sh("(s - 1)")) } else { sh("s") };
        let clamp = if t.signed { format!("r < {lo} ? {lo} : (r > {hi} ? {hi} : r)") } else { format!("r > {hi} ? {hi} : r") };
        format!("static inline {c} {name}({c} a, {c} b, {u} q) {{\n  {p} p = ({p})a * ({p})b;\n  uint64_t s = q;\n  {p} r = {r};\n  return ({c})({clamp});\n}}")
    })
}

/// `absd(a, b)`: |a - b| as the unsigned type.
pub fn absd(h: &mut Helpers, t: IT) -> String {
    let (c, u, uc, s) = (t.c(), t.u(), t.uc(), t.sfx());
    let name = format!("h_absd_{s}");
    def(h, &name.clone(), || format!("static inline {u} {name}({c} a, {c} b) {{ return ({u})(a < b ? ({uc})b - ({uc})a : ({uc})a - ({uc})b); }}"))
}

/// `abs(a)`: |a| as the unsigned type.
pub fn abs(h: &mut Helpers, t: IT) -> String {
    let (c, u, uc, s) = (t.c(), t.u(), t.uc(), t.sfx());
    let name = format!("h_abs_{s}");
    def(h, &name.clone(), || {
        if t.signed {
            format!("static inline {u} {name}({c} a) {{ return ({u})(a < 0 ? -({uc})a : ({uc})a); }}")
        } else {
            format!("static inline {u} {name}({c} a) {{ return a; }}")
        }
    })
}

/// `count_leading_zeros`, `count_trailing_zeros` (the width for 0) and
/// `popcount`, each in the argument's type.
pub fn bitcount(h: &mut Helpers, op: &str, t: IT) -> String {
    let (c, u, s, e) = (t.c(), t.u(), t.sfx(), t.bits);
    let name = format!("h_{op}_{s}");
    def(h, &name.clone(), || match op {
        "clz" => format!("static inline {c} {name}({c} a) {{ return a == 0 ? {e} : ({c})(__builtin_clzll((uint64_t)({u})a) - {}); }}", 64 - e as u32),
        "ctz" => format!("static inline {c} {name}({c} a) {{ return a == 0 ? {e} : ({c})__builtin_ctzll((uint64_t)({u})a); }}"),
        "popcount" => format!("static inline {c} {name}({c} a) {{ return ({c})__builtin_popcountll((uint64_t)({u})a); }}"),
        _ => unreachable!("bitcount {op}"),
    })
}

/// Float to integer conversion as Halide's x86 code does it (Halide, like
/// C, leaves values out of range undefined, so they are pinned here to what
/// the instructions give): signed results of 32 bits or fewer and unsigned
/// ones of 16 or fewer go through `cvtt*2dq` to int32 (out of range:
/// INT32_MIN), int64 through `cvtt*2qq` (INT64_MIN); uint32 and uint64 use
/// AVX-512's `vcvtt*2udq/uqq` (out of range: all ones) when `avx512`, else
/// the 64-bit signed conversion LLVM expands them to.
pub fn float_to_int(h: &mut Helpers, fbits: u8, t: IT, avx512: bool) -> String {
    let f = if fbits == 32 { "float" } else { "double" };
    let c = t.c();
    let name = format!("h_cvt_f{fbits}_{}{}", t.sfx(), if avx512 && !t.signed && t.bits >= 32 { "_avx512" } else { "" });
    let s64 = "((x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN)";
    def(h, &name.clone(), || {
        if t.bits <= 16 || (t.signed && t.bits == 32) {
            format!("static inline {c} {name}({f} x) {{ return ({c})((x >= -2147483648.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN); }}")
        } else if t.signed {
            format!("static inline {c} {name}({f} x) {{ return ({c}){s64}; }}")
        } else if avx512 {
            let lim = if t.bits == 32 { "4294967296.0" } else { "18446744073709551616.0" };
            format!("static inline {c} {name}({f} x) {{ return (x > -1.0 && x < {lim}) ? ({c})x : ({c})~({c})0; }}")
        } else if t.bits == 32 {
            format!("static inline {c} {name}({f} x) {{ return ({c}){s64}; }}")
        } else {
            // Values from 2^63 up convert offset, as LLVM's fptoui expansion does.
            format!(
                "static inline {c} {name}({f} x) {{\n  if (x >= 9223372036854775808.0) return (uint64_t){s64x} ^ 0x8000000000000000ULL;\n  return (uint64_t){s64};\n}}",
                s64x = "((x - 9223372036854775808.0 < 9223372036854775808.0) ? (int64_t)(x - 9223372036854775808.0) : INT64_MIN)"
            )
        }
    })
}

/// Bit casts between a float and an integer of the same width.
pub fn bitcast(h: &mut Helpers, from: &str, to: &str, fs: &str, ts: &str) -> String {
    let name = format!("h_bits_{fs}_{ts}");
    def(h, &name.clone(), || format!("static inline {to} {name}({from} x) {{ {to} r; memcpy(&r, &x, sizeof r); return r; }}"))
}

/// The runtime pieces a lowered function calls: buffer initialisation for
/// bounds queries, dirty flags, and a serial `halide_do_par_for`.
pub fn runtime(h: &mut Helpers, name: &str) -> String {
    let text = match name {
        "h_buffer_init" => "static inline struct halide_buffer_t *h_buffer_init(struct halide_buffer_t *dst, struct halide_dimension_t *dst_shape, void *host, uint64_t device, const struct halide_device_interface_t *device_interface, int type_code, int type_bits, int dimensions, struct halide_dimension_t *shape, uint64_t flags) {\n  dst->host = (uint8_t *)host;\n  dst->device = device;\n  dst->device_interface = device_interface;\n  dst->type.code = (halide_type_code_t)type_code;\n  dst->type.bits = (uint8_t)type_bits;\n  dst->type.lanes = 1;\n  dst->dimensions = dimensions;\n  dst->dim = dst_shape;\n  if (shape != dst->dim && dimensions > 0) memcpy(dst->dim, shape, (size_t)dimensions * sizeof(struct halide_dimension_t));\n  dst->flags = flags;\n  return dst;\n}",
        "h_buffer_set_flag" => "static inline int32_t h_buffer_set_flag(struct halide_buffer_t *b, uint64_t flag, int value) {\n  if (value) b->flags |= flag; else b->flags &= ~flag;\n  return 0;\n}",
        "h_do_par_for" => "static inline int32_t h_do_par_for(halide_task_t f, int32_t min, int32_t extent, uint8_t *closure) {\n  for (int64_t i = min; i < (int64_t)min + extent; i++) {\n    int r = f((void *)0, (int)i, closure);\n    if (r != 0) return r;\n  }\n  return 0;\n}",
        _ => unreachable!("runtime {name}"),
    };
    let mut s = String::new();
    let _ = write!(s, "{text}");
    h.fixed(name, &s)
}
