"""mul: quantized elementwise multiply of two uint8 tensors (TFLite-style).

The zero-point-centred inputs are multiplied with a widening int16 x int16
-> int32 multiply, then requantized: rounding Q31 multiply by
output_multiplier, rounding shift right by output_shift, saturate to int16,
add the output zero point with saturation, saturate to uint8, clamp to
[output_min, output_max].
"""

import halide as hl
from _common import Spec, V8, requantize_u8, i16

W, H = 2048, 1536


def build():
    s = Spec()
    a = s.buffer(hl.UInt(8), "input1", [W, H])
    z1 = s.scalar(hl.UInt(8), "input1_zero", 128)
    b = s.buffer(hl.UInt(8), "input2", [W, H])
    z2 = s.scalar(hl.UInt(8), "input2_zero", 120)
    zo = s.scalar(hl.UInt(8), "output_zero", 128)
    mult = s.scalar(hl.Int(32), "output_multiplier", 1518500250)  # 0.7071 in Q31
    shift = s.scalar(hl.Int(32), "output_shift", 7)
    lo = s.scalar(hl.UInt(8), "output_min", 0)
    hi = s.scalar(hl.UInt(8), "output_max", 255)
    x, y = hl.Var("x"), hl.Var("y")

    prod = hl.widening_mul(i16(a[x, y]) - i16(z1), i16(b[x, y]) - i16(z2))
    out = hl.Func("output")
    out[x, y] = requantize_u8(prod, mult, shift, zo, lo, hi)

    out.vectorize(x, V8)
    return s.finish(out, [W, H])
