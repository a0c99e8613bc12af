"""dilate5x5: grey-scale dilation, the maximum over a 5x5 window.

uint8 image in, uint8 out; the input carries a 2-pixel border ("valid"
stencil). Separable: max_x (max of 5 horizontal neighbours) is the per-tile
producer, the output is the max of 5 vertical max_x values.
"""

from _stencil import dilate


def build():
    return dilate(5)
