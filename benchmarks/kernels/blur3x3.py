"""blur3x3: 3x3 box blur, the rounded mean of a 3x3 window.

uint8 image in, uint8 out; the input carries a 1-pixel border ("valid"
stencil). The uint16 sum of 3 horizontal, then 3 vertical neighbours (at
most 2295) is divided by 9 with rounding; see _stencil.box_blur.
"""

from _stencil import box_blur


def build():
    return box_blur(3)
