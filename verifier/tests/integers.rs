//! The integer reading of a semantics (`integers`, the prover for
//! divisions by constants) means what the evaluator means, and it decides
//! what bit-blasting cannot: a 32-bit division by a constant against its
//! multiply-high, proved with the right multiplier and refuted, by a
//! counterexample the evaluator confirms, with one too small.

use misaal_isa::{BitVec, Semantics, SpecLibrary};
use misaal_verifier::CaseGen;
use misaal_verifier::compose::{Part, compose};
use misaal_verifier::integers::{evaluate, prove};
use misaal_verifier::smt::{Budget, Equivalence, prove_equivalent};
use quickcheck::Gen;
use std::sync::Arc;

fn halide() -> SpecLibrary {
    SpecLibrary::load_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontends/halide")).unwrap()
}

/// Random operands of `sem`'s widths, with edge values mixed in.
fn cases(sem: &Semantics, g: &mut Gen) -> Vec<Vec<BitVec>> {
    let widths: Vec<misaal_isa::ast::Ty> = sem.dag.operand_widths().iter().map(|&w| misaal_isa::ast::Ty::Bv(w)).collect();
    let cg = CaseGen::from_types(widths);
    (0..4).map(|_| cg.case(g)).collect()
}

/// `sem` with every operand after the first fixed to its value in `c`:
/// shift counts, divisors and multipliers become constants, which the
/// reading states linearly.
fn pinned(sem: &Semantics, c: &[BitVec]) -> Option<Semantics> {
    let widths = sem.dag.operand_widths();
    if widths.len() < 2 {
        return None;
    }
    let mut parts = vec![Part::Operand(0)];
    parts.extend(c[1..].iter().map(|v| Part::Const(v.clone())));
    parts.push(Part::Apply { name: "pinned".into(), sem: Arc::new(sem.clone()), kids: (0..widths.len()).collect() });
    compose(&widths[..1], &parts, widths.len()).ok()
}

/// Checks `sem` against the evaluator on random cases through `read`
/// (`None`: stop, nothing more to read; `Some(None)`: this case is not
/// read); whether any case was read.
fn check_cases(label: &str, sem: &Semantics, g: &mut Gen, bad: &mut Vec<String>, read: impl Fn(&[BitVec]) -> Option<Option<BitVec>>) -> bool {
    let mut accepted = false;
    for c in cases(sem, g) {
        let Some(got) = read(&c) else { break };
        let Some(got) = got else { continue };
        accepted = true;
        let want = sem.eval(&c).ok();
        if want.as_ref() != Some(&got) {
            bad.push(format!("{label}: {c:?} integers={got:?} evaluator={want:?}"));
            break;
        }
    }
    accepted
}

/// Checks every semantics the reading accepts, as it is and with its
/// operands after the first pinned; returns how many it read each way.
fn check_all<'a>(sems: impl Iterator<Item = (String, &'a Semantics)>, bad: &mut Vec<String>) -> (usize, usize) {
    let mut g = Gen::from_size_and_seed(64, 0x1e9e);
    let (mut read, mut read_pinned) = (0, 0);
    for (name, sem) in sems {
        read += check_cases(&name, sem, &mut g, bad, |c| evaluate(sem, c).map(Some)) as usize;
        read_pinned += check_cases(&format!("{name} pinned"), sem, &mut g, bad, |c| pinned(sem, c).map(|p| evaluate(&p, &c[..1]))) as usize;
    }
    (read, read_pinned)
}

#[test]
fn integer_reading_matches_the_evaluator() {
    let mut bad = Vec::new();
    let x86 = SpecLibrary::load_dir(&misaal_isa::bundled_spec_dir("x86")).unwrap();
    let read_x86 = check_all(x86.iter().map(|(i, s)| (i.name.clone(), s.as_ref())), &mut bad);
    // Halide's ops at both signs and the widths and lane counts rules use.
    let h = halide();
    let mut inst: Vec<(String, Arc<Semantics>)> = Vec::new();
    for name in h.generic_names() {
        for s in [0i128, 1] {
            for e in [8i128, 16, 32] {
                let tries: [Vec<i128>; 4] = [vec![s, e, 4], vec![s, e, 4, 1 - s], vec![s, e, 4, s, 2 * e], vec![s, e, 4, 1 - s, e / 2]];
                for args in tries {
                    if let Ok((_, sem)) = h.instantiate(name, &args) {
                        inst.push((format!("{name}{args:?}"), sem));
                    }
                }
            }
        }
    }
    let read_halide = check_all(inst.iter().map(|(n, s)| (n.clone(), s.as_ref())), &mut bad);
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
    // The reading must cover enough to mean something: the ops of
    // division rules (adds, shifts and products by constants, casts,
    // saturation, compares, selects, Halide's div and mod).
    eprintln!("integer reading: {read_x86:?} of {} x86 specs, {read_halide:?} of {} Halide instances (as they are, pinned)", x86.len(), inst.len());
    assert!(read_x86.0 >= 300 && read_x86.1 >= 300, "only {read_x86:?} x86 specs read");
    assert!(read_halide.0 >= 50 && read_halide.1 >= 50, "only {read_halide:?} Halide instances read");
}

fn splat(e: u32, n: u32, v: u64) -> BitVec {
    let mut b = BitVec::zero(e * n);
    for l in 0..n {
        for i in 0..e.min(64) {
            b.set_bit(l * e + i, v >> i & 1 == 1);
        }
    }
    b
}

/// u32 `div(x, c)` and `shr(mul_shift_right(x, m, 32), s)` at `n` lanes.
fn division(n: u32, c: u64, m: u64, s: u64) -> (Semantics, Semantics) {
    let (e, ni) = (32u32, n as i128);
    let h = halide();
    let op = |name: &str, args: &[i128]| h.instantiate(name, args).unwrap().1;
    let apply = |name: &str, sem: Arc<Semantics>, kids: Vec<usize>| Part::Apply { name: name.into(), sem, kids };
    let lhs = [Part::Operand(0), Part::Const(splat(e, n, c)), apply("div", op("div", &[0, 32, ni]), vec![0, 1])];
    let rhs = [
        Part::Operand(0),
        Part::Const(splat(e, n, m)),
        Part::Const(splat(e, n, 32)),
        apply("mul_shift_right", op("mul_shift_right", &[0, 32, ni]), vec![0, 1, 2]),
        Part::Const(splat(e, n, s)),
        apply("shr", op("shr", &[0, 32, ni, 0]), vec![3, 4]),
    ];
    (compose(&[e * n], &lhs, 2).unwrap(), compose(&[e * n], &rhs, 5).unwrap())
}

/// A 4,096-bit value (an HVX register quadruple) wraps at 2^4096, past
/// the widest `BitVec`: the reading states it, and agrees with the
/// evaluator.
#[test]
fn reads_the_widest_values() {
    let h = halide();
    let sem = h.instantiate("add", &[0, 32, 128]).unwrap().1;
    let x = BitVec::ones(4096);
    let one = splat(32, 128, 1);
    assert_eq!(evaluate(&sem, &[x.clone(), one.clone()]), sem.eval(&[&x, &one]).ok());
    // The operand's bound is 2^4096.
    let side = |op: &str| {
        let parts = [Part::Operand(0), Part::Const(splat(32, 128, 0)), Part::Apply { name: op.into(), sem: h.instantiate(op, &[0, 32, 128]).unwrap().1, kids: vec![0, 1] }];
        compose(&[4096], &parts, 2).unwrap()
    };
    assert!(prove(&side("add"), &side("sub"), Budget::from(20_000)).is_some());
}

#[test]
fn divides_a_u32_by_a_constant() {
    let budget = Budget::from(60_000);
    // x / 3 = (x * ceil(2^33 / 3)) >> 33: one lane read as integers, and
    // the whole register through the verifier's slices.
    let (a, b) = division(1, 3, 0xaaaa_aaab, 1);
    assert_eq!(prove(&a, &b, budget), Some(Equivalence::Proved));
    let (a, b) = division(8, 3, 0xaaaa_aaab, 1);
    assert_eq!(prove_equivalent(&a, &b, budget), Equivalence::Proved);
    // One below: x = 3 gives 0.
    for n in [1, 8] {
        let (a, b) = division(n, 3, 0xaaaa_aaaa, 1);
        match prove_equivalent(&a, &b, budget) {
            Equivalence::Differ(ops) => assert_ne!(a.eval(&ops).unwrap(), b.eval(&ops).unwrap()),
            v => panic!("not refuted: {v:?}"),
        }
    }
    let (a, b) = division(1, 3, 0xaaaa_aaaa, 1);
    assert!(matches!(prove(&a, &b, budget), Some(Equivalence::Differ(_))));
}

/// i32 `div(x, c)` and `R(div_u(u(x) ^ m, c) ^ m)`, m the sign mask of x,
/// at one lane.
fn signed_division(c: u64) -> (Semantics, Semantics) {
    let h = halide();
    let op = |name: &str, args: &[i128]| h.instantiate(name, args).unwrap().1;
    let apply = |name: &str, args: &[i128], kids: Vec<usize>| Part::Apply { name: name.into(), sem: op(name, args), kids };
    let lhs = [Part::Operand(0), Part::Const(splat(32, 1, c)), apply("div", &[1, 32, 1], vec![0, 1])];
    let rhs = [
        Part::Operand(0),
        Part::Const(splat(32, 1, 31)),
        apply("shr", &[1, 32, 1, 0], vec![0, 1]),
        apply("cast", &[1, 32, 1, 0, 32], vec![2]),
        apply("cast", &[1, 32, 1, 0, 32], vec![0]),
        apply("xor", &[0, 32, 1], vec![4, 3]),
        Part::Const(splat(32, 1, c)),
        apply("div", &[0, 32, 1], vec![5, 6]),
        apply("xor", &[0, 32, 1], vec![7, 3]),
        apply("cast", &[0, 32, 1, 1, 32], vec![8]),
    ];
    (compose(&[32], &lhs, 2).unwrap(), compose(&[32], &rhs, 9).unwrap())
}

#[test]
fn divides_an_i32_through_the_unsigned_division() {
    let (a, b) = signed_division(7);
    let t = std::time::Instant::now();
    let v = prove(&a, &b, Budget::from(60_000));
    eprintln!("{v:?} in {:?}", t.elapsed());
    assert_eq!(v, Some(Equivalence::Proved));
}
