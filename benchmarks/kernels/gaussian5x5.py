"""gaussian5x5: 5x5 Gaussian blur with binomial weights [1 4 6 4 1] x [1 4 6 4 1].

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). Separable: rows (uint16, horizontal [1 4 6 4 1]) is the per-tile
producer; the vertical pass sums in uint16 (at most 256*255) and the result
is divided by 256 with a rounding shift.
"""

from _stencil import gaussian


def build():
    return gaussian(5)
