"""conv3x3a16: 3x3 convolution of a uint8 image with an int8 mask, 16-bit
accumulation (wrapping int16 arithmetic, as Halide's Hexagon benchmark).

out = u8(clamp(sum_{i,j} i16(input(x+i, y+j)) * i16(mask(i, j)) >> 4, 0, 255)).
The input carries a 1-pixel border ("valid" stencil). One stage, no
producers: tiles of 64x4, vectorized by 64 uint8 lanes, rows unrolled.
"""

import halide as hl
from _common import Spec, V8, u8, i16

W, H = 2048, 1536


def build():
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + 2, H + 2])
    mask = s.buffer(hl.Int(8), "mask", [3, 3])
    x, y = hl.Var("x"), hl.Var("y")

    acc = i16(0)
    for j in range(3):
        for i in range(3):
            acc = acc + i16(inp[x + i, y + j]) * i16(mask[i, j])
    out = hl.Func("output")
    out[x, y] = u8(hl.clamp(acc >> 4, 0, 255))

    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    out.tile(x, y, xo, yo, xi, yi, V8, 4).vectorize(xi).unroll(yi)
    return s.finish(out, [W, H])
