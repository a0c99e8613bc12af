#!/usr/bin/env python3
"""Input/output vectors for misaal's Halide op semantics, computed by Halide.

Regenerate (from the repository root; deterministic, 2 to 3 minutes):

    pip install halide==21.0.0 numpy && python3 frontends/halide/vectors.py

For every op of frontends/halide/*.sema, every element type (u8 i8 u16 i16
u32 i32 u64 i64), lane counts N in {1, 8} and a few values of the op's extra
generic parameters, this JIT-compiles the op with Halide's Python bindings
and runs it on SETS input vectors: random lanes with edge values mixed in
(0, 1, -1 / all ones, MIN, MAX, ...; shift amounts within the range Halide
defines). Operand types follow every combination Halide's IR allows: a shift
amount has the value's width but either signedness (the extra generic S2;
Halide's Stmt shifts int16 values by uint16 amounts), widening_mul's second
operand likewise; every other op takes operands of one type (Halide's
constructors cast mixed operands to one, and widen_right_* and
mul_shift_right's unsigned q reject others). It writes frontends/halide/vectors/<file stem>.json, a list of

    {"op": "add", "generics": [S, E, N, ...], "inputs": ["0x..", ...], "output": "0x.."}

where each value is a whole vector as one hex number: lane i in bits
[i*E+E-1 : i*E], the layout misaal's BitVec::parse_hex reads. Bool vectors
have one bit a lane. frontends/tests/halide_vectors.rs checks every vector
against our semantics.

How each op is evaluated in Halide:
* Elementwise ops: a Func over input Buffers of SETS*N elements, vectorized
  by N when N > 1, so Halide's vector code paths (FindIntrinsics and the
  lowering of FPIR intrinsics) run. Every op is called through its public
  Python binding: + - * / % min max & | ^ ~ << >> < <= > >= == != select,
  cast, saturating_cast, reinterpret, and hl.widening_add, hl.widen_right_add,
  hl.rounding_shift_right, hl.mul_shift_right, hl.absd, hl.abs, ...
* reinterpret with a change of element width: Halide's reinterpret needs
  equal widths, so narrower lanes come from hl.extract_bits and wider ones
  from hl.concat_bits (then hl.reinterpret for the signedness).
* vector_reduce_*: an RDom update f(x) = op(f(x), a(x*F + r)) from the op's
  identity. For add, mul, min and max it is scheduled atomic().vectorize(r)
  (and vectorize(x, N)), which Halide lowers to a real VectorReduce node.
  Halide cannot prove bitwise and/or associative, so those fold lane by lane
  (any order gives the same result). vector_reduce_saturating_add folds with
  hl.saturating_add left to right, the order our semantics defines (Halide
  has no Python constructor for a saturating VectorReduce and leaves its
  order open; see reduce.sema).
* Shuffles (slice, concat, interleave, deinterleave), broadcast and ramp:
  Funcs with the op's index arithmetic (ramp: base + cast(x) * stride in the
  element type).

Ops Halide rejects for a type (the widening ops on 64-bit lanes, which would
need 128 bits) are skipped, and the script prints which.
"""

import json
import os
import random
import sys

import numpy as np
import halide as hl

SEED = 20240521
SETS = 6  # input vectors for each (op, generics)
TYPES = [(0, 8), (1, 8), (0, 16), (1, 16), (0, 32), (1, 32), (0, 64), (1, 64)]
LANES = [1, 8]
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")

rng = random.Random(SEED)
x = hl.Var("x")


# ----- types and values ---------------------------------------------------

def hl_type(s, e):
    return hl.Int(e) if s else hl.UInt(e)


def np_dtype(s, e):
    # Halide's Buffer wants 64-bit lanes as (unsigned) long long ('q'/'Q').
    if e == 64:
        return np.dtype(np.longlong if s else np.ulonglong)
    return np.dtype(("i" if s else "u") + str(e // 8))


def lo(s, e):
    return -(1 << (e - 1)) if s else 0


def hi(s, e):
    return (1 << (e - 1)) - 1 if s else (1 << e) - 1


def value(s, e):
    """A random lane of type (s, e), an edge value about a third of the time."""
    r = rng.random()
    if r < 0.3:
        return rng.choice([0, 1, -1 if s else hi(s, e), lo(s, e), hi(s, e), lo(s, e) + 1, hi(s, e) - 1, 2])
    if r < 0.45:
        return rng.randint(max(lo(s, e), -8), 8)
    return rng.randint(lo(s, e), hi(s, e))


def amount(s, e, mag):
    """A shift amount of type (s, e) with magnitude below `mag`."""
    if rng.random() < 0.3:
        choices = [0, 1, mag - 1] + ([-1, -(mag - 1)] if s else [])
        return rng.choice(choices)
    return rng.randint(-(mag - 1) if s else 0, mag - 1)


def lanes(kind, s, e, count):
    """`count` lanes of an operand kind; returns (values, (s, e) of the buffer)."""
    if kind == "v":
        return [value(s, e) for _ in range(count)], (s, e)
    if kind.startswith("amt:"):  # E bits of signedness given after the colon, magnitude below E
        s2 = int(kind[4:])
        return [amount(s2, e, e) for _ in range(count)], (s2, e)
    if kind.startswith("wamt:"):  # the same, magnitude below 2E (widening shifts)
        s2 = int(kind[5:])
        return [amount(s2, e, min(2 * e, hi(s2, e) + 1)) for _ in range(count)], (s2, e)
    if kind == "q":  # unsigned E bits, below 2E
        return [amount(0, e, 2 * e) for _ in range(count)], (0, e)
    if kind == "wide":  # a value of twice the width, same signedness
        return [value(s, 2 * e) for _ in range(count)], (s, 2 * e)
    if kind == "bool":
        return [rng.randint(0, 1) for _ in range(count)], (0, 8)
    if kind.startswith("v:"):  # a value of signedness given after the colon
        s2 = int(kind[2:])
        return [value(s2, e) for _ in range(count)], (s2, e)
    raise ValueError(kind)


def pack(vals, width):
    """Lane i of `vals` at bits [i*width .. i*width+width-1], as hex."""
    mask = (1 << width) - 1
    v = 0
    for i, lane in enumerate(vals):
        v |= (int(lane) & mask) << (i * width)
    return hex(v)


# ----- running Halide -----------------------------------------------------

def realize(inputs, body, count, vec, update=None):
    """Realizes f(x) = body(buffers) over [0, count), vectorized by `vec`."""
    bufs = [hl.Buffer(np.array(vals, dtype=np_dtype(*t))) for vals, t in inputs]
    f = hl.Func("f")
    f[x] = body(bufs)
    if update is not None:
        update(f, bufs)
    elif vec > 1:
        f.vectorize(x, vec)
    return [int(v) for v in np.asarray(f.realize([count]))]


SKIPPED = []
OUT = {}


def emit(stem, op, generics, in_lanes, in_widths, out_lanes, out_width):
    """Splits the SETS-long lane lists into vectors and records them."""
    for k in range(SETS):
        ins = []
        for vals, (n, w) in zip(in_lanes, in_widths):
            ins.append(pack(vals[k * n:(k + 1) * n], w))
        n_out = len(out_lanes) // SETS
        OUT.setdefault(stem, []).append({
            "op": op,
            "generics": list(generics),
            "inputs": ins,
            "output": pack(out_lanes[k * n_out:(k + 1) * n_out], out_width),
        })


def edge_pairs(s, e, s2):
    """(a, b) lanes that random draws rarely pair up: MIN / -1, MAX + MAX, ..."""
    ones = lambda s: -1 if s else hi(s, e)
    pairs = [(lo(s, e), ones(s2)), (lo(s, e), lo(s2, e)), (hi(s, e), hi(s2, e)), (hi(s, e), 1),
             (lo(s, e), 1), (ones(s), lo(s2, e)), (hi(s, e), ones(s2)), (0, lo(s2, e)),
             (lo(s, e), 0), (hi(s, e), 0), (1, hi(s2, e)), (ones(s), ones(s2))]
    rng.shuffle(pairs)
    return pairs


def elementwise(stem, op, generics, kinds, out_width, fn, s, e, n):
    """An op applied lane by lane: out lane i = fn(inputs' lane i)."""
    if out_width > 64 or ("wide" in kinds and 2 * e > 64):
        SKIPPED.append(f"{op}{generics}: Halide has no {2 * e}-bit type")
        return
    ins = [lanes(k, s, e, SETS * n) for k in kinds]
    if len(kinds) >= 2 and kinds[0] == "v" and kinds[1].startswith("v"):
        # The first half of the lanes pair up edge values.
        for i, (a, b) in enumerate(edge_pairs(s, e, ins[1][1][0])[:SETS * n // 2]):
            ins[0][0][i], ins[1][0][i] = a, b
    try:
        out = realize(ins, lambda b: fn(*[buf[x] for buf in b]), SETS * n, n)
    except Exception as err:  # Halide rejects the type (e.g. 128-bit widening)
        SKIPPED.append(f"{op}{generics}: {str(err).strip().splitlines()[0][:120]}")
        return
    widths = [(n, 1 if k == "bool" else t[1]) for k, (_, t) in zip(kinds, ins)]
    emit(stem, op, generics, [v for v, _ in ins], widths, out, out_width)


# ----- the ops ------------------------------------------------------------

def arith(s, e, n):
    binary = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "mod": lambda a, b: a % b,
        "min": lambda a, b: hl.min(a, b),
        "max": lambda a, b: hl.max(a, b),
        "and": lambda a, b: a & b,
        "or": lambda a, b: a | b,
        "xor": lambda a, b: a ^ b,
    }
    g = [s, e, n]
    for op, fn in binary.items():
        elementwise("arith", op, g, ["v", "v"], e, fn, s, e, n)
    elementwise("arith", "not", g, ["v"], e, lambda a: ~a, s, e, n)
    # Shifts: the amount has the value's width but either signedness (S2).
    for s2 in (0, 1):
        elementwise("arith", "shl", g + [s2], ["v", f"amt:{s2}"], e, lambda a, b: a << b, s, e, n)
        elementwise("arith", "shr", g + [s2], ["v", f"amt:{s2}"], e, lambda a, b: a >> b, s, e, n)
    elementwise("arith", "count_leading_zeros", g, ["v"], e, hl.count_leading_zeros, s, e, n)


def compare(s, e, n):
    g = [s, e, n]
    ops = {
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
    }
    for op, fn in ops.items():
        elementwise("compare", op, g, ["v", "v"], 1, fn, s, e, n)
    elementwise("compare", "select", g, ["bool", "v", "v"], e, lambda c, t, f: hl.select(c != 0, t, f), s, e, n)


def cast(s, e, n):
    for s2, e2 in TYPES:
        t2 = hl_type(s2, e2)
        elementwise("cast", "cast", [s, e, n, s2, e2], ["v"], e2, lambda a, t2=t2: hl.cast(t2, a), s, e, n)
        elementwise("cast", "saturating_cast", [s, e, n, s2, e2], ["v"], e2, lambda a, t2=t2: hl.saturating_cast(t2, a), s, e, n)
        if (n * e) % e2 == 0:
            reinterpret(s, e, n, s2, e2)
    # broadcast<S, E, N>(x: bv(E)), ramp<S, E, N>(base: bv(E), stride: bv(E))
    t = hl_type(s, e)
    xs = lanes("v", s, e, SETS)
    out = realize([xs], lambda b: b[0][x // n], SETS * n, n)
    emit("cast", "broadcast", [s, e, n], [xs[0]], [(1, e)], out, e)
    base, stride = lanes("v", s, e, SETS), lanes("v", s, e, SETS)
    out = realize([base, stride], lambda b: b[0][x // n] + hl.cast(t, x % n) * b[1][x // n], SETS * n, n)
    emit("cast", "ramp", [s, e, n], [base[0], stride[0]], [(1, e), (1, e)], out, e)


def reinterpret(s, e, n, s2, e2):
    n2 = n * e // e2
    t2 = hl_type(s2, e2)
    a = lanes("v", s, e, SETS * n)
    if e2 == e:
        body = lambda b: hl.reinterpret(t2, b[0][x])
    elif e2 < e:
        k = e // e2
        body = lambda b: hl.extract_bits(t2, b[0][x // k], hl.cast(hl.UInt(32), (x % k) * e2))
    else:
        k = e2 // e
        body = lambda b: hl.reinterpret(t2, hl.concat_bits([b[0][x * k + i] for i in range(k)]))
    out = realize([a], body, SETS * n2, n2)
    emit("cast", "reinterpret", [s, e, n, s2, e2, n2], [a[0]], [(n, e)], out, e2)


# The reductions Halide can vectorize atomically into a VectorReduce node (it
# cannot prove bitwise and/or or saturating add associative).
ATOMIC = {"vector_reduce_add", "vector_reduce_mul", "vector_reduce_min", "vector_reduce_max"}


def reduce(s, e, n):
    t = hl_type(s, e)
    ops = {
        "vector_reduce_add": (hl.cast(t, 0), lambda acc, v: acc + v),
        "vector_reduce_saturating_add": (hl.cast(t, 0), lambda acc, v: hl.saturating_add(acc, v)),
        "vector_reduce_mul": (hl.cast(t, 1), lambda acc, v: acc * v),
        "vector_reduce_min": (t.max(), lambda acc, v: hl.min(acc, v)),
        "vector_reduce_max": (t.min(), lambda acc, v: hl.max(acc, v)),
        "vector_reduce_and": (hl.cast(t, -1), lambda acc, v: acc & v),
        "vector_reduce_or": (hl.cast(t, 0), lambda acc, v: acc | v),
    }
    for f_ in (2, 4):
        for op, (init, step) in ops.items():
            a = lanes("v", s, e, SETS * n * f_)
            r = hl.RDom([hl.Range(0, f_)])

            def update(f, b, step=step, f_=f_, op=op):
                f[x] = step(hl.Expr(f[x]), b[0][x * f_ + r.x])
                if op in ATOMIC:
                    # Halide turns this into a real VectorReduce node.
                    f.update().atomic().vectorize(r.x)
                    if n > 1:
                        f.update().vectorize(x, n)

            out = realize([a], lambda b, init=init: init, SETS * n, n, update=update)
            emit("reduce", op, [s, e, n, f_], [a[0]], [(n * f_, e)], out, e)


def shuffle(s, e, n):
    # slice<S, E, N, M, BEGIN, STRIDE>
    slices = [(4, 2, 1), (3, 0, 1)] if n == 1 else [(n, 0, 1), (2 * n, 1, 2), (3 * n, 2, 3), (n, n - 1, -1)]
    for m, begin, stride in slices:
        a = lanes("v", s, e, SETS * m)
        out = realize([a], lambda b, m=m, begin=begin, stride=stride: b[0][(x // n) * m + begin + (x % n) * stride], SETS * n, n)
        emit("shuffle", "slice", [s, e, n, m, begin, stride], [a[0]], [(m, e)], out, e)
    # concat<S, E, N, M>
    for m in sorted({n, 3}):
        a, b_ = lanes("v", s, e, SETS * n), lanes("v", s, e, SETS * m)
        w = n + m

        def body(b, m=m, w=w):
            i = x % w
            return hl.select(i < n, b[0][(x // w) * n + hl.min(i, n - 1)], b[1][(x // w) * m + hl.max(i - n, 0)])

        out = realize([a, b_], body, SETS * w, w)
        emit("shuffle", "concat", [s, e, n, m], [a[0], b_[0]], [(n, e), (m, e)], out, e)
    # interleave<S, E, N>
    a, b_ = lanes("v", s, e, SETS * n), lanes("v", s, e, SETS * n)
    out = realize([a, b_], lambda b: hl.select(x % 2 == 0, b[0][x // 2], b[1][x // 2]), SETS * 2 * n, 2 * n)
    emit("shuffle", "interleave", [s, e, n], [a[0], b_[0]], [(n, e), (n, e)], out, e)
    # deinterleave<S, E, N, PHASE>
    for phase in (0, 1):
        a = lanes("v", s, e, SETS * 2 * n)
        out = realize([a], lambda b, phase=phase: b[0][2 * x + phase], SETS * n, n)
        emit("shuffle", "deinterleave", [s, e, n, phase], [a[0]], [(2 * n, e)], out, e)


def fpir(s, e, n):
    g = [s, e, n]
    w = 2 * e
    ew = lambda op, kinds, width, fn, gen=g: elementwise("fpir", op, gen, kinds, width, fn, s, e, n)
    ew("widening_add", ["v", "v"], w, hl.widening_add)
    ew("widening_sub", ["v", "v"], w, hl.widening_sub)
    for s2 in (0, 1):
        ew("widening_mul", ["v", f"v:{s2}"], w, hl.widening_mul, g + [s2])
    ew("widen_right_add", ["wide", "v"], w, hl.widen_right_add)
    ew("widen_right_sub", ["wide", "v"], w, hl.widen_right_sub)
    ew("widen_right_mul", ["wide", "v"], w, hl.widen_right_mul)
    for s2 in (0, 1):
        ew("widening_shift_left", ["v", f"wamt:{s2}"], w, hl.widening_shift_left, g + [s2])
        ew("widening_shift_right", ["v", f"wamt:{s2}"], w, hl.widening_shift_right, g + [s2])
    ew("saturating_add", ["v", "v"], e, hl.saturating_add)
    ew("saturating_sub", ["v", "v"], e, hl.saturating_sub)
    ew("halving_add", ["v", "v"], e, hl.halving_add)
    ew("halving_sub", ["v", "v"], e, hl.halving_sub)
    ew("rounding_halving_add", ["v", "v"], e, hl.rounding_halving_add)
    for s2 in (0, 1):
        ew("rounding_shift_left", ["v", f"amt:{s2}"], e, hl.rounding_shift_left, g + [s2])
        ew("rounding_shift_right", ["v", f"amt:{s2}"], e, hl.rounding_shift_right, g + [s2])
    ew("mul_shift_right", ["v", "v", "q"], e, hl.mul_shift_right)
    ew("rounding_mul_shift_right", ["v", "v", "q"], e, hl.rounding_mul_shift_right)
    ew("absd", ["v", "v"], e, hl.absd)
    if s == 1:
        ew("abs", ["v"], e, hl.abs)
    else:
        # Halide's abs of an unsigned value is the value itself (it warns).
        ew("abs", ["v"], e, hl.abs)


def main():
    for fam in (arith, compare, cast, reduce, shuffle, fpir):
        for s, e in TYPES:
            for n in LANES:
                fam(s, e, n)
    os.makedirs(OUT_DIR, exist_ok=True)
    total = 0
    for stem, vectors in sorted(OUT.items()):
        path = os.path.join(OUT_DIR, stem + ".json")
        with open(path, "w") as f:
            f.write("[\n")
            f.write(",\n".join(json.dumps(v, separators=(",", ":")) for v in vectors))
            f.write("\n]\n")
        total += len(vectors)
        print(f"{path}: {len(vectors)} vectors, {os.path.getsize(path)} bytes")
    print(f"{total} vectors")
    if SKIPPED:
        print(f"skipped {len(SKIPPED)} (op, generics) that Halide rejects:")
        for s in SKIPPED:
            print("  " + s)


if __name__ == "__main__":
    sys.exit(main())
