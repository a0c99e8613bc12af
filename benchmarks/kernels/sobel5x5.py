"""sobel5x5: 5x5 Sobel edge magnitude (|gx| + |gy|) >> 4, clamped to uint8.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). The 5x5 Sobel kernels are outer products of the binomial smoother
[1 4 6 4 1] and the derivative [-1 -2 0 2 1]. Horizontal pass first (the
per-tile producers smooth_x and deriv_x), vertical pass second:
    gx = |sum_j [1 4 6 4 1]_j  deriv_x(x, y+j)|
    gy = |sum_j [-1 -2 0 2 1]_j smooth_x(x, y+j)|
Each is at most 12240 (int16); the sum is scaled by 1/16 before the clamp,
as the 5x5 response is 12x the 3x3 one.
"""

from _stencil import sobel


def build():
    return sobel(5)
