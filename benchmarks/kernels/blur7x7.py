"""blur7x7: 7x7 box blur, the rounded mean of a 7x7 window.

uint8 image in, uint8 out; the input carries a 3-pixel border ("valid"
stencil). The uint16 sum of 7 horizontal, then 7 vertical neighbours (at
most 12495) is divided by 49 with rounding; see _stencil.box_blur.
"""

from _stencil import box_blur


def build():
    return box_blur(7)
