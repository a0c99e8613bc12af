"""gaussian7x7: 7x7 Gaussian blur with binomial weights [1 6 15 20 15 6 1]
in both directions.

uint8 image in, uint8 out; the input carries a 3-pixel border ("valid"
stencil). Separable: rows (uint16, horizontal pass, at most 64*255) is the
per-tile producer; the vertical pass accumulates in uint32 (at most
4096*255 does not fit 16 bits) and the result is divided by 4096 with a
rounding shift.
"""

import halide as hl
from _common import Spec, schedule_separable, weighted, BINOMIAL, u8, u16, u32

K = 7
W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + K - 1, H + K - 1])
    x, y = hl.Var("x"), hl.Var("y")

    rows = hl.Func("rows")
    rows[x, y] = weighted(lambda i: u16(inp[x + i, y]), BINOMIAL[K])
    cols = weighted(lambda j: u32(rows[x, y + j]), BINOMIAL[K])
    out = hl.Func("output")
    out[x, y] = u8(hl.rounding_shift_right(cols, 2 * (K - 1)))

    schedule_separable(out, [rows], 128, 32, x, y)
    return s.finish(out, [W, H])
