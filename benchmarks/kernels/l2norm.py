"""l2norm: L2 normalization of each row of a uint8 tensor (TFLite-style).

Per row y (1024 values, zero point input_zero): the int32 sum of squares of
the centred values, then an integer reciprocal square root (rsqrt_q14 in
_common.py: normalize by count_leading_zeros, linear guess, three Newton
steps) giving 1/sqrt(sum) ~= r * 2^-(14 + e/2); each value becomes
    out = sat_u8(128 + sat_i16(round(v * r >> (7 + e/2)))),
i.e. 128 * v / ||row|| offset by 128 (output scale 1/128, zero point 128).
The sum of squares is a vectorized (atomic) reduction per row; r and e are
scalars per row.
"""

import halide as hl
from _common import Spec, V8, rsqrt_q14, u8_sat, i16, i32, i16_sat

N, ROWS = 1024, 4096


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [N, ROWS])
    zero = s.scalar(hl.UInt(8), "input_zero", 128)
    x, y = hl.Var("x"), hl.Var("y")

    centred = hl.Func("centred")
    centred[x, y] = i16(inp[x, y]) - i16(zero)

    rx = hl.RDom([(0, N)], "rx")
    sum_sq = hl.Func("sum_sq")
    sum_sq[y] = i32(0)
    sum_sq[y] = sum_sq[y] + hl.widening_mul(centred[rx.x, y], centred[rx.x, y])

    inv_sqrt = hl.Func("inv_sqrt")
    r, e = rsqrt_q14(hl.max(sum_sq[y], 1))
    inv_sqrt[y] = (r, e)

    scaled = hl.rounding_shift_right(i32(centred[x, y]) * inv_sqrt[y][0], 7 + inv_sqrt[y][1] / 2)
    out = hl.Func("output")
    out[x, y] = u8_sat(hl.saturating_add(i16_sat(scaled), i16(128)))

    out.vectorize(x, V8)
    sum_sq.compute_at(out, y)
    sum_sq.update().atomic().vectorize(rx.x, V8)
    inv_sqrt.compute_at(out, y)
    return s.finish(out, [N, ROWS])
