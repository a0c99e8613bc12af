"""gaussian3x3: 3x3 Gaussian blur with binomial weights [1 2 1] x [1 2 1].

uint8 image in, uint8 out; the input carries a 1-pixel border ("valid"
stencil). Separable: rows (uint16, horizontal [1 2 1]) is the per-tile
producer; the vertical pass sums in uint16 (at most 16*255) and the result
is divided by 16 with a rounding shift.
"""

from _stencil import gaussian


def build():
    return gaussian(3)
