"""fully_connected: int8 matrix-vector product with int32 accumulation.

out(n) = requant(bias(n) + sum_k i32(filter(n, k) * input(k))), with the
int8 x int8 products formed by a widening multiply to int16 and summed in
int32; requantization to int8 by a rounding Q31 multiply, a rounding shift,
the output zero point and a clamp to [output_min, output_max]. The filter
is stored output-major (n innermost), so the vector loop runs over outputs
and each input value is broadcast: per block of 64 outputs, 4 int32
accumulator vectors over the whole 4096-long reduction.
"""

import halide as hl
from _common import Spec, V8, V32, vectorize_unrolled, i8_sat, i16, i32, i16_sat

K, N = 4096, 2048


def build():
    s = Spec()
    inp = s.buffer(hl.Int(8), "input", [K])
    filt = s.buffer(hl.Int(8), "filter", [N, K])
    bias = s.buffer(hl.Int(32), "bias", [N])
    mult = s.scalar(hl.Int(32), "output_multiplier", 1300000000)  # 0.605 in Q31
    shift = s.scalar(hl.Int(32), "output_shift", 10)
    zo = s.scalar(hl.Int(8), "output_zero", 0)
    lo = s.scalar(hl.Int(8), "output_min", -128)
    hi = s.scalar(hl.Int(8), "output_max", 127)
    n = hl.Var("n")
    rk = hl.RDom([(0, K)], "rk")

    acc = hl.Func("acc")
    acc[n] = bias[n]
    acc[n] = acc[n] + i32(hl.widening_mul(filt[n, rk.x], inp[rk.x]))

    scaled = hl.rounding_mul_shift_right(acc[n], mult, 31)
    scaled = i16_sat(hl.rounding_shift_right(scaled, shift))
    out = hl.Func("output")
    out[n] = hl.clamp(i8_sat(hl.saturating_add(scaled, i16(zo))), lo, hi)

    no, ni = hl.Var("no"), hl.Var("ni")
    out.split(n, no, ni, V8).vectorize(ni)
    acc.compute_at(out, no)
    vectorize_unrolled(acc, n, V32, "nv")
    nu = hl.Var("nu")
    acc.update().reorder(n, rk.x).split(n, nu, n, V32).vectorize(n).unroll(nu)
    return s.finish(out, [N])
