"""dilate3x3: grey-scale dilation, the maximum over a 3x3 window.

uint8 image in, uint8 out; the input carries a 1-pixel border ("valid"
stencil). Separable: max_x (max of 3 horizontal neighbours) is the per-tile
producer, the output is the max of 3 vertical max_x values.
"""

from _stencil import dilate


def build():
    return dilate(3)
