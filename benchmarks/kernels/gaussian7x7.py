"""gaussian7x7: 7x7 Gaussian blur with binomial weights [1 6 15 20 15 6 1]
in both directions.

uint8 image in, uint8 out; the input carries a 3-pixel border ("valid"
stencil). Separable: rows (uint16, horizontal pass, at most 64*255) is the
per-tile producer; the vertical pass accumulates in uint32 (at most
4096*255 does not fit 16 bits) and the result is divided by 4096 with a
rounding shift.
"""

from _stencil import gaussian


def build():
    return gaussian(7)
