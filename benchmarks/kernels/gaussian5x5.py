"""gaussian5x5: 5x5 Gaussian blur with binomial weights [1 4 6 4 1] x [1 4 6 4 1].

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). Separable: rows (uint16, horizontal [1 4 6 4 1]) is the per-tile
producer; the vertical pass sums in uint16 (at most 256*255) and the result
is divided by 256 with a rounding shift.
"""

import halide as hl
from _common import Spec, schedule_separable, weighted, BINOMIAL, u8, u16

K = 5
W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + K - 1, H + K - 1])
    x, y = hl.Var("x"), hl.Var("y")

    rows = hl.Func("rows")
    rows[x, y] = weighted(lambda i: u16(inp[x + i, y]), BINOMIAL[K])
    cols = weighted(lambda j: rows[x, y + j], BINOMIAL[K])
    out = hl.Func("output")
    out[x, y] = u8(hl.rounding_shift_right(cols, 2 * (K - 1)))

    schedule_separable(out, [rows], 128, 32, x, y)
    return s.finish(out, [W, H])
