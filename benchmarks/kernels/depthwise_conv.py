"""depthwise_conv: quantized 3x3 depthwise convolution, 64 channels
(TFLite-style, depth multiplier 1).

Input uint8 HWC (channels innermost) with zero point input_zero, int8 filter
filter(c, fx, fy), int32 bias:
    acc(c, x, y) = bias(c) + sum_{fx,fy} (input(c, x+fx, y+fy) - input_zero) * filter(c, fx, fy)
with int16 x int16 -> int32 widening multiplies, then requantization to
uint8 (Q31 output_multiplier, rounding shift, output zero point, clamp).
The input carries a 1-pixel border ("valid", 194x194 -> 192x192).

Schedule: vectorized over the 64 channels; per pair of output pixels the
int32 accumulators (4 vectors x 2 pixels) are computed with the 3x3 taps
unrolled.
"""

import halide as hl
from _common import Spec, V8, V32, vectorize_unrolled, requantize_u8, i16

C, W, H = 64, 192, 192


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [C, W + 2, H + 2])
    zero = s.scalar(hl.UInt(8), "input_zero", 128)
    filt = s.buffer(hl.Int(8), "filter", [C, 3, 3])
    bias = s.buffer(hl.Int(32), "bias", [C])
    mult = s.scalar(hl.Int(32), "output_multiplier", 1300000000)  # 0.605 in Q31
    shift = s.scalar(hl.Int(32), "output_shift", 7)
    zo = s.scalar(hl.UInt(8), "output_zero", 128)
    lo = s.scalar(hl.UInt(8), "output_min", 0)
    hi = s.scalar(hl.UInt(8), "output_max", 255)
    c, x, y = hl.Var("c"), hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 3), (0, 3)], "r")

    acc = hl.Func("acc")
    acc[c, x, y] = bias[c]
    acc[c, x, y] = acc[c, x, y] + hl.widening_mul(
        i16(inp[c, x + r.x, y + r.y]) - i16(zero), i16(filt[c, r.x, r.y]))
    out = hl.Func("output")
    out[c, x, y] = requantize_u8(acc[c, x, y], mult, shift, zo, lo, hi)

    xo, xi = hl.Var("xo"), hl.Var("xi")
    # Never wider than the channels (HVX's V8 is 128 lanes; see _nn.pool).
    out.split(x, xo, xi, 2).reorder(c, xi, xo, y).vectorize(c, min(V8, C)).unroll(xi)
    acc.compute_at(out, xo)
    vectorize_unrolled(acc, c, V32, "cv")
    acc.unroll(x)
    cu = hl.Var("cu")
    (acc.update().reorder(c, x, r.x, r.y).split(c, cu, c, V32).vectorize(c)
        .unroll(cu).unroll(x).unroll(r.x).unroll(r.y))
    return s.finish(out, [C, W, H])
