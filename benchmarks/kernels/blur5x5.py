"""blur5x5: 5x5 box blur, the rounded mean of a 5x5 window.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). Separable: sum_x (uint16 sum of 5 horizontal neighbours) is the
per-tile producer; the output sums 5 vertical sum_x values (at most
6375, uint16) and divides by 25 with rounding.
"""

import halide as hl
from _common import Spec, schedule_separable, weighted, u8, u16

K = 5
W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + K - 1, H + K - 1])
    x, y = hl.Var("x"), hl.Var("y")

    sum_x = hl.Func("sum_x")
    sum_x[x, y] = weighted(lambda i: u16(inp[x + i, y]), [1] * K)
    total = weighted(lambda j: sum_x[x, y + j], [1] * K)
    out = hl.Func("output")
    out[x, y] = u8((total + (K * K) // 2) / (K * K))

    schedule_separable(out, [sum_x], 128, 32, x, y)
    return s.finish(out, [W, H])
