"""conv_nn: quantized 3x3 convolution layer, 64 -> 64 channels (TFLite-style).

Input uint8 HWC (channels innermost) with zero point input_zero, int8
filter (output channel innermost: filter(co, ci, fx, fy)), int32 bias:
    acc(co, x, y) = bias(co) + sum_{ci,fx,fy} (input(ci, x+fx, y+fy) - input_zero) * filter(co, ci, fx, fy)
with int16 x int16 -> int32 widening multiplies, then the usual requantization
to uint8 (Q31 output_multiplier, rounding shift, output zero point, clamp).
The input carries a 1-pixel border ("valid" convolution, 34x34 -> 32x32).

Schedule: each output row is split into groups of 4 pixels; per group the
64x4 int32 accumulators (4 vectors x 4 pixels, 16 zmm) are computed with
the reduction (fy, fx, ci) outermost and stored as 4 uint8 vectors.
"""

import halide as hl
from _common import Spec, V8, V32, vectorize_unrolled, requantize_u8, i16

CI, CO, W, H = 64, 64, 32, 32


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [CI, W + 2, H + 2])
    zero = s.scalar(hl.UInt(8), "input_zero", 128)
    filt = s.buffer(hl.Int(8), "filter", [CO, CI, 3, 3])
    bias = s.buffer(hl.Int(32), "bias", [CO])
    mult = s.scalar(hl.Int(32), "output_multiplier", 1300000000)  # 0.605 in Q31
    shift = s.scalar(hl.Int(32), "output_shift", 10)
    zo = s.scalar(hl.UInt(8), "output_zero", 128)
    lo = s.scalar(hl.UInt(8), "output_min", 0)
    hi = s.scalar(hl.UInt(8), "output_max", 255)
    c, x, y = hl.Var("c"), hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, CI), (0, 3), (0, 3)], "r")

    acc = hl.Func("acc")
    acc[c, x, y] = bias[c]
    acc[c, x, y] = acc[c, x, y] + hl.widening_mul(
        i16(inp[r.x, x + r.y, y + r.z]) - i16(zero), i16(filt[c, r.x, r.y, r.z]))
    out = hl.Func("output")
    out[c, x, y] = requantize_u8(acc[c, x, y], mult, shift, zo, lo, hi)

    xo, xi = hl.Var("xo"), hl.Var("xi")
    # Never wider than the channels (HVX's V8 is 128 lanes; see _nn.pool).
    out.split(x, xo, xi, 4).reorder(c, xi, xo, y).vectorize(c, min(V8, CO)).unroll(xi)
    acc.compute_at(out, xo)
    vectorize_unrolled(acc, c, V32, "cv")
    acc.unroll(x)
    cu = hl.Var("cu")
    acc.update().reorder(c, x, r.x, r.y, r.z).split(c, cu, c, V32).vectorize(c).unroll(cu).unroll(x)
    return s.finish(out, [CO, W, H])
