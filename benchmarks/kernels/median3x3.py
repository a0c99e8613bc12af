"""median3x3: 3x3 median filter via a min/max sorting network.

uint8 image in, uint8 out; the input carries a 1-pixel border ("valid"
stencil). Each row of three is sorted first (the per-tile producers max_x,
min_x, mid_x), then the median of the nine is
    mid(min of the three maxima, max of the three minima, mid of the three mids),
with mid(a, b, c) = max(min(max(a, b), c), min(a, b)): exact, 19 min/max ops
per pixel after sharing.
"""

import halide as hl
from _common import Spec, schedule_separable

W, H = 2048, 1536


def mid(a, b, c):
    return hl.max(hl.min(hl.max(a, b), c), hl.min(a, b))


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + 2, H + 2])
    x, y = hl.Var("x"), hl.Var("y")

    a, b, c = inp[x, y], inp[x + 1, y], inp[x + 2, y]
    max_x, min_x, mid_x = hl.Func("max_x"), hl.Func("min_x"), hl.Func("mid_x")
    max_x[x, y] = hl.max(hl.max(a, b), c)
    min_x[x, y] = hl.min(hl.min(a, b), c)
    mid_x[x, y] = mid(a, b, c)

    min_of_max = hl.min(hl.min(max_x[x, y], max_x[x, y + 1]), max_x[x, y + 2])
    max_of_min = hl.max(hl.max(min_x[x, y], min_x[x, y + 1]), min_x[x, y + 2])
    mid_of_mid = mid(mid_x[x, y], mid_x[x, y + 1], mid_x[x, y + 2])
    out = hl.Func("output")
    out[x, y] = mid(min_of_max, max_of_min, mid_of_mid)

    schedule_separable(out, [max_x, min_x, mid_x], 128, 32, x, y)
    return s.finish(out, [W, H])
