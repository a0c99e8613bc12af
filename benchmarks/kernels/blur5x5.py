"""blur5x5: 5x5 box blur, the rounded mean of a 5x5 window.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). The uint16 sum of 5 horizontal, then 5 vertical neighbours (at
most 6375) is divided by 25 with rounding; see _stencil.box_blur.
"""

from _stencil import box_blur


def build():
    return box_blur(5)
