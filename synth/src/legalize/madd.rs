//! Widening multiplies by a broadcast scalar through the pair-sum
//! instruction (vpmaddwd), searched from the semantics. The enumeration
//! has no broadcast operands, so `widening_mul(a, broadcast c)` (matmul)
//! and the sliced, re-widened i8 products of the quantized kernels
//! (fully_connected, conv_nn, depthwise_conv) were lowered through vpmulld
//! of two sign extensions, or through vpmullw and extract-and-extend.
//!
//! The pair-sum instruction `P` is found first: the first verified
//! two-operand 256-bit instruction equal, on random inputs, to Halide's
//! sum of the widening products of the even and of the odd i16 lanes. Its
//! dword j is a_lo*b_lo + a_hi*b_hi, so one product comes out alone when
//! each factor sits in a dword whose other word makes the second product
//! zero. For each left side below (exactly the ones the Halide front end
//! produces for the kernels, as the hand rules of rulesets/x86_hand.egg have
//! them), every factor gets its dword forms:
//! - a vector: each verified one-operand 128 -> 256-bit instruction (the
//!   zero/sign extensions to dwords among them) of the vector, or, when the
//!   left side keeps 8 lanes of 16, of the 64-bit slice moved into a
//!   register by each verified 64 -> 128-bit instruction (movq): the right
//!   side then reads exactly the lanes the left side reads, a 64-bit load
//!   that gcc folds into vpmovsx;
//! - a scalar: a broadcast at 16-bit lanes (the pair (c, c)), or at 32-bit
//!   lanes of c extended to 32 bits directly, or to 16 bits and then
//!   zero-extended (the pair (c, 0));
//! - a widening difference of a vector and a broadcast scalar: the first
//!   verified instruction equal to Halide's i16x16 `sub` over a vector form
//!   and a scalar form.
//! Candidates `P(form, form)` (the left side's factor order first, then
//! swapped) are tried in size order; the first equal to the left side on
//! random and edge inputs (0, 1, -1, -128, 127, 255, -32768, 32767 in
//! lanes) is the template. [`pair_products`] searches the sum of two
//! products (a*x + b*y) the same way, over interleaved operands (the sum
//! of 2f products regrouped into pair sums is `regroup.rs`'s). Like every
//! legalization template each is proved by the caller, which writes it
//! only when proved.

use super::Split;
use misaal_isa::{BitVec, Semantics, SpecLibrary, ast::Ty};
use std::sync::Arc;

/// A term of the rule language with the semantics to evaluate it.
#[derive(Clone)]
enum Tm {
    Var(usize),
    /// Opening text (`(x86 name` or `(op (t s e n) generics...`), semantics, operands.
    Op(String, Arc<Semantics>, Vec<Tm>),
}

impl Tm {
    fn size(&self) -> usize {
        match self {
            Tm::Var(_) => 0,
            Tm::Op(_, _, args) => 1 + args.iter().map(Tm::size).sum::<usize>(),
        }
    }
    fn text(&self, names: &[&str]) -> String {
        match self {
            Tm::Var(k) => format!("?{}", names[*k]),
            Tm::Op(head, _, args) => format!("{head} {})", args.iter().map(|a| a.text(names)).collect::<Vec<_>>().join(" ")),
        }
    }
    fn eval(&self, env: &[BitVec]) -> Option<BitVec> {
        match self {
            Tm::Var(k) => Some(env[*k].clone()),
            Tm::Op(_, sem, args) => {
                let vals: Vec<BitVec> = args.iter().map(|a| a.eval(env)).collect::<Option<_>>()?;
                sem.eval(&vals).ok()
            }
        }
    }
    fn x86(name: &str, sem: &Arc<Semantics>, args: Vec<Tm>) -> Tm {
        Tm::Op(format!("(x86 {name}"), sem.clone(), args)
    }
}

/// Halide op `op<g...>` over `args`; `None` when it does not instantiate.
fn h(halide: &SpecLibrary, op: &str, g: &[i128], args: Vec<Tm>) -> Option<Tm> {
    let (_, sem) = halide.instantiate(op, g).ok()?;
    let sign = super::sign_letter(g[0]);
    let rest: String = g[3..].iter().map(|v| format!(" {v}")).collect();
    Some(Tm::Op(format!("({op} ({sign} {} {}){rest}", g[1], g[2]), sem, args))
}

/// One factor of the product on the left side.
#[derive(Clone)]
enum Factor {
    /// Variable `var` of lanes `e` bits wide and sign `s`; `Some(b)` when
    /// the left side keeps lanes b .. b + 8 of its 16.
    Vector { var: usize, e: u32, s: i128, slice: Option<i128> },
    /// A scalar term of `e` bits and sign `s` under a broadcast.
    Scalar { term: Tm, e: u32, s: i128 },
    /// `widening_sub` of a vector and a broadcast scalar (16-bit lanes).
    Diff(Box<Factor>, Box<Factor>),
}

/// A left side: its name part, variables (name, lane bits, lanes), term and factors.
struct Shape {
    name: String,
    vars: Vec<(&'static str, u32, u32)>,
    lhs: Tm,
    factors: [Factor; 2],
    /// The variable the products are added to (`acc + a * c`), if any.
    acc: Option<usize>,
}

/// The instructions the forms are built from, at one register width.
struct Parts {
    /// The register width: 256 or 512 bits.
    bits: u32,
    pair_sum: (String, Arc<Semantics>),
    /// The pair sum added to an accumulator, if one instruction does it
    /// (`vpdpwssd`: VNNI).
    pair_acc: Option<(String, Arc<Semantics>)>,
    sub16: Option<(String, Arc<Semantics>)>,
    /// The one-operand instructions from 128 bits, and from half the
    /// register, to the register: (operand bits, name, semantics).
    widens: Vec<(u32, String, Arc<Semantics>)>,
    movqs: Vec<(String, Arc<Semantics>)>,
}

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `count` assignments of the variables: lanes random or (one in three)
/// an edge value truncated to the lane width; case 0 all zero, case 1 all ones.
fn cases(vars: &[(&str, u32, u32)], count: usize, seed: u64) -> Vec<Vec<BitVec>> {
    const EDGES: [i128; 8] = [0, 1, -1, -128, 127, 255, -32768, 32767];
    let mut next = rng(seed);
    (0..count)
        .map(|c| {
            vars.iter()
                .map(|&(_, e, n)| {
                    let mut v = BitVec::zero(e * n);
                    for l in 0..n {
                        let r = next();
                        let lane = match c {
                            0 => 0,
                            1 => -1,
                            _ if r % 3 == 0 => EDGES[(r >> 8) as usize % EDGES.len()],
                            _ => (r >> 16) as i128,
                        };
                        let bits = BitVec::from_i128(e, lane);
                        for b in 0..e {
                            v.set_bit(l * e + b, bits.bit(b));
                        }
                    }
                    v
                })
                .collect()
        })
        .collect()
}

/// The verified instructions of these operand and result widths, in
/// [`super::portable_order`].
fn verified(x86: &SpecLibrary, params: &[u32], ret: u32) -> Vec<(String, Arc<Semantics>)> {
    let mut v: Vec<(String, Arc<Semantics>)> = x86
        .iter()
        .filter(|(i, _)| i.ret == Ty::Bv(ret) && i.params.len() == params.len() && i.params.iter().zip(params).all(|(p, w)| p.ty == Ty::Bv(*w)))
        .map(|(i, s)| (i.name.clone(), s.clone()))
        .collect();
    super::portable_order(x86, &mut v);
    v
}

/// In name order: of the 64 -> 128-bit moves the first is `movq`, a load
/// that gcc folds into the extension after it (a broadcast is not).
fn by_name(mut v: Vec<(String, Arc<Semantics>)>) -> Vec<(String, Arc<Semantics>)> {
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The first instruction of `ins` equal to `want` on random inputs of the
/// given lane widths (`bits` wide each).
fn first_equal(ins: &[(String, Arc<Semantics>)], lane_bits: &[u32], bits: u32, want: &dyn Fn(&[BitVec]) -> Option<BitVec>, seed: u64) -> Option<(String, Arc<Semantics>)> {
    let vars: Vec<(&str, u32, u32)> = lane_bits.iter().map(|&e| ("v", e, bits / e)).collect();
    let cs = cases(&vars, 24, seed);
    ins.iter().find(|(_, sem)| cs.iter().all(|c| want(c).is_some_and(|w| sem.eval(&c.iter().collect::<Vec<_>>()).ok() == Some(w)))).cloned()
}

fn parts(halide: &SpecLibrary, x86: &SpecLibrary, bits: u32) -> Option<Parts> {
    let (l16, l32) = ((bits / 16) as i128, (bits / 32) as i128);
    let two = verified(x86, &[bits, bits], bits);
    // Halide's pair sum: even-lane products plus odd-lane products, i16 -> i32.
    let half = |k: i128, a: usize, b: usize| -> Option<Tm> {
        let s = |v| h(halide, "slice", &[1, 16, l32, l16, k, 2], vec![Tm::Var(v)]);
        h(halide, "widening_mul", &[1, 16, l32, 1], vec![s(a)?, s(b)?])
    };
    let pair = h(halide, "add", &[1, 32, l32], vec![half(0, 0, 1)?, half(1, 0, 1)?])?;
    let pair_sum = first_equal(&two, &[16, 16], bits, &|c| pair.eval(c), 0x7061_6972)?;
    // The accumulating form: acc + pair sum, the accumulator first.
    let acc = h(halide, "add", &[1, 32, l32], vec![Tm::Var(0), h(halide, "add", &[1, 32, l32], vec![half(0, 1, 2)?, half(1, 1, 2)?])?])?;
    let pair_acc = first_equal(&verified(x86, &[bits, bits, bits], bits), &[32, 16, 16], bits, &|c| acc.eval(c), 0x6163_6332);
    let sub = h(halide, "sub", &[1, 16, l16], vec![Tm::Var(0), Tm::Var(1)])?;
    let sub16 = first_equal(&two, &[16, 16], bits, &|c| sub.eval(c), 0x7375_6231);
    let mut widens: Vec<(u32, String, Arc<Semantics>)> = Vec::new();
    for from in [bits / 2, 128].into_iter().filter(|&w| w >= 128) {
        if widens.iter().all(|w| w.0 != from) {
            widens.extend(verified(x86, &[from], bits).into_iter().map(|(n, s)| (from, n, s)));
        }
    }
    Some(Parts { bits, pair_sum, pair_acc, sub16, widens, movqs: by_name(verified(x86, &[64], 128)) })
}

/// Every dword form of a factor, in generation order.
fn forms(halide: &SpecLibrary, p: &Parts, f: &Factor) -> Vec<Tm> {
    let mut out = Vec::new();
    match f {
        Factor::Vector { var, e, s, slice } => {
            // The operand: one lane per dword of the register, or the
            // 64-bit slice moved into a 128-bit register.
            let (bases, from): (Vec<Tm>, u32) = match slice {
                None => (vec![Tm::Var(*var)], e * (p.bits / 32)),
                Some(b) => {
                    let Some(sl) = h(halide, "slice", &[*s, *e as i128, 64 / *e as i128, 128 / *e as i128, *b, 1], vec![Tm::Var(*var)]) else { return out };
                    (p.movqs.iter().map(|(n, sem)| Tm::x86(n, sem, vec![sl.clone()])).collect(), 128)
                }
            };
            for base in &bases {
                out.extend(p.widens.iter().filter(|w| w.0 == from).map(|(_, n, sem)| Tm::x86(n, sem, vec![base.clone()])));
            }
        }
        Factor::Scalar { term, e, s } => {
            let (e, s) = (*e as i128, *s);
            let (l16, l32) = ((p.bits / 16) as i128, (p.bits / 32) as i128);
            let to16 = |s2| if e == 16 && s2 == s { Some(term.clone()) } else { h(halide, "cast", &[s, e, 1, s2, 16], vec![term.clone()]) };
            // (c, c) at 16-bit lanes; c extended to 32 bits; c extended to 16, then zero-extended.
            let cands = [
                to16(s).and_then(|t| h(halide, "broadcast", &[s, 16, l16], vec![t])),
                h(halide, "cast", &[s, e, 1, 0, 32], vec![term.clone()]).and_then(|t| h(halide, "broadcast", &[0, 32, l32], vec![t])),
                to16(0).and_then(|t| h(halide, "cast", &[0, 16, 1, 0, 32], vec![t])).and_then(|t| h(halide, "broadcast", &[0, 32, l32], vec![t])),
            ];
            out.extend(cands.into_iter().flatten());
        }
        Factor::Diff(v, sc) => {
            let Some((n, sem)) = &p.sub16 else { return out };
            let (vs, ss) = (forms(halide, p, v), forms(halide, p, sc));
            for a in &vs {
                out.extend(ss.iter().map(|b| Tm::x86(n, sem, vec![a.clone(), b.clone()])));
            }
        }
    }
    out
}

/// The smallest `P(form, form)` equal to the shape's left side on every case.
fn search(halide: &SpecLibrary, p: &Parts, shape: &Shape, count: usize) -> Option<Tm> {
    let ins = cases(&shape.vars, count, 0x6d61_6464 ^ shape.name.len() as u64);
    let want: Vec<BitVec> = ins.iter().map(|c| shape.lhs.eval(c)).collect::<Option<_>>()?;
    // Forms evaluated once per case; a form that does not evaluate is dropped.
    let valued = |f: &Factor| -> Vec<(Tm, Vec<BitVec>)> {
        forms(halide, p, f).into_iter().filter_map(|t| Some((t.clone(), ins.iter().map(|c| t.eval(c).filter(|v| v.width() == p.bits)).collect::<Option<Vec<_>>>()?))).collect()
    };
    let (f0, f1) = (valued(&shape.factors[0]), valued(&shape.factors[1]));
    let mut cands: Vec<(usize, &(Tm, Vec<BitVec>), &(Tm, Vec<BitVec>))> = Vec::new();
    for a in &f0 {
        for b in &f1 {
            cands.push((a.0.size() + b.0.size(), a, b));
            cands.push((a.0.size() + b.0.size(), b, a));
        }
    }
    cands.sort_by_key(|c| c.0);
    if let Some(acc) = shape.acc {
        let (n, sem) = p.pair_acc.as_ref()?;
        let (_, l, r) = cands.into_iter().find(|(_, l, r)| (0..ins.len()).all(|k| sem.eval(&[&ins[k][acc], &l.1[k], &r.1[k]]).ok().as_ref() == Some(&want[k])))?;
        return Some(Tm::x86(n, sem, vec![Tm::Var(acc), l.0.clone(), r.0.clone()]));
    }
    let (n, sem) = &p.pair_sum;
    let (_, l, r) = cands.into_iter().find(|(_, l, r)| (0..ins.len()).all(|k| sem.eval(&[&l.1[k], &r.1[k]]).ok().as_ref() == Some(&want[k])))?;
    Some(Tm::x86(n, sem, vec![l.0.clone(), r.0.clone()]))
}

/// The left sides at a register of `bits`: matmul's product by a broadcast
/// (both orders), and the same added to an accumulator (matmul's update,
/// `acc + widening_mul(b, broadcast a)`); at 512 bits, fully_connected's
/// 16-lane i8 product by a broadcast, sign-extended to dwords, alone and
/// added to an accumulator (both orders); then, at 256 bits, per half
/// (lanes 0-7, 8-15) the sliced and sign-extended i8 products of
/// fully_connected, conv_nn and depthwise_conv (rulesets/x86_hand.egg's hand
/// rules have the same left sides).
fn shapes(halide: &SpecLibrary, bits: u32) -> Option<Vec<Shape>> {
    let v = Tm::Var;
    let mut out = Vec::new();
    let l32 = bits / 32;
    let n = l32 as i128;
    let bc16 = h(halide, "broadcast", &[1, 16, n], vec![v(1)])?;
    let a16 = Factor::Vector { var: 0, e: 16, s: 1, slice: None };
    let c16 = Factor::Scalar { term: v(1), e: 16, s: 1 };
    let vars16 = vec![("a", 16, l32), ("c", 16, 1)];
    let prod = h(halide, "widening_mul", &[1, 16, n, 1], vec![v(0), bc16.clone()])?;
    let prod_lhs = h(halide, "widening_mul", &[1, 16, n, 1], vec![bc16, v(0)])?;
    out.push(Shape { name: "bcast".into(), vars: vars16.clone(), lhs: prod.clone(), factors: [a16.clone(), c16.clone()], acc: None });
    out.push(Shape { name: "bcast-lhs".into(), vars: vars16.clone(), lhs: prod_lhs.clone(), factors: [c16.clone(), a16.clone()], acc: None });
    let vars_acc = [vars16, vec![("acc", 32, l32)]].concat();
    out.push(Shape { name: "acc-bcast".into(), vars: vars_acc.clone(), lhs: h(halide, "add", &[1, 32, n], vec![v(2), prod])?, factors: [a16.clone(), c16.clone()], acc: Some(2) });
    out.push(Shape { name: "acc-bcast-lhs".into(), vars: vars_acc, lhs: h(halide, "add", &[1, 32, n], vec![v(2), prod_lhs])?, factors: [c16, a16], acc: Some(2) });
    if bits == 512 {
        // fully_connected at zmm width: a 16-lane i8 product by a broadcast
        // i8, sign-extended to dwords, alone and added to an accumulator
        // (Halide's `widen_right_add(acc, widening_mul(f, x16(c)))`
        // expanded), in both factor orders.
        let vars = vec![("a", 8, 16), ("c", 8, 1)];
        let bc8 = h(halide, "broadcast", &[1, 8, 16], vec![v(1)])?;
        let (a8, c8) = (Factor::Vector { var: 0, e: 8, s: 1, slice: None }, Factor::Scalar { term: v(1), e: 8, s: 1 });
        let wide = |prod: Tm| h(halide, "cast", &[1, 16, 16, 1, 32], vec![prod]);
        for (suffix, l, r, factors) in [("", v(0), bc8.clone(), [a8.clone(), c8.clone()]), ("-lhs", bc8, v(0), [c8, a8])] {
            let lhs = wide(h(halide, "widening_mul", &[1, 8, 16, 1], vec![l, r])?)?;
            out.push(Shape { name: format!("i8-bcast{suffix}"), vars: vars.clone(), lhs: lhs.clone(), factors: factors.clone(), acc: None });
            let vars_acc = [vars.clone(), vec![("acc", 32, 16)]].concat();
            out.push(Shape { name: format!("acc-i8-bcast{suffix}"), vars: vars_acc, lhs: h(halide, "add", &[1, 32, 16], vec![v(2), lhs])?, factors, acc: Some(2) });
        }
    }
    if bits != 256 {
        return Some(out);
    }
    // cast<i16 -> i32>(slice of 8 lanes at b of a 16-lane i16 product).
    let widened = |b: i128, prod: Tm| -> Option<Tm> { h(halide, "cast", &[1, 16, 8, 1, 32], vec![h(halide, "slice", &[1, 16, 8, 16, b, 1], vec![prod])?]) };
    for (b, half) in [(0i128, "lo"), (8, "hi")] {
        let i8v = |var| Factor::Vector { var, e: 8, s: 1, slice: Some(b) };
        let prod = h(halide, "widening_mul", &[1, 8, 16, 1], vec![v(0), h(halide, "broadcast", &[1, 8, 16], vec![v(1)])?])?;
        out.push(Shape {
            name: format!("i8-bcast-{half}"),
            vars: vec![("a", 8, 16), ("c", 8, 1)],
            lhs: widened(b, prod)?,
            factors: [i8v(0), Factor::Scalar { term: v(1), e: 8, s: 1 }],
            acc: None,
        });
        // conv_nn: the scalar is int16(x) - int16(z) of two u8.
        let d = h(halide, "sub", &[1, 16, 1], vec![h(halide, "cast", &[0, 8, 1, 1, 16], vec![v(0)])?, h(halide, "cast", &[0, 8, 1, 1, 16], vec![v(1)])?])?;
        let prod = h(halide, "widen_right_mul", &[1, 8, 16], vec![h(halide, "broadcast", &[1, 16, 16], vec![d.clone()])?, v(2)])?;
        out.push(Shape {
            name: format!("i16-bcast-subu8-{half}"),
            vars: vec![("x", 8, 1), ("z", 8, 1), ("f", 8, 16)],
            lhs: widened(b, prod)?,
            factors: [Factor::Scalar { term: d, e: 16, s: 1 }, i8v(2)],
            acc: None,
        });
        // depthwise_conv: widening_sub(u8 x, broadcast u8 z) times i8 filter bytes.
        let diff = h(halide, "widening_sub", &[0, 8, 16], vec![v(0), h(halide, "broadcast", &[0, 8, 16], vec![v(1)])?])?;
        let prod = h(halide, "widen_right_mul", &[1, 8, 16], vec![diff, v(2)])?;
        out.push(Shape {
            name: format!("subu8-i8-{half}"),
            vars: vec![("x", 8, 16), ("z", 8, 1), ("f", 8, 16)],
            lhs: widened(b, prod)?,
            factors: [
                Factor::Diff(Box::new(Factor::Vector { var: 0, e: 8, s: 0, slice: Some(b) }), Box::new(Factor::Scalar { term: v(1), e: 8, s: 0 })),
                i8v(2),
            ],
            acc: None,
        });
    }
    Some(out)
}

/// Every broadcast-product template the search finds, at 256 and at 512
/// bits (a zmm register: `vpmaddwd zmm`, and `vpdpwssd zmm` where the
/// product is added to an accumulator, as Halide's zen4 matmuls do).
pub fn broadcast_products(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let mut out = Vec::new();
    for bits in [256u32, 512] {
        let (Some(p), Some(shapes)) = (parts(halide, x86, bits), shapes(halide, bits)) else { continue };
        for shape in &shapes {
            let Some(rhs) = search(halide, &p, shape, 64) else { continue };
            let names: Vec<&str> = shape.vars.iter().map(|v| v.0).collect();
            let lhs = shape.lhs.text(&names);
            let (what, instr) = match (&shape.acc, &p.pair_acc) {
                (Some(_), Some(a)) => ("an accumulator plus Halide's even-plus-odd i16 products", &a.0),
                _ => ("Halide's even-plus-odd i16 products", &p.pair_sum.0),
            };
            out.push(Split {
                op: lhs[1..].split(' ').next().unwrap_or_default().into(),
                name: if bits == 256 { format!("synth.madd-{}", shape.name) } else { format!("synth.madd-{}-{bits}", shape.name) },
                lhs,
                rhs: rhs.text(&names),
                conds: vec![],
                free: vec![],
                provenance: format!(
                    "phase legalize; product by a broadcast through the pair sum, searched at {bits} bits: {instr} (the first instruction equal to {what}) over the smallest pair of dword forms (one-operand extensions of the vector or of its 64-bit slice, broadcasts of the scalar at 16 or 32 bits) equal on 64 random and edge inputs"
                ),
            });
        }
    }
    out
}

/// `a*x + b*y` of two i16 widening multiplies (16 lanes, the quantized
/// add) through the pair sum of interleaved operands, searched in steps:
/// the first two verified two-operand instructions `U` (in name order)
/// such that every dword of `P(U(a, b), U(x, y))` is one lane's a*x + b*y
/// and the two together give all 16 lanes; then for each half of the
/// result the first verified instruction with an 8-bit immediate (and the
/// first immediate) that puts the two products' dwords in lane order.
pub fn pair_products(halide: &SpecLibrary, x86: &SpecLibrary) -> Vec<Split> {
    let Some(p) = parts(halide, x86, 256) else { return Vec::new() };
    let v = Tm::Var;
    let wm = |l, r| h(halide, "widening_mul", &[1, 16, 16, 1], vec![v(l), v(r)]);
    let Some(lhs) = (|| h(halide, "add", &[1, 32, 16], vec![wm(0, 2)?, wm(1, 3)?]))() else { return Vec::new() };
    let ins = cases(&[("a", 16, 16), ("b", 16, 16), ("x", 16, 16), ("y", 16, 16)], 48, 0x7061_6972_73);
    let Some(want) = ins.iter().map(|c| lhs.eval(c)).collect::<Option<Vec<_>>>() else { return Vec::new() };
    let dword = |v: &BitVec, k: u32| v.extract(32 * k + 31, 32 * k);
    let (pn, psem) = &p.pair_sum;
    // For each U, the result lane each dword of P(U(a, b), U(x, y)) holds.
    let lanes_of = |sem: &Arc<Semantics>| -> Option<(Vec<u32>, Vec<BitVec>)> {
        let ms: Vec<BitVec> = ins.iter().map(|c| psem.eval(&[sem.eval(&[&c[0], &c[1]]).ok()?, sem.eval(&[&c[2], &c[3]]).ok()?]).ok()).collect::<Option<_>>()?;
        let map = (0..8u32).map(|d| (0..16u32).find(|&k| ms.iter().zip(&want).all(|(m, w)| dword(m, d) == dword(w, k)))).collect::<Option<Vec<_>>>()?;
        Some((map, ms))
    };
    let two = verified(x86, &[256, 256], 256);
    let us: Vec<(&String, Arc<Semantics>, Vec<u32>, Vec<BitVec>)> = two.iter().filter_map(|(n, sem)| lanes_of(sem).map(|(m, ms)| (n, sem.clone(), m, ms))).collect();
    let covers = |a: &[u32], b: &[u32]| (0..16).all(|k| a.contains(&k) || b.contains(&k));
    let Some((mut lo, mut hi)) = us.iter().enumerate().find_map(|(i, l)| us[i + 1..].iter().find(|r| covers(&l.2, &r.2)).map(|r| (l, r))) else { return Vec::new() };
    // The one holding lane 0 first.
    if !lo.2.contains(&0) {
        std::mem::swap(&mut lo, &mut hi);
    }
    let imm2: Vec<(String, Arc<Semantics>)> = {
        let mut q: Vec<(String, Arc<Semantics>)> = x86
            .iter()
            .filter(|(i, _)| i.ret == Ty::Bv(256) && matches!(i.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>().as_slice(), [Ty::Bv(256), Ty::Bv(256), Ty::Imm(8)]))
            .map(|(i, s)| (i.name.clone(), s.clone()))
            .collect();
        q.sort_by(|a, b| a.0.cmp(&b.0));
        q
    };
    let m = |u: &(&String, Arc<Semantics>, Vec<u32>, Vec<BitVec>)| Tm::x86(pn, psem, vec![Tm::x86(u.0, &u.1, vec![v(0), v(1)]), Tm::x86(u.0, &u.1, vec![v(2), v(3)])]);
    let mut halves = Vec::new();
    for half in 0..2u32 {
        let found = imm2.iter().find_map(|(n, sem)| {
            (0..256i128).find_map(|imm| {
                let ok = ins.iter().enumerate().all(|(c, _)| {
                    let Ok(r) = sem.eval(&[&lo.3[c], &hi.3[c], &BitVec::from_i128(8, imm)]) else { return false };
                    (0..8).all(|d| dword(&r, d) == dword(&want[c], 8 * half + d))
                });
                ok.then(|| format!("(x86 {n} {} {} {imm})", m(lo).text(&["a", "b", "x", "y"]), m(hi).text(&["a", "b", "x", "y"])))
            })
        });
        let Some(t) = found else { return Vec::new() };
        halves.push(t);
    }
    vec![Split {
        op: "add".into(),
        name: "synth.madd-pair".into(),
        lhs: lhs.text(&["a", "b", "x", "y"]),
        rhs: format!("(concat (i 32 8) 8 {} {})", halves[0], halves[1]),
        conds: vec![],
        free: vec![],
        provenance: format!(
            "phase legalize; a*x + b*y of two i16 widening products, searched: {pn} (the pair sum) of the first two instructions whose interleavings give every product's dword, each half put in lane order by the first instruction and immediate found; equal on 48 random and edge inputs"
        ),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs() -> (SpecLibrary, SpecLibrary) {
        super::super::test_libraries()
    }

    #[test]
    fn finds_the_hand_lowerings() {
        let (halide, x86) = libs();
        let t = std::time::Instant::now();
        let v = broadcast_products(&halide, &x86);
        eprintln!("{:?}", t.elapsed());
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
            // Each parses as a rule (no free variables, no conditions).
            misaal_rulesets::parse_rules("madd", &s.text("x86", &s.name, &s.free)).expect("parses");
        }
        let rhs = |n: &str| v.iter().find(|s| s.name == n).map(|s| s.rhs.clone()).unwrap_or_default();
        assert_eq!(rhs("synth.madd-bcast"), "(x86 _mm256_madd_epi16 (x86 _mm256_cvtepu16_epi32 ?a) (broadcast (i 16 16) ?c))");
        assert_eq!(rhs("synth.madd-bcast-lhs"), "(x86 _mm256_madd_epi16 (broadcast (i 16 16) ?c) (x86 _mm256_cvtepu16_epi32 ?a))");
        assert_eq!(
            rhs("synth.madd-i8-bcast-hi"),
            "(x86 _mm256_madd_epi16 (x86 _mm256_cvtepi8_epi32 (x86 _mm_cvtsi64_si128 (slice (i 8 8) 16 8 1 ?a))) (broadcast (u 32 8) (cast (u 16 1) 0 32 (cast (i 8 1) 0 16 ?c))))"
        );
        assert_eq!(
            rhs("synth.madd-subu8-i8-lo"),
            "(x86 _mm256_madd_epi16 (x86 _mm256_sub_epi16 (x86 _mm256_cvtepu8_epi32 (x86 _mm_cvtsi64_si128 (slice (u 8 8) 16 0 1 ?x))) (broadcast (u 32 8) (cast (u 8 1) 0 32 ?z))) (x86 _mm256_cvtepi8_epi32 (x86 _mm_cvtsi64_si128 (slice (i 8 8) 16 0 1 ?f))))"
        );
        // Added to an accumulator, and at 512 bits (a zmm register): the
        // accumulating pair sum (VNNI), as Halide's zen4 matmuls use it.
        assert_eq!(rhs("synth.madd-acc-bcast"), "(x86 _mm256_dpwssd_epi32 ?acc (x86 _mm256_cvtepu16_epi32 ?a) (broadcast (i 16 16) ?c))");
        assert_eq!(rhs("synth.madd-bcast-512"), "(x86 _mm512_madd_epi16 (x86 _mm512_cvtepu16_epi32 ?a) (broadcast (i 16 32) ?c))");
        assert_eq!(rhs("synth.madd-acc-bcast-512"), "(x86 _mm512_dpwssd_epi32 ?acc (x86 _mm512_cvtepu16_epi32 ?a) (broadcast (i 16 32) ?c))");
        // fully_connected's i8 products at zmm width, added to its accumulator.
        assert_eq!(
            rhs("synth.madd-acc-i8-bcast-512"),
            "(x86 _mm512_dpwssd_epi32 ?acc (x86 _mm512_cvtepi8_epi32 ?a) (broadcast (u 32 16) (cast (u 16 1) 0 32 (cast (i 8 1) 0 16 ?c))))"
        );
        assert_eq!(v.len(), 18);
    }

    #[test]
    fn finds_the_pair_of_products() {
        let (halide, x86) = libs();
        let v = pair_products(&halide, &x86);
        for s in &v {
            eprintln!("{}: {} => {}", s.name, s.lhs, s.rhs);
            misaal_rulesets::parse_rules("madd", &s.text("x86", &s.name, &s.free)).expect("parses");
        }
        assert_eq!(v.len(), 1);
        assert!(v[0].rhs.starts_with("(concat (i 32 8) 8 (x86 _mm256_permute2x128_si256 (x86 _mm256_madd_epi16 (x86 _mm256_unpacklo_epi16 ?a ?b)"), "{}", v[0].rhs);
        assert!(v[0].rhs.ends_with("(x86 _mm256_unpackhi_epi16 ?x ?y)) 49))"), "{}", v[0].rhs);
    }

    /// The check can fail: with only the wrong extension of the i16 vector
    /// (sign instead of zero, so the pair sum adds fill*c) and only the
    /// (c, c) broadcast available, no candidate is equal.
    #[test]
    fn rejects_a_sign_extended_operand() {
        let (halide, x86) = libs();
        let mut p = parts(&halide, &x86, 256).expect("parts");
        let shapes = shapes(&halide, 256).expect("shapes");
        let bcast = &shapes[0];
        p.widens.retain(|(_, n, _)| n == "_mm256_cvtepu16_epi32");
        let found = search(&halide, &p, bcast, 64).expect("zero extension found");
        assert!(found.text(&["a", "c"]).contains("(broadcast (i 16 16) ?c)"));
        p.widens = verified(&x86, &[128], 256).into_iter().filter(|(n, _)| n == "_mm256_cvtepi16_epi32").map(|(n, s)| (128, n, s)).collect();
        // With the sign extension alone, only a dword form of c with a zero
        // high word can be right; the (c, c) broadcast is not.
        let found = search(&halide, &p, bcast, 64).map(|t| t.text(&["a", "c"]));
        assert!(found.as_ref().is_none_or(|t| !t.contains("(broadcast (i 16 16) ?c)")), "{found:?}");
    }
}
