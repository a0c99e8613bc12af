"""sobel3x3: 3x3 Sobel edge magnitude |gx| + |gy|, clamped to uint8.

uint8 image in, uint8 out; "valid" stencil: the input carries a 1-pixel
border on every side (output (x, y) is centred on input (x+1, y+1)).
Both gradients are separable, and both are computed with a horizontal pass
first (the per-tile producers) and a vertical pass second:
    gy = |smooth_x(x, y) - smooth_x(x, y+2)|,        smooth_x = [1 2 1] along x
    gx = |diff_x(x, y) + 2 diff_x(x, y+1) + diff_x(x, y+2)|, diff_x = [-1 0 1] along x
"""

import halide as hl
from _common import Spec, schedule_separable, u8, u16, i16

W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + 2, H + 2])
    x, y = hl.Var("x"), hl.Var("y")

    smooth_x = hl.Func("smooth_x")
    smooth_x[x, y] = u16(inp[x, y]) + 2 * u16(inp[x + 1, y]) + u16(inp[x + 2, y])
    diff_x = hl.Func("diff_x")
    diff_x[x, y] = i16(inp[x + 2, y]) - i16(inp[x, y])

    gy = hl.absd(smooth_x[x, y], smooth_x[x, y + 2])                   # uint16
    gx = hl.abs(diff_x[x, y] + 2 * diff_x[x, y + 1] + diff_x[x, y + 2])  # uint16
    out = hl.Func("output")
    out[x, y] = u8(hl.min(gx + gy, 255))

    schedule_separable(out, [smooth_x, diff_x], 128, 32, x, y)
    return s.finish(out, [W, H])
