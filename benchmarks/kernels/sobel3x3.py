"""sobel3x3: 3x3 Sobel edge magnitude |gx| + |gy|, clamped to uint8.

uint8 image in, uint8 out; "valid" stencil: the input carries a 1-pixel
border on every side (output (x, y) is centred on input (x+1, y+1)).
Both gradients are separable, and both are computed with a horizontal pass
first (the per-tile producers) and a vertical pass second:
    gy = |smooth_x(x, y) - smooth_x(x, y+2)|,        smooth_x = [1 2 1] along x
    gx = |diff_x(x, y) + 2 diff_x(x, y+1) + diff_x(x, y+2)|, diff_x = [-1 0 1] along x
"""

from _stencil import sobel


def build():
    return sobel(3)
