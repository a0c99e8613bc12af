"""sobel5x5: 5x5 Sobel edge magnitude (|gx| + |gy|) >> 4, clamped to uint8.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). The 5x5 Sobel kernels are outer products of the binomial smoother
[1 4 6 4 1] and the derivative [-1 -2 0 2 1]. Horizontal pass first (the
per-tile producers smooth_x and deriv_x), vertical pass second:
    gx = |sum_j [1 4 6 4 1]_j  deriv_x(x, y+j)|
    gy = |sum_j [-1 -2 0 2 1]_j smooth_x(x, y+j)|
Each is at most 12240 (int16); the sum is scaled by 1/16 before the clamp,
as the 5x5 response is 12x the 3x3 one.
"""

import halide as hl
from _common import Spec, schedule_separable, weighted, BINOMIAL, DERIV5, u8_sat, u16, i16

W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + 4, H + 4])
    x, y = hl.Var("x"), hl.Var("y")

    smooth_x = hl.Func("smooth_x")
    smooth_x[x, y] = i16(weighted(lambda i: u16(inp[x + i, y]), BINOMIAL[5]))
    deriv_x = hl.Func("deriv_x")
    deriv_x[x, y] = weighted(lambda i: i16(inp[x + i, y]), DERIV5)

    gx = hl.abs(weighted(lambda j: deriv_x[x, y + j], BINOMIAL[5]))   # uint16
    gy = hl.abs(weighted(lambda j: smooth_x[x, y + j], DERIV5))       # uint16
    out = hl.Func("output")
    out[x, y] = u8_sat((gx + gy) >> 4)

    schedule_separable(out, [smooth_x, deriv_x], 128, 32, x, y)
    return s.finish(out, [W, H])
