"""dilate7x7: grey-scale dilation, the maximum over a 7x7 window.

uint8 image in, uint8 out; the input carries a 3-pixel border ("valid"
stencil). Separable: max_x (max of 7 horizontal neighbours) is the per-tile
producer, the output is the max of 7 vertical max_x values.
"""

from _stencil import dilate


def build():
    return dilate(7)
