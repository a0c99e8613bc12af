"""dilate5x5: grey-scale dilation, the maximum over a 5x5 window.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). Separable: max_x (max of 5 horizontal neighbours) is the per-tile
producer, the output is the max of 5 vertical max_x values.
"""

import functools

import halide as hl
from _common import Spec, schedule_separable

K = 5
W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + K - 1, H + K - 1])
    x, y = hl.Var("x"), hl.Var("y")

    max_x = hl.Func("max_x")
    max_x[x, y] = functools.reduce(hl.max, [inp[x + i, y] for i in range(K)])
    out = hl.Func("output")
    out[x, y] = functools.reduce(hl.max, [max_x[x, y + j] for j in range(K)])

    schedule_separable(out, [max_x], 128, 32, x, y)
    return s.finish(out, [W, H])
